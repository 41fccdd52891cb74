"""What ``pending list``, ``pending show`` and ``audit tail`` print: rooms and changes in words,
who and when, in aligned columns, in the operator's language and time zone. Pure.

Every text comes from the one catalogue (`shared.text.catalogue`), every change and room from
`shared.text.changes`, every time through `shared.text.times` (`FLEETWATCH_TIMEZONE`,
relative to `View.now`). Names and codes from the store or the fleet pass through
`shared.text.display.visible` first, so each stays one line. ``--json`` never comes here: it
keeps every raw field, times in UTC.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from shared.config import home_given, load_settings
from shared.text.catalogue import N_, Lexicon, Moment, Words, keyed, say_text, translate
from shared.text.change_words import change, change_in
from shared.text.changes import change_words, quoted_name, rooms_from_facts, rooms_words, title_words
from shared.text.command_line import printed_command
from shared.text.deciders import COMMAND, PAGE, command_uid, decided_words, decider_words
from shared.text.display import lookalike, visible, width
from shared.text.languages import Language, language_of
from shared.text.refusals import code_meaning, refusal_words
from shared.text.times import parse_utc, say_ago
from shared.wire.approval import AuditRow, ProposalDetail, ProposalSummary, Status
from shared.wire.executor import WritableDevices

if TYPE_CHECKING:
    from shared.policy.loader import ProposeRule  # the policy stack loads where a command reads it

TEXT_CAP = 8000
"""Longest text shown for one argument or reason."""


@dataclasses.dataclass(frozen=True, slots=True)
class View:
    """How to say things: the language, the operator's zone, and now (for "in 5 minutes")."""

    language: Language
    zone: dt.tzinfo
    now: dt.datetime
    home: str | None = None
    """``FLEETWATCH_HOME`` as the operator set it (None: the default), kept in printed commands."""

    def say(self, words: Words) -> str:
        return say_text(words, self.language, zone=self.zone, now=self.now)

    def text(self, msgid: str, **params: object) -> str:
        return self.say(Words.of(msgid, **params))

    def command(self, *words: str) -> str:
        """``fleetwatch`` `words` as the operator copies it: in the view's language, with its
        home (`shared.text.command_line.printed_command`)."""
        return printed_command(*words, language=self.language, home=self.home)

    def room(self, name: str, device_id: str) -> str:
        """A room by its name in the reader's quote marks and its ID (``“Aula 1” (2908…)``), or its
        ID alone when no name is known (`shared.text.changes.quoted_name`)."""
        said = visible(device_id, 40)
        return f"{self.say(quoted_name(name))} ({said})" if name else said

    def counted(self, n: int, forms: tuple[str, str], **params: object) -> str:
        """The form of `forms` (``Nn_``) for the count `n`, in the view's language."""
        return self.say(Words.counted(n, forms, **params))

    def when(self, utc: str | None) -> str:
        return self.say(Words.of(N_("%(at)s"), at=Moment(utc))) if utc else "—"

    def clock(self, utc: str) -> str:
        """`utc` in the operator's time, without how far from now (``13:29``)."""
        return self.say(Words.of(N_("%(at)s"), at=Moment(utc, relative=False)))

    def ago(self, utc: str) -> str:
        """How far `utc` is from now alone (``in 60 minutes``; `shared.text.times.say_ago`);
        text that is not a time as itself."""
        parsed = parse_utc(utc)
        if parsed is None:
            return visible(utc, 80)
        return say_ago(parsed, now=self.now, language=self.language)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Aligned columns (two spaces apart; the last column is not padded)."""
    widths = [max(width(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]

    def line(cells: Sequence[str]) -> str:
        padded = [c + " " * (w - width(c)) for c, w in zip(cells, widths, strict=False)]
        return (indent + "  ".join([*padded, cells[-1]])).rstrip()

    return [line(header), *(line(r) for r in rows)]


def author(view: View, proposed_by: str) -> str:
    words = keyed("author", proposed_by)
    return view.say(words) if words else visible(proposed_by, 40)


STATES: Final = Lexicon("proposal state")
"""A proposal's ``status`` in words (an unknown status shows as itself)."""

OUTCOMES: Final = Lexicon("outcome")
"""An execution's ``outcome`` in words (an unknown outcome shows as itself)."""

