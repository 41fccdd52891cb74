"""``fleetwatch doctor``'s checks: pure functions from gathered facts to result lines.

Each check returns `Check` lines (OK / WARN / FAIL / INFO, a name and catalogue `Words`: data),
said once in the reader's language by `render`; any FAIL makes the command exit 1.
Facts are gathered by `services.ctl.commands_doctor` (files, sockets, ``/proc/net``); nothing
here does I/O or reads a clock (``now`` is passed in, epoch seconds).

What is checked: the policy loads; the read guard refuses every Epiphan write tool; redaction
removes the secret shapes it knows and the model's view withholds IP addresses and serial
numbers (self-test); each sign-in is present, 0600 in a 0700 folder, not dead, and its expiry;
the fence is configured; the fence level (separate users or one); socket modes and peer
allowlists; each service answers; queue state and caps, each denial pause (the change, the room,
until when, the command that lifts it) and each change to settle; the watch (alive, its posts,
where it posts: tokens masked); the model the *running* assistant answers with (a real model, the
lab's demo model on this machine, or keyword only: it is asked over assistant.sock, because
``fleetwatch up`` gives the services an environment of their own), the key masked, exactly what
goes to it (`shared.epiphan.model_data`) and how to turn that off; the pages bound to loopback
only. With ``--live``, each sign-in is also proven with one read (`LiveProof`, `check_live`):
the slot's clock says when a token ends, Epiphan says whether it still takes it; and Epiphan's
tool list is compared with the reviewed policy (`check_tools`: a proposable tool whose
definition differs FAILs, a changed or gone read tool and a new tool WARN).
"""

from __future__ import annotations

import datetime as dt
import enum
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from shared.config import Secret, Settings
from shared.errors import Code
from shared.policy.definitions import ARGUMENTS_DIFFER, ToolDifference, ToolReport
from shared.text.catalogue import C_, N_, Joined, Moment, Nn_, Param, Words, keyed, say_text, translations
from shared.text.change_words import change_in_words, change_words_of
from shared.text.changes import quoted_name
from shared.text.command_line import printed_command
from shared.text.display import visible
from shared.text.languages import Language
from shared.web.model_host import Resolver, ip_of, model_host, system_resolver
from shared.wire.approval import Status

if TYPE_CHECKING:
    from shared.store.audit_export import SinkCounts
from shared.wire.assistant import ModelInfo, WatchStatus

SERVICES = ("executor", "approval_web", "assistant")
"""The three services, in start order; each serves one socket."""


Detail = Words | str
"""A reason as catalogue `Words` (said in the reader's language) or as text kept as it is (a
stable code, a path)."""


class Level(enum.StrEnum):
    """A check's verdict; any FAIL makes doctor exit 1."""

    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"
    INFO = "INFO"


@dataclass(frozen=True)
class Check:
    """One line of the report: its name (a ``doctor check`` catalogue message, English), its
    level and its words, said in the reader's language when rendered (`render`)."""

    name: str
    level: Level
    words: Words

    @property
    def message(self) -> str:
        """The words in English (``--json``)."""
        return _said(self.words, "en")


@dataclass(frozen=True)
class SocketFacts:
    """A service's socket as this user sees it (``stat`` follows the operators' links).

    ``state``: ``missing`` | ``not_socket`` | ``denied`` (this user may not look) | ``present``.
    """

    service: str
    path: str
    state: str
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    owner: str | None = None
    group: str | None = None
    folder_mode: int | None = None
    connectable: bool | None = None


@dataclass(frozen=True)
class Probe:
    """A service's answer to ``GetCapabilities``: ``up`` (answered), ``refused`` (answered
    ``peer_not_allowed``: up, and its peer check refuses this user), ``down``, ``unreachable``
    (this user may not open the socket), ``skipped`` (this user is not on its allowlist), with
    the error code or detail."""

    service: str
    answer: str
    detail: Detail = ""
    message: str = ""
    """The service's or the client's own words (English; shown only in English)."""


@dataclass(frozen=True)
class Facts:
    """Everything the checks look at. ``read_tools``/``policy_error``: the policy loaded or
    why not; ``slots``: `shared.epiphan.slots.slot_summary` per slot name; ``peers``: per service the
    allowed (uid, name) and (gid, name) lists; ``listeners``: (address, port) of TCP sockets
    listening on this host; ``status``: approval.sock's `Status` or None; ``watch``:
    assistant.sock's `WatchStatus` or None; ``model``: the running assistant's `ModelInfo`
    (None: it did not answer, ``model_error`` says why)."""

    settings: Settings
    now: float
    read_tools: frozenset[str] | None
    proposable: tuple[str, ...] = ()
    policy_error: str | None = None
    slots: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    sockets: Mapping[str, SocketFacts] = field(default_factory=dict)
    probes: Mapping[str, Probe] = field(default_factory=dict)
    peers: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    status: Status | None = None
    status_error: Detail | None = None
    watch: WatchStatus | None = None
    watch_error: Detail | None = None
    listeners: tuple[tuple[str, int], ...] | None = None
    live: Mapping[str, LiveProof] | None = None
    model: ModelInfo | None = None
    model_error: Detail | None = None
    state_modes: tuple[tuple[str, str, str], ...] | None = None
    """On one account, each state folder or file others may get into: (path, its mode, the
    most it may be), octal; None when not looked at (a server's layout, install.sh's modes)."""
    state_error: str | None = None
    """Why the state could not be looked at (a symlinked folder), or None."""
    tools: ToolReport | None = None
    """``--live``: Epiphan's tool list against the reviewed policy, or None (not compared)."""
    tools_error: Detail | None = None
    """``--live``: why the tool list could not be compared, or None."""
    two_person_tools: tuple[str, ...] = ()
    """Proposable tools whose rule asks two people (``approvers: 2``)."""
    audit_export: tuple[SinkCounts, ...] = ()
    """Each writing service's continuous audit export counts (`shared.store.audit_export`)."""
    command: Callable[..., str] = printed_command
    """How a line prints a command to copy: `shared.text.command_line.printed_command` with the
    reader's language and home (the default: English, the default home)."""
    posting: Settings | None = None
    """The settings the services post with (`services.ctl.commands_doctor.services_settings`:
    on the lab, `up`'s demo environment), which the watch's lines judge; None: `settings`."""


