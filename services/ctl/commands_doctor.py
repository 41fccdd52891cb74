"""``fleetwatch doctor [--json]``: gather the facts (files, sockets, ``/proc/net``), run the
pure checks of `services.ctl.doctor`, print one line per check; exit 1 when any check FAILs.

A socket whose allowlist does not include this user is not connected to (the service would
refuse and audit the attempt): the executor is then judged by approval_web's ``GetStatus``.
"""

from __future__ import annotations

import argparse
import asyncio
import grp
import ipaddress
import os
import pwd
import stat
import time
from collections.abc import Iterable
from pathlib import Path

from services.ctl.doctor import SERVICES, Facts, Probe, SocketFacts, as_json, exit_code, render, run_checks
from services.ctl.output import print_json
from shared.config import Settings, load_settings
from shared.epiphan.slots import slot_summary
from shared.errors import Code, FleetwatchError
from shared.policy.loader import load_policies
from shared.wire.approval import ApprovalClient, Status
from shared.wire.assistant import AssistantClient, ModelInfo
from shared.wire.client import CallError, SocketClient

PROBE_SECONDS = 3.0
"""Bound on each socket request doctor makes (seconds)."""
_PROC_TCP = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def add_commands(sub: argparse._SubParsersAction, epilog: str) -> None:
    """Add ``doctor`` to the command tree."""
    doctor = sub.add_parser(
        "doctor",
        help="check the setup: policy, guard, redaction, sign-ins, fence, sockets, services, model, ports",
        epilog=epilog,
    )
    doctor.add_argument("--json", action="store_true", help="print JSON instead of lines")
    doctor.set_defaults(run=doctor_command)


async def doctor_command(args: argparse.Namespace) -> int:
    checks = run_checks(await gather(load_settings()))
    if args.json:
        print_json(as_json(checks))
    else:
        print(render(checks))
    return exit_code(checks)


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
        return Probe(facts.service, "down", f"no socket at {facts.path}")
    if not allowed:
        return Probe(facts.service, "skipped", "this user is not on its allowlist")
    if facts.state != "present" or not facts.connectable:
        return Probe(facts.service, "unreachable", "permission denied")
    try:
        await SocketClient(facts.path, timeout_seconds=PROBE_SECONDS).capabilities()
    except CallError as exc:
        answer = "refused" if exc.code is Code.PEER_NOT_ALLOWED else "down"
        return Probe(facts.service, answer, f"{exc.code}: {exc.message}")
    return Probe(facts.service, "up")


def _not_askable(facts: SocketFacts, allowed: bool) -> str | None:
    """Why a request cannot be sent on `facts`' socket from this user, or None when it can."""
    if facts.state == "missing":
        return f"no socket at {facts.path}"
    if facts.state != "present" or not allowed or not facts.connectable:
        return f"{Path(facts.path).name} is not for this user"
    return None


async def queue_status(facts: SocketFacts, allowed: bool) -> tuple[Status | None, str | None]:
    """approval.sock's `Status`, or why not."""
    why_not = _not_askable(facts, allowed)
    if why_not is not None:
        return None, why_not
    try:
        return await ApprovalClient(facts.path, timeout_seconds=PROBE_SECONDS).status(), None
    except CallError as exc:
        return None, str(exc.code)


async def running_model(facts: SocketFacts, allowed: bool) -> tuple[ModelInfo | None, str | None]:
    """The running assistant's `ModelInfo` (``GetModel`` on assistant.sock), or why not."""
    why_not = _not_askable(facts, allowed)
    if why_not is not None:
        return None, why_not
    try:
        return await AssistantClient(facts.path, timeout_seconds=PROBE_SECONDS).get_model(), None
    except CallError as exc:
        return None, str(exc.code)


def parse_listeners(texts: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """(address, port) of each listening TCP socket in ``/proc/net/tcp`` / ``tcp6`` text."""
    found = []
    for text in texts:
        for line in text.splitlines()[1:]:
            fields = line.split()
            if len(fields) < 4 or fields[3] != "0A":  # 0A: LISTEN
                continue
            address_hex, port_hex = fields[1].split(":")
            raw = bytes.fromhex(address_hex)
            # The kernel prints each 32-bit word in host (little-endian) order.
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            if len(words) == 4:
                address = ".".join(str(b) for b in words)
            else:
                address = str(ipaddress.IPv6Address(words))
            found.append((address, int(port_hex, 16)))
    return tuple(found)


def read_listeners() -> tuple[tuple[str, int], ...] | None:
    texts = []
    for path in _PROC_TCP:
        try:
            texts.append(path.read_text())
        except OSError:
            continue
    return parse_listeners(texts) if texts else None


async def gather(settings: Settings) -> Facts:
    """Every fact the checks need, read now."""
    read_tools, proposable, policy_error = None, (), None
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
    model, model_error = await running_model(sockets["assistant"], allowed["assistant"])
    peers = {
        s: (
            tuple(f"{user_name(u)}({u})" for u in sorted(uids)),
            tuple(f"{group_name(g)}({g})" for g in sorted(gids)),
        )
        for s, (uids, gids) in allowlists.items()
    }
    return Facts(
        settings=settings,
        now=time.time(),
        read_tools=read_tools,
        proposable=proposable,
        policy_error=policy_error,
        slots={
            "read": slot_summary(settings.read_token_file),
            "sandbox": slot_summary(settings.sandbox_token_file),
        },
        sockets=sockets,
        probes={p.service: p for p in probes},
        peers=peers,
        status=status,
        status_error=status_error,
        listeners=read_listeners(),
        model=model,
        model_error=model_error,
    )
