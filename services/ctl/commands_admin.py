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
import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from gettext import gettext as _
from typing import TYPE_CHECKING, Any, TypeVar

from services.ctl import CtlError, add_language_option, admin_words, stopped
from services.ctl.arguments import shape_problem
from services.ctl.output import print_json
from shared.canonical import CanonicalError, parse_json_strict
from shared.config import load_settings
from shared.errors import Code, FleetwatchError
from shared.spelling import closest
from shared.text.catalogue import C_, N_, Moment, Nn_, Words, placeholder
from shared.text.change_words import change, change_in
from shared.text.display import visible
from shared.wire.approval import (
    Acknowledge,
    ApprovalClient,
    AuditReport,
    AuditTail,
    AuditVerify,
    DenialPause,
    Deny,
    DenyAll,
    GetStatus,
    InspectProposal,
    LiftDenialPauses,
    ListPending,
    SetKillSwitch,
    ShowProposal,
    Status,
    SubmitProposal,
)
from shared.wire.executor import Inspection, ListWritable
from shared.wire.formats import PROPOSAL_ID
from shared.wire.protocol import Message, Request

if TYPE_CHECKING:
    from shared.policy.loader import ProposeRule, ToolPolicy

R = TypeVar("R", bound=Message)

TIMEOUT_SECONDS = 10.0
"""Timeout of one admin request on approval.sock."""
PROPOSE_TIMEOUT_SECONDS = 30.0
"""Timeout of ``propose``: the intake asks the executor to read the sandbox team afresh."""
AUDIT_TIMEOUT_SECONDS = 120.0
"""Timeout of ``audit verify``: both services walk the whole log."""
TEXT_CAP = 8000
"""Longest text shown for one argument or reason (it is never cut below what the intake accepts)."""
NEEDS_PAGE = N_("It still needs a person to approve it on the approval page.")


# --- the socket ----------------------------------------------------------------------------


def approval_client(*, timeout_seconds: float = TIMEOUT_SECONDS) -> ApprovalClient:
    """approval.sock's client, from the settings (``FLEETWATCH_RUNTIME_DIR``). Its calls raise
    `CallError` (a `FleetwatchError`): approval_web's refusal, or ``service_unavailable`` /
    ``service_no_answer`` when it does not answer."""
    return ApprovalClient(load_settings().approval_socket, timeout_seconds=timeout_seconds)


async def read_call(args: argparse.Namespace, client: ApprovalClient, request: Request[R]) -> R:
    """approval.sock's reply to the read-only `request`, read from the approval store while
    approval_web is stopped (`services.ctl.stopped.read_call`)."""
    return await stopped.read_call(
        view_of(args), client, request, store=load_settings().db, readout=stopped.APPROVAL_READOUT
    )


# --- output --------------------------------------------------------------------------------


def pause_words(view: admin_words.View, pause: DenialPause, *, lifted: bool = False) -> str:
    """One denial pause in words in `view`'s language: the change, the room (its name and ID),
    until when (or, once `lifted`, until when it would have run) and why."""
    room = view.room(pause.target_name, pause.target)
    return view.text(
        N_("%(change)s (%(tool)s) in %(room)s would have been paused until %(until)s, after %(n)s denials")
        if lifted
        else N_("%(change)s (%(tool)s) in %(room)s is paused until %(until)s, after %(n)s denials"),
        change=change(pause.tool, None, view.language),
        tool=visible(pause.tool, 60),
        room=room,
        until=Moment(pause.until),
        n=pause.denials,
    )


# --- propose arguments -----------------------------------------------------------------------


