"""Inspect: a fresh, read-only look at everything an approval card shows, and what Execute
would answer right now.

Facts (display text): per target its name, model, online, recording (unknown for an offline
device: Epiphan keeps the state it had when it went offline) and the channel's name;
the stream destination's name and URL host (never its key or full URL), the device using it
and whether it streams now; the event's title,
start and finish. Those that decide what the write does are returned again as the binding
facts with their hash (`services.executor.facts`), which the approval records and Execute
re-checks. ``would_refuse`` comes from the same pure checks Execute runs
(`services.executor.checks`), in the same order, minus the approval's own (an Inspect has no
approval), the server's definition of the tool as reviewed (``tool_changed``) included: a
seal that does not verify (e.g. prepared before a restart) gives ``seal_invalid``
and no facts, so the card offers Deny only; so does a device list that could not be read (no
target facts: nothing was looked for, so nothing is "not found"). ``complete`` is False when a
read failed or an ID was not found.
"""

from __future__ import annotations

from collections.abc import Mapping

from services.executor import ExecutorError
from services.executor.checks import (
    DeviceList,
    Observed,
    Refusal,
    channel_of,
    destination_refusal,
    find_endpoint,
    membership_refusal,
    sealed_proposal,
    stream_refusal,
    target_states,
)
from services.executor.facts import BoundFacts, bound_facts
from services.executor.runtime import Runtime, Standing, db_time
from services.executor.world import Beside, TargetReads
from shared.binding import BoundRecord
from shared.epiphan.fleet import Event, StreamEndpoint
from shared.errors import Code
from shared.policy.loader import ToolPolicy
from shared.store.approvals import get_proposal
from shared.wire.executor import EventFacts, Inspect, Inspection, StreamFacts, TargetFacts


def _event_facts(event_id: str, event: Event | None) -> EventFacts:
    if event is None or event.id != event_id:
        return EventFacts(event_id=event_id, found=False)
    return EventFacts(
        event_id=event.id,
        found=True,
        title=event.title,
        start=db_time(event.start) if event.start else None,
        finish=db_time(event.finish) if event.finish else None,
    )


def card_facts(
    record: BoundRecord,
    tool_policy: ToolPolicy,
    listed: DeviceList | None,
    endpoints: tuple[StreamEndpoint, ...] | None,
    reads: TargetReads | None,
) -> tuple[tuple[TargetFacts, ...], StreamFacts | None, EventFacts | None]:
    """The card's facts from whatever was read (None: not read). Pure."""
    rule = tool_policy.propose.get(record.tool)
    devices = listed.devices if listed is not None else {}
    recorder: Mapping[str, Mapping[str, bool | None]] = reads.recorder if reads is not None else {}
    targets = []
    for master in record.targets:
        device = devices.get(master)
        number = channel_of(rule, record.arguments, master) if rule is not None else None
        channel = device.channel(number) if device is not None and number is not None else None
        # Epiphan keeps an offline device's last recording state: unknown, not "recording".
        states = recorder.get(master) if device is not None and device.online else None
        targets.append(
            TargetFacts(
                device_id=master,
                found=device is not None,
                name=device.name if device else "",
                model=device.model if device else "",
                online=device.online if device else None,
                recording=any(bool(v) for v in states.values()) if states is not None else None,
                channel_id=number,
                channel_name=channel.name if channel is not None else None,
            )
        )
    stream = None
    stream_id = record.arguments.get("stream_id")
    if isinstance(stream_id, str):
        endpoint = find_endpoint(endpoints, stream_id) if endpoints is not None else None
        locker = devices.get(endpoint.locked_by) if endpoint and endpoint.locked_by else None
        stream = StreamFacts(
            stream_id=stream_id,
            found=endpoint is not None,
            name=endpoint.name if endpoint else "",
            host=endpoint.host if endpoint else None,
            locked_by=endpoint.locked_by if endpoint else None,
            locked_by_name=locker.name if locker is not None else None,
            streaming=endpoint.streaming if endpoint else None,
        )
    events = reads.events if reads is not None else {}
    event_id = record.arguments.get("event_id")
    if isinstance(event_id, str):
        event = _event_facts(event_id, events.get(record.arguments.get("device_id", "")))
    else:
        upcoming = next((events[m] for m in record.targets if events.get(m) is not None), None)
        event = _event_facts(upcoming.id, upcoming) if upcoming is not None else None
    return tuple(targets), stream, event


