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
the slot's clock says when a token ends, Epiphan says whether it still takes it.
"""

from __future__ import annotations

import enum
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.config import Secret, Settings
from shared.epiphan.model_data import NEVER_SENT, SENT_TO_MODEL, for_model
from shared.epiphan.read_client import WRITE_TOOLS_OF_EPIPHAN, EpiphanError, guard
from shared.errors import Code
from shared.text.change_words import change, change_in
from shared.text.display import visible
from shared.wire.approval import Status
from shared.wire.assistant import ModelInfo, WatchStatus

SERVICES = ("executor", "approval_web", "assistant")
"""The three services, in start order; each serves one socket."""


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
    detail: str = ""


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
    status_error: str | None = None
    watch: WatchStatus | None = None
    watch_error: str | None = None
    listeners: tuple[tuple[str, int], ...] | None = None
    live: Mapping[str, LiveProof] | None = None
    model: ModelInfo | None = None
    model_error: str | None = None


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
        detail: the code or reason, for a person.
        valid_until: the slot's ``expires_at`` (epoch seconds) as this machine read it before
            the read, when known.
    """

    via: str
    outcome: str
    devices: int | None = None
    detail: str = ""
    valid_until: float | None = None


# --- policy, guard, redaction ------------------------------------------------------------------


def check_policy(facts: Facts) -> list[Check]:
    if facts.policy_error is not None or facts.read_tools is None:
        return [Check("policy", Level.FAIL, f"the policy does not load: {facts.policy_error}")]
    return [
        Check(
            "policy",
            Level.OK,
            f"valid ({facts.settings.policy_dir}): {len(facts.read_tools)} read tools, "
            f"{len(facts.proposable)} proposable ({', '.join(facts.proposable) or 'none'})",
        )
    ]


def check_guard(read_tools: frozenset[str] | None) -> list[Check]:
    """Runs the real guard on every Epiphan write tool: each must be refused."""
    if read_tools is None:
        return [Check("guard", Level.FAIL, "cannot check: the policy does not load")]
    let_through = []
    for tool in sorted(WRITE_TOOLS_OF_EPIPHAN):
        try:
            guard(tool, read_tools)
        except EpiphanError as exc:
            if exc.code == Code.TOOL_NOT_ALLOWED:
                continue
        let_through.append(tool)
    if let_through:
        return [Check("guard", Level.FAIL, f"the read guard does not refuse: {', '.join(let_through)}")]
    return [Check("guard", Level.OK, f"the read guard refuses all {len(WRITE_TOOLS_OF_EPIPHAN)} write tools")]


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
    out = json.dumps(for_model(_SAMPLE))
    leaked = [s for s in _PLANTED if s in out]
    if leaked or "Main hall" not in out:
        what = (
            f"{len(leaked)} of {len(_PLANTED)} planted secrets survive" if leaked else "it removes names too"
        )
        return [Check("redaction", Level.FAIL, f"self-test failed: {what}")]
    return [
        Check(
            "redaction",
            Level.OK,
            "self-test passed: stream keys, keys in stream URLs (SRT stream IDs too), passwords, bearer "
            "tokens removed; IP addresses and serial numbers withheld from the model",
        )
    ]


# --- sign-ins and the fence --------------------------------------------------------------------


def _when(seconds: float) -> str:
    minutes = abs(seconds) / 60
    span = f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
    return f"in {span}" if seconds >= 0 else f"{span} ago"