@dataclass(frozen=True)
class LiveProof:
    """One sign-in proven with one read (``doctor --live``).

    Attributes:
        via: ``here`` (this user read the slot and Epiphan itself, refreshing as the services
            do) or the service that holds the sign-in (``assistant``, ``executor``: asked over
            their sockets).
        outcome: ``accepted``; ``refreshed`` (Epiphan refused the token, a refresh made a new
            one, and Epiphan took it); ``refused`` (Epiphan refused it and it could not be
            refreshed); ``failed`` (no answer, another error); ``skipped`` (this user cannot
            reach the sign-in or its holder).
        devices: devices the read saw (when accepted).
        detail: the code or reason, for a person (`Words`: said in the reader's language).
        message: Epiphan's or a service's own words (English: shown only in English).
        valid_until: the slot's ``expires_at`` (epoch seconds) as this machine read it before
            the read, when known.
    """

    via: str
    outcome: str
    devices: int | None = None
    detail: Detail = ""
    message: str = ""
    valid_until: float | None = None


# --- words ------------------------------------------------------------------------------------


def _said(words: Param, language: Language) -> str:
    """`words` (or text kept as it is) in `language`."""
    if isinstance(words, str):
        return words
    return say_text(Words.of("%(x)s", x=words), language, zone=dt.UTC, now=dt.datetime.now(dt.UTC))


def _devices(n: int) -> Words:
    """``1 device`` / ``3 devices``, as the reader's language counts."""
    return Words.counted(n, Nn_("%(n)s device", "%(n)s devices"))


def _line(name: str, level: Level, msgid: str, **params: object) -> Check:
    return Check(name, level, Words.of(msgid, **params))


def _with_message(detail: Detail, message: str) -> Param:
    """`detail` and a service's or Epiphan's own `message` (English: the catalogue says it only
    in English, other languages keep the detail alone)."""
    if not message:
        return detail
    return Words.in_context(
        "foreign words", C_("foreign words", "%(detail)s: %(message)s"), detail=detail, message=message
    )


def _raw(context: str, value: str | None) -> Param:
    """A raw value (an outcome, a sign-in's kind) in words under `context` (English: the value
    as it is); a value the catalogue does not know stays as it is (made visible)."""
    return Words.in_context(context, visible(value, 40)) if value else ""


def _list(items: Sequence[str]) -> Param:
    return Joined(", ", tuple(items)) if items else Words.of(N_("none"))


# --- policy, guard, redaction ------------------------------------------------------------------


def check_policy(facts: Facts) -> list[Check]:
    name = "policy"
    if facts.policy_error is not None or facts.read_tools is None:
        return [_line(name, Level.FAIL, N_("the policy does not load: %(why)s"), why=facts.policy_error)]
    return [
        _line(
            name,
            Level.OK,
            N_("valid (%(dir)s): %(read)s read tools, %(n)s proposable (%(tools)s)"),
            dir=facts.settings.policy_dir,
            read=len(facts.read_tools),
            n=len(facts.proposable),
            tools=_list(facts.proposable),
        )
    ]


def check_guard(read_tools: frozenset[str] | None) -> list[Check]:
    """Runs the real guard on every Epiphan write tool: each must be refused."""
    from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN, EpiphanError, guard  # when doctor runs

    name = "guard"
    if read_tools is None:
        return [_line(name, Level.FAIL, N_("cannot check: the policy does not load"))]
    let_through = []
    for tool in sorted(WRITE_TOOLS_OF_EPIPHAN):
        try:
            guard(tool, read_tools)
        except EpiphanError as exc:
            if exc.code == Code.TOOL_NOT_ALLOWED:
                continue
        let_through.append(tool)
    if let_through:
        return [
            _line(
                name,
                Level.FAIL,
                N_("the read guard does not refuse: %(tools)s"),
                tools=", ".join(let_through),
            )
        ]
    return [
        _line(
            name, Level.OK, N_("the read guard refuses all %(n)s write tools"), n=len(WRITE_TOOLS_OF_EPIPHAN)
        )
    ]


_PLANTED = (
    "sk_live_PLANTED1",
    "PLANTED2key",
    "PLANTED3value",
    "PLANTED4bearer",
    "PLANTED5pw",
    "PLANTED6q",
    "PLANTED7streamid",
    "PLANTED8passphrase",
    "192.0.2.99",
    "PLANTED0SERIAL9",
)
_SAMPLE = {
    "stream_endpoints": [
        {
            "id": "u1",
            "name": "Main hall",
            "url": f"rtmp://live.example.net/app/{_PLANTED[0]}",
            "key": _PLANTED[1],
        },
        {
            "id": "u2",
            "name": "Library",
            "url": f"srt://ingest.example.com:9000?streamid={_PLANTED[6]}&passphrase={_PLANTED[7]}",
        },
    ],
    "Publishers": [{"settings": [{"id": "stream_key", "title": "Stream key", "value": _PLANTED[2]}]}],
    "note": f"sent with Authorization: Bearer {_PLANTED[3]}",
    "link": f"https://u:{_PLANTED[4]}@cdn.example.com/x?token={_PLANTED[5]}&a=1",
    "devices": [
        {"Name": f"Main hall ({_PLANTED[9]})", "IPAddress": _PLANTED[8], "SerialNumber": _PLANTED[9]},
    ],
}