AUTONOMY: Final = Lexicon("autonomy")
"""The policy's ``autonomy`` in words."""

ASK_OUTCOMES: Final = Lexicon("ask outcome")
"""How an answered question ended (an ``ask`` row's ``outcome``: ``end_turn``...) in words; an
outcome with a reason after its stem (``fallback_timeout``, ``bad_tool_call_3``) is said by its
stem with the reason beside it."""

EXPIRY_REASONS: Final = Lexicon("expiry reason")
"""Why a proposal expired (an ``expiry`` row's ``reason`` that is no code: ``undecided``...)."""

DECISION_KINDS: Final = frozenset({"approval", "first_approval", "denial"})
"""Audit kinds whose row's ``uid`` is the person who decided."""

STORED_FACTS: Final = Lexicon("stored fact")
"""The names of a proposal's stored facts (``turn_id``, ``verified_at``...) in ``pending show``'s
part for an audit; a fact without words shows by its stored name."""

REFUSED_KINDS: Final = Lexicon("refused kind")
"""A ``refusal`` row's "What" by its code where a rule is not what refused (a wrong page
secret: a sign-in refused); any other code is the ``audit kind`` words of ``refusal``."""


def in_words(view: View, words: Lexicon, raw: str) -> str:
    """`raw` (a stored code) in words from `words`, else made visible as it is."""
    return words[view.language].get(raw) or visible(raw, 20)


def summary_change(summary: ProposalSummary) -> Words:
    """The change of a list line in words, with its action (``Start recording``)."""
    return change_words(summary.tool, {"action": summary.action} if summary.action else {})


def names_of(summary: ProposalSummary, current: Mapping[str, str] | None) -> dict[str, str]:
    """The names to call a proposal's rooms by: those recorded with it at Prepare
    (``summary.names``), else their `current` names (a proposal recorded without them)."""
    return dict(current or {}) | dict(summary.names)


def room_of(view: View, summary: ProposalSummary, names: Mapping[str, str] | None) -> str:
    """The proposal's rooms in words (`names_of`: the names recorded with it, else their current
    `names`, else their device IDs; a look-alike name marked, with its device ID beside it)."""
    return view.say(
        rooms_words(rooms_from_facts(summary.tool, {}, summary.targets, names_of(summary, names)))
    )


def render_pending(
    view: View,
    items: Sequence[ProposalSummary],
    not_run: Sequence[ProposalSummary] = (),
    names: Mapping[str, str] | None = None,
) -> str:
    """The pending queue, oldest first, one aligned line each: the change, the room (by its
    current name from `names`, binding-fact keys such as ``device <id> name``), who proposed
    it, when, when it expires unreviewed, its ID; then the approved proposals of the last day
    that ended without running, and why."""
    lines = [
        view.text(N_("Waiting for a person on the approval page: %(n)s"), n=len(items))
        if items
        else view.text(N_("No proposals are waiting."))
    ]
    header = [
        view.text(N_("Change")),
        view.text(N_("Room")),
        view.text(N_("Proposed by")),
        view.text(N_("Proposed")),
        view.text(N_("Expires unreviewed")),
        view.text(N_("ID")),
    ]
    if items:
        lines += table(
            header,
            [
                [
                    view.say(summary_change(i)),
                    room_of(view, i, names),
                    author(view, i.proposed_by),
                    view.when(i.created_at),
                    view.when(i.expires_at),
                    visible(i.proposal_id, 40),
                ]
                for i in items
            ],
        )
    if not_run:
        lines.append(view.text(N_("Approved in the last 24 hours but not run (%(n)s):"), n=len(not_run)))
        lines += table(
            [
                view.text(N_("Change")),
                view.text(N_("Room")),
                view.text(N_("Why nothing ran")),
                view.text(N_("ID")),
            ],
            [
                [
                    view.say(summary_change(i)),
                    room_of(view, i, names),
                    meaning(view, i.status_code),
                    visible(i.proposal_id, 40),
                ]
                for i in not_run
            ],
        )
    return "\n".join(lines)


