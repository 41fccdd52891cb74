"""``fleetwatch doctor``'s checks: pure functions from gathered facts to result lines.

Each check returns `Check` lines (OK / WARN / FAIL / INFO); any FAIL makes the command exit 1.
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
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from shared.config import Secret, Settings
from shared.errors import Code
from shared.policy.definitions import ARGUMENTS_DIFFER, NOT_OFFERED, ToolDifference, ToolReport
from shared.text.catalogue import C_, N_, Words, say_text, translate, translations
from shared.text.change_words import change, change_in
from shared.text.display import visible
from shared.text.languages import Language
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
    """One line of the report."""

    name: str
    level: Level
    message: str


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

LEVELS: Final[Mapping[Level, str]] = {
    Level.OK: C_("doctor level", "OK"),
    Level.WARN: C_("doctor level", "WARN"),
    Level.FAIL: C_("doctor level", "FAIL"),
    Level.INFO: C_("doctor level", "INFO"),
}
"""Each level in words (English: the level itself, as ``--json`` gives it)."""


def _say(language: Language, msgid: str, **params: object) -> str:
    """`msgid` in `language`, `params` (`Detail` values said in `language` too) put in."""
    text = translate(language, msgid)
    if not params:
        return text
    return text % {k: _detail(language, v) if isinstance(v, Words) else str(v) for k, v in params.items()}


def _detail(language: Language, detail: Detail | None) -> str:
    if isinstance(detail, Words):
        return say_text(detail, language, zone=dt.UTC, now=dt.datetime.now(dt.UTC))
    return detail or ""


def _name(language: Language, name: str) -> str:
    """A check's name (marked ``C_("doctor check", ...)``) in `language`."""
    return translations()[language].pgettext("doctor check", name)


def _check(language: Language, name: str, level: Level, msgid: str, **params: object) -> Check:
    return Check(_name(language, name), level, _say(language, msgid, **params))


def _raw(language: Language, context: str, value: str | None, table: Mapping[str | None, str]) -> str:
    """A raw value (an outcome, a sign-in's kind) in words: English as it is, other languages
    from the catalogue; a value the table does not know stays as it is (made visible)."""
    if value not in table:
        return visible(value or "", 40)
    return translations()[language].pgettext(context, table[value])


OUTCOMES: Final[Mapping[str | None, str]] = {
    "ok": C_("doctor outcome", "ok"),
    "error": C_("doctor outcome", "error"),
    "unknown": C_("doctor outcome", "unknown"),
    "running": C_("doctor outcome", "running"),
    "refused": C_("doctor outcome", "refused"),
}
"""An execution's ``outcome`` (English: the raw value, as the audit has it)."""
VERIFICATIONS: Final[Mapping[str | None, str]] = {
    None: C_("doctor verification", "none"),
    "verified": C_("doctor verification", "verified"),
    "not_observed": C_("doctor verification", "not_observed"),
    "contradicted": C_("doctor verification", "contradicted"),
}
"""A change's verification (English: the raw value)."""
KINDS: Final[Mapping[str | None, str]] = {
    "oauth": C_("sign-in kind", "oauth"),
    "static": C_("sign-in kind", "static"),
    "lab": C_("sign-in kind", "lab"),
}
"""A sign-in's kind (English: the raw value, as the slot holds it)."""


def _list(language: Language, items: Sequence[str]) -> str:
    return ", ".join(items) or _say(language, N_("none"))


# --- policy, guard, redaction ------------------------------------------------------------------


def check_policy(facts: Facts, *, language: Language = "en") -> list[Check]:
    name = C_("doctor check", "policy")
    if facts.policy_error is not None or facts.read_tools is None:
        return [
            _check(
                language, name, Level.FAIL, N_("the policy does not load: %(why)s"), why=facts.policy_error
            )
        ]
    return [
        _check(
            language,
            name,
            Level.OK,
            N_("valid (%(dir)s): %(read)s read tools, %(n)s proposable (%(tools)s)"),
            dir=facts.settings.policy_dir,
            read=len(facts.read_tools),
            n=len(facts.proposable),
            tools=_list(language, facts.proposable),
        )
    ]