def check_redaction() -> list[Check]:
    """Self-test: planted secrets, an IP address and a serial number in known shapes must not
    survive `shared.epiphan.model_data.for_model` (redaction, then what is withheld from the model)."""
    from shared.epiphan.model_data import for_model  # the redaction patterns: when doctor runs

    name = "redaction"
    out = json.dumps(for_model(_SAMPLE))
    leaked = [s for s in _PLANTED if s in out]
    if leaked or "Main hall" not in out:
        what = (
            Words.of(N_("%(n)s of %(all)s planted secrets survive"), n=len(leaked), all=len(_PLANTED))
            if leaked
            else Words.of(N_("it removes names too"))
        )
        return [_line(name, Level.FAIL, N_("self-test failed: %(what)s"), what=what)]
    return [
        _line(
            name,
            Level.OK,
            N_(
                "self-test passed: stream keys, keys in stream URLs (SRT stream IDs too), passwords, bearer "
                "tokens removed; IP addresses and serial numbers withheld from the model"
            ),
        )
    ]


# --- sign-ins and the fence --------------------------------------------------------------------


def _when(seconds: float) -> Words:
    minutes = abs(seconds) / 60
    span = f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
    return Words.of(N_("in %(span)s") if seconds >= 0 else N_("%(span)s ago"), span=span)


def login_command(name: str, command: Callable[..., str]) -> str:
    """The command that fills the sign-in slot `name`, as `command` prints it."""
    return command("login", "--sandbox") if name == "sandbox" else command("login")


def check_sign_in(
    name: str, summary: Mapping[str, Any], now: float, command: Callable[..., str] = printed_command
) -> list[Check]:
    """One slot: present, safe (0600 in 0700, owner), not dead, expiry; the fix printed by
    `command` (`Facts.command`)."""
    label = f"sign-in {name}"
    fix = login_command(name, command)

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_line(label, level, msgid, fix=fix, **params)]

    if summary.get("code") == "permission_denied":
        return line(Level.INFO, N_("this user may not look at it (it is the service's): run doctor as root"))
    if not summary.get("present"):
        return line(Level.FAIL, N_("none; run `%(fix)s`"))
    if not summary.get("ok"):
        return line(Level.FAIL, N_("unusable: %(why)s"), why=summary.get("message"))
    where = Words.of(
        N_("mode %(mode)s in a %(folder)s folder"), mode=summary["mode"], folder=summary["folder_mode"]
    )
    if summary.get("folder_mode") != "700":
        return line(Level.FAIL, N_("%(where)s; the folder must be 700"), where=where)
    if summary.get("dead"):
        return line(Level.FAIL, N_("dead (%(why)s); run `%(fix)s`"), why=summary.get("dead_reason"))
    team = (
        Words.of(N_("team %(id)s"), id=summary["team_id"])
        if summary.get("team_id")
        else Words.of(N_("team unknown"))
    )
    head = Joined(", ", (_raw("sign-in kind", summary.get("kind")), team, where))
    expires_at = summary.get("expires_at")
    if expires_at is None:
        return line(Level.OK, N_("%(head)s; no expiry known"), head=head)
    left = float(expires_at) - now
    when = _when(left)
    if left > 0:
        return line(Level.OK, N_("%(head)s; access token ends %(when)s"), head=head, when=when)
    if summary.get("refreshable"):
        return line(
            Level.OK, N_("%(head)s; access token ended %(when)s, refreshed on next use"), head=head, when=when
        )
    return line(
        Level.FAIL, N_("%(head)s; expired %(when)s and cannot refresh; run `%(fix)s`"), head=head, when=when
    )


STATE_MODES: Final = "state modes"


def check_state_modes(
    loose: Sequence[tuple[str, str, str]] | None,
    error: str | None,
    command: Callable[..., str] = printed_command,
) -> list[Check]:
    """One account's state is its own: folders ``700``, stores, their -wal/-shm and secrets
    ``600`` (``2750``/``640`` in a setgid folder); each path that lets in more is named with
    its mode. No line when not looked at (`Facts.state_modes` None)."""
    if error is not None:
        return [_line(STATE_MODES, Level.FAIL, N_("cannot look at the state: %(why)s"), why=error)]
    if loose is None:
        return []
    if not loose:
        return [_line(STATE_MODES, Level.OK, N_("only this account may open the state"))]
    each = Joined(
        "; ",
        tuple(
            Words.of(N_("%(path)s mode %(mode)s (at most %(allowed)s)"), path=p, mode=m, allowed=a)
            for p, m, a in loose
        ),
    )
    return [
        _line(
            STATE_MODES,
            Level.FAIL,
            N_("other local users may open %(each)s; `%(command)s` puts the modes back"),
            each=each,
            command=command("up"),
        )
    ]