def check_sign_in(name: str, summary: Mapping[str, Any], now: float) -> list[Check]:
    """One slot: present, safe (0600 in 0700, owner), not dead, expiry."""
    label = f"sign-in {name}"
    fix = "fleetwatch login --sandbox" if name == "sandbox" else "fleetwatch login"
    if summary.get("code") == "permission_denied":
        return [
            Check(label, Level.INFO, "this user may not look at it (it is the service's): run doctor as root")
        ]
    if not summary.get("present"):
        return [Check(label, Level.FAIL, f"none; run `{fix}`")]
    if not summary.get("ok"):
        return [Check(label, Level.FAIL, f"unusable: {summary.get('message')}")]
    where = f"mode {summary['mode']} in a {summary['folder_mode']} folder"
    if summary.get("folder_mode") != "700":
        return [Check(label, Level.FAIL, f"{where}; the folder must be 700")]
    if summary.get("dead"):
        return [Check(label, Level.FAIL, f"dead ({summary.get('dead_reason')}); run `{fix}`")]
    team = f"team {summary['team_id']}" if summary.get("team_id") else "team unknown"
    head = f"{summary['kind']}, {team}, {where}"
    expires_at = summary.get("expires_at")
    if expires_at is None:
        return [Check(label, Level.OK, f"{head}; no expiry known")]
    left = float(expires_at) - now
    if left > 0:
        return [Check(label, Level.OK, f"{head}; access token ends {_when(left)}")]
    if summary.get("refreshable"):
        return [Check(label, Level.OK, f"{head}; access token ended {_when(left)}, refreshed on next use")]
    return [Check(label, Level.FAIL, f"{head}; expired {_when(left)} and cannot refresh; run `{fix}`")]


def check_live(name: str, proof: LiveProof, now: float) -> list[Check]:
    """A sign-in proven with one read: accepted, refreshed after a refusal, or refused by
    Epiphan (named as such when this machine's clock still calls the token valid)."""
    label = f"live {name}"
    fix = "fleetwatch login --sandbox" if name == "sandbox" else "fleetwatch login"
    by = "" if proof.via == "here" else f" (read by the {proof.via})"
    valid = proof.valid_until is not None and proof.valid_until > now
    clock = (
        f" although this machine's clock says it is valid {_when(proof.valid_until - now)}" if valid else ""
    )
    if proof.outcome == "accepted":
        return [Check(label, Level.OK, f"Epiphan accepted it{by}: {proof.devices} device(s) read")]
    if proof.outcome == "refreshed":
        return [
            Check(
                label,
                Level.WARN,
                f"refused by Epiphan{clock}; refreshed, and Epiphan accepted the new token{by}"
                f" ({proof.devices} device(s)). Check this machine's clock.",
            )
        ]
    if proof.outcome == "refused":
        return [Check(label, Level.FAIL, f"refused by Epiphan{clock}{by}; run `{fix}`")]
    if proof.outcome == "skipped":
        return [Check(label, Level.INFO, f"not proven: {proof.detail}")]
    return [Check(label, Level.FAIL, f"the read failed{by}: {proof.detail}")]


def check_fence(settings: Settings, status: Status | None = None) -> list[Check]:
    """The fence in this shell's settings; when they have none but the running approval_web
    reports one (``fleetwatch demo`` sets it in the services' own environment), OK with a
    note, because the services are what refuse or run changes."""
    parts = []
    if settings.write_team_id is not None:
        parts.append(f"sandbox team {settings.write_team_id}")
    if settings.write_device_ids:
        parts.append(f"allowlist of {len(settings.write_device_ids)} devices")
    if not parts and status is not None and status.fence_configured:
        return [
            Check(
                "fence",
                Level.OK,
                "configured in the running services' environment (this shell sets none; "
                "fleetwatch demo sets it for the lab's sandbox team)",
            )
        ]
    if not parts:
        return [
            Check(
                "fence",
                Level.FAIL,
                "not configured: set FLEETWATCH_WRITE_TEAM_ID and/or FLEETWATCH_WRITE_DEVICE_IDS "
                "(until then nothing can be proposed or run)",
            )
        ]
    return [Check("fence", Level.OK, " and ".join(parts))]


