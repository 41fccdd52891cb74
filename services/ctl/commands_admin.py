"""Socket-level admin commands of ``fleetwatch``: they talk to approval_web over approval.sock.

``pending list``, ``pending show ID``, ``deny ID``, ``deny-all``, ``pause``, ``resume``,
``resume --denials [TOOL ROOM]``, ``acknowledge ID``, ``audit tail [-n N]``, ``audit verify``,
``status`` and ``propose TOOL --arg k=v ... --reason``.
Every one takes ``--json``. None approves: approving happens only on the approval page, by a
person. ``propose`` drafts a proposal as an operator through the same intake as the
assistant's; it still waits for a person on the page.

Every name, argument and reason that came from the fleet or the model passes through
`shared.text.display.visible` before a terminal shows it; ``--json`` output escapes hidden
characters as ``\\uXXXX`` (valid, lossless JSON a terminal cannot be tricked by).

Errors: a refusal from the service (or the service not running) is raised by the socket's
client as `shared.wire.client.CallError` with the service's code; ``main`` prints one line
``fleetwatch: <code>: <message>`` and exits 2. ``audit verify`` exits 1 when the chain is broken
or a service could not check its rows.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import Any, TypeVar

from services.ctl import CtlError, commands_watch
from services.ctl.output import print_json
from shared.canonical import CanonicalError, parse_json_strict
from shared.config import load_settings
from shared.errors import MEANINGS, Code
from shared.text.change_words import change, change_in
from shared.text.display import visible
from shared.wire.approval import (
    ApprovalClient,
    AuditReport,
    AuditRow,
    DenialPause,
    ProposalDetail,
    ProposalSummary,
    Status,
    SubmitProposal,
)
from shared.wire.protocol import Message

R = TypeVar("R", bound=Message)

TIMEOUT_SECONDS = 10.0
"""Timeout of one admin request on approval.sock."""
PROPOSE_TIMEOUT_SECONDS = 30.0
"""Timeout of ``propose``: the intake asks the executor to read the sandbox team afresh."""
AUDIT_TIMEOUT_SECONDS = 120.0
"""Timeout of ``audit verify``: both services walk the whole log."""
TEXT_CAP = 8000
"""Longest text shown for one argument or reason (it is never cut below what the intake accepts)."""
NEEDS_PAGE = "It still needs a person to approve it on the approval page."


# --- the socket ----------------------------------------------------------------------------


def approval_client(*, timeout_seconds: float = TIMEOUT_SECONDS) -> ApprovalClient:
    """approval.sock's client, from the settings (``FLEETWATCH_RUNTIME_DIR``). Its calls raise
    `CallError` (a `FleetwatchError`): approval_web's refusal, or ``service_unavailable`` /
    ``service_no_answer`` when it does not answer."""
    return ApprovalClient(load_settings().approval_socket, timeout_seconds=timeout_seconds)


# --- output --------------------------------------------------------------------------------


def _argument_text(value: Any) -> str:
    return visible(json.dumps(value, ensure_ascii=False, sort_keys=True), TEXT_CAP)


def render_pending(items: Sequence[ProposalSummary], not_run: Sequence[ProposalSummary] = ()) -> str:
    """The pending queue, oldest first: ID, tool, targets, who proposed, times (UTC); then the
    approved proposals of the last day that ended without running, and why."""
    lines = [f"{len(items)} proposal(s) waiting for a person on the approval page:"] if items else []
    if not items:
        lines.append("No proposals are waiting.")
    for item in items:
        targets = ", ".join(visible(t, 40) for t in item.targets)
        lines.append(
            f"  {visible(item.proposal_id, 40)}  {visible(item.tool, 60)} on {targets}"
            f"  by {visible(item.proposed_by, 20)}  created {item.created_at}  expires {item.expires_at}"
        )
    if not_run:
        lines.append(f"Approved in the last 24 hours but not run ({len(not_run)}):")
    for item in not_run:
        targets = ", ".join(visible(t, 40) for t in item.targets)
        lines.append(
            f"  {visible(item.proposal_id, 40)}  {visible(item.tool, 60)} on {targets}"
            f"  not run: {visible(item.status_code or 'no reason recorded', 40)}"
        )
    return "\n".join(lines)


def render_detail(detail: ProposalDetail) -> str:
    """One proposal in full: every argument, age, time to expiry, fingerprint hash, who
    proposed, its outcome and verification if it ran, and the reason (labelled as unchecked)."""
    summary = detail.summary
    lines = [
        f"Proposal {visible(summary.proposal_id, 40)} ({visible(summary.status, 20)})",
        f"  Tool:          {visible(summary.tool, 60)} (schema version {detail.schema_version})",
        f"  Targets:       {', '.join(visible(t, 40) for t in summary.targets)}",
        "  Arguments:",
        *(f"    {visible(k, 60)} = {_argument_text(v)}" for k, v in sorted(detail.arguments.items())),
        f"  Proposed by:   {visible(summary.proposed_by, 20)}",
        f"  Created:       {summary.created_at} ({detail.age_seconds} s ago)",
    ]
    if detail.expires_in_seconds is not None:
        lines.append(
            f"  Expires:       {summary.expires_at} (in {detail.expires_in_seconds} s, unless approved or denied)"
        )
    if summary.status == "not_run":
        why = summary.status_code or ""
        meaning = next((MEANINGS[c] for c in Code if c.value == why), "nothing ran")
        lines.append(f"  Not run:       {visible(why or 'no reason recorded', 40)}: {meaning}")
    lines.append(f"  Fingerprint:   {visible(detail.fingerprint_hash, 80)}")
    if detail.outcome is not None:
        outcome = visible(detail.outcome, 20)
        if detail.refusal_code:
            outcome += f" ({visible(detail.refusal_code, 40)}: nothing ran)"
        lines.append(f"  Outcome:       {outcome}")
        lines.append(f"  Verification:  {visible(detail.verification or 'none recorded', 20)}")
    for key, value in sorted(detail.detail.items()):
        lines.append(f"  {visible(key, 40)}: {_argument_text(value)}")
    lines.append("  Reason (written by the assistant or operator, not checked):")
    lines.extend(f"    {visible(line, TEXT_CAP)}" for line in (detail.reason.splitlines() or [""]))
    return "\n".join(lines)


def pause_words(pause: DenialPause, *, lifted: bool = False) -> str:
    """One denial pause in words: the change, the room (its name and ID), until when (or, once
    `lifted`, until when it would have run) and why."""
    room = (
        f"{visible(pause.target_name, 80)} ({visible(pause.target, 40)})"
        if pause.target_name
        else visible(pause.target, 40)
    )
    return (
        f"{change(pause.tool, None, 'en')} ({visible(pause.tool, 60)}) in {room} "
        f"{'would have been paused' if lifted else 'is paused'} until {pause.until} (UTC), "
        f"after {pause.denials} denials"
    )


def render_status(status: Status) -> str:
    """The queue, caps, pauses, changes to settle, kill switch, executor, fence and autonomy in
    plain words, with the command that lifts a pause or settles a change."""
    lines = [
        f"Queue:        {status.pending} of {status.max_pending} pending",
        f"Last hour:    {status.last_hour} of {status.per_hour} proposals (denied ones not counted)",
    ]
    for pause in status.pauses:
        lines.append(f"Paused:       {pause_words(pause)}")
        lines.append(
            f"              lift it: fleetwatch resume --denials {visible(pause.tool, 60)} {visible(pause.target, 40)}"
        )
    for unsettled in status.unsettled:
        what = change_in(unsettled.tool, unsettled.action, unsettled.target_names, unsettled.targets, "en")
        seen = {
            "not_observed": "not confirmed by a later read",
            "contradicted": "contradicted by a later read",
        }
        lines.append(
            f"To settle:    {what} ({visible(unsettled.proposal_id, 40)}) ended {visible(unsettled.outcome, 20)}, "
            f"{seen.get(unsettled.verification or '', 'not verified')}; no new change is proposed for that room"
        )
        lines.append(
            f"              check the room, then: fleetwatch acknowledge {visible(unsettled.proposal_id, 40)}"
        )
    lines += [
        f"Kill switch:  {'ON: every write is refused' if status.kill_switch else 'off'}",
        f"Executor:     {'up' if status.executor_up else 'not answering'}",
        f"Fence:        {'configured' if status.fence_configured else 'NOT configured: nothing can be proposed'}",
        f"Autonomy:     {visible(status.autonomy, 20)}",
    ]
    return "\n".join(lines)


def render_audit(rows: Sequence[AuditRow]) -> str:
    """Audit rows, oldest first, one per line."""
    if not rows:
        return "The audit log is empty."
    return "\n".join(
        f"{row.seq:>6}  {row.at}  {visible(row.actor, 40):<16} {visible(row.kind, 30):<16}"
        f" {visible(row.proposal_id or '-', 40):<16} {visible(json.dumps(row.detail, sort_keys=True), 300)}"
        for row in rows
    )


# --- propose arguments -----------------------------------------------------------------------


def parse_arg_values(pairs: Sequence[str]) -> dict[str, Any]:
    """``["k=v", ...]`` -> arguments. A value that parses as JSON is JSON (``[..]``, ``7``,
    ``true``, ``"7"``); anything else is the text itself.

    Raises:
        FleetwatchError: ``invalid_arguments`` for a pair without ``=``, an empty or repeated
            key; ``not_canonicalizable`` for JSON with a float or a duplicate key.
    """
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CtlError(Code.INVALID_ARGUMENTS, f"--arg needs KEY=VALUE, got {visible(pair, 80)!r}")
        if key in arguments:
            raise CtlError(Code.INVALID_ARGUMENTS, f"--arg {visible(key, 60)} is given twice")
        arguments[key] = _value(text)
    return arguments


def _value(text: str) -> Any:
    try:
        json.loads(text)
    except ValueError:
        return text
    try:
        return parse_json_strict(text)
    except CanonicalError as exc:
        raise CtlError(exc.code, exc.message) from exc


# --- commands ------------------------------------------------------------------------------


def _out(args: argparse.Namespace, reply: Message, text: str) -> None:
    if args.json:
        print_json(reply)
    else:
        print(text)


async def pending_list(args: argparse.Namespace) -> int:
    """``fleetwatch pending list``."""
    reply = await approval_client().list_pending()
    _out(args, reply, render_pending(reply.items, reply.not_run))
    return 0


async def pending_show(args: argparse.Namespace) -> int:
    """``fleetwatch pending show ID``."""
    reply = await approval_client().show(args.proposal_id)
    _out(args, reply, render_detail(reply))
    return 0


async def deny(args: argparse.Namespace) -> int:
    """``fleetwatch deny ID``."""
    reply = await approval_client().deny(args.proposal_id)
    _out(args, reply, f"Denied {visible(reply.proposal_id, 40)}. Nothing ran.")
    return 0


async def deny_all(args: argparse.Namespace) -> int:
    """``fleetwatch deny-all``."""
    reply = await approval_client().deny_all()
    _out(args, reply, f"Denied {reply.count} pending proposal(s). Nothing ran.")
    return 0


async def pause(args: argparse.Namespace) -> int:
    """``fleetwatch pause``: turn the kill switch on."""
    reply = await approval_client().set_kill_switch(True)
    words = "Writes paused: the executor refuses every write until `fleetwatch resume`."
    _out(args, reply, words)
    return 0


async def resume(args: argparse.Namespace) -> int:
    """``fleetwatch resume``: turn the kill switch off. ``fleetwatch resume --denials [TOOL
    ROOM]``: lift the denial pauses running now (all, or one tool on one room, by its name or
    device ID); the kill switch is not touched.

    Raises:
        CtlError: ``invalid_arguments`` (TOOL or ROOM without ``--denials``, or one without the
            other).
        CallError: the service's refusal (``no_such_pause``, ``ambiguous_room``).
    """
    if not args.denials:
        if args.tool is not None:
            raise CtlError(Code.INVALID_ARGUMENTS, "TOOL and ROOM go with --denials")
        reply = await approval_client().set_kill_switch(False)
        _out(args, reply, "Writes resumed: each change still needs a person's approval on the page.")
        return 0
    if (args.tool is None) != (args.room is None):
        raise CtlError(Code.INVALID_ARGUMENTS, "name both TOOL and ROOM, or neither")
    lifted = await approval_client().lift_denial_pauses(tool=args.tool, room=args.room)
    _out(args, lifted, render_lifted(lifted.pauses))
    return 0


def render_lifted(pauses: Sequence[DenialPause]) -> str:
    """What ``resume --denials`` lifted, in words."""
    if not pauses:
        return "No denial pause was running; nothing was lifted."
    lines = [
        f"Lifted {len(pauses)} denial pause(s); such changes may be proposed again (each still needs a person):"
    ]
    lines += [f"  {pause_words(p, lifted=True)}" for p in pauses]
    return "\n".join(lines)


async def acknowledge(args: argparse.Namespace) -> int:
    """``fleetwatch acknowledge ID``: an operator has looked at a change that ended unknown or was
    not verified; its rooms may get new proposals again (audited)."""
    reply = await approval_client().acknowledge(args.proposal_id)
    what = change_in(reply.tool, reply.action, reply.target_names, reply.targets, "en")
    _out(
        args,
        reply,
        f"Acknowledged {visible(reply.proposal_id, 40)} ({what}, outcome {visible(reply.outcome or 'none', 20)}). "
        "New changes may be proposed for its rooms again; each still needs a person on the approval page.",
    )
    return 0


async def audit_tail(args: argparse.Namespace) -> int:
    """``fleetwatch audit tail [-n N]``."""
    reply = await approval_client().audit_tail(args.n)
    _out(args, reply, render_audit(reply.rows))
    return 0


def render_audit_report(report: AuditReport) -> str:
    """The verdict, then one line per writing service: what it checked with its own key."""
    if report.ok:
        lines = [f"The audit chain verifies: {report.rows} row(s)."]
    elif report.first_bad_seq is not None:
        lines = [
            f"The audit chain is BROKEN at row {report.first_bad_seq}: {visible(report.reason or '', 300)}"
        ]
    else:
        lines = [f"The audit chain could NOT be fully checked: {visible(report.reason or '', 300)}"]
    for check in report.checks:
        who = visible(check.writer, 20)
        if check.ok:
            seen = f"; its anchor has seen row {check.anchor_seq}" if check.anchor_seq is not None else ""
            lines.append(f"  {who}: checked its {check.signed} row(s) with its own key{seen}.")
        elif check.first_bad_seq is not None:
            lines.append(f"  {who}: row {check.first_bad_seq}: {visible(check.reason or '', 300)}")
        else:
            lines.append(f"  {who}: {visible(check.reason or 'not checked', 300)}")
    return "\n".join(lines)


async def audit_verify(args: argparse.Namespace) -> int:
    """``fleetwatch audit verify``: each writing service checks the log with its own key and
    anchor; exit 1 when it does not verify or a service could not check it."""
    reply = await approval_client(timeout_seconds=AUDIT_TIMEOUT_SECONDS).audit_verify()
    _out(args, reply, render_audit_report(reply))
    return 0 if reply.ok else 1


async def processes_words(settings: Any) -> list[str]:
    """Under supervisord (``fleetwatch up``): each process's state when this user may ask
    supervisord (its configuration is readable: the caller who started it), else a sentence
    saying who may (supervisord run by root keeps its files root's alone). Nothing when no
    supervisord runs for these settings."""
    from services.ctl import supervise

    pid = supervise.running_pid(settings)
    if pid is None:
        return []
    config = supervise.Layout.of(settings).config
    if not os.access(config, os.R_OK):
        return [
            f"Processes:    supervisord (pid {pid}) runs the services as root; only root can list them"
            " (sudo fleetwatch status). What each service answers is below.",
            "",
        ]
    code, out = await supervise.supervisorctl(settings, "status")
    lines = out.strip().splitlines()
    if code not in (0, 3) or not lines or lines[0].startswith(("Error", "error", "unix://")):
        return [
            f"Processes:    supervisord (pid {pid}) did not answer: {visible(lines[0] if lines else '', 160)}",
            "",
        ]
    return ["Processes (supervisord):", *(f"  {visible(line, 200)}" for line in lines), ""]


async def status(args: argparse.Namespace) -> int:
    """``fleetwatch status``: under supervisord (``fleetwatch up``) first each process's state
    (`processes_words`), then the queue, then the watch. ``--json`` prints the queue `Status`
    only. ``--check``: only whether the watch's heartbeat is alive (exit 0) or not (exit 1)."""
    if args.check:
        return await commands_watch.status_check(args)
    if not args.json:
        lines = await processes_words(load_settings())
        if lines:
            print("\n".join(lines))
    reply = await approval_client().status()
    _out(args, reply, render_status(reply))
    if not args.json:
        watch = await commands_watch.watch_status(load_settings())
        print(commands_watch.render_status(watch) if watch else "Watch:        the assistant does not answer")
    return 0


async def propose(args: argparse.Namespace) -> int:
    """``fleetwatch propose TOOL --arg k=v ... --reason TEXT``: draft a proposal as an operator."""
    message = SubmitProposal(
        tool=args.tool, arguments=parse_arg_values(args.arg or ()), reason=args.reason, proposed_by="operator"
    )
    reply = await approval_client(timeout_seconds=PROPOSE_TIMEOUT_SECONDS).submit(message)
    if args.json:
        print_json(reply)
    else:
        print(
            f"Proposal {visible(reply.proposal_id, 40)} drafted by an operator; it expires unreviewed at {reply.expires_at}."
        )
        print(NEEDS_PAGE)
    return 0


# --- the command tree ------------------------------------------------------------------------


def _leaf(sub: Any, name: str, help_text: str, run: Any, epilog: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text, epilog=epilog
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)
    return parser


def add_commands(sub: Any, epilog: str) -> None:
    """Add the admin commands to ``fleetwatch``'s subparsers `sub`; every parser gets `epilog`
    (which says that no command approves)."""
    pending = sub.add_parser("pending", help="the proposals waiting for a person", epilog=epilog)
    actions = pending.add_subparsers(dest="pending_command", required=True, metavar="ACTION")
    _leaf(actions, "list", "list the pending proposals, oldest first", pending_list, epilog)
    show = _leaf(
        actions,
        "show",
        "show one proposal in full (every argument, times, fingerprint)",
        pending_show,
        epilog,
    )
    show.add_argument("proposal_id", metavar="ID")

    deny_parser = _leaf(sub, "deny", "deny one pending proposal", deny, epilog)
    deny_parser.add_argument("proposal_id", metavar="ID")
    _leaf(sub, "deny-all", "deny every pending proposal (there is no approve-all)", deny_all, epilog)
    _leaf(sub, "pause", "turn the kill switch on: the executor refuses every write", pause, epilog)
    resume_parser = _leaf(
        sub,
        "resume",
        "turn the kill switch off (changes still need approval on the page); with --denials, lift denial pauses instead",
        resume,
        epilog,
    )
    resume_parser.add_argument(
        "--denials",
        action="store_true",
        help="lift the denial pauses running now (all of them, or TOOL on ROOM); audited",
    )
    resume_parser.add_argument(
        "tool", nargs="?", metavar="TOOL", help="with --denials: the paused tool, e.g. batch_reboot"
    )
    resume_parser.add_argument(
        "room", nargs="?", metavar="ROOM", help="with --denials: the paused room's name or device ID"
    )
    ack = _leaf(
        sub,
        "acknowledge",
        "say you checked a room whose last change ended unknown or unverified; new changes may be proposed for it again",
        acknowledge,
        epilog,
    )
    ack.add_argument("proposal_id", metavar="ID")

    audit = sub.add_parser("audit", help="read and verify the audit log", epilog=epilog)
    audit_actions = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    tail = _leaf(audit_actions, "tail", "the newest audit rows", audit_tail, epilog)
    tail.add_argument("-n", type=int, default=20, metavar="N", help="how many rows (default: 20)")
    _leaf(
        audit_actions,
        "verify",
        "each writing service checks the audit log (chain, its rows' MACs, its anchor); exit 1 when it is broken",
        audit_verify,
        epilog,
    )

    status_parser = _leaf(
        sub,
        "status",
        "queue, caps, denial pauses, changes to settle, kill switch, executor, fence, autonomy, and the watch",
        status,
        epilog,
    )
    status_parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless a heartbeat read the fleet within three intervals (for monitors and health checks)",
    )

    draft = _leaf(
        sub,
        "propose",
        "draft a proposal as an operator; it still needs a person to approve it on the page",
        propose,
        epilog,
    )
    draft.add_argument("tool", metavar="TOOL", help="a proposable write tool, e.g. batch_recording")
    draft.add_argument(
        "--arg",
        action="append",
        metavar="KEY=VALUE",
        help="one argument; VALUE is read as JSON when it parses as JSON, else as text (repeat it)",
    )
    draft.add_argument("--reason", required=True, help="why, in words a person reviewing it understands")
