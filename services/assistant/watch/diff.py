"""What changed between the watch store and a new read of the fleet. Pure (no I/O, no clock).

A finding's identity (`finding_key`) is its room, its kind and the channel or source it names:
numbers (free disk, temperature, minutes since a reboot) and the class it threatens are facts
of the same finding, not a new one. Priorities are `shared.epiphan.attention.Priority` (lower is more
urgent): a finding whose priority rises (Fix soon → Fix first) is **worse**; one that eases is
recorded but is not news.

A read that could not read a part of the fleet (`shared.epiphan.fleet.FleetSnapshot.unread`:
the events, the system status...) judges nothing it would need that part for (`held_over`): an
open finding judged from it stays open as the store had it, and a room whose events were not
read keeps its findings' priorities. A part that could not be read never resolves, eases or
worsens anything; the heartbeat reports the part instead.

A room is new when the store did not know it (except on the very first read, when every room is
simply the starting point) and gone when a read no longer lists it; a room's going offline or
coming back is both a device change and the ``offline`` finding opening or resolving.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Final

from shared.epiphan.attention import Finding, Priority, priority_unjudged, unjudged
from shared.epiphan.fleet import Device, FleetSnapshot

FLEET_ID: Final = "fleet"
"""The device ID of findings about the whole fleet (``fleet_unreadable``)."""
IDENTITY_FACTS: Final = ("channel", "source")
"""The facts that tell two findings of one kind in one room apart."""


def finding_key(device_id: str, kind: str, facts: Iterable[tuple[str, str]]) -> str:
    """``<device>|<kind>|<channel or source>``: the identity of a finding across reads."""
    named = dict(facts)
    part = next((f"{k}={named[k]}" for k in IDENTITY_FACTS if k in named), "")
    return f"{device_id}|{kind}|{part}"


def key_of(finding: Finding) -> str:
    """`finding_key` of a `shared.epiphan.attention.Finding`."""
    return finding_key(finding.device_id, finding.kind, finding.facts)


@dataclass(frozen=True, slots=True)
class KnownDevice:
    """A room as the store last saw it."""

    id: str
    name: str
    online: bool
    gone: bool = False


@dataclass(frozen=True, slots=True)
class OpenFinding:
    """A finding the store holds open (not resolved)."""

    key: str
    device_id: str
    room: str
    kind: str
    priority: Priority
    facts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Change:
    """One change to record (and maybe post). ``kind``: ``device_offline``, ``device_online``,
    ``device_new``, ``device_gone``, ``finding_opened``, ``finding_worse``, ``finding_better``,
    ``finding_resolved``. Finding changes carry its key, kind, priority (the new one), the
    old priority (worse/better) and facts."""

    kind: str
    device_id: str
    room: str
    key: str | None = None
    finding_kind: str | None = None
    priority: Priority | None = None
    old_priority: Priority | None = None
    facts: tuple[tuple[str, str], ...] = ()


NEWS: Final = frozenset({"finding_opened", "finding_worse", "finding_resolved", "device_new", "device_gone"})
"""The change kinds a digest reports (new, worse, resolved, and rooms joining or leaving)."""


@dataclass(frozen=True, slots=True)
class BeatDiff:
    """The changes of one read, in a stable order (rooms, then findings by urgency), and the
    findings as they stand (`current`, keyed)."""

    changes: tuple[Change, ...]
    current: Mapping[str, Finding]

    @property
    def news(self) -> tuple[Change, ...]:
        """The changes a digest reports (`NEWS`)."""
        return tuple(c for c in self.changes if c.kind in NEWS)


def _finding_change(kind: str, finding: Finding, old: Priority | None = None) -> Change:
    return Change(
        kind=kind,
        device_id=finding.device_id,
        room=finding.device_name,
        key=key_of(finding),
        finding_kind=finding.kind,
        priority=finding.priority,
        old_priority=old,
        facts=finding.facts,
    )


def diff_devices(known: Mapping[str, KnownDevice], devices: Iterable[Device]) -> list[Change]:
    """Rooms that went offline, came back, joined or left the team since the store's view.
    With an empty store (the first read) nothing is a change."""
    if not known:
        return []
    out: list[Change] = []
    seen: set[str] = set()
    for device in devices:
        seen.add(device.id)
        name = device.name or device.id
        before = known.get(device.id)
        if before is None or before.gone:
            out.append(Change("device_new", device.id, name))
        elif before.online and not device.online:
            out.append(Change("device_offline", device.id, name))
        elif not before.online and device.online:
            out.append(Change("device_online", device.id, name))
    out += [Change("device_gone", d.id, d.name) for d in known.values() if d.id not in seen and not d.gone]
    return sorted(out, key=lambda c: (c.room.casefold(), c.device_id, c.kind))


def held_over(
    found: Iterable[Finding], open_findings: Mapping[str, OpenFinding], snapshot: FleetSnapshot
) -> list[Finding]:
    """`found` (the findings of `snapshot`) with what the snapshot could not judge kept as the
    store had it: an open finding of a listed, online room whose kind is judged from a part not
    read for that room (`shared.epiphan.attention.unjudged`) is still found, with its stored
    priority and facts; a found finding of a room whose events were not read keeps its stored
    priority and the class it named (`priority_unjudged`). With nothing unread, `found` as it
    is."""
    out = list(found)
    if not snapshot.unread:
        return out
    for i, finding in enumerate(out):
        before = open_findings.get(key_of(finding))
        if before is not None and priority_unjudged(snapshot, finding.device_id):
            facts, event = dict(finding.facts), dict(before.facts).get("event")
            kept = finding.facts if event is None or "event" in facts else (*finding.facts, ("event", event))
            out[i] = replace(finding, priority=before.priority, facts=kept)
    current = {key_of(f) for f in out}
    online = {d.id: d for d in snapshot.devices if d.online}
    for key, before in open_findings.items():
        device = online.get(before.device_id)
        if key in current or device is None or not unjudged(snapshot, before.device_id, before.kind):
            continue
        out.append(
            Finding(before.priority, before.kind, before.device_id, device.name or before.room, before.facts)
        )
    return out


def diff_findings(open_findings: Mapping[str, OpenFinding], findings: Iterable[Finding]) -> BeatDiff:
    """Findings opened, worse, better and resolved between the store's open findings and the
    new ones. A finding about the whole fleet (device `FLEET_ID`) is never resolved here: only
    a good read resolves it (the heartbeat does)."""
    current = {key_of(f): f for f in findings}
    out: list[Change] = []
    for key, finding in current.items():
        before = open_findings.get(key)
        if before is None:
            out.append(_finding_change("finding_opened", finding))
        elif finding.priority < before.priority:
            out.append(_finding_change("finding_worse", finding, before.priority))
        elif finding.priority > before.priority:
            out.append(_finding_change("finding_better", finding, before.priority))
    for key, before in open_findings.items():
        if key not in current and before.device_id != FLEET_ID:
            out.append(
                Change(
                    "finding_resolved",
                    before.device_id,
                    before.room,
                    key=key,
                    finding_kind=before.kind,
                    priority=before.priority,
                    facts=before.facts,
                )
            )
    out.sort(key=lambda c: (c.priority or 0, c.room.casefold(), c.key or ""))
    return BeatDiff(changes=tuple(out), current=current)
