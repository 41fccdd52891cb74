"""The approval card, built by code from the stored proposal and a fresh Inspect. Pure.

Every fact a person reads comes from here: the title naming the change and the room, what this
action does to the room and a risk line (`shared.text.changes`), how to undo it
(the policy's ``undo``, translated by the catalogue), each target's ID, current name, model and
state, every argument in full, and the names the IDs stand for (channel, stream destination
name and host, event title with start and end; times stay UTC text here and are shown in the
reader's zone when the page renders). Who wrote the reason (the assistant or an operator) is
kept with it. Names from the
fleet are display text only: hidden and bidi characters become visible markers
(`shared.text.display.visible`) and they are cut to `NAME_CAP` characters; the template escapes
them. The model's reason is kept apart, in lines, capped at `REASON_CAP` characters.

A card whose facts are not all there offers only Deny: an argument that cannot be shown in
full, an ID that was not found, a list that could not be read, an Inspect that failed, a tool
the policy no longer lets be proposed, or a refusal the executor would make right now
(`Inspection.would_refuse`). Each reason is a `Words` for the person; a room busy with an event
says which, and when the change is allowed again. A refusal Inspect made before reading
anything (a seal that does not verify, first, as at Execute) is the only reason said: the
devices were not read, so none is called missing.

`Words` (`services.approval_web.page.words`) are catalogue messages; the template translates them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from services.approval_web.page.words import N_, Moment, Words, refusal_words
from shared.policy.loader import ProposeRule
from shared.store.approvals import ProposalRow
from shared.text.catalogue import keyed
from shared.text.changes import (
    NAME_CAP,
    Room,
    change_words,
    happens_words,
    quoted_name,
    risk_words,
    room,
    rooms_words,
    title_words,
)
from shared.text.display import visible
from shared.wire.executor import Inspection

REASON_CAP = 600
"""Longest reason shown, all lines together."""
REASON_LINES = 12
ARGUMENT_CAP = 300
"""Longest argument value that can be shown in full; a longer one leaves only Deny."""


@dataclasses.dataclass(frozen=True, slots=True)
class TargetLine:
    device_id: str
    found: bool
    name: str
    model: str
    online: Words
    recording: Words
    channel_id: str | None
    channel_name: str | None
    read: bool = True
    """False when the device was not looked for (Inspect failed, or refused before reading):
    the card says "not read", never "not found"."""


@dataclasses.dataclass(frozen=True, slots=True)
class ArgumentLine:
    name: str
    value: str
    full: bool


@dataclasses.dataclass(frozen=True, slots=True)
class NamedThing:
    """A stream destination or an event: its ID, whether it was found, and its display facts
    (stream: name, host, which room uses it now and whether it streams now, in words; event:
    title, start and end as UTC text, shown in the reader's zone)."""

    kind: str
    id: str
    found: bool
    name: str
    host: str | None = None
    in_use: Words | None = None
    streaming: Words | None = None
    start: str | None = None
    finish: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Card:
    """Everything one approval card shows. `facts` and `facts_hash` are the executor's binding
    facts of the Inspect behind it (`services.executor.facts`). `card_hash` is SHA-256 over all
    of it (recorded with the approval: what the person saw). `can_approve` is False when
    `blockers` is not empty."""

    proposal_id: str
    tool: str
    title: Words
    change: Words
    rooms: tuple[Room, ...]
    summary: Words | None
    undo: Words | None
    risk: Words
    disruptive: bool
    targets: tuple[TargetLine, ...]
    arguments: tuple[ArgumentLine, ...]
    things: tuple[NamedThing, ...]
    reason_lines: tuple[str, ...]
    reason_cut: bool
    reason_by_operator: bool
    proposed_by: Words
    created_at: str
    read_at: str
    room: Words
    blockers: tuple[Words, ...]
    facts: dict[str, str] = dataclasses.field(default_factory=dict)
    facts_hash: str = ""
    card_hash: str = ""

    @property
    def can_approve(self) -> bool:
        return not self.blockers


def author_of(proposed_by: str) -> Words:
    """Who proposed, in plain words (the store's ``proposed_by``)."""
    return keyed("author", proposed_by) or Words.of(
        N_("an unknown author (%(who)s)"), who=visible(proposed_by, NAME_CAP)
    )


def _state(value: bool | None, yes: str, no: str) -> Words:
    return Words.of(N_("unknown") if value is None else yes if value else no)


def _argument(name: str, value: Any) -> ArgumentLine:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    shown = visible(text, ARGUMENT_CAP)
    return ArgumentLine(
        name=visible(name, NAME_CAP), value=shown, full=shown == text and visible(name, NAME_CAP) == name
    )


def _reason(reason: str) -> tuple[tuple[str, ...], bool]:
    lines, used, cut = [], 0, False
    for raw in reason.split("\n"):
        if len(lines) == REASON_LINES or used >= REASON_CAP:
            cut = True
            break
        line = visible(raw.rstrip("\r"), REASON_CAP - used)
        cut = cut or line.endswith("…") and line != raw
        lines.append(line)
        used += len(line)
    return tuple(lines), cut


def _targets(proposal: ProposalRow, inspection: Inspection | None) -> tuple[TargetLine, ...]:
    facts = {t.device_id: t for t in inspection.targets} if inspection else {}
    read = inspection is not None and inspection.proposal_id == proposal.id and bool(inspection.targets)
    out = []
    for device_id in proposal.targets:
        fact = facts.get(device_id)
        found = fact is not None and fact.found
        out.append(
            TargetLine(
                device_id=device_id,
                found=found,
                name=visible(fact.name, NAME_CAP) if fact else "",
                model=visible(fact.model, NAME_CAP) if fact else "",
                online=_state(fact.online if fact else None, N_("online"), N_("offline")),
                recording=_state(fact.recording if fact else None, N_("recording"), N_("not recording")),
                channel_id=visible(fact.channel_id, NAME_CAP) if fact and fact.channel_id else None,
                channel_name=visible(fact.channel_name, NAME_CAP)
                if fact and fact.channel_name is not None
                else None,
                read=read,
            )
        )
    return tuple(out)


def _things(inspection: Inspection | None) -> tuple[NamedThing, ...]:
    if inspection is None:
        return ()
    out = []
    if inspection.stream is not None:
        s = inspection.stream
        out.append(
            NamedThing(
                kind="stream",
                id=visible(s.stream_id, NAME_CAP),
                found=s.found,
                name=visible(s.name, NAME_CAP),
                host=visible(s.host, NAME_CAP) if s.host else None,
                in_use=Words.of(
                    N_("in use by %(room)s"),
                    room=quoted_name(s.locked_by_name)
                    if s.locked_by_name
                    else visible(s.locked_by, NAME_CAP),
                )
                if s.locked_by
                else Words.of(N_("not in use")),
                streaming=_state(s.streaming, N_("streaming now"), N_("not streaming")),
            )
        )
    if inspection.event is not None:
        e = inspection.event
        out.append(
            NamedThing(
                kind="event",
                id=visible(e.event_id, NAME_CAP),
                found=e.found,
                name=visible(e.title, NAME_CAP),
                start=e.start,
                finish=e.finish,
            )
        )
    return tuple(out)


def _blockers(
    proposal: ProposalRow,
    rule: ProposeRule | None,
    inspection: Inspection | None,
    inspect_code: str | None,
    targets: tuple[TargetLine, ...],
    arguments: tuple[ArgumentLine, ...],
    things: tuple[NamedThing, ...],
) -> tuple[Words, ...]:
    out: list[Words] = []
    if rule is None:
        out.append(Words.of(N_("The policy no longer allows this tool to be proposed.")))
    for argument in arguments:
        if not argument.full:
            out.append(Words.of(N_("The argument %(name)s cannot be shown in full."), name=argument.name))
    if inspection is None or inspection.proposal_id != proposal.id:
        why = refusal_words(inspect_code or "service_unavailable")
        out.append(Words.of(N_("The facts could not be read just now: %(why)s"), why=why))
        return tuple(out)
    if inspection.would_refuse and not inspection.targets:
        # Refused before anything was read (the seal, then the standing checks, as Execute
        # orders them): that is the reason; no device was read, so none is "not found".
        out.append(_would_refuse(inspection.would_refuse, inspection))
        return tuple(out)
    for target in targets:
        if not target.found:
            out.append(
                Words.of(N_("Device %(id)s was not found on the sandbox team's list."), id=target.device_id)
            )
    for thing in things:
        if not thing.found and thing.kind == "stream":
            out.append(Words.of(N_("Stream destination %(id)s was not found."), id=thing.id))
        elif not thing.found:
            out.append(Words.of(N_("Event %(id)s was not found."), id=thing.id))
    if (not inspection.complete or not inspection.facts_hash) and not out:
        out.append(Words.of(N_("A list could not be read, so some facts are missing.")))
    if inspection.would_refuse:
        out.append(_would_refuse(inspection.would_refuse, inspection))
    return tuple(out)


def _would_refuse(code: str, inspection: Inspection) -> Words:
    """Why the executor would refuse now, and until when where the facts say so: the event
    that makes the room busy (its title, when it starts or that it is on, when it ends)."""
    event = inspection.event
    if code == "target_in_event_window" and event is not None and event.found and event.finish:
        title = visible(event.title, NAME_CAP) or "—"
        if event.start:
            return Words.of(
                N_(
                    "The room is busy: %(title)s starts %(start)s and ends %(finish)s. "
                    "This change is allowed again after %(after)s."
                ),
                title=title,
                start=Moment(event.start),
                finish=Moment(event.finish),
                after=Moment(event.finish, relative=False),
            )
        return Words.of(
            N_(
                "The room is busy with %(title)s until %(finish)s. This change is allowed again after %(after)s."
            ),
            title=title,
            finish=Moment(event.finish),
            after=Moment(event.finish, relative=False),
        )
    if code == "seal_invalid":
        return Words.of(
            N_(
                "This card's seal does not verify: the proposal was changed in the store, or it was "
                "prepared before the executor restarted. Nothing can run from it: deny it, and propose "
                "the change again if it is still needed."
            )
        )
    if code == "target_recording":
        return Words.of(
            N_("The room is recording now. This change is allowed again once the recording stops.")
        )
    return Words.of(N_("The executor would refuse this right now: %(why)s"), why=refusal_words(code))


def card_hash(card: Card) -> str:
    """SHA-256 hex over every fact of `card` (its own `card_hash` left out, and when its facts
    were read: two people shown the same facts a minute apart saw the same card, and a change
    that needs two is bound to one card hash; the facts themselves are in `facts_hash`)."""
    facts = dataclasses.asdict(dataclasses.replace(card, card_hash="", read_at=""))
    return hashlib.sha256(json.dumps(facts, sort_keys=True, ensure_ascii=True).encode("ascii")).hexdigest()


def build_card(
    proposal: ProposalRow,
    *,
    rule: ProposeRule | None,
    disruptive: bool,
    inspection: Inspection | None,
    inspect_code: str | None = None,
) -> Card:
    """The card for `proposal` from the fresh `inspection` (None when Inspect failed, with
    its error code in `inspect_code`). `rule` is the tool's current propose rule (None when
    the policy no longer has one); `disruptive` is `ToolPolicy.is_disruptive` of the call."""
    targets = _targets(proposal, inspection)
    arguments = tuple(_argument(name, proposal.arguments[name]) for name in sorted(proposal.arguments))
    things = _things(inspection)
    reason_lines, reason_cut = _reason(proposal.reason)
    facts = {t.device_id: t for t in inspection.targets} if inspection else {}
    rooms = tuple(
        room(
            t.device_id,
            facts[t.device_id].name if t.found else None,
            t.channel_id,
            facts[t.device_id].channel_name if t.found else None,
        )
        for t in targets
    )
    stream = next((t.name for t in things if t.kind == "stream" and t.found), None)
    event = next((t.name for t in things if t.kind == "event" and t.found), None)
    title = title_words(proposal.tool, proposal.arguments, rooms)
    card = Card(
        proposal_id=proposal.id,
        tool=visible(proposal.tool, NAME_CAP),
        title=title,
        change=change_words(proposal.tool, proposal.arguments),
        rooms=rooms,
        summary=happens_words(
            proposal.tool,
            proposal.arguments,
            rooms,
            stream=stream,
            event=event,
            summary=rule.summary if rule else None,
        ),
        undo=Words.of(rule.undo) if rule else None,
        risk=risk_words(proposal.tool, proposal.arguments, disruptive),
        disruptive=disruptive,
        targets=targets,
        arguments=arguments,
        things=things,
        reason_lines=reason_lines,
        reason_cut=reason_cut,
        reason_by_operator=proposal.proposed_by == "operator",
        proposed_by=author_of(proposal.proposed_by),
        created_at=proposal.created_at,
        read_at=inspection.read_at if inspection and inspection.read_at else "",
        room=rooms_words(rooms),
        blockers=_blockers(proposal, rule, inspection, inspect_code, targets, arguments, things),
        facts=dict(inspection.facts) if inspection is not None else {},
        facts_hash=inspection.facts_hash if inspection is not None else "",
    )
    return dataclasses.replace(card, card_hash=card_hash(card))