def check_live(
    name: str, proof: LiveProof, now: float, command: Callable[..., str] = printed_command
) -> list[Check]:
    """A sign-in proven with one read: accepted, refreshed after a refusal, or refused by
    Epiphan (named as such when this machine's clock still calls the token valid); the fix
    printed by `command` (`Facts.command`)."""
    label = f"live {name}"
    fix = login_command(name, command)
    by = (
        ""
        if proof.via == "here"
        else keyed("read by", proof.via) or Words.of(N_(" (read by %(via)s)"), via=proof.via)
    )
    clock: Param = ""
    if proof.valid_until is not None and proof.valid_until > now:
        clock = Words.of(
            N_(" although this machine's clock says it is valid %(when)s"),
            when=_when(proof.valid_until - now),
        )

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_line(label, level, msgid, by=by, clock=clock, fix=fix, **params)]

    if proof.outcome == "accepted":
        return line(
            Level.OK, N_("Epiphan accepted it%(by)s: %(devices)s read"), devices=_devices(proof.devices)
        )
    if proof.outcome == "refreshed":
        return line(
            Level.WARN,
            N_(
                "refused by Epiphan%(clock)s; refreshed, and Epiphan accepted the new token%(by)s"
                " (%(devices)s). Check this machine's clock."
            ),
            devices=_devices(proof.devices),
        )
    if proof.outcome == "refused":
        return line(Level.FAIL, N_("refused by Epiphan%(clock)s%(by)s; run `%(fix)s`"))
    why = _with_message(proof.detail, proof.message)
    if proof.outcome == "skipped":
        return line(Level.INFO, N_("not proven: %(why)s"), why=why)
    return line(Level.FAIL, N_("the read failed%(by)s: %(why)s"), why=why)


def check_fence(
    settings: Settings, status: Status | None = None, command: Callable[..., str] = printed_command
) -> list[Check]:
    """The fence in this shell's settings, held against the running approval_web's (`status`,
    None when it could not be asked: said so): when this shell has none but the services do
    (``fleetwatch demo`` sets it in the services' own environment), OK with a note, because the
    services are what refuse or run changes; when this shell has one and the services none, a
    warning."""
    name = "fence"
    parts: list[Param] = []
    if settings.write_team_id is not None:
        parts.append(Words.of(N_("sandbox team %(id)s"), id=settings.write_team_id))
    if settings.write_device_ids:
        parts.append(Words.of(N_("allowlist of %(n)s devices"), n=len(settings.write_device_ids)))
    if not parts and status is not None and status.fence_configured:
        return [
            _line(
                name,
                Level.OK,
                N_(
                    "configured in the running services' environment (this shell sets none; "
                    "%(command)s sets it for the lab's sandbox team)"
                ),
                command=command("demo"),
            )
        ]
    if not parts:
        return [
            _line(
                name,
                Level.FAIL,
                N_(
                    "not configured: set FLEETWATCH_WRITE_TEAM_ID and/or FLEETWATCH_WRITE_DEVICE_IDS "
                    "(until then nothing can be proposed or run)"
                ),
            )
        ]
    here = Joined(Words.of(N_(" and ")), tuple(parts))
    if status is None:
        return [
            _line(
                name,
                Level.OK,
                N_("%(x)s, in this terminal's settings (the running approval_web could not be asked)"),
                x=here,
            )
        ]
    if not status.fence_configured:
        return [
            _line(
                name,
                Level.WARN,
                N_(
                    "this terminal's settings set %(x)s, but the running approval_web has no fence: nothing "
                    "can be proposed or run until the services start with it (%(command)s)"
                ),
                x=here,
                command=command("up"),
            )
        ]
    return [_line(name, Level.OK, "%(x)s", x=here)]


def check_fence_level(sockets: Mapping[str, SocketFacts]) -> list[Check]:
    """ "OS-level, separate users" when the running services' sockets have three different
    owners; "process-level, same user" when they share one."""
    name = "fence level"
    owners = {
        s: f.owner or str(f.uid) for s, f in sockets.items() if f.state == "present" and f.uid is not None
    }
    if len(owners) < 2:
        return [_line(name, Level.INFO, N_("unknown: fewer than two services are running"))]
    listing = Joined(
        ", ", tuple(Words.of(N_("%(service)s as %(user)s"), service=s, user=o) for s, o in owners.items())
    )
    distinct = len(set(owners.values()))
    if distinct == len(owners):
        return [_line(name, Level.OK, N_("OS-level, separate users (%(listing)s)"), listing=listing)]
    if distinct == 1:
        return [
            _line(
                name,
                Level.INFO,
                N_("process-level, same user (%(listing)s); on a server use the systemd units for OS-level"),
                listing=listing,
            )
        ]
    return [_line(name, Level.WARN, N_("mixed: some services share a user (%(listing)s)"), listing=listing)]


# --- sockets, services, queue ------------------------------------------------------------------


def check_socket(facts: SocketFacts, peers: tuple[tuple[str, ...], tuple[str, ...]]) -> list[Check]:
    label = f"socket {facts.service}"
    uids, gids = peers
    allowed = Words.of(N_("peers: uids %(uids)s; gids %(gids)s"), uids=_list(uids), gids=_list(gids))

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_line(label, level, msgid, path=facts.path, allowed=allowed, **params)]

    if facts.state == "missing":
        return line(Level.INFO, N_("%(path)s does not exist (service not running); %(allowed)s"))
    if facts.state == "denied":
        return line(Level.INFO, N_("%(path)s: this user may not look; %(allowed)s"))
    if facts.state == "not_socket":
        return line(Level.FAIL, N_("%(path)s exists and is not a socket"))
    mode, folder = facts.mode or 0, facts.folder_mode or 0
    where = Words.of(
        N_("%(path)s mode %(mode)s %(owner)s:%(group)s, folder %(folder)s; %(allowed)s"),
        path=facts.path,
        mode=f"{mode:o}",
        owner=facts.owner,
        group=facts.group,
        folder=f"{folder:o}",
        allowed=allowed,
    )
    if mode & 0o006 or folder & 0o002:
        return line(
            Level.WARN,
            N_("%(where)s: anyone on this host may connect (the peer check still refuses)"),
            where=where,
        )
    return [Check(label, Level.OK, where)]