def code_words(view: View, code: str) -> str | None:
    """What a stable code means in words, in `view`'s language: the catalogue's words for it
    (its ``refusal`` entry, else its ``why`` entry where that sentence needs no numbers), else
    in English the code's own sentence (`shared.errors.MEANINGS`); None for a code none of
    them words in that language."""
    words = code_meaning(code)
    if words is None:
        return None
    said = view.say(words)
    return said if words.context == "refusal" or said.endswith(".") else f"{said}."


def meaning(view: View, code: str | None) -> str:
    """Why, in words, for a person (`code_words`); a code without words shows as
    ``error code <code>`` (the code itself is kept for an audit: `coded`)."""
    if not code:
        return "—"
    return code_words(view, code) or view.say(refusal_words(visible(code, 40)))


def coded(view: View, code: str | None) -> str:
    """A stable code with its meaning (``fingerprint_changed: the room changed…``), for an
    audit's reader."""
    if not code:
        return "—"
    known = code_words(view, code)
    return f"{visible(code, 40)}: {known}" if known else visible(code, 40)


def _argument_text(value: Any) -> str:
    return visible(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True), TEXT_CAP
    )


def render_detail(view: View, detail: ProposalDetail, names: Mapping[str, str] | None = None) -> str:
    """One proposal in full: the change and the room, its state, who proposed it and when, when
    it expires, its outcome and verification if it ran, every argument, and the reason
    (labelled as the operator's or the assistant's, not checked)."""
    summary = detail.summary
    title = view.say(
        title_words(
            summary.tool,
            detail.arguments,
            rooms_from_facts(summary.tool, detail.arguments, summary.targets, names_of(summary, names)),
        )
    )
    rows = [
        (view.text(N_("State")), in_words(view, STATES, summary.status)),
        (
            view.text(N_("Proposed by")),
            f"{author(view, summary.proposed_by)}, {view.when(summary.created_at)}",
        ),
    ]
    if detail.expires_in_seconds is not None:
        rows.append((view.text(N_("Expires unreviewed")), view.when(summary.expires_at)))
    decided = decided_words(detail.decided_kind, detail.decided_from, detail.decided_uids, detail.decided_at)
    if decided is not None:
        rows.append((view.text(N_("Who decided")), view.say(decided)))
    if summary.status == "not_run":
        rows.append((view.text(N_("Not run")), meaning(view, summary.status_code)))
    if detail.outcome is not None:
        outcome = in_words(view, OUTCOMES, detail.outcome)
        if detail.refusal_code:
            outcome += f": {meaning(view, detail.refusal_code)}"
        rows.append((view.text(N_("Outcome")), outcome))
        verification = keyed("verification", detail.verification or "")
        rows.append(
            (
                view.text(N_("Verification")),
                view.say(verification) if verification else visible(detail.verification or "—", 20),
            )
        )
    rows.append((view.text(N_("Arguments, in full")), ""))
    rows += [(f"  {visible(k, 60)}", _argument_text(v)) for k, v in sorted(detail.arguments.items())]
    audit = [
        (
            view.text(N_("Epiphan tool")),
            view.text(
                N_("%(tool)s (schema version %(version)s)"),
                tool=visible(summary.tool, 60),
                version=detail.schema_version,
            ),
        ),
        (view.text(N_("Device IDs")), ", ".join(visible(t, 40) for t in summary.targets)),
        (view.text(N_("Fingerprint")), visible(detail.fingerprint_hash, 80)),
    ]
    if summary.status == "not_run" and summary.status_code:
        audit.append((view.text(N_("Why nothing ran (code)")), visible(summary.status_code, 40)))
    if detail.refusal_code:
        audit.append((view.text(N_("Refusal (code)")), visible(detail.refusal_code, 40)))
    audit += [stored_fact(view, k, v) for k, v in sorted(detail.detail.items())]
    label = (
        N_("Reason, written by the operator who drafted it (not checked):")
        if summary.proposed_by == "operator"
        else N_("Reason, written by the assistant (not checked):")
    )
    return "\n".join(
        [
            f"{title}  ({visible(summary.proposal_id, 40)})",
            *table(["", ""], [list(r) for r in rows])[1:],
            "  " + view.text(label),
            *(f"    {visible(line, TEXT_CAP)}" for line in (detail.reason.split("\n") or [""])),
            "  " + view.text(N_("For an audit (as stored):")),
            *table(["", ""], [[f"  {k}", v] for k, v in audit])[1:],
        ]
    )


