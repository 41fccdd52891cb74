"""A change in words: which room, what change, what it does, how risky. Pure.

What a person reads first on the approval page's card, outcome and "Recent decisions", and in
``fleetwatch pending`` and ``audit tail``:

The words of each tool's change, what it does and its risk are keyed catalogue entries (contexts
``change``, ``happens``, ``risk``; key the tool, ``batch_recording:start`` for an action).

- `title_words`: the change and the room, ``Start recording: Sandbox Classroom, channel 1
  (Lecture)``;
- `happens_words`: what this action does to this room (not the tool's generic summary);
- `risk_words`: one risk line for every card, disruptive or not.

A room is a target's current name (from a fresh Inspect on a card; from the binding facts a
person approved, `rooms_from_facts`, on an outcome) with its channel. A name from the fleet is
display text (`shared.text.display.visible`, capped); a look-alike name (Cyrillic, fullwidth,
combining marks, digits of another script: `shared.text.display.lookalike`) is marked and its
device ID stands beside it; a look-alike channel name is marked beside its channel number.
A target whose name is unknown is named by its device ID. Every name stands in the reader's
quote marks (`quoted_name`, `quoted`: the one quoting helper of every surface).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from shared.ids import is_channel_id, split_channel_id
from shared.text.catalogue import C_, N_, Words, has_words, keyed, say_text
from shared.text.display import lookalike, visible
from shared.text.languages import language_of

NAME_CAP = 80
"""Longest name shown (characters, markers for hidden characters included)."""
_QUOTED = C_("quote", "“%(name)s”")


def quoted_name(name: str) -> Words:
    """A fleet name (made visible, at most `NAME_CAP` characters) in the reader's quote marks
    (“…” in English, «…» in Spanish): a code-built line shows where the name ends, so a name
    cannot carry state-like words ahead of the real state. The one quoting helper of every
    surface (card, outcome, CLI, the watch's posts)."""
    return Words.in_context("quote", _QUOTED, name=visible(name, NAME_CAP))


def quoted(name: str, language: str) -> str:
    """`quoted_name` said in `language` (``“ENG 210”``, ``«ENG 210»``), for lines built as
    plain text (the watch's posts, a finding's line)."""
    now = dt.datetime.now(dt.UTC)
    return say_text(quoted_name(name), language_of(language), zone=dt.UTC, now=now)


@dataclasses.dataclass(frozen=True, slots=True)
class Room:
    """One target as a person reads it: its device ID, its name ("" when unknown), whether the
    name is a look-alike, and the channel the change touches (number and name, or None)."""

    device_id: str
    name: str
    lookalike: bool = False
    channel: str | None = None
    channel_name: str | None = None
    channel_lookalike: bool = False


def room(device_id: str, name: str | None, channel: str | None, channel_name: str | None) -> Room:
    """A `Room` from raw fleet text (made visible and capped here)."""
    return Room(
        device_id=visible(device_id, NAME_CAP),
        name=visible(name, NAME_CAP) if name else "",
        lookalike=bool(name) and lookalike(name or ""),
        channel=visible(channel, 8) if channel else None,
        channel_name=visible(channel_name, NAME_CAP) if channel_name is not None else None,
        channel_lookalike=bool(channel_name) and lookalike(channel_name or ""),
    )


def channels_of(tool: str, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The channel number each target's change touches, by master ID (``batch_recording``'s
    ``<master>-<n>`` IDs, the stream tools' ``device_id`` + ``channel_id``)."""
    out: dict[str, str] = {}
    for value in arguments.get("device_ids") or ():
        if isinstance(value, str) and is_channel_id(value):
            master, number = split_channel_id(value)
            out[master] = number
    device, channel = arguments.get("device_id"), arguments.get("channel_id")
    if isinstance(device, str) and isinstance(channel, str):
        out[device] = channel
    return out


def rooms_from_facts(
    tool: str, arguments: Mapping[str, Any], targets: Sequence[str], facts: Mapping[str, str] | None
) -> tuple[Room, ...]:
    """The rooms of a proposal as the card a person decided on showed them: names from the
    binding facts (``device <id> name``, ``device <id> channel <n> name``,
    `services.executor.facts`) or a denial's recorded names; device IDs alone when none."""
    facts = facts or {}
    channels = channels_of(tool, arguments)
    out = []
    for device_id in targets:
        channel = channels.get(device_id)
        channel_name = facts.get(f"device {device_id} channel {channel} name") if channel else None
        out.append(room(device_id, facts.get(f"device {device_id} name"), channel, channel_name))
    return tuple(out)


def one_room_words(place: Room) -> Words:
    """``“Sandbox Classroom”, channel 1 (“Lecture”)``: each name in the reader's quote marks
    (`quoted_name`), so a name cannot carry state-like words ahead of
    the real state; a look-alike name marked with its device ID, a look-alike channel name
    marked too (the channel's number beside it); an unknown name as ``device <id>``."""
    if not place.name:
        name = Words.of(N_("device %(id)s"), id=place.device_id)
    elif place.lookalike:
        name = Words.of(
            N_("%(name)s (look-alike letters: device %(id)s)"),
            name=quoted_name(place.name),
            id=place.device_id,
        )
    else:
        name = quoted_name(place.name)
    if place.channel is None:
        return name
    if place.channel_name and place.channel_lookalike:
        return Words.of(
            N_("%(room)s, channel %(n)s (%(channel)s: look-alike letters)"),
            room=name,
            n=place.channel,
            channel=quoted_name(place.channel_name),
        )
    if place.channel_name:
        return Words.of(
            N_("%(room)s, channel %(n)s (%(channel)s)"),
            room=name,
            n=place.channel,
            channel=quoted_name(place.channel_name),
        )
    return Words.of(N_("%(room)s, channel %(n)s"), room=name, n=place.channel)


def rooms_words(rooms: Sequence[Room]) -> Words:
    """Every room, joined (``A; B``); ``no device`` for none."""
    if not rooms:
        return Words.of(N_("no device"))
    words = one_room_words(rooms[0])
    for place in rooms[1:]:
        words = Words.of(N_("%(first)s; %(next)s"), first=words, next=one_room_words(place))
    return words


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    action = arguments.get("action")
    key = f"{tool}:{action}" if isinstance(action, str) else tool
    return key if has_words("change", key) else tool


def change_words(tool: str, arguments: Mapping[str, Any]) -> Words:
    """The change in plain words (``Start recording``); an unknown tool by its name."""
    return keyed("change", _key(tool, arguments)) or Words.of(
        N_("Run the Epiphan tool %(tool)s"), tool=visible(tool, NAME_CAP)
    )


def title_words(tool: str, arguments: Mapping[str, Any], rooms: Sequence[Room]) -> Words:
    """``Start recording: “Sandbox Classroom”, channel 1 (“Lecture”)``."""
    return Words.of(N_("%(change)s: %(room)s"), change=change_words(tool, arguments), room=rooms_words(rooms))


def happens_words(
    tool: str,
    arguments: Mapping[str, Any],
    rooms: Sequence[Room],
    *,
    stream: str | None = None,
    event: str | None = None,
    summary: str | None = None,
) -> Words | None:
    """What this action does to these rooms; the policy's generic `summary` for a tool without
    its own sentence (None when there is neither). `stream` and `event` are the destination's
    name and the event's title as shown (visible text)."""
    if not has_words("happens", _key(tool, arguments)):
        return Words.of(summary) if summary else None
    return keyed(
        "happens",
        _key(tool, arguments),
        room=rooms_words(rooms),
        stream=Words.of(N_("the stream destination %(name)s"), name=stream)
        if stream
        else Words.of(N_("the stream destination")),
        event=Words.of(N_("the event %(title)s"), title=event) if event else Words.of(N_("its event")),
    )


def risk_words(tool: str, arguments: Mapping[str, Any], disruptive: bool) -> Words:
    """The card's risk line: this action's own, else by whether the policy calls it disruptive."""
    risk = keyed("risk", _key(tool, arguments))
    if risk:
        return risk
    if disruptive:
        return Words.of(
            N_(
                "High risk: it can interrupt a class, a recording or a stream. Approving asks you to confirm the room."
            )
        )
    return Words.of(N_("Low risk: the policy does not count this change as disruptive."))