def check_probe(probe: Probe, status: Status | None) -> list[Check]:
    """A probe's answer. A probe skipped because this user is not on the socket's allowlist
    (connecting would be refused and audited) is judged by approval_web's `Status` instead."""
    label = f"service {probe.service}"
    detail = _with_message(probe.detail, probe.message)

    def line(level: Level, msgid: str) -> list[Check]:
        return [_line(label, level, msgid, detail=detail)]

    if probe.answer == "skipped":
        if probe.service == "executor" and status is not None:
            if status.executor_up:
                return line(Level.OK, N_("up (as approval_web sees it)"))
            return line(Level.FAIL, N_("DOWN (as approval_web sees it)"))
        return line(Level.INFO, N_("not probed: %(detail)s"))
    if probe.answer == "up":
        return line(Level.OK, N_("up (answered GetCapabilities)"))
    if probe.answer == "refused":
        return line(Level.OK, N_("up; it refuses this user (its peer check works)"))
    if probe.answer == "unreachable":
        return line(Level.INFO, N_("this user may not open its socket (%(detail)s)"))
    return line(Level.FAIL, N_("not running or not answering (%(detail)s)"))


def check_queue(
    status: Status | None, error: Detail | None, command: Callable[..., str] = printed_command
) -> list[Check]:
    """approval_web's queue, each denial pause and each change to settle, with the command that
    lifts or acknowledges it as `command` prints it (`Facts.command`); rooms quoted."""
    name = "queue"
    if status is None:
        return [
            _line(
                name,
                Level.INFO,
                N_("unknown: approval_web did not answer GetStatus (%(why)s)"),
                why=error or "",
            )
        ]
    text = Words.of(
        N_(
            "%(pending)s/%(max_pending)s pending, %(last_hour)s/%(per_hour)s in the last hour, "
            "%(kill_switch)s, autonomy %(autonomy)s, %(executor)s"
        ),
        pending=status.pending,
        max_pending=status.max_pending,
        last_hour=status.last_hour,
        per_hour=status.per_hour,
        kill_switch=Words.of(N_("kill switch ON") if status.kill_switch else N_("kill switch off")),
        autonomy=keyed("autonomy", status.autonomy) or visible(status.autonomy, 40),
        executor=Words.of(
            N_("executor up (as approval_web sees it)")
            if status.executor_up
            else N_("executor DOWN (as approval_web sees it)")
        ),
    )
    full = status.pending >= status.max_pending or status.last_hour >= status.per_hour
    level = Level.WARN if full or status.kill_switch or not status.executor_up else Level.OK
    checks = [Check(name, level, text)]
    for pause in status.pauses:
        room = quoted_name(pause.target_name) if pause.target_name else visible(pause.target, 40)
        checks.append(
            _line(
                "denial pause",
                Level.WARN,
                N_(
                    "%(change)s in %(room)s paused until %(until)s (UTC) after %(n)s denials; lift it: %(command)s"
                ),
                change=change_words_of(pause.tool, None),
                room=room,
                until=Moment(pause.until, relative=False),  # doctor says its times in UTC
                n=pause.denials,
                command=command("resume", "--denials", pause.tool, pause.target),
            )
        )
    for unsettled in status.unsettled:
        checks.append(
            _line(
                "change to settle",
                Level.WARN,
                N_(
                    "%(what)s (%(id)s) ended %(outcome)s, verification %(verification)s: nothing new is "
                    "proposed for that room until a fresh read verifies it or: %(command)s"
                ),
                command=command("acknowledge", unsettled.proposal_id),
                what=change_in_words(
                    unsettled.tool, unsettled.action, unsettled.target_names, unsettled.targets
                ),
                id=visible(unsettled.proposal_id, 40),
                outcome=_raw("doctor outcome", unsettled.outcome),
                verification=_raw("doctor verification", unsettled.verification or "none"),
            )
        )
    return checks


def _posts_here(settings: Settings) -> dict[str, Words]:
    """Where this terminal's settings would have the watch post, by destination name (the
    Slack token and the Teams webhook masked)."""
    where = {"console": Words.of(N_("console (the assistant's log)"))}
    if settings.slack_bot_token is not None:
        where["slack"] = Words.of(
            N_("Slack %(channel)s (token %(token)s)"),
            channel=settings.slack_channel or Words.of(N_("(no channel!)")),
            token=mask(settings.slack_bot_token),
        )
    if settings.teams_webhook_url is not None:
        where["teams"] = Words.of(N_("Teams (webhook %(url)s)"), url=mask(settings.teams_webhook_url))
    return where


def _posts_there(watch: WatchStatus) -> dict[str, Words]:
    """Where the running assistant posts, as it says (`PostCounts`: its own settings)."""
    where: dict[str, Words] = {}
    for posts in watch.posts:
        if posts.destination == "console":
            where["console"] = Words.of(N_("console (the assistant's log)"))
        elif posts.destination == "slack":
            where["slack"] = Words.of(N_("Slack %(channel)s"), channel=visible(posts.to, 80) or "?")
        elif posts.destination == "teams":
            where["teams"] = Words.of(N_("Teams"))
        else:
            where[posts.destination] = Words.of(N_("%(who)s"), who=visible(posts.destination, 40))
    return where