def stored_fact(view: View, key: str, value: Any) -> tuple[str, str]:
    """One stored fact of a proposal for ``pending show``'s part for an audit: its name in words
    (`STORED_FACTS`; else as stored) and its value as stored (a time, ``*_at``, in the
    operator's zone)."""
    name = STORED_FACTS[view.language].get(key) or visible(key, 40)
    if key.endswith("_at") and isinstance(value, str):
        return name, view.when(value)
    return name, _argument_text(value)


def actor_words(view: View, actor: str, detail: Mapping[str, Any] | None = None) -> str:
    """Who wrote an audit row: a service, a person on the approval page by the account a
    decision's row names (`detail`'s ``uid``: "root, on the approval page"; "someone" without
    one), or a person at the command line by their account (`shared.text.deciders`: the page's
    words too). `detail`: a decision's row's detail only (another row's ``uid`` is no decider)."""
    uid = (detail or {}).get("uid")
    uids = (uid,) if isinstance(uid, int) and not isinstance(uid, bool) and uid >= 0 else ()
    if actor.startswith("page ") or (actor == "approval_web" and uids):
        return view.say(decider_words(PAGE, uids))
    words = keyed("actor", actor)
    if words:
        return view.say(words)
    uid = command_uid(actor)
    if uid is not None:
        return view.say(decider_words(COMMAND, (uid,)))
    return visible(actor, 40)


def _stored_words(view: View, row: AuditRow, key: str, value: str) -> str:
    """One stored word of an audit row's detail in words where the catalogue has them."""
    if key == "outcome" and row.kind == "ask":
        stem, _, why = next(
            (
                (s, "_", value.removeprefix(s + "_"))
                for s in ("fallback", "bad_tool_call")
                if value.startswith(s + "_")
            ),
            (value, "", ""),
        )
        said = ASK_OUTCOMES[view.language].get(stem)
        return f"{said} ({visible(why, 40)})" if said and why else said or visible(value, 60)
    if key == "outcome":
        return in_words(view, OUTCOMES, value)
    if key == "verification":
        words = keyed("verification", value)
        return view.say(words) if words else visible(value, 60)
    if key == "reason":
        return EXPIRY_REASONS[view.language].get(value) or code_words(view, value) or visible(value, 60)
    if key == "tool":
        return change(value, None, view.language)
    return visible(value, 60)


def _what(view: View, row: AuditRow) -> str:
    detail = row.detail
    if row.kind == "kill_switch" and isinstance(detail.get("on"), bool):
        return view.text(N_("on: every write is refused") if detail["on"] else N_("off"))
    parts = []
    if detail.get("code"):
        parts.append(coded(view, str(detail["code"])))
    for key in ("outcome", "verification", "reason", "tool", "on"):
        value = detail.get(key)
        if value is not None and value != "":
            parts.append(_stored_words(view, row, key, str(value)))
    if len(parts) > 1:  # one line of parts: a sentence's own full stop would read ".;"
        parts = [part.removesuffix(".") for part in parts]
    return "; ".join(parts)


def kind_words(view: View, row: AuditRow) -> str:
    """What happened, for an audit row: its kind in words (a refusal whose code is no rule's by
    that code's own words: `REFUSED_KINDS`), else the kind as stored."""
    if row.kind == "refusal" and (said := REFUSED_KINDS[view.language].get(str(row.detail.get("code")))):
        return said
    kind = keyed("audit kind", row.kind)
    return view.say(kind) if kind else visible(row.kind, 30)


def render_audit(view: View, rows: Sequence[AuditRow]) -> str:
    """Audit rows, oldest first, aligned: when (the operator's time), who, what happened in
    words, the proposal, and the detail that says why."""
    if not rows:
        return view.text(N_("The audit log is empty."))
    header = [
        "#",
        view.text(N_("When")),
        view.text(N_("Who")),
        view.text(N_("What")),
        view.text(N_("Proposal")),
        view.text(N_("Detail")),
    ]
    return "\n".join(
        table(
            header,
            [
                [
                    str(row.seq),
                    view.when(row.at),
                    actor_words(view, row.actor, row.detail if row.kind in DECISION_KINDS else None),
                    kind_words(view, row),
                    visible(row.proposal_id or "—", 40),
                    visible(_what(view, row), 300),
                ]
                for row in rows
            ],
            indent="",
        )
    )