def parse_arg_values(pairs: Sequence[str], schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``["k=v", ...]`` -> arguments. Where the tool's reviewed `schema` says an argument is
    text, the value is the text itself (an all-digit device ID stays a string). Otherwise a
    value that starts like JSON (``[``, ``{``, ``"``) must be valid JSON; a number, ``true``,
    ``false`` or ``null`` is JSON; anything else is the text itself.

    With a schema, each value's shape is then checked against it (`arguments.shape_problem`):
    an unknown name or enum value names the closest one, a list argument given one value shows
    the list to write.

    Raises:
        FleetwatchError: ``invalid_arguments`` for a pair without ``=``, an empty or repeated
            key, a value that is not valid JSON or off the schema's shape; ``not_canonicalizable``
            for JSON with a float or a duplicate key.
    """
    properties = (schema or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CtlError(
                Code.INVALID_ARGUMENTS,
                Words.of(N_("--arg needs KEY=VALUE, got %(pair)s"), pair=repr(visible(pair, 80))),
            )
        if key in arguments:
            raise CtlError(
                Code.INVALID_ARGUMENTS, Words.of(N_("--arg %(key)s is given twice"), key=visible(key, 60))
            )
        is_text = isinstance(properties.get(key), Mapping) and properties[key].get("type") == "string"
        arguments[key] = text if is_text else _value(key, text)
    for pair in pairs if schema is not None else ():
        key, _sep, text = pair.partition("=")
        problem = shape_problem(key, arguments[key], text, properties)
        if problem is not None:
            raise CtlError(Code.INVALID_ARGUMENTS, problem)
    return arguments


def proposable_rule(tool_policy: ToolPolicy, tool: str) -> ProposeRule:
    """The propose rule of `tool`, checked before anything is sent.

    Raises:
        CtlError: ``not_proposable`` (``schema_not_reviewed`` for a write tool not yet
            reviewed), naming the closest proposable tool when one is alike, else listing them.
    """
    try:
        return tool_policy.rule_for(tool)
    except FleetwatchError as exc:
        tools = ", ".join(sorted(tool_policy.propose))
        near = closest(tool, tool_policy.propose)
        if near is not None:
            words = Words.of(
                N_("%(tool)s cannot be proposed; did you mean %(closest)s? (tools that may be: %(tools)s)"),
                tool=visible(tool, 60),
                closest=near,
                tools=tools,
            )
        else:
            words = Words.of(
                N_(
                    "%(tool)s cannot be proposed (tools that may be: %(tools)s; see fleetwatch propose --help)"
                ),
                tool=visible(tool, 60),
                tools=tools,
            )
        raise CtlError(exc.code, words) from exc


def _value(key: str, text: str) -> Any:
    try:
        json.loads(text)
    except ValueError as exc:
        if text.lstrip()[:1] in ("[", "{", '"'):
            raise CtlError(
                Code.INVALID_ARGUMENTS,
                Words.of(
                    N_(
                        "--arg %(key)s: not valid JSON (%(why)s); a list is written "
                        '["29088800001"], text needs no quotes'
                    ),
                    key=visible(key, 60),
                    why=str(exc),
                ),
            ) from exc
        return text
    try:
        return parse_json_strict(text)
    except CanonicalError as exc:
        raise CtlError(exc.code, exc.message) from exc


TYPES = {
    "string": N_("text"),
    "integer": N_("integer"),
    "number": N_("number"),
    "boolean": N_("true|false"),
    "object": N_("object"),
}
"""A JSON Schema type in words, for ``propose --help``."""


def proposable_help(tool_policy: ToolPolicy) -> str:
    """The tools an operator may propose, each with its arguments (from the reviewed schema),
    whether it is disruptive and what it does (the policy's summary, from the catalogue):
    ``propose --help``'s list, in the language `services.ctl.main.said_in` holds."""

    def say(msgid: str, **params: object) -> str:
        text = _(msgid)
        return text % params if params else text

    def kind_of(spec: Mapping[str, Any]) -> str:
        if spec.get("enum"):
            return "|".join(str(v) for v in spec["enum"])
        kind = str(spec.get("type", ""))
        if kind == "array":
            item = str((spec.get("items") or {}).get("type", ""))
            return say(N_("[%(item)s, ...] as JSON"), item=say(TYPES[item]) if item in TYPES else item)
        return say(TYPES[kind]) if kind in TYPES else kind

    lines = [say(N_("Tools that may be proposed (arguments; * = disruptive, asks to confirm the room):"))]
    for tool, rule in sorted(tool_policy.propose.items()):
        properties = rule.arguments_schema.get("properties") or {}
        described = [f"{name}={kind_of(spec)}" for name, spec in properties.items()]
        mark = "*" if rule.disruptive else " "
        when = ""
        if rule.disruptive and rule.disruptive_when:
            when = " " + say(
                N_("(* when %(condition)s)"),
                condition=", ".join(f"{k}={'|'.join(sorted(v))}" for k, v in rule.disruptive_when.items()),
            )
        lines.append(f"  {mark} {tool}: {' '.join(described)}{when}")
        lines.append(f"      {_(rule.summary)}")
    lines.append(
        say(
            N_("Example: %(command)s"),
            command="fleetwatch propose batch_recording --arg action=start "
            '--arg device_ids=\'["29088800001-1"]\' --reason "…"',
        )
    )
    return "\n".join(lines)


# --- commands ------------------------------------------------------------------------------


def _out(args: argparse.Namespace, reply: Message, text: str) -> None:
    if args.json:
        print_json(reply)
    else:
        print(text)


view_of = admin_words.view_of


async def room_names(client: ApprovalClient) -> dict[str, str]:
    """The sandbox devices' and channels' current names (``device <id> name``, ``device <id>
    channel <n> name``), read afresh through the executor (``ListWritable``), so a list names
    rooms in words; empty when that read fails (the rooms are then named by device ID)."""
    try:
        writable = await client.call(ListWritable())
    except FleetwatchError:
        return {}
    names = {}
    for device in writable.devices:
        names[f"device {device.device_id} name"] = device.name
        for channel in device.channels:
            names[f"device {device.device_id} channel {channel.channel_id} name"] = channel.name
    return names


async def pending_list(args: argparse.Namespace) -> int:
    """``fleetwatch pending list`` (from the store while the services are stopped)."""
    client = approval_client()
    reply = await read_call(args, client, ListPending())
    if args.json:
        print_json(reply)
    else:
        names = await room_names(client) if reply.items or reply.not_run else {}
        print(admin_words.render_pending(view_of(args), reply.items, reply.not_run, names))
    return 0


def proposal_id_of(args: argparse.Namespace) -> str:
    """``args.proposal_id`` when it has a proposal ID's form (``p-`` and 12 hex digits), read
    without the spaces around it and in lower case (Fleetwatch makes them lower-case: one read
    off a screen in capitals is the same ID).

    Raises:
        CtlError: ``invalid_arguments`` naming the form, before anything is sent (a placeholder
            pasted as is, or the ID without its ``p-``).
    """
    given = args.proposal_id.strip().lower()
    if re.fullmatch(PROPOSAL_ID, given) is None:
        raise CtlError(
            Code.INVALID_ARGUMENTS,
            Words.of(
                N_("%(id)s is not a proposal ID: one looks like p-1a2b3c4d5e6f (see '%(command)s')"),
                id=repr(visible(args.proposal_id, 60)),
                command=view_of(args).command("pending", "list"),
            ),
        )
    return given


async def pending_show(args: argparse.Namespace) -> int:
    """``fleetwatch pending show ID`` (from the store while the services are stopped)."""
    client = approval_client()
    reply = await read_call(args, client, ShowProposal(proposal_id=proposal_id_of(args)))
    if args.json:
        print_json(reply)
    else:
        print(admin_words.render_detail(view_of(args), reply, await room_names(client)))
    return 0


async def deny(args: argparse.Namespace) -> int:
    """``fleetwatch deny ID``."""
    reply = await approval_client().call(Deny(proposal_id=proposal_id_of(args)))
    _out(
        args, reply, view_of(args).text(N_("Denied %(id)s. Nothing ran."), id=visible(reply.proposal_id, 40))
    )
    return 0


async def deny_all(args: argparse.Namespace) -> int:
    """``fleetwatch deny-all``."""
    reply = await approval_client().call(DenyAll())
    _out(
        args,
        reply,
        view_of(args).text(N_("Denied every pending proposal (%(n)s). Nothing ran."), n=reply.count),
    )
    return 0


async def pause(args: argparse.Namespace) -> int:
    """``fleetwatch pause``: turn the kill switch on."""
    reply = await approval_client().call(SetKillSwitch(on=True))
    view = view_of(args)
    words = N_("Writes paused: the executor refuses every write until `%(command)s`.")
    _out(args, reply, view.text(words, command=view.command("resume")))
    return 0


async def resume(args: argparse.Namespace) -> int:
    """``fleetwatch resume``: turn the kill switch off. ``fleetwatch resume --denials [TOOL
    ROOM]``: lift the denial pauses running now (all, or one tool on one room, by its name or
    device ID); the kill switch is not touched.

    Raises:
        CtlError: ``invalid_arguments`` (TOOL or ROOM without ``--denials``, or one without the
            other); ``not_proposable`` for a TOOL that cannot be proposed, so cannot be paused
            (naming the closest one).
        CallError: the service's refusal (``no_such_pause``, ``ambiguous_room``).
    """
    if not args.denials:
        if args.tool is not None:
            raise CtlError(Code.INVALID_ARGUMENTS, Words.of(N_("TOOL and ROOM go with --denials")))
        reply = await approval_client().call(SetKillSwitch(on=False))
        words = N_("Writes resumed: each change still needs a person's approval on the page.")
        _out(args, reply, view_of(args).text(words))
        return 0
    if (args.tool is None) != (args.room is None):
        raise CtlError(Code.INVALID_ARGUMENTS, Words.of(N_("name both TOOL and ROOM, or neither")))
    if args.tool is not None:
        proposable_rule(_tool_policy(), args.tool)  # only a proposable tool can be paused
    lifted = await approval_client().call(LiftDenialPauses(tool=args.tool, room=args.room))
    _out(args, lifted, render_lifted(view_of(args), lifted.pauses))
    return 0


def render_lifted(view: admin_words.View, pauses: Sequence[DenialPause]) -> str:
    """What ``resume --denials`` lifted, in words."""
    if not pauses:
        return view.text(N_("No denial pause was running; nothing was lifted."))
    lines = [
        view.counted(
            len(pauses),
            Nn_(
                "Lifted %(n)s denial pause; such changes may be proposed again (each still needs a person):",
                "Lifted %(n)s denial pauses; such changes may be proposed again (each still needs a person):",
            ),
        )
    ]
    lines += [f"  {pause_words(view, p, lifted=True)}" for p in pauses]
    return "\n".join(lines)


async def acknowledge(args: argparse.Namespace) -> int:
    """``fleetwatch acknowledge ID``: an operator has looked at a change that ended unknown or was
    not verified; its rooms may get new proposals again (audited)."""
    reply = await approval_client().call(Acknowledge(proposal_id=proposal_id_of(args)))
    view = view_of(args)
    what = change_in(reply.tool, reply.action, reply.target_names, reply.targets, view.language)
    _out(
        args,
        reply,
        view.text(
            N_(
                "Acknowledged %(id)s (%(what)s, outcome %(outcome)s). New changes may be proposed for its rooms "
                "again; each still needs a person on the approval page."
            ),
            id=visible(reply.proposal_id, 40),
            what=what,
            outcome=admin_words.in_words(view, admin_words.OUTCOMES, reply.outcome or "none"),
        ),
    )
    return 0


async def audit_tail(args: argparse.Namespace) -> int:
    """``fleetwatch audit tail [-n N]`` (from the store while the services are stopped)."""
    reply = await read_call(args, approval_client(), AuditTail(limit=args.n))
    _out(args, reply, admin_words.render_audit(view_of(args), reply.rows))
    return 0


def render_audit_report(view: admin_words.View, report: AuditReport) -> str:
    """The verdict, then one line per writing service: what it checked with its own key. A
    report without a reason that names no bad row is the store's, read while the services are
    stopped: the chain held and no MAC was checked."""
    if report.ok:
        lines = [
            view.counted(
                report.rows,
                Nn_("The audit chain verifies: %(n)s row.", "The audit chain verifies: %(n)s rows."),
            )
        ]
    elif report.first_bad_seq is None and report.reason is None:  # the store read with no key
        lines = [
            view.counted(
                report.rows,
                Nn_(
                    "The audit chain holds (%(n)s row), but its MACs were not checked: only each service "
                    "holds its key, and checks them when it runs.",
                    "The audit chain holds (%(n)s rows), but its MACs were not checked: only each service "
                    "holds its key, and checks them when it runs.",
                ),
            )
        ]
    elif report.first_bad_seq is not None:
        lines = [
            view.text(
                N_("The audit chain is BROKEN at row %(seq)s: %(reason)s"),
                seq=report.first_bad_seq,
                reason=visible(report.reason or "", 300),
            )
        ]
    else:
        lines = [
            view.text(
                N_("The audit chain could NOT be fully checked: %(reason)s"),
                reason=visible(report.reason or "", 300),
            )
        ]
    for check in report.checks:
        who = visible(check.writer, 20)
        if check.ok:
            seen = (
                view.text(N_("; its anchor has seen row %(seq)s"), seq=check.anchor_seq)
                if check.anchor_seq is not None
                else ""
            )
            line = view.counted(
                check.signed,
                Nn_(
                    "%(who)s: checked its %(n)s row with its own key%(seen)s.",
                    "%(who)s: checked its %(n)s rows with its own key%(seen)s.",
                ),
                who=who,
                seen=seen,
            )
        elif check.first_bad_seq is not None:
            line = view.text(
                N_("%(who)s: row %(seq)s: %(reason)s"),
                who=who,
                seq=check.first_bad_seq,
                reason=visible(check.reason or "", 300),
            )
        else:
            unchecked = view.text(N_("not checked"))
            line = f"{who}: {visible(check.reason, 300) if check.reason else unchecked}"
        lines.append(f"  {line}")
    return "\n".join(lines)


async def audit_export(args: argparse.Namespace) -> int:
    """``fleetwatch audit export`` (`services.ctl.commands_audit`, loaded when it runs)."""
    from services.ctl import commands_audit

    return await commands_audit.audit_export(args)


async def audit_decisions(args: argparse.Namespace) -> int:
    """``fleetwatch audit decisions`` (`services.ctl.commands_audit`, loaded when it runs)."""
    from services.ctl import commands_audit

    return await commands_audit.audit_decisions(args)


async def audit_verify(args: argparse.Namespace) -> int:
    """``fleetwatch audit verify``: each writing service checks the log with its own key and
    anchor; exit 1 when it does not verify or a service could not check it. While the services
    are stopped: the chain alone, from the store (the MACs need the services' keys: exit 1)."""
    reply = await read_call(args, approval_client(timeout_seconds=AUDIT_TIMEOUT_SECONDS), AuditVerify())
    _out(args, reply, render_audit_report(view_of(args), reply))
    return 0 if reply.ok else 1


async def processes_words(settings: Any, view: admin_words.View) -> list[str]:
    """Under supervisord (``fleetwatch up``): each process's state in words when this user may
    ask supervisord (its configuration is readable: the caller who started it), else a sentence
    saying who may (supervisord run by root keeps its files root's alone). Nothing when no
    supervisord runs for these settings."""
    from services.ctl import supervise

    pid = supervise.running_pid(settings)
    if pid is None:
        return []
    config = supervise.Layout.of(settings).config
    if not os.access(config, os.R_OK):
        return [
            view.text(
                N_(
                    "Processes: supervisord (pid %(pid)s) runs the services as root; only root can list them "
                    "(sudo fleetwatch status). What each service answers is below."
                ),
                pid=pid,
            ),
            "",
        ]
    try:
        infos = await supervise.process_infos(settings)  # over its socket: no supervisorctl to start
    except supervise.SuperviseError as exc:
        return [
            view.text(
                N_("Processes: supervisord (pid %(pid)s) did not answer: %(why)s"),
                pid=pid,
                why=visible(exc.message, 160),
            ),
            "",
        ]
    lines = admin_words.render_processes(view, infos)
    return [view.text(N_("Processes (supervisord):")), *(f"  {line}" for line in lines), ""]


async def status(args: argparse.Namespace) -> int:
    """``fleetwatch status``: under supervisord (``fleetwatch up``) first each process's state
    (`processes_words`), then the queue, then the watch. ``--json`` prints the queue `Status`
    only. ``--check``: only whether the watch's heartbeat is alive (exit 0) or not (exit 1)."""
    from services.ctl import commands_watch  # the watch's words: status alone shows them

    if args.check:
        return await commands_watch.status_check(args)
    if args.json:
        print_json(await read_call(args, approval_client(), GetStatus()))
        return 0
    # The three asks at once (supervisord, approval.sock, assistant.sock), printed in order.
    settings = load_settings()
    view = view_of(args)
    processes = asyncio.ensure_future(processes_words(settings, view))
    watching = asyncio.ensure_future(commands_watch.watch_status(settings))
    try:
        reply, from_store = await stopped.read_reply(
            view, approval_client(), GetStatus(), store=settings.db, readout=stopped.APPROVAL_READOUT
        )
    finally:
        lines = await processes  # printed first, also when approval_web does not answer
        if lines:
            print("\n".join(lines))
    print(admin_words.render_status(view, reply, stopped=from_store))
    watch = await watching
    print(
        commands_watch.render_status(watch, view)
        if watch
        else view.text(N_("Watch: the assistant does not answer"))
    )
    return 0


def _tool_policy() -> ToolPolicy:
    from shared.policy.loader import load_policies

    settings = load_settings()
    return load_policies(settings.policy_dir, settings.policy_override)[1]


def propose_warnings(view: admin_words.View, status: Status) -> list[str]:
    """What would stop a drafted proposal from running right now, in words in `view`'s language."""
    out = []
    if status.kill_switch:
        out.append(
            view.text(
                N_(
                    "warning: writes are paused (the kill switch is on): even approved, this change will not run "
                    "until `%(command)s`."
                ),
                command=view.command("resume"),
            )
        )
    if not status.executor_up:
        out.append(view.text(N_("warning: the executor is not answering: an approval could not run now.")))
    if status.pending >= status.max_pending:
        out.append(
            view.text(
                N_("warning: the queue is full (%(n)s of %(max)s): this draft will be refused."),
                n=status.pending,
                max=status.max_pending,
            )
        )
    return out


def inspection_warnings(view: admin_words.View, inspection: Inspection) -> list[str]:
    """What the executor would refuse right now for a drafted proposal (its Inspect: the same
    checks Execute runs), in words in `view`'s language (`shared.text.refusals`); in English
    the executor's own sentence follows (it names the room). The stable code is not printed:
    it is in the audit when Execute refuses."""
    code = inspection.would_refuse
    if code is None:
        return []
    why: str | Words = admin_words.meaning(view, code)
    if inspection.would_refuse_message:  # the executor's own sentence: said in English only
        why = Words.in_context(
            "foreign words",
            C_("foreign words", "%(detail)s (%(message)s)"),
            detail=why,
            message=visible(inspection.would_refuse_message, 300),
        )
    return [view.text(N_("warning: the executor would refuse this change right now: %(why)s"), why=why)]


async def propose(args: argparse.Namespace) -> int:
    """``fleetwatch propose TOOL --arg k=v ... --reason TEXT``: draft a proposal as an operator.
    Warns (stderr) first when the kill switch is on, the executor is not answering or the queue
    is full, then, once drafted, when the executor would refuse it right now and why (its
    Inspect, relayed by approval.sock: a recording room, a class about to start, a room off
    the sandbox list...)."""
    rule = proposable_rule(_tool_policy(), args.tool)
    arguments = parse_arg_values(args.arg or (), rule.arguments_schema)
    client = approval_client(timeout_seconds=PROPOSE_TIMEOUT_SECONDS)
    view = view_of(args)
    for warning in propose_warnings(view, await client.call(GetStatus())):
        print(warning, file=sys.stderr)
    message = SubmitProposal(tool=args.tool, arguments=arguments, reason=args.reason, proposed_by="operator")
    reply = await client.call(message)
    try:
        warnings = inspection_warnings(
            view, await client.call(InspectProposal(proposal_id=reply.proposal_id))
        )
    except FleetwatchError as exc:
        warnings = [
            view.text(
                N_("warning: the executor could not say whether it would run this change now (%(why)s)"),
                why=f"{exc.code}: {visible(exc.message, 200)}",
            )
        ]
    for warning in warnings:
        print(warning, file=sys.stderr)
    if args.json:
        print_json(reply)
    else:
        print(
            view.text(
                N_("Proposal %(id)s drafted by an operator; it expires unreviewed at %(at)s."),
                id=visible(reply.proposal_id, 40),
                at=Moment(reply.expires_at),
            )
        )
        print(view.text(NEEDS_PAGE))
    return 0


# --- the command tree ------------------------------------------------------------------------


def _leaf(sub: Any, name: str, help_text: str, run: Any, epilog: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text, epilog=epilog
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text (times in UTC)"))
    add_language_option(parser)
    parser.set_defaults(run=run)
    return parser


def _proposal_id_help() -> str:
    """The help of a proposal ID argument, in the parser's language (said when it is built)."""
    return _("a proposal's ID (p-…), as pending list shows it")


def add_commands(sub: Any, epilog: str) -> None:
    """Add the admin commands to ``fleetwatch``'s subparsers `sub`; every parser gets `epilog`
    (which says that no command approves)."""
    pending = sub.add_parser("pending", help=_("the proposals waiting for a person"), epilog=epilog)
    actions = pending.add_subparsers(dest="pending_command", required=True, metavar=placeholder("ACTION"))
    _leaf(actions, "list", _("list the pending proposals, oldest first"), pending_list, epilog)
    show = _leaf(
        actions,
        "show",
        _("show one proposal in full (every argument, times, fingerprint)"),
        pending_show,
        epilog,
    )
    show.add_argument("proposal_id", metavar=placeholder("ID"), help=_proposal_id_help())

    deny_parser = _leaf(sub, "deny", _("deny one pending proposal"), deny, epilog)
    deny_parser.add_argument("proposal_id", metavar=placeholder("ID"), help=_proposal_id_help())
    _leaf(sub, "deny-all", _("deny every pending proposal (there is no approve-all)"), deny_all, epilog)
    _leaf(sub, "pause", _("turn the kill switch on: the executor refuses every write"), pause, epilog)
    resume_parser = _leaf(
        sub,
        "resume",
        _(
            "turn the kill switch off (changes still need approval on the page); with --denials, lift denial pauses instead"
        ),
        resume,
        epilog,
    )
    resume_parser.add_argument(
        "--denials",
        action="store_true",
        help=_("lift the denial pauses running now (all of them, or TOOL on ROOM); audited"),
    )
    resume_parser.add_argument(
        "tool",
        nargs="?",
        metavar=placeholder("TOOL"),
        help=_("with --denials: the paused tool, e.g. batch_reboot"),
    )
    resume_parser.add_argument(
        "room",
        nargs="?",
        metavar=placeholder("ROOM"),
        help=_("with --denials: the paused room's name or device ID"),
    )
    ack = _leaf(
        sub,
        "acknowledge",
        _(
            "say you checked a room whose last change ended unknown or unverified; new changes may be proposed for it again"
        ),
        acknowledge,
        epilog,
    )
    ack.add_argument(
        "proposal_id",
        metavar=placeholder("ID"),
        help=_("the ID (p-…) of the room's last change, as the refusal that named it or status shows it"),
    )

    audit = sub.add_parser("audit", help=_("read and verify the audit log"), epilog=epilog)
    audit_actions = audit.add_subparsers(dest="audit_command", required=True, metavar=placeholder("ACTION"))
    tail = _leaf(audit_actions, "tail", _("the newest audit rows"), audit_tail, epilog)
    tail.add_argument(
        "-n", type=int, default=20, metavar=placeholder("N"), help=_("how many rows (default: 20)")
    )
    _leaf(
        audit_actions,
        "verify",
        _(
            "each writing service checks the audit log (chain, its rows' MACs, its anchor); exit 1 when it is broken"
        ),
        audit_verify,
        epilog,
    )
    export = _leaf(
        audit_actions,
        "export",
        _("print the audit rows with their chain position and MAC, one JSON line each (reads only)"),
        audit_export,
        epilog,
    )
    export.add_argument(
        "--since",
        metavar=placeholder("TIME"),
        help=_("only rows at or after this time (ISO 8601; UTC unless a zone is given)"),
    )
    export.add_argument(
        "--format", choices=("jsonl",), default="jsonl", help=_("the output format (default: jsonl)")
    )
    decisions = _leaf(
        audit_actions,
        "decisions",
        _(
            "per person: proposals acted on, approved, denied, median seconds to decide, approvals faster than the card can be read"
        ),
        audit_decisions,
        epilog,
    )
    decisions.add_argument(
        "--days", type=int, default=7, metavar=placeholder("N"), help=_("how many days back (default: 7)")
    )

    status_parser = _leaf(
        sub,
        "status",
        _(
            "queue, caps, denial pauses, changes to settle, kill switch, executor, fence, autonomy, and the watch"
        ),
        status,
        epilog,
    )
    status_parser.add_argument(
        "--check",
        action="store_true",
        help=_(
            "exit 1 unless a heartbeat read the fleet within three intervals (for monitors and health checks)"
        ),
    )

    draft = _leaf(
        sub,
        "propose",
        _("draft a proposal as an operator; it still needs a person to approve it on the page"),
        propose,
        epilog,
    )
    draft.formatter_class = argparse.RawDescriptionHelpFormatter
    plain_help = draft.format_help
    base: list[str | None] = []  # the epilog as the parser holds it when help is first read (translated)

    def propose_help() -> str:
        # The policy (YAML, JSON Schema) loads only when ``propose --help`` is read, so the other
        # commands start without it (issue 14); in the language ``main.said_in`` holds.
        try:
            tools = proposable_help(_tool_policy())
        except FleetwatchError as exc:
            tools = _("(The proposable tools could not be listed: %(why)s)") % {
                "why": f"{exc.code}: {visible(exc.message, 200)}"
            }
        if not base:
            base.append(draft.epilog)
        draft.epilog = f"{tools}\n\n{base[0]}"
        return plain_help()

    draft.format_help = propose_help
    draft.add_argument(
        "tool", metavar=placeholder("TOOL"), help=_("a proposable write tool, e.g. batch_recording")
    )
    draft.add_argument(
        "--arg",
        action="append",
        metavar=placeholder("KEY=VALUE"),
        help=_(
            "one argument (repeat it); text arguments are taken as written (an all-digit ID stays text), "
            "others as JSON: a list is written '[\"29088800001\"]'"
        ),
    )
    draft.add_argument(
        "--reason",
        required=True,
        metavar=placeholder("REASON"),
        help=_("why, in words a person reviewing it understands"),
    )