def _where_checks(
    settings: Settings, watch: WatchStatus | None, error: Detail | None, command: Callable[..., str]
) -> list[Check]:
    """Where the watch posts: the running assistant's own destinations when it answers (what
    ``status`` shows), with a warning when this terminal's settings name others (the assistant
    reads its own environment); else this terminal's settings, said to be only that."""
    here = _posts_here(settings)
    if watch is None:
        return [
            _line(
                "watch posts to",
                Level.INFO,
                N_("the running assistant could not be asked (%(why)s); this terminal's settings say: %(x)s"),
                why=error or "",
                x=Joined(", ", tuple(here.values())),
            )
        ]
    there = _posts_there(watch)
    checks = [
        _line(
            "watch posts to",
            Level.INFO,
            N_("%(x)s, as the running assistant says"),
            x=Joined(", ", tuple(there.values())),
        )
    ]
    running_slack = next((p.to for p in watch.posts if p.destination == "slack"), None)
    differs = set(here) != set(there) or (
        running_slack is not None
        and settings.slack_bot_token is not None
        and settings.slack_channel != running_slack
    )
    if differs:
        checks.append(
            _line(
                "watch settings",
                Level.WARN,
                N_(
                    "this terminal's settings would post to %(here)s; the running assistant reads its own "
                    "environment: restart it (%(command)s) to use these"
                ),
                here=Joined(", ", tuple(here.values())),
                command=command("up"),
            )
        )
    return checks


def check_watch(
    settings: Settings,
    watch: WatchStatus | None,
    error: Detail | None,
    command: Callable[..., str] = printed_command,
) -> list[Check]:
    """The watch: alive (a heartbeat read the fleet within three intervals), its posts, and
    where it posts: the running assistant's destinations as it says them (`_where_checks`;
    this terminal's settings only when it does not answer, said so)."""
    name = "watch"
    checks = _where_checks(settings, watch, error, command)
    if watch is None:
        return [
            _line(name, Level.INFO, N_("unknown: the assistant did not answer (%(why)s)"), why=error or ""),
            *checks,
        ]
    read = (
        Words.of(N_("fleet last read at %(at)s"), at=Moment(watch.last_read_at))
        if watch.last_read_at
        else Words.of(N_("the fleet not read yet"))
    )
    if not watch.alive:
        failing: Param = ""
        if watch.failed_beats:
            failing = Words.counted(
                watch.failed_beats,
                Nn_("; %(n)s failed heartbeat (%(code)s)", "; %(n)s failed heartbeats in a row (%(code)s)"),
                code=watch.last_code,
            )
        checks.insert(
            0, _line(name, Level.WARN, N_("not alive: %(read)s%(failing)s"), read=read, failing=failing)
        )
    else:
        checks.insert(
            0,
            _line(
                name,
                Level.OK,
                N_("alive: %(read)s, a heartbeat every %(seconds)s s"),
                read=read,
                seconds=f"{watch.interval_seconds:g}",
            ),
        )
    failed = [p for p in watch.posts if p.failed]
    if failed:
        text = Joined(
            ", ",
            tuple(
                Words.counted(
                    p.failed,
                    Nn_(
                        "%(where)s: %(n)s post failed (%(code)s)", "%(where)s: %(n)s posts failed (%(code)s)"
                    ),
                    where=p.destination,
                    code=p.last_code,
                )
                for p in failed
            ),
        )
        checks.append(
            _line(
                "watch posts",
                Level.WARN,
                N_("%(failed)s; not retried (see the assistant's log)"),
                failed=text,
            )
        )
    return checks


# --- model and ports ---------------------------------------------------------------------------


def mask(secret: Secret) -> str:
    """``…`` and the last four characters (all of it hidden when shorter than 12)."""
    value = secret.reveal()
    return "…" + value[-4:] if len(value) >= 12 else "…"


def model_data_words() -> Words:
    """The "model data" line: exactly the lists of `shared.epiphan.model_data` (the ones
    SECURITY.md and SECURITY.es.md show)."""
    from shared.epiphan.model_data import NEVER_SENT, SENT_TO_MODEL

    return Words.of(
        N_(
            "sent to the model (capped): %(sent)s. Never sent: %(never)s. "
            "Turn it off: leave FLEETWATCH_ANTHROPIC_API_KEY empty"
        ),
        sent=Joined("; ", tuple(Words.of(item) for item in SENT_TO_MODEL)),
        never=Joined("; ", tuple(Words.of(item) for item in NEVER_SENT)),
    )


def model_data_line(language: Language = "en") -> str:
    """`model_data_words` in `language`."""
    return _said(model_data_words(), language)


def check_model(
    settings: Settings, running: ModelInfo | None = None, error: Detail | None = None
) -> list[Check]:
    """Which model answers, and what is sent to it. `running` is what the running assistant
    said (`ModelInfo`); when it did not answer (`error`), this shell's settings are judged and
    the line says so. The key is masked, and shown only from this shell's settings (it never
    crosses a socket)."""
    model, data = "model", "model data"
    if running is None:
        note = Words.of(
            N_(" (from this shell's settings; the assistant did not say: %(why)s)"), why=error or ""
        )
        return _model_from_settings(settings, note)
    if running.kind == "keyword":
        shell: Param = ""
        if settings.anthropic_api_key:
            shell = Words.of(N_(" (this shell's settings name a key: restart the services to use it)"))
        return _keyword_only(
            N_("the running assistant has no model key: keyword answers only%(shell)s"), shell=shell
        )
    where = visible(running.endpoint, 200)
    if running.kind == "demo_model":
        return [
            _line(
                model,
                Level.OK,
                N_(
                    "the running assistant answers with the lab's demo model, a stand-in on this machine at "
                    "%(where)s (not a real model; nothing leaves this machine); set "
                    "FLEETWATCH_ANTHROPIC_API_KEY for the real assistant"
                ),
                where=where,
            ),
            _line(
                data,
                Level.INFO,
                N_("goes to the lab's demo model on this machine only. %(line)s"),
                line=model_data_words(),
            ),
        ]
    key = settings.anthropic_api_key
    shown = Words.of(N_(", key %(key)s (this shell's)"), key=mask(key)) if key is not None else ""
    return [
        _line(
            model,
            Level.OK,
            N_("on: the running assistant answers with %(model)s at %(where)s%(shown)s"),
            model=visible(running.model, 80),
            where=where,
            shown=shown,
        ),
        Check(data, Level.INFO, model_data_words()),
    ]