def render_status(view: View, status: Status, *, stopped: bool = False) -> str:
    """The queue, caps, pauses (until when, in the operator's time), kill switch, executor,
    fence and autonomy in plain words; `stopped`: `status` was read from the store while the
    services are stopped (the executor was not asked, and the line says so)."""
    rows = [
        [
            view.text(N_("Queue:")),
            view.text(N_("%(n)s of %(max)s pending"), n=status.pending, max=status.max_pending),
        ],
        [
            view.text(N_("Last hour:")),
            view.text(
                N_("%(n)s of %(max)s proposals (denied ones not counted)"),
                n=status.last_hour,
                max=status.per_hour,
            ),
        ],
    ]
    for pause in status.pauses:
        room = view.room(pause.target_name, pause.target)
        rows.append(
            [
                view.text(N_("Paused:")),
                view.text(
                    N_("%(change)s in %(room)s is paused until %(until)s, after %(n)s denials"),
                    change=change(pause.tool, None, view.language),
                    room=room,
                    until=Moment(pause.until),
                    n=pause.denials,
                ),
            ]
        )
        rows.append(
            [
                "",
                view.text(
                    N_("lift it: %(command)s"),
                    command=view.command("resume", "--denials", pause.tool, pause.target),
                ),
            ]
        )
    for unsettled in status.unsettled:
        rows.append(
            [
                view.text(N_("To settle:")),
                view.text(
                    N_(
                        "%(change)s (%(id)s) ended %(outcome)s, %(seen)s; no new change is proposed for that room"
                    ),
                    change=change_in(
                        unsettled.tool,
                        unsettled.action,
                        unsettled.target_names,
                        unsettled.targets,
                        view.language,
                    ),
                    id=visible(unsettled.proposal_id, 40),
                    outcome=in_words(view, OUTCOMES, unsettled.outcome),
                    seen=view.say(
                        keyed("verification", unsettled.verification or "") or Words.of(N_("not verified"))
                    ),
                ),
            ]
        )
        rows.append(
            [
                "",
                view.text(
                    N_("check the room, then: %(command)s"),
                    command=view.command("acknowledge", unsettled.proposal_id),
                ),
            ]
        )
    for export in status.audit_export:
        rows.append(
            [
                view.text(N_("Audit export:")),
                view.text(
                    N_("%(writer)s to %(target)s: %(sent)s sent, %(dropped)s dropped"),
                    writer=visible(export.writer, 20),
                    target=visible(export.target, 120),
                    sent=export.sent,
                    dropped=export.dropped,
                ),
            ]
        )
    rows += [
        [
            view.text(N_("Kill switch:")),
            view.text(N_("ON: every write is refused") if status.kill_switch else N_("off")),
        ],
        [view.text(N_("Executor:")), view.text(executor_words(status.executor_up, stopped=stopped))],
        [
            view.text(N_("Fence:")),
            view.text(
                N_("configured") if status.fence_configured else N_("NOT configured: nothing can be proposed")
            ),
        ],
        [view.text(N_("Autonomy:")), in_words(view, AUTONOMY, status.autonomy)],
    ]
    return "\n".join(table(["", ""], rows, indent="")[1:])


def _unix(seconds: object) -> str | None:
    if not isinstance(seconds, int) or seconds <= 0:
        return None
    at = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def render_processes(view: View, infos: Sequence[Mapping[str, Any]]) -> list[str]:
    """One aligned line per supervised program (supervisord's ``getAllProcessInfo``: ``name``,
    ``statename``, ``pid``, ``start``, ``stop``, ``exitstatus``): its name and its state in
    words, in the operator's time; a state supervisord adds later shows as itself."""
    rows = []
    for info in infos:
        state = str(info.get("statename", ""))
        start, stop = _unix(info.get("start")), _unix(info.get("stop"))
        said = keyed(  # each supervisord state in words (its start/stop are Unix seconds)
            "process state",
            state,
            since=Moment(start) if start else "—",
            at=Moment(stop) if stop else "—",
            pid=visible(str(info.get("pid", "")), 10),
            status=visible(str(info.get("exitstatus", "")), 10),
        )
        if state == "STOPPED" and stop is None:
            words = view.text(N_("not started"))
        elif said is None:
            words = view.text(N_("state %(state)s"), state=visible(state, 20))
        else:
            words = view.say(said)
        rows.append([visible(str(info.get("name", "")), 40), words])
    return table(["", ""], rows, indent="")[1:]