def check_fence_level(sockets: Mapping[str, SocketFacts]) -> list[Check]:
    """ "OS-level, separate users" when the running services' sockets have three different
    owners; "process-level, same user" when they share one."""
    owners = {
        s: f.owner or str(f.uid) for s, f in sockets.items() if f.state == "present" and f.uid is not None
    }
    if len(owners) < 2:
        return [Check("fence level", Level.INFO, "unknown: fewer than two services are running")]
    listing = ", ".join(f"{s} as {o}" for s, o in owners.items())
    distinct = len(set(owners.values()))
    if distinct == len(owners):
        return [Check("fence level", Level.OK, f"OS-level, separate users ({listing})")]
    if distinct == 1:
        return [
            Check(
                "fence level",
                Level.INFO,
                f"process-level, same user ({listing}); on a server use the systemd units for OS-level",
            )
        ]
    return [Check("fence level", Level.WARN, f"mixed: some services share a user ({listing})")]


# --- sockets, services, queue ------------------------------------------------------------------


def check_socket(facts: SocketFacts, peers: tuple[tuple[str, ...], tuple[str, ...]]) -> list[Check]:
    label = f"socket {facts.service}"
    uids, gids = peers
    allowed = "peers: uids " + (", ".join(uids) or "none") + "; gids " + (", ".join(gids) or "none")
    if facts.state == "missing":
        return [Check(label, Level.INFO, f"{facts.path} does not exist (service not running); {allowed}")]
    if facts.state == "denied":
        return [Check(label, Level.INFO, f"{facts.path}: this user may not look; {allowed}")]
    if facts.state == "not_socket":
        return [Check(label, Level.FAIL, f"{facts.path} exists and is not a socket")]
    mode, folder = facts.mode or 0, facts.folder_mode or 0
    where = f"{facts.path} mode {mode:o} {facts.owner}:{facts.group}, folder {folder:o}; {allowed}"
    if mode & 0o006 or folder & 0o002:
        return [
            Check(
                label, Level.WARN, f"{where}: anyone on this host may connect (the peer check still refuses)"
            )
        ]
    return [Check(label, Level.OK, where)]


def check_probe(probe: Probe, status: Status | None) -> list[Check]:
    """A probe's answer. A probe skipped because this user is not on the socket's allowlist
    (connecting would be refused and audited) is judged by approval_web's `Status` instead."""
    label = f"service {probe.service}"
    if probe.answer == "skipped":
        if probe.service == "executor" and status is not None:
            up = status.executor_up
            return [
                Check(
                    label,
                    Level.OK if up else Level.FAIL,
                    f"{'up' if up else 'DOWN'} (as approval_web sees it)",
                )
            ]
        return [Check(label, Level.INFO, f"not probed: {probe.detail}")]
    if probe.answer == "up":
        return [Check(label, Level.OK, "up (answered capabilities)")]
    if probe.answer == "refused":
        return [Check(label, Level.OK, "up; it refuses this user (its peer check works)")]
    if probe.answer == "unreachable":
        return [Check(label, Level.INFO, f"this user may not open its socket ({probe.detail})")]
    return [Check(label, Level.FAIL, f"not running or not answering ({probe.detail})")]


def check_queue(status: Status | None, error: str | None) -> list[Check]:
    if status is None:
        return [Check("queue", Level.INFO, f"unknown: approval_web did not answer GetStatus ({error})")]
    text = (
        f"{status.pending}/{status.max_pending} pending, {status.last_hour}/{status.per_hour} in the last hour, "
        f"kill switch {'ON' if status.kill_switch else 'off'}, autonomy {status.autonomy}, "
        f"executor {'up' if status.executor_up else 'DOWN'} (as approval_web sees it)"
    )
    full = status.pending >= status.max_pending or status.last_hour >= status.per_hour
    level = Level.WARN if full or status.kill_switch or not status.executor_up else Level.OK
    checks = [Check("queue", level, text)]
    for pause in status.pauses:
        room = visible(pause.target_name, 80) or visible(pause.target, 40)
        checks.append(
            Check(
                "denial pause",
                Level.WARN,
                f"{change(pause.tool, None, 'en')} in {room} paused until {pause.until} (UTC) after "
                f"{pause.denials} denials; lift it: fleetwatch resume --denials {visible(pause.tool, 60)} "
                f"{visible(pause.target, 40)}",
            )
        )
    for unsettled in status.unsettled:
        what = change_in(unsettled.tool, unsettled.action, unsettled.target_names, unsettled.targets, "en")
        checks.append(
            Check(
                "change to settle",
                Level.WARN,
                f"{what} ({visible(unsettled.proposal_id, 40)}) ended {visible(unsettled.outcome, 20)}, "
                f"verification {visible(unsettled.verification or 'none', 20)}: nothing new is proposed "
                f"for that room until a fresh read verifies it or: fleetwatch acknowledge "
                f"{visible(unsettled.proposal_id, 40)}",
            )
        )
    return checks