def _keyword_only(msgid: str, **params: object) -> list[Check]:
    """The model line (`msgid`: why there is none) and "nothing is sent to a model"."""
    return [
        _line("model", Level.INFO, msgid, **params),
        _line("model data", Level.INFO, N_("nothing is sent to a model")),
    ]


def _model_from_settings(settings: Settings, note: Words) -> list[Check]:
    key = settings.anthropic_api_key
    if key is None:
        return _keyword_only(
            N_("off (FLEETWATCH_ANTHROPIC_API_KEY is empty): keyword answers only%(note)s"), note=note
        )
    return [
        _line(
            "model",
            Level.OK,
            N_("on: %(model)s at %(where)s, key %(key)s%(note)s"),
            model=settings.model,
            where=settings.anthropic_base_url or Words.of(N_("Anthropic's API")),
            key=mask(key),
            note=note,
        ),
        Check("model data", Level.INFO, model_data_words()),
    ]


def check_model_host(settings: Settings, *, resolve: Resolver = system_resolver) -> list[Check]:
    """The "model host" line: the host the model's requests go to, the addresses it names, and
    whether all are on this machine or a private network (`shared.web.model_host`). FAIL when
    ``FLEETWATCH_MODEL_LOCAL_ONLY`` is on and it is not (the assistant refuses to start); no
    line without a model key (nothing is sent)."""
    if settings.anthropic_api_key is None:
        return []
    found = model_host(settings.anthropic_base_url, resolve)
    facts = {"host": visible(found.host, 120), "addresses": ", ".join(found.addresses) or "-"}
    name = "model host"
    if found.local:
        mode = "on" if settings.model_local_only else "off"
        msgid = N_(
            "%(host)s (%(addresses)s): local (this machine or a private network); FLEETWATCH_MODEL_LOCAL_ONLY is %(mode)s"
        )
        return [_line(name, Level.OK, msgid, mode=mode, **facts)]
    if settings.model_local_only:
        msgid = N_(
            "%(host)s (%(addresses)s) is not local and FLEETWATCH_MODEL_LOCAL_ONLY is on: the assistant refuses to start"
        )
        return [_line(name, Level.FAIL, msgid, **facts)]
    msgid = N_(
        "%(host)s (%(addresses)s) is not local: questions and what the model reads of the fleet leave "
        "this site (FLEETWATCH_MODEL_LOCAL_ONLY=on keeps a model on site)"
    )
    return [_line(name, Level.INFO, msgid, **facts)]


def is_loopback(address: str) -> bool:
    ip = ip_of(address)
    return ip is not None and ip.is_loopback


def check_ports(settings: Settings, listeners: Sequence[tuple[str, int]] | None) -> list[Check]:
    """The pages' ports (and the lab's) must be bound to loopback only."""
    if listeners is None:
        return [
            _line(
                "ports",
                Level.INFO,
                N_("cannot read /proc/net/tcp: listening addresses not checked"),
            )
        ]
    checks = []
    for what, port in (
        ("approval page", settings.approve_port),
        ("ask page", settings.ask_port),
        ("lab", settings.lab_port),
    ):
        if port == 0:
            continue
        name = f"port {what}"
        bound = sorted({a for a, p in listeners if p == port})
        if not bound:
            checks.append(_line(name, Level.INFO, N_("nothing listens on %(port)s"), port=port))
        else:
            loopback = all(is_loopback(a) for a in bound)
            checks.append(
                _line(
                    name,
                    Level.OK if loopback else Level.FAIL,
                    N_("%(port)s bound to loopback only (%(bound)s)")
                    if loopback
                    else N_("%(port)s bound to %(bound)s: must be 127.0.0.1 only"),
                    port=port,
                    bound=", ".join(bound),
                )
            )
    return checks


# --- pinned tool definitions -------------------------------------------------------------------


def difference_words(difference: ToolDifference) -> Words:
    """One line naming the tool and what differs (joined by ``; ``)."""
    said: list[Param] = [words for w in difference.what if (words := keyed("tool what", w))]
    if difference.arguments is not None:
        said.insert(0, Words.of(ARGUMENTS_DIFFER, **difference.arguments))
    said_kind = keyed(
        "tool difference", difference.kind, tool=difference.tool, what=Joined("; ", tuple(said))
    )
    assert said_kind is not None, difference.kind
    return said_kind


def difference_line(difference: ToolDifference, language: Language) -> str:
    """`difference_words` in `language`."""
    return _said(difference_words(difference), language)