def check_guard(read_tools: frozenset[str] | None, *, language: Language = "en") -> list[Check]:
    """Runs the real guard on every Epiphan write tool: each must be refused."""
    from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN, EpiphanError, guard  # when doctor runs

    name = C_("doctor check", "guard")
    if read_tools is None:
        return [_check(language, name, Level.FAIL, N_("cannot check: the policy does not load"))]
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
            _check(
                language,
                name,
                Level.FAIL,
                N_("the read guard does not refuse: %(tools)s"),
                tools=", ".join(let_through),
            )
        ]
    return [
        _check(
            language,
            name,
            Level.OK,
            N_("the read guard refuses all %(n)s write tools"),
            n=len(WRITE_TOOLS_OF_EPIPHAN),
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


def check_redaction(*, language: Language = "en") -> list[Check]:
    """Self-test: planted secrets, an IP address and a serial number in known shapes must not
    survive `shared.epiphan.model_data.for_model` (redaction, then what is withheld from the model)."""
    from shared.epiphan.model_data import for_model  # the redaction patterns: when doctor runs

    name = C_("doctor check", "redaction")
    out = json.dumps(for_model(_SAMPLE))
    leaked = [s for s in _PLANTED if s in out]
    if leaked or "Main hall" not in out:
        what = (
            _say(language, N_("%(n)s of %(all)s planted secrets survive"), n=len(leaked), all=len(_PLANTED))
            if leaked
            else _say(language, N_("it removes names too"))
        )
        return [_check(language, name, Level.FAIL, N_("self-test failed: %(what)s"), what=what)]
    return [
        _check(
            language,
            name,
            Level.OK,
            N_(
                "self-test passed: stream keys, keys in stream URLs (SRT stream IDs too), passwords, bearer "
                "tokens removed; IP addresses and serial numbers withheld from the model"
            ),
        )
    ]


# --- sign-ins and the fence --------------------------------------------------------------------


def _when(seconds: float, language: Language = "en") -> str:
    minutes = abs(seconds) / 60
    span = f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
    return _say(language, N_("in %(span)s") if seconds >= 0 else N_("%(span)s ago"), span=span)


SIGN_IN_NAMES: Final = {
    "read": C_("doctor check", "sign-in read"),
    "sandbox": C_("doctor check", "sign-in sandbox"),
}
LIVE_NAMES: Final = {"read": C_("doctor check", "live read"), "sandbox": C_("doctor check", "live sandbox")}


def check_sign_in(
    name: str, summary: Mapping[str, Any], now: float, *, language: Language = "en"
) -> list[Check]:
    """One slot: present, safe (0600 in 0700, owner), not dead, expiry."""
    label = SIGN_IN_NAMES.get(name, f"sign-in {name}")
    fix = "fleetwatch login --sandbox" if name == "sandbox" else "fleetwatch login"

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_check(language, label, level, msgid, fix=fix, **params)]

    if summary.get("code") == "permission_denied":
        return line(Level.INFO, N_("this user may not look at it (it is the service's): run doctor as root"))
    if not summary.get("present"):
        return line(Level.FAIL, N_("none; run `%(fix)s`"))
    if not summary.get("ok"):
        return line(Level.FAIL, N_("unusable: %(why)s"), why=summary.get("message"))
    where = _say(
        language,
        N_("mode %(mode)s in a %(folder)s folder"),
        mode=summary["mode"],
        folder=summary["folder_mode"],
    )
    if summary.get("folder_mode") != "700":
        return line(Level.FAIL, N_("%(where)s; the folder must be 700"), where=where)
    if summary.get("dead"):
        return line(Level.FAIL, N_("dead (%(why)s); run `%(fix)s`"), why=summary.get("dead_reason"))
    team = (
        _say(language, N_("team %(id)s"), id=summary["team_id"])
        if summary.get("team_id")
        else _say(language, N_("team unknown"))
    )
    head = f"{_raw(language, 'sign-in kind', summary.get('kind'), KINDS)}, {team}, {where}"
    expires_at = summary.get("expires_at")
    if expires_at is None:
        return line(Level.OK, N_("%(head)s; no expiry known"), head=head)
    left = float(expires_at) - now
    when = _when(left, language)
    if left > 0:
        return line(Level.OK, N_("%(head)s; access token ends %(when)s"), head=head, when=when)
    if summary.get("refreshable"):
        return line(
            Level.OK, N_("%(head)s; access token ended %(when)s, refreshed on next use"), head=head, when=when
        )
    return line(
        Level.FAIL, N_("%(head)s; expired %(when)s and cannot refresh; run `%(fix)s`"), head=head, when=when
    )


STATE_MODES: Final = C_("doctor check", "state modes")


def check_state_modes(
    loose: Sequence[tuple[str, str, str]] | None, error: str | None, *, language: Language = "en"
) -> list[Check]:
    """One account's state is its own: folders ``700``, stores, their -wal/-shm and secrets
    ``600`` (``2750``/``640`` in a setgid folder); each path that lets in more is named with
    its mode. No line when not looked at (`Facts.state_modes` None)."""
    if error is not None:
        return [_check(language, STATE_MODES, Level.FAIL, N_("cannot look at the state: %(why)s"), why=error)]
    if loose is None:
        return []
    if not loose:
        return [_check(language, STATE_MODES, Level.OK, N_("only this account may open the state"))]
    each = "; ".join(
        _say(language, N_("%(path)s mode %(mode)s (at most %(allowed)s)"), path=p, mode=m, allowed=a)
        for p, m, a in loose
    )
    return [
        _check(
            language,
            STATE_MODES,
            Level.FAIL,
            N_("other local users may open %(each)s; `fleetwatch up` puts the modes back"),
            each=each,
        )
    ]


_READ_BY: Final = {
    "assistant": N_(" (read by the assistant)"),
    "executor": N_(" (read by the executor)"),
}


def check_live(name: str, proof: LiveProof, now: float, *, language: Language = "en") -> list[Check]:
    """A sign-in proven with one read: accepted, refreshed after a refusal, or refused by
    Epiphan (named as such when this machine's clock still calls the token valid)."""
    label = LIVE_NAMES.get(name, f"live {name}")
    fix = "fleetwatch login --sandbox" if name == "sandbox" else "fleetwatch login"
    by = (
        ""
        if proof.via == "here"
        else _say(language, _READ_BY.get(proof.via, N_(" (read by %(via)s)")), via=proof.via)
    )
    valid = proof.valid_until is not None and proof.valid_until > now
    clock = (
        _say(
            language,
            N_(" although this machine's clock says it is valid %(when)s"),
            when=_when(proof.valid_until - now, language),
        )
        if valid and proof.valid_until is not None
        else ""
    )
    detail = _detail(language, proof.detail)
    if proof.message and language == "en":
        detail = f"{detail}: {proof.message}"

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_check(language, label, level, msgid, by=by, clock=clock, fix=fix, **params)]

    if proof.outcome == "accepted":
        return line(Level.OK, N_("Epiphan accepted it%(by)s: %(n)s device(s) read"), n=proof.devices)
    if proof.outcome == "refreshed":
        return line(
            Level.WARN,
            N_(
                "refused by Epiphan%(clock)s; refreshed, and Epiphan accepted the new token%(by)s"
                " (%(n)s device(s)). Check this machine's clock."
            ),
            n=proof.devices,
        )
    if proof.outcome == "refused":
        return line(Level.FAIL, N_("refused by Epiphan%(clock)s%(by)s; run `%(fix)s`"))
    if proof.outcome == "skipped":
        return line(Level.INFO, N_("not proven: %(why)s"), why=detail)
    return line(Level.FAIL, N_("the read failed%(by)s: %(why)s"), why=detail)


