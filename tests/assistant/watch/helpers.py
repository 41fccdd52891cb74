"""Helpers for the watch's tests: fleets built by hand (pure tests), a destination that keeps
what it was sent, and a proposal source answering from memory. Fakes enter through
constructors; nothing of ours is mocked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from services.assistant.watch.compose import RoomName
from services.assistant.watch.destinations import PostError
from services.assistant.watch.heartbeat import BeatOutcome, Watch
from services.assistant.watch.notices import Notices
from services.assistant.watch.post import Post
from services.lab.server import LabHandle
from shared.config import REPO_POLICY_DIR
from shared.epiphan.fleet import Channel, Device, DeviceWarning, Event, FleetSnapshot, SystemStatus
from shared.errors import Code, FleetwatchError
from shared.policy.loader import Policy, load_policy
from shared.wire.approval import ApproverLine, ApproverReport, ProposalEvent, ProposalHistory, RecordSilence
from tests.lab.helpers import data_of, open_session

NOW = datetime(2026, 9, 16, 13, 0, tzinfo=UTC)


def device(
    device_id: str,
    name: str,
    *,
    online: bool = True,
    model: str = "Pearl-2",
    firmware: str = "4.24.6",
    warnings: Sequence[DeviceWarning] = (),
    channels: Sequence[Channel] = (),
    offline_minutes: int | None = None,
) -> Device:
    state_time = NOW - timedelta(minutes=offline_minutes) if offline_minutes is not None else None
    return Device(
        id=device_id,
        name=name,
        model=model,
        firmware=firmware,
        online=online,
        state_time=state_time,
        channels=tuple(channels) or (Channel("1", "Lecture"),),
        warnings=tuple(warnings),
    )


def event(
    event_id: str, title: str, start_in_minutes: float, *, confirmed: bool = True, minutes: int = 60
) -> Event:
    start = NOW + timedelta(minutes=start_in_minutes)
    return Event(
        id=event_id, title=title, confirmed=confirmed, start=start, finish=start + timedelta(minutes=minutes)
    )


def snapshot(
    devices: Sequence[Device],
    events: dict[str, Event | None] | None = None,
    system: dict[str, SystemStatus] | None = None,
) -> FleetSnapshot:
    return FleetSnapshot(
        team_id=None, devices=tuple(devices), events=events or {}, system=system or {}, taken_at=NOW
    )


@dataclass
class Recorder:
    """A destination that keeps every post (or fails, when `fail_with` is set)."""

    name: str = "recorder"
    to: str = ""
    posts: list[Post] = field(default_factory=list)
    fail_with: Code | None = None

    async def send(self, post: Post) -> None:
        if self.fail_with is not None:
            raise PostError(self.fail_with, "the test's destination refuses")
        self.posts.append(post)

    def kinds(self) -> list[str]:
        return [p.kind for p in self.posts]

    def of(self, kind: str) -> list[Post]:
        return [p for p in self.posts if p.kind == kind]


@dataclass
class MemoryProposals:
    """A `ProposalSource` answering from memory (approval.sock is tested with real processes)."""

    items: list[ProposalEvent] = field(default_factory=list)
    rooms_reply: dict[str, RoomName] | Code = field(default_factory=dict)
    page_url: str | None = "http://127.0.0.1:8767/"
    history_reply: Code | None = None
    history_calls: int = 0
    records: list[RecordSilence] = field(default_factory=list)
    record_reply: Code | None = None
    decisions_reply: ApproverReport | Code = field(
        default_factory=lambda: ApproverReport(
            days=7,
            threshold_seconds=3,
            people=(ApproverLine(1001, 4, 3, 1, 6, 1), ApproverLine(1002, 2, 2, 0, 12, 0)),
        )
    )
    decisions_calls: int = 0

    async def history(self, since: str) -> ProposalHistory:
        self.history_calls += 1
        if self.history_reply is not None:
            raise FleetwatchError(self.history_reply)
        items = tuple(i for i in self.items if i.created_at >= since)
        return ProposalHistory(items=items, read_at=since, page_url=self.page_url)

    async def rooms(self) -> dict[str, RoomName]:
        if isinstance(self.rooms_reply, Code):
            raise FleetwatchError(self.rooms_reply)
        return self.rooms_reply

    async def decisions(self, days: int) -> ApproverReport:
        self.decisions_calls += 1
        if isinstance(self.decisions_reply, Code):
            raise FleetwatchError(self.decisions_reply)
        return self.decisions_reply

    async def record(self, record: RecordSilence) -> None:
        if self.record_reply is not None:
            raise FleetwatchError(self.record_reply)
        self.records.append(record)


def pending(
    proposal_id: str, created_at: str, *, targets: tuple[str, ...] = ("29088800004",), **more: object
) -> ProposalEvent:
    fields = {
        "tool": "batch_recording",
        "arguments": {"action": "start", "device_ids": [f"{targets[0]}-1"]},
        "proposed_by": "assistant",
        "status": "pending",
        "expires_at": None,
        **more,
    }
    return ProposalEvent(proposal_id=proposal_id, targets=targets, created_at=created_at, **fields)


def policy_with(tmp_path: Path, **lines: str) -> Policy:
    """The shipped policy.yaml with some top-level lines replaced (``quiet_hours`` given as the
    block's text)."""
    text = (REPO_POLICY_DIR / "policy.yaml").read_text()
    for key, value in lines.items():
        start = text.index(f"\n{key}:")
        end = text.index("\n\n", start + 1)
        text = text[:start] + f"\n{key}: {value}" + text[end:]
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return load_policy(path)


async def beat(watch: Watch) -> BeatOutcome:
    """One beat, then wait until its posts went out."""
    outcome = await watch.beat()
    await watch.outbox.drain()
    return outcome


ENG220 = "19012340205"
"""ENG 220: a Nano, online, idle, no class today: free to reboot through the lab's MCP."""


async def reboot_through_the_labs_mcp(lab: LabHandle, device_id: str) -> None:
    """What a colleague (or Epiphan's own UI) could do: a reboot with the normal team's token."""
    async with open_session(lab.mcp_url, lab.teams["normal"].token) as session:
        assert data_of(await session.call_tool("batch_reboot", {"device_ids": [device_id]})) == {}


def notices_of(watch: Watch) -> Notices:
    """The notice poll the runner would start beside `watch` (same store, outbox, proposals)."""
    assert watch.proposals is not None
    return Notices(
        store=watch.store,
        outbox=watch.outbox,
        proposals=watch.proposals,
        language=watch.options.language,
        where=watch.where,
        now=watch.now,
        interval_seconds=watch.options.notice_seconds,
        reminder_minutes=watch.rules.reminder_minutes,
    )