def check_watch(settings: Settings, watch: WatchStatus | None, error: str | None) -> list[Check]:
    """The watch: alive (a heartbeat read the fleet within three intervals), its posts, and
    where it posts (the Slack token and the Teams webhook masked)."""
    where = ["console (the assistant's log)"]
    if settings.slack_bot_token is not None:
        where.append(
            f"Slack {settings.slack_channel or '(no channel!)'} (token {mask(settings.slack_bot_token)})"
        )
    if settings.teams_webhook_url is not None:
        where.append(f"Teams (webhook {mask(settings.teams_webhook_url)})")
    checks = [Check("watch posts to", Level.INFO, ", ".join(where))]
    if watch is None:
        return [Check("watch", Level.INFO, f"unknown: the assistant did not answer ({error})"), *checks]
    read = f"fleet last read at {watch.last_read_at}" if watch.last_read_at else "the fleet not read yet"
    if not watch.alive:
        failing = (
            f"; {watch.failed_beats} failed heartbeat(s) in a row ({watch.last_code})"
            if watch.failed_beats
            else ""
        )
        checks.insert(0, Check("watch", Level.WARN, f"not alive: {read}{failing}"))
    else:
        checks.insert(
            0, Check("watch", Level.OK, f"alive: {read}, a heartbeat every {watch.interval_seconds:g} s")
        )
    failed = [p for p in watch.posts if p.failed]
    if failed:
        text = ", ".join(f"{p.destination}: {p.failed} failed ({p.last_code})" for p in failed)
        checks.append(Check("watch posts", Level.WARN, f"{text}; not retried (see the assistant's log)"))
    return checks


# --- model and ports ---------------------------------------------------------------------------


def mask(secret: Secret) -> str:
    """``…`` and the last four characters (all of it hidden when shorter than 12)."""
    value = secret.reveal()
    return "…" + value[-4:] if len(value) >= 12 else "…"


def model_data_line() -> str:
    """The "model data" line: exactly the lists of `shared.epiphan.model_data` (the ones SECURITY.md
    shows), in English."""
    return (
        f"sent to the model (capped): {'; '.join(i.en for i in SENT_TO_MODEL)}. "
        f"Never sent: {'; '.join(i.en for i in NEVER_SENT)}. "
        "Turn it off: leave FLEETWATCH_ANTHROPIC_API_KEY empty"
    )


def check_model(
    settings: Settings, running: ModelInfo | None = None, error: str | None = None
) -> list[Check]:
    """Which model answers, and what is sent to it. `running` is what the running assistant
    said (`ModelInfo`); when it did not answer (`error`), this shell's settings are judged and
    the line says so. The key is masked, and shown only from this shell's settings (it never
    crosses a socket)."""
    if running is None:
        return _model_from_settings(
            settings, f" (from this shell's settings; the assistant did not say: {error})"
        )
    if running.kind == "keyword":
        shell = (
            " (this shell's settings name a key: restart the services to use it)"
            if settings.anthropic_api_key
            else ""
        )
        return [
            Check(
                "model", Level.INFO, f"the running assistant has no model key: keyword answers only{shell}"
            ),
            Check("model data", Level.INFO, "nothing is sent to a model"),
        ]
    where = visible(running.endpoint, 200)
    if running.kind == "demo_model":
        return [
            Check(
                "model",
                Level.OK,
                f"the running assistant answers with the lab's demo model, a stand-in on this machine at "
                f"{where} (not a real model; nothing leaves this machine); set FLEETWATCH_ANTHROPIC_API_KEY "
                "for the real assistant",
            ),
            Check(
                "model data",
                Level.INFO,
                f"goes to the lab's demo model on this machine only. {model_data_line()}",
            ),
        ]
    key = settings.anthropic_api_key
    shown = f", key {mask(key)} (this shell's)" if key is not None else ""
    return [
        Check(
            "model",
            Level.OK,
            f"on: the running assistant answers with {visible(running.model, 80)} at {where}{shown}",
        ),
        Check("model data", Level.INFO, model_data_line()),
    ]