def check_fence(
    settings: Settings, status: Status | None = None, *, language: Language = "en"
) -> list[Check]:
    """The fence in this shell's settings; when they have none but the running approval_web
    reports one (``fleetwatch demo`` sets it in the services' own environment), OK with a
    note, because the services are what refuse or run changes."""
    name = C_("doctor check", "fence")
    parts = []
    if settings.write_team_id is not None:
        parts.append(_say(language, N_("sandbox team %(id)s"), id=settings.write_team_id))
    if settings.write_device_ids:
        parts.append(_say(language, N_("allowlist of %(n)s devices"), n=len(settings.write_device_ids)))
    if not parts and status is not None and status.fence_configured:
        return [
            _check(
                language,
                name,
                Level.OK,
                N_(
                    "configured in the running services' environment (this shell sets none; "
                    "fleetwatch demo sets it for the lab's sandbox team)"
                ),
            )
        ]
    if not parts:
        return [
            _check(
                language,
                name,
                Level.FAIL,
                N_(
                    "not configured: set FLEETWATCH_WRITE_TEAM_ID and/or FLEETWATCH_WRITE_DEVICE_IDS "
                    "(until then nothing can be proposed or run)"
                ),
            )
        ]
    return [Check(_name(language, name), Level.OK, _say(language, N_(" and ")).join(parts))]


