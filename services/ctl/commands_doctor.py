"""``fleetwatch doctor [--json] [--live]``: gather the facts (files, sockets, ``/proc/net``),
run the pure checks of `services.ctl.doctor`, print one line per check; exit 1 when any check
FAILs.

A socket whose allowlist does not include this user is not connected to (the service would
refuse and audit the attempt): the executor is then judged by approval_web's ``GetStatus``.

``--live`` proves each sign-in with one read (`prove_read`, `prove_sandbox`): the read sign-in
here when this user may read its slot (refreshing as the services do), else through the
assistant (``GetFleet``); the sandbox sign-in always through its one holder, the executor
(``ListWritable`` on approval.sock: nothing here reads the sandbox token). It also compares
Epiphan's tool list, listed through the read sign-in when this user may read its slot, with the
reviewed policy (`compared_tools`, as ``fleetwatch tools diff``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import grp
import os
import pwd
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from gettext import gettext as _
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.ctl import add_language_option
from services.ctl.commands_tools import tool_definitions
from services.ctl.demo_env import services_settings
from services.ctl.doctor import (
    SERVICES,
    Check,
    Detail,
    Facts,
    LiveProof,
    Probe,
    SocketFacts,
    as_json,
    exit_code,
    render,
    run_checks,
)
from services.ctl.doctor_compose import READERS, check_compose, parse_ids
from services.ctl.doctor_slack import check_slack_asks, preflight
from services.ctl.output import print_json
from services.ctl.supervise import ServerLayout, account_modes, chosen_ports
from shared.config import Settings, given, home_given, load_settings, load_settings_with
from shared.epiphan.fleet import parse_devices
from shared.epiphan.signed_session import SignedConnection
from shared.epiphan.slots import slot_summary
from shared.errors import Code, FleetwatchError
from shared.policy.definitions import ToolReport
from shared.private_files import UnsafePath
from shared.text.catalogue import Words, keyed, placeholder
from shared.text.command_line import printed_command
from shared.text.languages import language_of
from shared.web.loopback_peer import LISTEN, read_tables, table_rows
from shared.wire.approval import ApprovalClient, GetStatus, Status
from shared.wire.assistant import AssistantClient, GetFleet, GetModel, GetWatchStatus, ModelInfo, WatchStatus
from shared.wire.client import CallError, SocketClient
from shared.wire.executor import ListWritable
from shared.wire.protocol import GetCapabilities

if TYPE_CHECKING:
    from shared.policy.model import ToolPolicy

PROBE_SECONDS = 3.0
"""Bound on each socket request doctor makes (seconds)."""


def add_commands(sub: argparse._SubParsersAction, epilog: str) -> None:
    """Add ``doctor`` to the command tree."""
    doctor = sub.add_parser(
        "doctor",
        help=_("check the setup: policy, guard, redaction, sign-ins, fence, sockets, services, model, ports"),
        epilog=epilog,
    )
    doctor.add_argument("--json", action="store_true", help=_("print JSON instead of lines (in English)"))
    add_language_option(doctor)
    doctor.add_argument(
        "--live",
        action="store_true",
        help=_(
            "also prove each sign-in with one read (Epiphan's word, not the clock's), and compare "
            "Epiphan's tool list with the reviewed policy"
        ),
    )
    doctor.add_argument(
        "--compose",
        metavar=placeholder("FILE"),
        help=_(
            "also check a compose file (deploy/container/compose.yaml): its services' users against "
            "the uids in their settings and in this command's"
        ),
    )
    doctor.set_defaults(run=doctor_command)


async def doctor_command(args: argparse.Namespace) -> int:
    settings = running_settings()
    language = "en" if args.json else language_of(args.language or settings.language)
    command = functools.partial(printed_command, language=language, home=home_given())
    running = services_settings(settings, args.language or settings.language)
    facts, slack = await asyncio.gather(gather(settings, live=args.live, command=command), preflight(running))
    facts = dataclasses.replace(facts, posting=running)
    checks = run_checks(facts) + check_slack_asks(running, slack) + compose_checks(args.compose)
    if args.json:
        print_json(as_json(checks))  # for scripts: English
    else:
        print(render(checks, language=language))
    return exit_code(checks)


def running_settings(env: Mapping[str, str] | None = None) -> Settings:
    """The settings of `env` (default: this terminal's) with the ports ``up --free-ports`` chose
    for this home's running services (`services.ctl.supervise.chosen_ports`): doctor checks the
    ports the pages really listen on."""
    return load_settings_with(chosen_ports(load_settings(env)), env)


def compose_checks(path: str | None) -> list[Check]:
    """``--compose``: `services.ctl.doctor_compose.check_compose` of the compose file at `path`
    against the allowlists this command was given (none without ``--compose``); a file that
    cannot be read or parsed is one FAIL."""
    if path is None:
        return []
    import yaml

    try:
        compose = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        compose = {"unreadable": type(exc).__name__}
    given_ids = {name: ids_given(name) for name in READERS}
    return check_compose(compose, given_ids, env={})


def ids_given(name: str) -> frozenset[int] | None:
    """The ids the setting `name` was given in this environment (None: not set, or not ids)."""
    raw = given(name)
    return None if raw is None else parse_ids(raw)


def _sockets(settings: Settings) -> dict[str, Path]:
    return dict(
        zip(
            SERVICES,
            (settings.executor_socket, settings.approval_socket, settings.assistant_socket),
            strict=True,
        )
    )


def _allowlists(settings: Settings) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
    return {
        "executor": (settings.executor_uids, settings.executor_gids),
        "approval_web": (settings.approval_uids | settings.assistant_uids, settings.approval_gids),
        "assistant": (settings.assistant_uids, settings.assistant_gids),
    }


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def socket_facts(service: str, path: Path) -> SocketFacts:
    """What this user can see of a socket (following the operators' links)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return SocketFacts(service, str(path), "missing")
    except PermissionError:
        return SocketFacts(service, str(path), "denied")
    if not stat.S_ISSOCK(info.st_mode):
        return SocketFacts(service, str(path), "not_socket")
    try:
        folder_mode: int | None = stat.S_IMODE(path.resolve().parent.stat().st_mode)
    except OSError:
        folder_mode = None
    return SocketFacts(
        service,
        str(path),
        "present",
        mode=stat.S_IMODE(info.st_mode),
        uid=info.st_uid,
        gid=info.st_gid,
        owner=user_name(info.st_uid),
        group=group_name(info.st_gid),
        folder_mode=folder_mode,
        connectable=os.access(path, os.W_OK),
    )


def allowed_here(uids: frozenset[int], gids: frozenset[int]) -> bool:
    """Would this process pass the socket's peer check (uid, gid or a supplementary group)?"""
    return os.getuid() in uids or bool(({os.getgid(), *os.getgroups()}) & gids)


async def probe(facts: SocketFacts, allowed: bool) -> Probe:
    """``GetCapabilities`` on a socket this user may use."""
    if facts.state == "missing":
        return Probe(facts.service, "down", probe_detail("missing", path=facts.path))
    if not allowed:
        return Probe(facts.service, "skipped", probe_detail("not_allowed"))
    if facts.state != "present" or not facts.connectable:
        return Probe(facts.service, "unreachable", probe_detail("denied"))
    try:
        await SocketClient(facts.path, timeout_seconds=PROBE_SECONDS).call(GetCapabilities())
    except CallError as exc:
        answer = "refused" if exc.code is Code.PEER_NOT_ALLOWED else "down"
        return Probe(facts.service, answer, str(exc.code), exc.message)
    return Probe(facts.service, "up")


def probe_detail(kind: str, **params: object) -> Words:
    """Why a socket or a sign-in was not asked (the catalogue's ``probe detail`` `kind`), as
    `Words` (``path``, ``socket`` where it names one)."""
    words = keyed("probe detail", kind, **params)
    assert words is not None, kind
    return words


def _not_askable(facts: SocketFacts, allowed: bool) -> Words | None:
    """Why a request cannot be sent on `facts`' socket from this user, or None when it can."""
    if facts.state == "missing":
        return probe_detail("missing", path=facts.path)
    if facts.state != "present" or not allowed or not facts.connectable:
        return probe_detail("not_for_this_user", socket=Path(facts.path).name)
    return None


async def queue_status(facts: SocketFacts, allowed: bool) -> tuple[Status | None, Detail | None]:
    """approval.sock's `Status`, or why not."""
    why_not = _not_askable(facts, allowed)
    if why_not is not None:
        return None, why_not
    try:
        return await ApprovalClient(facts.path, timeout_seconds=PROBE_SECONDS).call(GetStatus()), None
    except CallError as exc:
        return None, str(exc.code)


async def running_model(facts: SocketFacts, allowed: bool) -> tuple[ModelInfo | None, Detail | None]:
    """The running assistant's `ModelInfo` (``GetModel`` on assistant.sock), or why not."""
    why_not = _not_askable(facts, allowed)
    if why_not is not None:
        return None, why_not
    try:
        return await AssistantClient(facts.path, timeout_seconds=PROBE_SECONDS).call(GetModel()), None
    except CallError as exc:
        return None, str(exc.code)


async def watch_status(facts: SocketFacts, allowed: bool) -> tuple[WatchStatus | None, Detail | None]:
    """The watch's status from assistant.sock (``GetWatchStatus``), or why not."""
    why_not = _not_askable(facts, allowed)
    if why_not is not None:
        return None, why_not
    try:
        return await AssistantClient(facts.path, timeout_seconds=PROBE_SECONDS).call(GetWatchStatus()), None
    except CallError as exc:
        return None, str(exc.code)


def _export_counts(settings: Settings) -> tuple[Any, ...]:
    """Each writing service's continuous audit export counts (none when it is unset)."""
    if settings.audit_export is None:
        return ()
    from shared.store.audit_export import sink_counts  # only when an export is set

    found = (sink_counts(settings.db, writer) for writer in ("approval_web", "executor"))
    return tuple(c for c in found if c is not None)


def parse_listeners(texts: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """(address, port) of each listening TCP socket in ``/proc/net/tcp`` / ``tcp6`` text."""
    return tuple(local for local, _remote, state, _uid in table_rows(texts) if state == LISTEN)


def read_listeners() -> tuple[tuple[str, int], ...] | None:
    texts = read_tables()
    return parse_listeners(texts) if texts else None


LIVE_SECONDS = 60.0
"""Bound on each live proof (a read through a service may read the whole team)."""
REFUSED_BY_EPIPHAN = frozenset({Code.EPIPHAN_AUTH, Code.SIGN_IN_DEAD})
"""The codes that mean Epiphan itself refused the sign-in (its token, or its refresh), whatever
this machine's clock says."""


def _expires(summary: Mapping[str, Any]) -> float | None:
    value = summary.get("expires_at") if summary.get("ok") else None
    return float(value) if isinstance(value, int | float) else None


async def prove_read(
    settings: Settings, read_tools: frozenset[str], summary: Mapping[str, Any], allowed: bool
) -> LiveProof:
    """The read sign-in proven with one ``get_devices_in_my_team``, here when this user may read
    its slot, else by the assistant (`GetFleet`); `allowed`: this user may use assistant.sock."""
    valid_until = _expires(summary)
    if summary.get("ok"):
        try:
            async with SignedConnection(
                settings.read_token_file, settings.epiphan_mcp_url, timeout_seconds=LIVE_SECONDS
            ) as session:
                data = await session.read(read_tools, lambda client: client.call("get_devices_in_my_team"))
                outcome = "refreshed" if session.refreshed else "accepted"
        except FleetwatchError as exc:
            refused = exc.code in REFUSED_BY_EPIPHAN
            return LiveProof(
                "here",
                "refused" if refused else "failed",
                detail=str(exc.code),
                message=exc.message,
                valid_until=valid_until,
            )
        try:
            _, devices = parse_devices(data)
        except FleetwatchError as exc:
            return LiveProof(
                "here", "failed", detail=str(exc.code), message=exc.message, valid_until=valid_until
            )
        return LiveProof("here", outcome, devices=len(devices), valid_until=valid_until)
    if not allowed:
        return LiveProof("assistant", "skipped", detail=probe_detail("neither"))
    client = AssistantClient(settings.assistant_socket, timeout_seconds=LIVE_SECONDS)
    try:
        snapshot = (await client.call(GetFleet())).snapshot
    except CallError as exc:
        outcome = "refused" if exc.code in REFUSED_BY_EPIPHAN else "failed"
        return LiveProof(
            "assistant", outcome, detail=str(exc.code), message=exc.message, valid_until=valid_until
        )
    return LiveProof("assistant", "accepted", devices=len(snapshot.devices), valid_until=valid_until)


async def prove_sandbox(settings: Settings, summary: Mapping[str, Any], allowed: bool) -> LiveProof:
    """The sandbox sign-in proven by the executor (``ListWritable`` relayed by approval.sock:
    its fresh read of the sandbox team); `allowed`: this user may use approval.sock."""
    valid_until = _expires(summary)
    if not allowed:
        return LiveProof("executor", "skipped", detail=probe_detail("not_approval"))
    client = ApprovalClient(settings.approval_socket, timeout_seconds=LIVE_SECONDS)
    try:
        writable = await client.call(ListWritable())
    except CallError as exc:
        if exc.code is Code.FENCE_NOT_CONFIGURED:
            return LiveProof("executor", "skipped", detail=probe_detail("no_fence"))
        outcome = "refused" if exc.code in REFUSED_BY_EPIPHAN else "failed"
        return LiveProof(
            "executor", outcome, detail=str(exc.code), message=exc.message, valid_until=valid_until
        )
    return LiveProof("executor", "accepted", devices=len(writable.devices), valid_until=valid_until)


async def compared_tools(
    settings: Settings, tool_policy: ToolPolicy | None, summary: Mapping[str, Any]
) -> tuple[ToolReport | None, Detail | None]:
    """``--live``: Epiphan's tool list through the read sign-in (when this user may read its
    slot) against the reviewed policy (`services.ctl.commands_tools.tool_definitions`), or why
    not."""
    if tool_policy is None:
        return None, probe_detail("no_policy")
    if not summary.get("ok"):
        return None, probe_detail("no_read_slot")
    try:
        return await tool_definitions(settings, tool_policy), None
    except FleetwatchError as exc:
        return None, f"{exc.code}: {exc.message}"


def state_modes(settings: Settings) -> tuple[tuple[tuple[str, str, str], ...] | None, str | None]:
    """On one account, what of the state others may open (`private_tree`, changing nothing),
    and why it could not be looked at; (None, None) on install.sh's layout (its own modes)."""
    if ServerLayout.of(settings) is not None:
        return None, None
    try:
        loose = account_modes(settings, fix=False)
    except UnsafePath as exc:
        return None, exc.message
    except PermissionError as exc:
        return None, f"{exc.filename}: {exc.strerror}"
    return tuple((str(path), f"{found:o}", f"{allowed:o}") for path, found, allowed in loose), None


async def gather(
    settings: Settings, *, live: bool = False, command: Callable[..., str] = printed_command
) -> Facts:
    """Every fact the checks need, read now (with `live`, the sign-ins proven too); `command`
    prints the commands the lines give (`Facts.command`)."""
    from shared.policy.loader import load_policies  # jsonschema and yaml: only when doctor runs

    read_tools, proposable, policy_error, tool_policy = None, (), None, None
    try:
        _policy, tool_policy = load_policies(settings.policy_dir, settings.policy_override)
        read_tools, proposable = tool_policy.read_tools, tuple(sorted(tool_policy.propose))
    except FleetwatchError as exc:
        policy_error = exc.message
    sockets = {service: socket_facts(service, path) for service, path in _sockets(settings).items()}
    allowlists = _allowlists(settings)
    allowed = {s: allowed_here(*allowlists[s]) for s in SERVICES}
    probes = await asyncio.gather(*(probe(sockets[s], allowed[s]) for s in SERVICES))
    status, status_error = await queue_status(sockets["approval_web"], allowed["approval_web"])
    slots = {
        "read": slot_summary(settings.read_token_file),
        "sandbox": slot_summary(settings.sandbox_token_file),
    }
    proofs, tools, tools_error = None, None, None
    if live:
        tools, tools_error = await compared_tools(settings, tool_policy, slots["read"])
        read_proof, sandbox_proof = await asyncio.gather(
            prove_read(settings, read_tools or frozenset(), slots["read"], allowed["assistant"]),
            prove_sandbox(settings, slots["sandbox"], allowed["approval_web"]),
        )
        proofs = {"read": read_proof, "sandbox": sandbox_proof}
    model, model_error = await running_model(sockets["assistant"], allowed["assistant"])
    watch, watch_error = await watch_status(sockets["assistant"], allowed["assistant"])
    peers = {
        s: (
            tuple(f"{user_name(u)}({u})" for u in sorted(uids)),
            tuple(f"{group_name(g)}({g})" for g in sorted(gids)),
        )
        for s, (uids, gids) in allowlists.items()
    }
    loose, loose_error = state_modes(settings)
    return Facts(
        command=command,
        settings=settings,
        now=time.time(),
        state_modes=loose,
        state_error=loose_error,
        read_tools=read_tools,
        proposable=proposable,
        audit_export=_export_counts(settings),
        two_person_tools=tuple(
            t for t in proposable if tool_policy and tool_policy.propose[t].approvers >= 2
        ),
        policy_error=policy_error,
        slots=slots,
        live=proofs,
        sockets=sockets,
        probes={p.service: p for p in probes},
        peers=peers,
        status=status,
        status_error=status_error,
        watch=watch,
        watch_error=watch_error,
        listeners=read_listeners(),
        model=model,
        model_error=model_error,
        tools=tools,
        tools_error=tools_error,
    )