def _model_from_settings(settings: Settings, note: str) -> list[Check]:
    key = settings.anthropic_api_key
    if key is None:
        return [
            Check(
                "model",
                Level.INFO,
                f"off (FLEETWATCH_ANTHROPIC_API_KEY is empty): keyword answers only{note}",
            ),
            Check("model data", Level.INFO, "nothing is sent to a model"),
        ]
    where = settings.anthropic_base_url or "Anthropic's API"
    return [
        Check("model", Level.OK, f"on: {settings.model} at {where}, key {mask(key)}{note}"),
        Check("model data", Level.INFO, model_data_line()),
    ]


def is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def check_ports(settings: Settings, listeners: Sequence[tuple[str, int]] | None) -> list[Check]:
    """The pages' ports (and the lab's) must be bound to loopback only."""
    if listeners is None:
        return [Check("ports", Level.INFO, "cannot read /proc/net/tcp: listening addresses not checked")]
    checks = []
    for what, port in (
        ("approval page", settings.approve_port),
        ("ask page", settings.ask_port),
        ("lab", settings.lab_port),
    ):
        if port == 0:
            continue
        bound = sorted({a for a, p in listeners if p == port})
        if not bound:
            checks.append(Check(f"port {what}", Level.INFO, f"nothing listens on {port}"))
        elif all(is_loopback(a) for a in bound):
            checks.append(
                Check(f"port {what}", Level.OK, f"{port} bound to loopback only ({', '.join(bound)})")
            )
        else:
            checks.append(
                Check(
                    f"port {what}", Level.FAIL, f"{port} bound to {', '.join(bound)}: must be 127.0.0.1 only"
                )
            )
    return checks


# --- the whole report --------------------------------------------------------------------------


def run_checks(facts: Facts) -> list[Check]:
    """Every check, in report order."""
    checks = [*check_policy(facts), *check_guard(facts.read_tools), *check_redaction()]
    for name in ("read", "sandbox"):
        checks += check_sign_in(name, facts.slots.get(name, {"present": False}), facts.now)
        if facts.live is not None and name in facts.live:
            checks += check_live(name, facts.live[name], facts.now)
    checks += check_fence(facts.settings, facts.status)
    checks += check_fence_level(facts.sockets)
    for service in SERVICES:
        if service in facts.sockets:
            checks += check_socket(facts.sockets[service], facts.peers.get(service, ((), ())))
        if service in facts.probes:
            checks += check_probe(facts.probes[service], facts.status)
    checks += check_queue(facts.status, facts.status_error)
    checks += check_watch(facts.settings, facts.watch, facts.watch_error)
    checks += check_model(facts.settings, facts.model, facts.model_error)
    checks += check_ports(facts.settings, facts.listeners)
    return checks


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(c.level is Level.FAIL for c in checks) else 0


def render(checks: Sequence[Check]) -> str:
    """One line per check: ``LEVEL  name: message``."""
    width = max((len(c.name) for c in checks), default=0)
    return "\n".join(f"{c.level.value:<4}  {c.name:<{width}}  {c.message}" for c in checks)


def as_json(checks: Sequence[Check]) -> dict[str, Any]:
    counts = {level.value: sum(1 for c in checks if c.level is level) for level in Level}
    return {
        "checks": [{"name": c.name, "level": c.level.value, "message": c.message} for c in checks],
        "counts": counts,
        "exit": exit_code(checks),
    }