def check_fence_level(sockets: Mapping[str, SocketFacts], *, language: Language = "en") -> list[Check]:
    """ "OS-level, separate users" when the running services' sockets have three different
    owners; "process-level, same user" when they share one."""
    name = C_("doctor check", "fence level")
    owners = {
        s: f.owner or str(f.uid) for s, f in sockets.items() if f.state == "present" and f.uid is not None
    }
    if len(owners) < 2:
        return [_check(language, name, Level.INFO, N_("unknown: fewer than two services are running"))]
    listing = ", ".join(
        _say(language, N_("%(service)s as %(user)s"), service=s, user=o) for s, o in owners.items()
    )
    distinct = len(set(owners.values()))
    if distinct == len(owners):
        return [
            _check(language, name, Level.OK, N_("OS-level, separate users (%(listing)s)"), listing=listing)
        ]
    if distinct == 1:
        return [
            _check(
                language,
                name,
                Level.INFO,
                N_("process-level, same user (%(listing)s); on a server use the systemd units for OS-level"),
                listing=listing,
            )
        ]
    return [
        _check(
            language, name, Level.WARN, N_("mixed: some services share a user (%(listing)s)"), listing=listing
        )
    ]


# --- sockets, services, queue ------------------------------------------------------------------

SOCKET_NAMES: Final = {
    "executor": C_("doctor check", "socket executor"),
    "approval_web": C_("doctor check", "socket approval_web"),
    "assistant": C_("doctor check", "socket assistant"),
}
SERVICE_NAMES: Final = {
    "executor": C_("doctor check", "service executor"),
    "approval_web": C_("doctor check", "service approval_web"),
    "assistant": C_("doctor check", "service assistant"),
}