def view_of(args: argparse.Namespace) -> View:
    """The language (``--language``, else `FLEETWATCH_LANGUAGE`), the operator's zone
    (`FLEETWATCH_TIMEZONE`) and now, for what a command prints in words."""
    settings = load_settings()
    view = view_for(getattr(args, "language", None), settings.language, settings.timezone)
    return dataclasses.replace(view, home=home_given())


def view_for(language: str | None, settings_language: str, zone: dt.tzinfo) -> View:
    """A `View` in ``language`` (``--language``), else ``settings_language``
    (`FLEETWATCH_LANGUAGE`), in the operator's `zone`, now."""
    chosen = language or settings_language
    return View(language=language_of(chosen), zone=zone, now=dt.datetime.now(dt.UTC))


_RECORDING: Mapping[bool | None, str] = {
    True: N_("recording"),
    False: N_("not recording"),
    None: N_("recording unknown"),
}


def executor_words(up: bool, *, stopped: bool) -> str:
    """The executor's state as approval_web saw it (`up`), or that it was not asked when the
    services are `stopped` (a msgid)."""
    if stopped:
        return N_("not asked: the services are stopped")
    return N_("up") if up else N_("not answering")


def render_writable(
    view: View,
    devices: WritableDevices,
    tools: Sequence[tuple[str, ProposeRule]],
    *,
    observe: bool = False,
) -> str:
    """The rooms a change may target now, as the executor just read them: each room's name
    (a look-alike marked), device ID, model, online or not, each channel recording or not and
    the next event in the operator's time; then the changes that may be proposed for them
    (`tools`: the policy's proposable tools, in words, ``*`` for those that ask to confirm the
    room), or that none may be when the policy only watches (`observe`)."""
    if not devices.devices:
        return view.text(N_("No room may be changed now (read %(at)s)."), at=Moment(devices.read_at, False))
    lines = [
        view.text(
            N_("Rooms a change may target now: %(n)s (read %(at)s)"),
            n=len(devices.devices),
            at=Moment(devices.read_at, False),
        )
    ]
    for device in devices.devices:
        name = view.say(quoted_name(device.name)) if device.name else view.text(N_("(no name)"))
        if device.name and lookalike(device.name):
            name += " " + view.text(N_("(look-alike letters)"))
        state = view.text(N_("online") if device.online else N_("OFFLINE"))
        lines.append(
            f"  {name}  —  {view.text(N_('device %(id)s'), id=visible(device.device_id, 40))}, "
            f"{visible(device.model, 20)}, {state}"
        )
        for channel in device.channels:
            lines.append(
                "      "
                + view.text(
                    N_("channel %(n)s %(name)s: %(recording)s"),
                    n=visible(channel.channel_id, 8),
                    name=quoted_name(channel.name) if channel.name else "",
                    recording=view.text(_RECORDING[channel.recording]),
                )
            )
        event = device.next_event
        if event is not None:
            lines.append(
                "      "
                + view.text(
                    N_("next event: %(title)s, %(start)s to %(finish)s%(soon)s"),
                    title=visible(event.title, 60),
                    start=view.clock(event.start) if event.start else view.text(N_("start unknown")),
                    finish=view.clock(event.finish) if event.finish else view.text(N_("end unknown")),
                    soon=view.text(N_(" (%(in)s)"), **{"in": view.ago(event.start)}) if event.start else "",
                )
            )
    if observe:
        lines.append(view.text(N_("The policy is set to only watch, so nothing may be proposed.")))
    elif tools:
        lines.append(view.text(N_("Changes that may be proposed for them (* asks to confirm the room):")))
        for tool, rule in tools:
            mark = "*" if rule.disruptive else " "
            lines.append(
                f"  {mark} {view.say(change_words(tool, {}))} ({visible(tool, 60)}): "
                f"{translate(view.language, rule.summary)}"
            )
    else:
        lines.append(view.text(N_("No change may be proposed: the policy lists no proposable tool.")))
    return "\n".join(lines)