def check_tools(
    report: ToolReport | None, error: Detail | None, command: Callable[..., str] = printed_command
) -> list[Check]:
    """``doctor --live``: Epiphan's tool list against the reviewed policy
    (`shared.policy.definitions`): FAIL for each proposable tool that differs (neither proposed
    nor run until reviewed), WARN for each read tool that changed or went and each new tool,
    OK when all is as reviewed; nothing without ``--live``."""
    name = "tools"
    if report is None and error is None:
        return []
    if report is None:
        return [_line(name, Level.WARN, N_("not compared: %(why)s"), why=error)]
    if report.clean:
        return [_line(name, Level.OK, N_("every tool Epiphan offers is as reviewed in the policy"))]
    return [
        _line(
            name,
            Level.FAIL if d.kind == "proposable" else Level.WARN,
            "%(x)s",
            x=Joined(
                "",
                (difference_words(d), Words.of(N_("; see `%(command)s`"), command=command("tools", "diff"))),
            ),
        )
        for d in report.differences
    ]


# --- the audit export ---------------------------------------------------------------------------


def check_audit_export(settings: Settings, counts: Sequence[SinkCounts]) -> list[Check]:
    """``FLEETWATCH_AUDIT_EXPORT``: where the audit goes and, per writing service, rows sent
    and dropped (WARN when any was dropped). Nothing when it is unset."""
    if settings.audit_export is None:
        return []
    name = C_("doctor check", "audit export")
    target = visible(settings.audit_export, 120)
    if not counts:
        return [_line(name, Level.INFO, N_("to %(target)s: nothing sent yet"), target=target)]
    out = []
    for found in counts:
        level = Level.WARN if found.dropped else Level.OK
        out.append(
            _line(
                name,
                level,
                N_("%(writer)s to %(target)s: %(sent)s sent, %(dropped)s dropped"),
                writer=visible(found.writer, 20),
                target=visible(found.target, 120),
                sent=found.sent,
                dropped=found.dropped,
            )
        )
    return out


# --- two people --------------------------------------------------------------------------------


def check_two_people(settings: Settings, tools: Sequence[str]) -> list[Check]:
    """The tools whose rule asks two people, and, with fewer than two operator accounts
    (``FLEETWATCH_APPROVAL_UIDS``), why they can only be denied (WARN). Nothing when no rule
    asks two."""
    if not tools:
        return []
    name = C_("doctor check", "two people")
    listed = _list(tools)
    if len(settings.approval_uids) < 2:
        forms = Nn_(
            "%(tools)s needs two people, and FLEETWATCH_APPROVAL_UIDS holds one account: "
            "it can only be denied (add a second operator's uid to approve it)",
            "%(tools)s need two people, and FLEETWATCH_APPROVAL_UIDS holds one account: "
            "they can only be denied (add a second operator's uid to approve them)",
        )
        return [Check(name, Level.WARN, Words.counted(len(tools), forms, tools=listed))]
    forms = Nn_(
        "%(tools)s needs two people: two of %(accounts)s operator accounts approve the same card",
        "%(tools)s need two people: two of %(accounts)s operator accounts approve the same card",
    )
    accounts = len(settings.approval_uids)
    return [Check(name, Level.OK, Words.counted(len(tools), forms, tools=listed, accounts=accounts))]


# --- the whole report --------------------------------------------------------------------------


def run_checks(facts: Facts) -> list[Check]:
    """Every check, in report order (their words said when rendered: `render`, `as_json`)."""
    checks = [*check_policy(facts), *check_guard(facts.read_tools), *check_redaction()]
    for name in ("read", "sandbox"):
        checks += check_sign_in(name, facts.slots.get(name, {"present": False}), facts.now, facts.command)
        if facts.live is not None and name in facts.live:
            checks += check_live(name, facts.live[name], facts.now, facts.command)
    checks += check_tools(facts.tools, facts.tools_error, facts.command)
    checks += check_state_modes(facts.state_modes, facts.state_error, facts.command)
    checks += check_fence(facts.settings, facts.status, facts.command)
    checks += check_fence_level(facts.sockets)
    for service in SERVICES:
        if service in facts.sockets:
            checks += check_socket(facts.sockets[service], facts.peers.get(service, ((), ())))
        if service in facts.probes:
            checks += check_probe(facts.probes[service], facts.status)
    checks += check_queue(facts.status, facts.status_error, facts.command)
    checks += check_watch(facts.posting or facts.settings, facts.watch, facts.watch_error, facts.command)
    checks += check_model(facts.settings, facts.model, facts.model_error)
    checks += check_model_host(facts.settings)
    checks += check_ports(facts.settings, facts.listeners)
    checks += check_two_people(facts.settings, facts.two_person_tools)
    checks += check_audit_export(facts.settings, facts.audit_export)
    return checks


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(c.level is Level.FAIL for c in checks) else 0


def render(checks: Sequence[Check], *, language: Language = "en") -> str:
    """One line per check: ``LEVEL  name  message``, all in `language` (English: the levels
    ``OK``, ``WARN``, ``FAIL``, ``INFO``)."""
    catalogue = translations()[language]
    levels = {level: catalogue.pgettext("doctor level", level.value) for level in Level}
    names = [catalogue.pgettext("doctor check", c.name) for c in checks]
    level_width = max(len(word) for word in levels.values())
    width = max((len(name) for name in names), default=0)
    return "\n".join(
        f"{levels[c.level]:<{level_width}}  {name:<{width}}  {_said(c.words, language)}"
        for c, name in zip(checks, names, strict=True)
    )


def as_json(checks: Sequence[Check]) -> dict[str, Any]:
    """``{"checks": [{"name", "level", "message"}], "counts": {level: n}, "exit": 0|1}``, in
    English (for scripts)."""
    counts = {level.value: sum(1 for c in checks if c.level is level) for level in Level}
    return {
        "checks": [{"name": c.name, "level": c.level.value, "message": c.message} for c in checks],
        "counts": counts,
        "exit": exit_code(checks),
    }
