"""The approval card, built by code from the stored proposal and a fresh Inspect. Pure.

Every fact a person reads comes from here: the tool in plain words with what happens and how
to undo it (the policy's ``summary`` and ``undo``, translated by the catalogue), each target's
ID, current name, model and state, every argument in full, and the names the IDs stand for
(channel, stream destination name and host, event title with start and end). Names from the
fleet are display text only: hidden and bidi characters become visible markers
(`shared.text.display.visible`) and they are cut to `NAME_CAP` characters; the template escapes
them. The model's reason is kept apart, in lines, capped at `REASON_CAP` characters.

A card whose facts are not all there offers only Deny: an argument that cannot be shown in
full, an ID that was not found, a list that could not be read, an Inspect that failed, a tool
the policy no longer lets be proposed, or a refusal the executor would make right now
(`Inspection.would_refuse`). Each reason is a `Words` for the person.

`Words` (`services.approval_web.page.words`) are catalogue messages; the template translates them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from services.approval_web.page.words import N_, Words, refusal_words
from shared.policy.loader import ProposeRule
from shared.store.approvals import ProposalRow
from shared.text.display import visible
from shared.wire.executor import Inspection

NAME_CAP = 80
"""Longest name shown (characters, markers for hidden characters included)."""
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


@dataclasses.dataclass(frozen=True, slots=True)
class ArgumentLine:
    name: str
    value: str
    full: bool


@dataclasses.dataclass(frozen=True, slots=True)
class NamedThing:
    """A stream destination or an event: its ID, whether it was found, and its display facts
    (stream: name and host; event: title, start and end as ``YYYY-MM-DD HH:MM UTC``)."""

    kind: str
    id: str
    found: bool
    name: str
    host: str | None = None
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
    summary: Words | None
    undo: Words | None
    disruptive: bool
    targets: tuple[TargetLine, ...]
    arguments: tuple[ArgumentLine, ...]
    things: tuple[NamedThing, ...]
    reason_lines: tuple[str, ...]
    reason_cut: bool
    proposed_by: Words
    created_at: str
    read_at: str
    room: str
    blockers: tuple[Words, ...]
    facts: dict[str, str] = dataclasses.field(default_factory=dict)
    facts_hash: str = ""
    card_hash: str = ""

    @property
    def can_approve(self) -> bool:
        return not self.blockers


TITLES: Mapping[str, str] = {
    "batch_recording:start": N_("Start recording"),
    "batch_recording:stop": N_("Stop recording"),
    "start_stream_endpoint": N_("Start a stream"),
    "stop_stream_endpoint": N_("Stop a stream"),
    "confirm_cms_event_on_device": N_("Confirm a scheduled event"),
    "batch_reboot": N_("Restart a device"),
    "batch_firmware_update": N_("Update a device's firmware"),
}


def title_of(tool: str, arguments: Mapping[str, Any]) -> Words:
    """The tool in plain words (by tool and, for recording, by action)."""
    action = arguments.get("action")
    key = f"{tool}:{action}" if isinstance(action, str) and f"{tool}:{action}" in TITLES else tool
    if key in TITLES:
        return Words.of(TITLES[key])
    return Words.of(N_("Run the Epiphan tool %(tool)s"), tool=visible(tool, NAME_CAP))


AUTHORS: Mapping[str, str] = {"assistant": N_("the assistant"), "operator": N_("an operator")}


def author_of(proposed_by: str) -> Words:
    """Who proposed, in plain words (the store's ``proposed_by``)."""
    msgid = AUTHORS.get(proposed_by)
    return (
        Words.of(msgid)
        if msgid
        else Words.of(N_("an unknown author (%(who)s)"), who=visible(proposed_by, NAME_CAP))
    )


def show_time(text: str | None) -> str | None:
    """An Epiphan or database time as ``YYYY-MM-DD HH:MM UTC``; unreadable text shown visibly."""
    if text is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return visible(text, NAME_CAP)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


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
                start=show_time(e.start),
                finish=show_time(e.finish),
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
        why = refusal_words(inspection.would_refuse)
        out.append(Words.of(N_("The executor would refuse this right now: %(why)s"), why=why))
    return tuple(out)


def card_hash(card: Card) -> str:
    """SHA-256 hex over every fact of `card` (its own `card_hash` left out)."""
    facts = dataclasses.asdict(dataclasses.replace(card, card_hash=""))
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
    names = [t.name or t.device_id for t in targets]
    card = Card(
        proposal_id=proposal.id,
        tool=visible(proposal.tool, NAME_CAP),
        title=title_of(proposal.tool, proposal.arguments),
        summary=Words.of(rule.summary) if rule else None,
        undo=Words.of(rule.undo) if rule else None,
        disruptive=disruptive,
        targets=targets,
        arguments=arguments,
        things=things,
        reason_lines=reason_lines,
        reason_cut=reason_cut,
        proposed_by=author_of(proposal.proposed_by),
        created_at=show_time(proposal.created_at) or "",
        read_at=show_time(inspection.read_at) if inspection and inspection.read_at else "",
        room=", ".join(names),
        blockers=_blockers(proposal, rule, inspection, inspect_code, targets, arguments, things),
        facts=dict(inspection.facts) if inspection is not None else {},
        facts_hash=inspection.facts_hash if inspection is not None else "",
    )
    return dataclasses.replace(card, card_hash=card_hash(card))