def world_facts(
    record: BoundRecord,
    tool_policy: ToolPolicy,
    listed: DeviceList,
    endpoints: tuple[StreamEndpoint, ...] | None,
    reads: TargetReads,
) -> BoundFacts:
    """The binding facts (`services.executor.facts`) of `record` in the world just read: the
    same `card_facts` the card shows, flattened and hashed with the stream destination's
    secret digest. Inspect returns them; Execute compares them with the approval's. Pure."""
    targets, stream, event = card_facts(record, tool_policy, listed, endpoints, reads)
    endpoint = (
        find_endpoint(endpoints, stream.stream_id) if stream is not None and endpoints is not None else None
    )
    return bound_facts(
        record, targets, stream, event, stream_secret=endpoint.secret_digest if endpoint is not None else None
    )


async def inspect(rt: Runtime, request: Inspect) -> Inspection:
    """Fresh card facts for a stored proposal and Execute's answer right now.

    Raises:
        ExecutorError: ``proposal_not_found``.
    """
    async with rt.db:
        row = await get_proposal(rt.conn, request.proposal_id)
    if row is None:
        raise ExecutorError(Code.PROPOSAL_NOT_FOUND, f"No proposal {request.proposal_id}.")
    record = sealed_proposal(row, rt.key)
    if isinstance(record, Refusal):
        return _incomplete(row.id, record, rt)
    try:
        standing = await rt.standing(record)
    except ExecutorError as exc:
        return _incomplete(row.id, Refusal(exc.code, exc.message), rt)
    refusal, listed, endpoints, reads = standing.refusal, None, None, None
    try:
        async with rt.sandbox() as session:
            reader = rt.reader(session, standing.tool_policy)
            async with Beside(lambda: reader.definition_check(record.tool)) as tools:
                listed = await reader.device_list()
                if isinstance(record.arguments.get("stream_id"), str):
                    endpoints = await reader.stream_endpoints()
                tools.start()  # beside the last reads, as at Execute
                reads = await reader.targets(record.targets)
                await tools.result()  # judged after the reads: the facts stay read
    except ExecutorError as exc:
        refusal = refusal or Refusal(exc.code, exc.message)
    if refusal is None and standing.proposed is not None and listed is not None and reads is not None:
        refusal = _world_refusal(rt, record, standing, listed, endpoints, reads)
    targets, stream, event = card_facts(record, standing.tool_policy, listed, endpoints, reads)
    if listed is None:
        # The device list was not read (no sign-in, Epiphan unreachable...): no target was
        # looked for, so none is reported "not found"; the refusal says why.
        targets, stream, event = (), None, None
    complete = (
        reads is not None
        and all(t.found for t in targets)
        and (stream is None or stream.found)
        and (event is None or event.found)
    )
    bound = (
        world_facts(record, standing.tool_policy, listed, endpoints, reads)
        if complete and listed is not None and reads is not None
        else None
    )
    return Inspection(
        proposal_id=row.id,
        complete=complete,
        targets=targets,
        stream=stream,
        event=event,
        would_refuse=refusal.code if refusal else None,
        would_refuse_message=refusal.message if refusal else None,
        read_at=db_time(rt.clock()),
        facts=bound.facts if bound is not None else {},
        facts_hash=bound.hash if bound is not None else "",
    )


def _world_refusal(
    rt: Runtime,
    record: BoundRecord,
    standing: Standing,
    listed: DeviceList,
    endpoints: tuple[StreamEndpoint, ...] | None,
    reads: TargetReads,
) -> Refusal | None:
    """Execute's checks on these reads, in its order (the same pure functions)."""
    assert standing.proposed is not None
    refusal = membership_refusal(standing.proposed, listed, rt.fence)
    if refusal is None and "stream_id" in standing.proposed.arguments:
        refusal = stream_refusal(standing.proposed.arguments, endpoints) or destination_refusal(
            record.tool, standing.proposed.arguments, endpoints, listed.devices
        )
    if refusal is not None:
        return refusal
    states = target_states(record.targets, listed.devices, reads.recorder, reads.events)
    if isinstance(states, Refusal):
        return states
    seen = Observed(states=states, events=reads.events, devices=listed.devices, now=rt.clock())
    return standing.state_refusal(record, seen)


def _incomplete(proposal_id: str, refusal: Refusal, rt: Runtime) -> Inspection:
    return Inspection(
        proposal_id=proposal_id,
        complete=False,
        targets=(),
        would_refuse=refusal.code,
        would_refuse_message=refusal.message,
        read_at=db_time(rt.clock()),
    )