def check_socket(
    facts: SocketFacts, peers: tuple[tuple[str, ...], tuple[str, ...]], *, language: Language = "en"
) -> list[Check]:
    label = SOCKET_NAMES.get(facts.service, f"socket {facts.service}")
    uids, gids = peers
    allowed = _say(
        language,
        N_("peers: uids %(uids)s; gids %(gids)s"),
        uids=_list(language, uids),
        gids=_list(language, gids),
    )

    def line(level: Level, msgid: str, **params: object) -> list[Check]:
        return [_check(language, label, level, msgid, path=facts.path, allowed=allowed, **params)]

    if facts.state == "missing":
        return line(Level.INFO, N_("%(path)s does not exist (service not running); %(allowed)s"))
    if facts.state == "denied":
        return line(Level.INFO, N_("%(path)s: this user may not look; %(allowed)s"))
    if facts.state == "not_socket":
        return line(Level.FAIL, N_("%(path)s exists and is not a socket"))
    mode, folder = facts.mode or 0, facts.folder_mode or 0
    where = _say(
        language,
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
    return [Check(_name(language, label), Level.OK, where)]


def check_probe(probe: Probe, status: Status | None, *, language: Language = "en") -> list[Check]:
    """A probe's answer. A probe skipped because this user is not on the socket's allowlist
    (connecting would be refused and audited) is judged by approval_web's `Status` instead."""
    label = SERVICE_NAMES.get(probe.service, f"service {probe.service}")
    detail = _detail(language, probe.detail)
    if probe.message and language == "en":
        detail = f"{detail}: {probe.message}"

    def line(level: Level, msgid: str) -> list[Check]:
        return [_check(language, label, level, msgid, detail=detail)]

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


def check_queue(status: Status | None, error: Detail | None, *, language: Language = "en") -> list[Check]:
    name = C_("doctor check", "queue")
    if status is None:
        return [
            _check(
                language,
                name,
                Level.INFO,
                N_("unknown: approval_web did not answer GetStatus (%(why)s)"),
                why=_detail(language, error),
            )
        ]
    text = _say(
        language,
        N_(
            "%(pending)s/%(max_pending)s pending, %(last_hour)s/%(per_hour)s in the last hour, "
            "%(kill_switch)s, autonomy %(autonomy)s, %(executor)s"
        ),
        pending=status.pending,
        max_pending=status.max_pending,
        last_hour=status.last_hour,
        per_hour=status.per_hour,
        kill_switch=_say(language, N_("kill switch ON") if status.kill_switch else N_("kill switch off")),
        autonomy=status.autonomy,
        executor=_say(
            language,
            N_("executor up (as approval_web sees it)")
            if status.executor_up
            else N_("executor DOWN (as approval_web sees it)"),
        ),
    )
    full = status.pending >= status.max_pending or status.last_hour >= status.per_hour
    level = Level.WARN if full or status.kill_switch or not status.executor_up else Level.OK
    checks = [Check(_name(language, name), level, text)]
    for pause in status.pauses:
        room = visible(pause.target_name, 80) or visible(pause.target, 40)
        checks.append(
            _check(
                language,
                C_("doctor check", "denial pause"),
                Level.WARN,
                N_(
                    "%(change)s in %(room)s paused until %(until)s (UTC) after %(n)s denials; lift it: "
                    "fleetwatch resume --denials %(tool)s %(target)s"
                ),
                change=change(pause.tool, None, language),
                room=room,
                until=pause.until,
                n=pause.denials,
                tool=visible(pause.tool, 60),
                target=visible(pause.target, 40),
            )
        )
    for unsettled in status.unsettled:
        what = change_in(
            unsettled.tool, unsettled.action, unsettled.target_names, unsettled.targets, language
        )
        checks.append(
            _check(
                language,
                C_("doctor check", "change to settle"),
                Level.WARN,
                N_(
                    "%(what)s (%(id)s) ended %(outcome)s, verification %(verification)s: nothing new is "
                    "proposed for that room until a fresh read verifies it or: fleetwatch acknowledge %(id)s"
                ),
                what=what,
                id=visible(unsettled.proposal_id, 40),
                outcome=_raw(language, "doctor outcome", unsettled.outcome, OUTCOMES),
                verification=_raw(language, "doctor verification", unsettled.verification, VERIFICATIONS),
            )
        )
    return checks


def check_watch(
    settings: Settings, watch: WatchStatus | None, error: Detail | None, *, language: Language = "en"
) -> list[Check]:
    """The watch: alive (a heartbeat read the fleet within three intervals), its posts, and
    where it posts (the Slack token and the Teams webhook masked)."""
    name = C_("doctor check", "watch")
    where = [_say(language, N_("console (the assistant's log)"))]
    if settings.slack_bot_token is not None:
        where.append(
            _say(
                language,
                N_("Slack %(channel)s (token %(token)s)"),
                channel=settings.slack_channel or _say(language, N_("(no channel!)")),
                token=mask(settings.slack_bot_token),
            )
        )
    if settings.teams_webhook_url is not None:
        where.append(_say(language, N_("Teams (webhook %(url)s)"), url=mask(settings.teams_webhook_url)))
    checks = [Check(_name(language, C_("doctor check", "watch posts to")), Level.INFO, ", ".join(where))]
    if watch is None:
        return [
            _check(
                language,
                name,
                Level.INFO,
                N_("unknown: the assistant did not answer (%(why)s)"),
                why=_detail(language, error),
            ),
            *checks,
        ]
    read = (
        _say(language, N_("fleet last read at %(at)s"), at=watch.last_read_at)
        if watch.last_read_at
        else _say(language, N_("the fleet not read yet"))
    )
    if not watch.alive:
        failing = (
            _say(
                language,
                N_("; %(n)s failed heartbeat(s) in a row (%(code)s)"),
                n=watch.failed_beats,
                code=watch.last_code,
            )
            if watch.failed_beats
            else ""
        )
        checks.insert(
            0,
            _check(
                language, name, Level.WARN, N_("not alive: %(read)s%(failing)s"), read=read, failing=failing
            ),
        )
    else:
        checks.insert(
            0,
            _check(
                language,
                name,
                Level.OK,
                N_("alive: %(read)s, a heartbeat every %(seconds)s s"),
                read=read,
                seconds=f"{watch.interval_seconds:g}",
            ),
        )
    failed = [p for p in watch.posts if p.failed]
    if failed:
        text = ", ".join(
            _say(
                language,
                N_("%(where)s: %(n)s failed (%(code)s)"),
                where=p.destination,
                n=p.failed,
                code=p.last_code,
            )
            for p in failed
        )
        checks.append(
            _check(
                language,
                C_("doctor check", "watch posts"),
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


def model_data_line(language: Language = "en") -> str:
    """The "model data" line: exactly the lists of `shared.epiphan.model_data` (the ones SECURITY.md
    and SECURITY.es.md show), in `language`."""
    from shared.epiphan.model_data import NEVER_SENT, SENT_TO_MODEL

    def said(item: Any) -> str:
        return str(item.es if language == "es" else item.en)

    return _say(
        language,
        N_(
            "sent to the model (capped): %(sent)s. Never sent: %(never)s. "
            "Turn it off: leave FLEETWATCH_ANTHROPIC_API_KEY empty"
        ),
        sent="; ".join(said(i) for i in SENT_TO_MODEL),
        never="; ".join(said(i) for i in NEVER_SENT),
    )


def check_model(
    settings: Settings,
    running: ModelInfo | None = None,
    error: Detail | None = None,
    *,
    language: Language = "en",
) -> list[Check]:
    """Which model answers, and what is sent to it. `running` is what the running assistant
    said (`ModelInfo`); when it did not answer (`error`), this shell's settings are judged and
    the line says so. The key is masked, and shown only from this shell's settings (it never
    crosses a socket)."""
    model, data = C_("doctor check", "model"), C_("doctor check", "model data")
    if running is None:
        return _model_from_settings(
            settings,
            _say(
                language,
                N_(" (from this shell's settings; the assistant did not say: %(why)s)"),
                why=_detail(language, error),
            ),
            language,
        )
    if running.kind == "keyword":
        shell = (
            _say(language, N_(" (this shell's settings name a key: restart the services to use it)"))
            if settings.anthropic_api_key
            else ""
        )
        return _keyword_only(
            language, N_("the running assistant has no model key: keyword answers only%(shell)s"), shell=shell
        )
    where = visible(running.endpoint, 200)
    if running.kind == "demo_model":
        return [
            _check(
                language,
                model,
                Level.OK,
                N_(
                    "the running assistant answers with the lab's demo model, a stand-in on this machine at "
                    "%(where)s (not a real model; nothing leaves this machine); set "
                    "FLEETWATCH_ANTHROPIC_API_KEY for the real assistant"
                ),
                where=where,
            ),
            _check(
                language,
                data,
                Level.INFO,
                N_("goes to the lab's demo model on this machine only. %(line)s"),
                line=model_data_line(language),
            ),
        ]
    key = settings.anthropic_api_key
    shown = _say(language, N_(", key %(key)s (this shell's)"), key=mask(key)) if key is not None else ""
    return [
        _check(
            language,
            model,
            Level.OK,
            N_("on: the running assistant answers with %(model)s at %(where)s%(shown)s"),
            model=visible(running.model, 80),
            where=where,
            shown=shown,
        ),
        Check(_name(language, data), Level.INFO, model_data_line(language)),
    ]


def _keyword_only(language: Language, msgid: str, **params: object) -> list[Check]:
    """The model line (`msgid`: why there is none) and "nothing is sent to a model"."""
    return [
        _check(language, C_("doctor check", "model"), Level.INFO, msgid, **params),
        _check(language, C_("doctor check", "model data"), Level.INFO, N_("nothing is sent to a model")),
    ]


def _model_from_settings(settings: Settings, note: str, language: Language) -> list[Check]:
    model, data = C_("doctor check", "model"), C_("doctor check", "model data")
    key = settings.anthropic_api_key
    if key is None:
        return _keyword_only(
            language,
            N_("off (FLEETWATCH_ANTHROPIC_API_KEY is empty): keyword answers only%(note)s"),
            note=note,
        )
    where = settings.anthropic_base_url or _say(language, N_("Anthropic's API"))
    return [
        _check(
            language,
            model,
            Level.OK,
            N_("on: %(model)s at %(where)s, key %(key)s%(note)s"),
            model=settings.model,
            where=where,
            key=mask(key),
            note=note,
        ),
        Check(_name(language, data), Level.INFO, model_data_line(language)),
    ]


def is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


PORT_NAMES: Final = {
    "approval page": C_("doctor check", "port approval page"),
    "ask page": C_("doctor check", "port ask page"),
    "lab": C_("doctor check", "port lab"),
}


def check_ports(
    settings: Settings, listeners: Sequence[tuple[str, int]] | None, *, language: Language = "en"
) -> list[Check]:
    """The pages' ports (and the lab's) must be bound to loopback only."""
    if listeners is None:
        return [
            _check(
                language,
                C_("doctor check", "ports"),
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
        name = PORT_NAMES[what]
        bound = sorted({a for a, p in listeners if p == port})
        if not bound:
            checks.append(_check(language, name, Level.INFO, N_("nothing listens on %(port)s"), port=port))
        else:
            loopback = all(is_loopback(a) for a in bound)
            checks.append(
                _check(
                    language,
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

TOOL_WHAT: Final[Mapping[str, str]] = {
    NOT_OFFERED: N_("not offered by the server"),
    "input schema": N_("input schema"),
    "description": N_("description"),
}
"""The words of what can differ (the arguments' line stays as the comparison wrote it)."""

TOOL_KINDS: Final[Mapping[str, str]] = {
    "proposable": N_("proposable tool %(tool)s: not proposed or run until reviewed (%(what)s)"),
    "read": N_("read tool %(tool)s: %(what)s"),
    "new": N_("new tool %(tool)s: offered by the server, on neither list; never called"),
}


def what_differs(difference: ToolDifference, language: Language) -> str:
    """What differs of one tool, in `language`, joined by ``; ``."""
    said = [translate(language, TOOL_WHAT[w]) for w in difference.what if w in TOOL_WHAT]
    if difference.arguments is not None:
        said.insert(0, translate(language, ARGUMENTS_DIFFER) % difference.arguments)
    return "; ".join(said)


def difference_line(difference: ToolDifference, language: Language) -> str:
    """One line naming the tool and what differs, in `language`."""
    text = translate(language, TOOL_KINDS[difference.kind])
    return text % {"tool": difference.tool, "what": what_differs(difference, language)}


def check_tools(report: ToolReport | None, error: Detail | None, *, language: Language = "en") -> list[Check]:
    """``doctor --live``: Epiphan's tool list against the reviewed policy
    (`shared.policy.definitions`): FAIL for each proposable tool that differs (neither proposed
    nor run until reviewed), WARN for each read tool that changed or went and each new tool,
    OK when all is as reviewed; nothing without ``--live``."""
    name = C_("doctor check", "tools")
    if report is None and error is None:
        return []
    if report is None:
        return [_check(language, name, Level.WARN, N_("not compared: %(why)s"), why=error)]
    if report.clean:
        return [
            _check(language, name, Level.OK, N_("every tool Epiphan offers is as reviewed in the policy"))
        ]
    see = _say(language, N_("; see `fleetwatch tools diff`"))
    return [
        Check(
            _name(language, name),
            Level.FAIL if d.kind == "proposable" else Level.WARN,
            difference_line(d, language) + see,
        )
        for d in report.differences
    ]


# --- the audit export ---------------------------------------------------------------------------


def check_audit_export(
    settings: Settings, counts: Sequence[SinkCounts], *, language: Language = "en"
) -> list[Check]:
    """``FLEETWATCH_AUDIT_EXPORT``: where the audit goes and, per writing service, rows sent
    and dropped (WARN when any was dropped). Nothing when it is unset."""
    if settings.audit_export is None:
        return []
    name = C_("doctor check", "audit export")
    target = visible(settings.audit_export, 120)
    if not counts:
        return [_check(language, name, Level.INFO, N_("to %(target)s: nothing sent yet"), target=target)]
    out = []
    for found in counts:
        level = Level.WARN if found.dropped else Level.OK
        out.append(
            _check(
                language,
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


def check_two_people(settings: Settings, tools: Sequence[str], *, language: Language = "en") -> list[Check]:
    """The tools whose rule asks two people, and, with fewer than two operator accounts
    (``FLEETWATCH_APPROVAL_UIDS``), why they can only be denied (WARN). Nothing when no rule
    asks two."""
    if not tools:
        return []
    name = C_("doctor check", "two people")
    listed = _list(language, tools)
    if len(settings.approval_uids) < 2:
        return [
            _check(
                language,
                name,
                Level.WARN,
                N_(
                    "%(tools)s need two people, and FLEETWATCH_APPROVAL_UIDS holds one account: "
                    "they can only be denied (add a second operator's uid to approve them)"
                ),
                tools=listed,
            )
        ]
    return [
        _check(
            language,
            name,
            Level.OK,
            N_("%(tools)s need two people: two of %(n)s operator accounts approve the same card"),
            tools=listed,
            n=len(settings.approval_uids),
        )
    ]


# --- the whole report --------------------------------------------------------------------------


def run_checks(facts: Facts, *, language: Language = "en") -> list[Check]:
    """Every check, in report order, its names and lines in `language` (English: as
    ``--json`` gives them)."""
    say: dict[str, Any] = {"language": language}
    checks = [
        *check_policy(facts, **say),
        *check_guard(facts.read_tools, **say),
        *check_redaction(**say),
    ]
    for name in ("read", "sandbox"):
        checks += check_sign_in(name, facts.slots.get(name, {"present": False}), facts.now, **say)
        if facts.live is not None and name in facts.live:
            checks += check_live(name, facts.live[name], facts.now, **say)
    checks += check_tools(facts.tools, facts.tools_error, **say)
    checks += check_state_modes(facts.state_modes, facts.state_error, **say)
    checks += check_fence(facts.settings, facts.status, **say)
    checks += check_fence_level(facts.sockets, **say)
    for service in SERVICES:
        if service in facts.sockets:
            checks += check_socket(facts.sockets[service], facts.peers.get(service, ((), ())), **say)
        if service in facts.probes:
            checks += check_probe(facts.probes[service], facts.status, **say)
    checks += check_queue(facts.status, facts.status_error, **say)
    checks += check_watch(facts.settings, facts.watch, facts.watch_error, **say)
    checks += check_model(facts.settings, facts.model, facts.model_error, **say)
    checks += check_ports(facts.settings, facts.listeners, **say)
    checks += check_two_people(facts.settings, facts.two_person_tools, **say)
    checks += check_audit_export(facts.settings, facts.audit_export, **say)
    return checks


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(c.level is Level.FAIL for c in checks) else 0


def render(checks: Sequence[Check], *, language: Language = "en") -> str:
    """One line per check: ``LEVEL  name  message``, the level in words in `language`
    (English: ``OK``, ``WARN``, ``FAIL``, ``INFO``)."""
    catalogue = translations()[language]
    levels = {level: catalogue.pgettext("doctor level", LEVELS[level]) for level in Level}
    level_width = max(len(word) for word in levels.values())
    width = max((len(c.name) for c in checks), default=0)
    return "\n".join(f"{levels[c.level]:<{level_width}}  {c.name:<{width}}  {c.message}" for c in checks)


def as_json(checks: Sequence[Check]) -> dict[str, Any]:
    """``{"checks": [{"name", "level", "message"}], "counts": {level: n}, "exit": 0|1}``, as
    the checks were said (`run_checks` in English for ``--json``)."""
    counts = {level.value: sum(1 for c in checks if c.level is level) for level in Level}
    return {
        "checks": [{"name": c.name, "level": c.level.value, "message": c.message} for c in checks],
        "counts": counts,
        "exit": exit_code(checks),
    }
