"""The executor's checks: pure functions over frozen data. No I/O, no clock (`now` is passed).

Each returns the first `Refusal` (a stable code and a sentence for a person) or None. Execute
runs them in the issue's order, interleaved with the fresh reads they judge (service layer):

1. `approved_record`      the approval row, the proposal and what Execute carries agree, and
   `sealed_record`        the seal verifies and the stored row agrees with the sealed record
2. (claim the approval: `services.executor.executions.claim_approval`)
3. `policy_refusal`       autonomy, the tool still proposable at this schema version, arguments
4. `fence_refusal`        an allowlist or a team ID is configured
5. (kill switch; the sandbox sign-in; the fresh device list, failing closed)
6. `membership_refusal`   team ID, sandbox membership, allowlist, channel on the device, what
                          the device can do (`capability_refusal`: model, online)
7. `stream_refusal`       ``stream_id`` on the sandbox team's stream endpoint list, then
   `destination_refusal`  a start on a destination another device uses, a stop of one not streaming
8. (recorder status and events, read last)
9. `state_refusal`        fingerprint, then ``event_id`` current/next, then the disruptive rule
10. `facts_refusal`       the card's binding facts, read afresh, hash as the card showed them

Prepare and Inspect use the same functions, so the card's "would refuse" is Execute's answer.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import msgspec

from services.executor.facts import BoundFacts, changed_words
from shared.binding import BoundRecord, TargetState, fingerprint_hash, record_from_bytes, verify_seal
from shared.canonical import CanonicalError, canonicalize_arguments
from shared.epiphan.fleet import Device, Event, StreamEndpoint, model_can
from shared.errors import Code, FleetwatchError
from shared.ids import is_channel_id, split_channel_id
from shared.policy.loader import Policy, ProposeRule, TargetKind, ToolPolicy
from shared.store.approvals import ApprovalRow, ProposalRow
from shared.wire.executor import Execute

EPIPHAN_TIME = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refusal: a stable `code` and one sentence for a person (no secret in it)."""

    code: Code
    message: str


@dataclass(frozen=True, slots=True)
class Fence:
    """What a change may touch: ``FLEETWATCH_WRITE_DEVICE_IDS`` and ``FLEETWATCH_WRITE_TEAM_ID``."""

    device_ids: frozenset[str]
    team_id: str | None

    @property
    def configured(self) -> bool:
        return bool(self.device_ids) or self.team_id is not None


@dataclass(frozen=True, slots=True)
class DeviceList:
    """The sandbox sign-in's device list as just read: the team ID Epiphan reported (None when
    it reports none; unconfirmed, EPIPHAN.md) and the devices by master ID."""

    team_id: str | None
    devices: Mapping[str, Device]


@dataclass(frozen=True, slots=True)
class Observed:
    """The freshest reads the state checks judge: each target's fingerprint, its current/next
    event, the device list, and the executor's clock at the check (UTC)."""

    states: Mapping[str, TargetState]
    events: Mapping[str, Event | None]
    devices: Mapping[str, Device]
    now: datetime


@dataclass(frozen=True, slots=True)
class Proposed:
    """A checked call: the rule, canonical arguments and the targets' master IDs (in order)."""

    rule: ProposeRule
    arguments: dict[str, Any]
    targets: tuple[str, ...]


def _name(devices: Mapping[str, Device], master: str) -> str:
    device = devices.get(master)
    return f"{device.name} ({master})" if device is not None and device.name else master


# --- 1. the seal --------------------------------------------------------------------------


def sealed_record(
    *,
    proposal_id: str,
    stored: Mapping[str, Any],
    record_data: bytes,
    seal_hex: str,
    key: bytes,
) -> BoundRecord | Refusal:
    """The bound record if its seal verifies under `key` and the stored row's copies (`stored`:
    tool, arguments, targets, fingerprint, fingerprint_hash, schema_version, slot, reason) agree
    with it; else ``seal_invalid``. A row edited in the store, or sealed by an earlier
    executor (a restart makes a new key), never verifies."""
    try:
        record = record_from_bytes(record_data)
    except CanonicalError:
        return Refusal(
            Code.SEAL_INVALID, "The stored proposal's record is unreadable; it was changed in the store."
        )
    if not verify_seal(record, seal_hex, key):
        return Refusal(
            Code.SEAL_INVALID,
            "The proposal's seal does not verify: it was changed in the store, or prepared before "
            "the executor last restarted. Nothing ran; propose it again.",
        )
    mine = {**msgspec.to_builtins(record), "fingerprint_hash": fingerprint_hash(record.fingerprint)}
    theirs = {"proposal_id": proposal_id, **{k: stored.get(k) for k in mine if k != "proposal_id"}}
    theirs["targets"] = tuple(theirs["targets"] or ())
    differing = sorted(k for k in mine if mine[k] != theirs[k])
    if differing:
        return Refusal(
            Code.SEAL_INVALID,
            f"The stored proposal differs from what was sealed ({', '.join(differing)}): it was "
            "changed in the store. Nothing ran.",
        )
    return record


def approved_record(
    request: Execute, approval: ApprovalRow | None, row: ProposalRow | None, key: bytes
) -> BoundRecord | Refusal:
    """Step 1 of Execute: the approval the page consumed, the proposal Execute names and what
    the page sent agree, and the proposal's seal verifies; the sealed record, or the refusal.

    ``approval_not_found``; ``proposal_not_found``; ``approval_mismatch`` when the approval
    row names another proposal, card hash or facts hash than Execute (the row was changed in
    the store: the proposal that runs is always the one the person's click named);
    ``seal_invalid`` (`sealed_proposal`).
    """
    if approval is None:
        return Refusal(Code.APPROVAL_NOT_FOUND, f"No approval {request.approval_id}: nothing ran.")
    if row is None:
        return Refusal(Code.PROPOSAL_NOT_FOUND, f"No proposal {request.proposal_id}: nothing ran.")
    differing = [
        name
        for name, stored, sent in (
            ("proposal", approval.proposal_id, request.proposal_id),
            ("card hash", approval.card_hash, request.card_hash),
            ("facts hash", approval.facts_hash, request.facts_hash),
        )
        if stored != sent
    ]
    if differing:
        return Refusal(
            Code.APPROVAL_MISMATCH,
            f"The approval in the store names another {' and '.join(differing)} than the card the person "
            "approved: it was changed in the store. Nothing ran.",
        )
    return sealed_proposal(row, key)


def sealed_proposal(row: ProposalRow, key: bytes) -> BoundRecord | Refusal:
    """`sealed_record` over a stored proposal row (its bound record, seal and copies)."""
    return sealed_record(
        proposal_id=row.id,
        stored=msgspec.structs.asdict(row),
        record_data=row.bound_record,
        seal_hex=row.seal,
        key=key,
    )


# --- 3. policy ----------------------------------------------------------------------------


def policy_refusal(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    policy: Policy,
    tool_policy: ToolPolicy,
    schema_version: int | None = None,
) -> Proposed | Refusal:
    """The policy still lets `tool` be proposed with these `arguments` (at `schema_version`,
    when given: the version the proposal was bound with). Order: autonomy (``observe_mode``),
    the rule (``not_proposable`` / ``schema_not_reviewed``), ``schema_version_changed``,
    canonical form (``hidden_character`` / ``not_canonicalizable``), the schema
    (``too_many_targets`` / ``invalid_arguments``)."""
    if not policy.may_propose:
        return Refusal(Code.OBSERVE_MODE, "Autonomy is set to observe in the policy: no change may run.")
    try:
        rule = tool_policy.rule_for(tool)
    except FleetwatchError as exc:
        return Refusal(exc.code, exc.message)
    if schema_version is not None and rule.schema_version != schema_version:
        return Refusal(
            Code.SCHEMA_VERSION_CHANGED,
            f"The reviewed schema of {tool} is now version {rule.schema_version}; this proposal "
            f"was made against version {schema_version}.",
        )
    try:
        canonical = canonicalize_arguments(arguments)
        rule.validate(canonical)
    except FleetwatchError as exc:
        return Refusal(exc.code, exc.message)
    return Proposed(rule=rule, arguments=canonical, targets=rule.target_device_ids(canonical))


def fence_refusal(fence: Fence) -> Refusal | None:
    """``fence_not_configured`` when neither an allowlist nor a team ID is set (fail closed)."""
    if fence.configured:
        return None
    return Refusal(
        Code.FENCE_NOT_CONFIGURED,
        "No write fence is configured: set FLEETWATCH_WRITE_DEVICE_IDS, FLEETWATCH_WRITE_TEAM_ID, or both.",
    )


# --- 6. membership ------------------------------------------------------------------------


def team_refusal(listed: DeviceList, fence: Fence) -> Refusal | None:
    """``team_mismatch`` when ``FLEETWATCH_WRITE_TEAM_ID`` is set and the device list reports a
    different team ID. Decision (whether Epiphan reports a team ID is unconfirmed): a list
    without a team ID passes only when the allowlist is also set (the allowlist is then the
    fence); with the team ID as the only fence it is refused, since nothing confirms the team."""
    if fence.team_id is None:
        return None
    if listed.team_id is None:
        if fence.device_ids:
            return None
        return Refusal(
            Code.TEAM_MISMATCH,
            "Epiphan did not report the sandbox sign-in's team ID, so FLEETWATCH_WRITE_TEAM_ID "
            "cannot be confirmed; set FLEETWATCH_WRITE_DEVICE_IDS as well.",
        )
    if listed.team_id != fence.team_id:
        return Refusal(
            Code.TEAM_MISMATCH,
            "The sandbox sign-in belongs to another team than FLEETWATCH_WRITE_TEAM_ID names.",
        )
    return None


def channel_of(rule: ProposeRule, arguments: Mapping[str, Any], master: str) -> str | None:
    """The device-local channel number a call acts on for target `master`, or None: the
    channel ID's number for a channel rule, else the ``channel_id`` argument (stream tools)."""
    if rule.target_kind is TargetKind.CHANNEL:
        for target in rule.targets(arguments):
            if is_channel_id(target) and split_channel_id(target)[0] == master:
                return split_channel_id(target)[1]
        return None
    channel = arguments.get("channel_id")
    return channel if isinstance(channel, str) else None


NEEDS_ONLINE: frozenset[str] = frozenset({"batch_reboot", "batch_firmware_update"})
"""Tools refused for an offline target: a reboot or a firmware update cannot reach it."""


def capability_refusal(tool: str, device: Device) -> Refusal | None:
    """``model_not_capable`` when `device`'s model cannot take `tool` at all
    (`shared.epiphan.fleet.model_can`: an EC20 camera asked to record, stream or hold an
    event); ``target_offline`` when `tool` is a reboot or firmware update and the device list
    says the device is offline. Judged on the device list as just read."""
    name = f"{device.name} ({device.id})" if device.name else device.id
    if not model_can(device.model, tool):
        return Refusal(
            Code.MODEL_NOT_CAPABLE,
            f"{name} is an {device.model}, a camera: it cannot record, stream or hold events.",
        )
    if tool in NEEDS_ONLINE and not device.online:
        return Refusal(
            Code.TARGET_OFFLINE,
            f"{name} is offline: a reboot or firmware update cannot reach it.",
        )
    return None


def membership_refusal(proposed: Proposed, listed: DeviceList, fence: Fence) -> Refusal | None:
    """Team ID (`team_refusal`), then per target in order: on the sandbox team's list
    (``target_not_in_sandbox``), on the allowlist when one is set (``target_not_allowlisted``),
    its channel on the device (``channel_not_found``), and what the device can do
    (`capability_refusal`: ``model_not_capable``, ``target_offline``). A channel ID counts as
    its master."""
    refusal = team_refusal(listed, fence)
    if refusal is not None:
        return refusal
    for master in proposed.targets:
        device = listed.devices.get(master)
        if device is None:
            return Refusal(
                Code.TARGET_NOT_IN_SANDBOX,
                f"Device {master} is not on the sandbox team's device list; only sandbox devices can be changed.",
            )
        if fence.device_ids and master not in fence.device_ids:
            return Refusal(
                Code.TARGET_NOT_ALLOWLISTED,
                f"{_name(listed.devices, master)} is not on FLEETWATCH_WRITE_DEVICE_IDS.",
            )
        channel = channel_of(proposed.rule, proposed.arguments, master)
        if channel is not None and device.channel(channel) is None:
            return Refusal(
                Code.CHANNEL_NOT_FOUND, f"{_name(listed.devices, master)} has no channel {channel}."
            )
        refusal = capability_refusal(proposed.rule.tool, device)
        if refusal is not None:
            return refusal
    return None


def stream_refusal(
    arguments: Mapping[str, Any], endpoints: tuple[StreamEndpoint, ...] | None
) -> Refusal | None:
    """``stream_not_found`` when the call names a ``stream_id`` that is not on the sandbox
    team's stream endpoint list (UUIDs compare case-insensitively)."""
    stream_id = arguments.get("stream_id")
    if not isinstance(stream_id, str):
        return None
    if endpoints is None or stream_id.lower() not in {e.id.lower() for e in endpoints}:
        return Refusal(
            Code.STREAM_NOT_FOUND, f"Stream destination {stream_id} is not on the sandbox team's list."
        )
    return None


def destination_refusal(
    tool: str,
    arguments: Mapping[str, Any],
    endpoints: tuple[StreamEndpoint, ...] | None,
    devices: Mapping[str, Device],
) -> Refusal | None:
    """The destination as Epiphan reports it now (``LockByDevice``, ``CurrentlyStreaming``):
    ``stream_in_use`` for a ``start_stream_endpoint`` on a destination another device uses (the
    live server fails it); ``stream_not_streaming`` for a ``stop_stream_endpoint`` of one that
    is not streaming, or streams from another device than the call's. A destination that
    reports neither (an older shape) is not refused here: the verification still judges it."""
    stream_id, device_id = arguments.get("stream_id"), arguments.get("device_id")
    if tool not in ("start_stream_endpoint", "stop_stream_endpoint") or not isinstance(stream_id, str):
        return None
    endpoint = find_endpoint(endpoints, stream_id) if endpoints is not None else None
    if endpoint is None:
        return None
    name = endpoint.name or stream_id
    other = endpoint.locked_by is not None and endpoint.locked_by != device_id
    if tool == "start_stream_endpoint" and other:
        assert endpoint.locked_by is not None
        return Refusal(
            Code.STREAM_IN_USE,
            f"Stream destination {name} is in use by {_name(devices, endpoint.locked_by)}; "
            "a start on another room would fail. Nothing ran.",
        )
    if tool == "stop_stream_endpoint" and (endpoint.streaming is False or other):
        where = (
            f" (it streams from {_name(devices, endpoint.locked_by)})" if other and endpoint.locked_by else ""
        )
        return Refusal(
            Code.STREAM_NOT_STREAMING,
            f"Stream destination {name} is not streaming from {_name(devices, str(device_id))}{where}; "
            "there is nothing to stop. Nothing ran.",
        )
    return None


def find_endpoint(endpoints: tuple[StreamEndpoint, ...], stream_id: str) -> StreamEndpoint | None:
    """The endpoint with that ID (case-insensitive), or None."""
    return next((e for e in endpoints if e.id.lower() == stream_id.lower()), None)


def as_listed(arguments: Mapping[str, Any], endpoints: tuple[StreamEndpoint, ...] | None) -> dict[str, Any]:
    """`arguments` with a ``stream_id`` replaced by the ID exactly as the sandbox team's list
    gives it (found case-insensitively; Epiphan accepts the form it lists). Others unchanged."""
    out = dict(arguments)
    stream_id = out.get("stream_id")
    if isinstance(stream_id, str) and endpoints is not None:
        endpoint = find_endpoint(endpoints, stream_id)
        if endpoint is not None:
            out["stream_id"] = endpoint.id
    return out


# --- 9. state -----------------------------------------------------------------------------


def epiphan_time(moment: datetime | None) -> str | None:
    """UTC ``YYYY-MM-DDTHH:MM:SSZ`` (Epiphan's ``until`` form), or None."""
    return moment.strftime(EPIPHAN_TIME) if moment is not None else None


def target_states(
    targets: tuple[str, ...],
    devices: Mapping[str, Device],
    recorder: Mapping[str, Mapping[str, bool | None]],
    events: Mapping[str, Event | None],
) -> dict[str, TargetState] | Refusal:
    """Each target's fingerprint (online from the device list, recording from the recorder
    status, the current/next event's start), or ``state_read_failed`` when a read left a
    target out (fail closed: an unknown state is never taken as quiet)."""
    states: dict[str, TargetState] = {}
    for master in targets:
        device = devices.get(master)
        if device is None or master not in recorder or master not in events:
            return Refusal(
                Code.STATE_READ_FAILED,
                f"The state of {_name(devices, master)} could not be read (recorder status or events missing).",
            )
        event = events[master]
        states[master] = TargetState(
            online=device.online,
            recording=any(bool(v) for v in recorder[master].values()),
            next_event_start=epiphan_time(event.start) if event is not None else None,
        )
    return states


def _changes(before: TargetState, after: TargetState) -> str:
    words = []
    if before.online != after.online:
        words.append("came online" if after.online else "went offline")
    if before.recording != after.recording:
        words.append("started recording" if after.recording else "stopped recording")
    if before.next_event_start != after.next_event_start:
        words.append(f"its next event start moved from {before.next_event_start} to {after.next_event_start}")
    return " and ".join(words)


def fingerprint_refusal(
    bound: Mapping[str, TargetState], fresh: Mapping[str, TargetState], devices: Mapping[str, Device]
) -> Refusal | None:
    """``fingerprint_changed`` when any target's online, recording or next event start differs
    from the proposal's fingerprint; the message says what changed."""
    for master in sorted(bound):
        if fresh.get(master) != bound[master]:
            change = _changes(bound[master], fresh[master]) if master in fresh else "could not be read"
            return Refusal(
                Code.FINGERPRINT_CHANGED,
                f"{_name(devices, master)} changed since the proposal: {change}. Nothing ran; propose it again.",
            )
    return None


def event_refusal(arguments: Mapping[str, Any], events: Mapping[str, Event | None]) -> Refusal | None:
    """``event_not_current`` when the call names an ``event_id`` that is not its device's
    current or next event."""
    event_id, device_id = arguments.get("event_id"), arguments.get("device_id")
    if not isinstance(event_id, str):
        return None
    event = events.get(device_id) if isinstance(device_id, str) else None
    if event is None or event.id != event_id:
        current = f" (it is {event.id})" if event is not None else " (it has none)"
        return Refusal(
            Code.EVENT_NOT_CURRENT,
            f"Event {event_id} is not device {device_id}'s current or next event{current}.",
        )
    return None


def in_event_window(event: Event, now: datetime, window_minutes: int) -> bool:
    """True during the event or within `window_minutes` before its start. An event whose
    start is unknown counts as inside (fail closed)."""
    if event.start is None:
        return True
    if event.finish is not None and event.finish <= now:
        return False
    return event.start <= now + timedelta(minutes=window_minutes)


def disruptive_refusal(
    proposed: Proposed, tool: str, *, tool_policy: ToolPolicy, lead_minutes: int, seen: Observed
) -> Refusal | None:
    """The disruptive rule (seed 003, "Disruptive tools"): a disruptive call is refused while a
    target records (``target_recording``) unless the rule's ``stops_recording`` names this call,
    and during an event or inside the tool's window, ``rule.window_minutes(lead_minutes)``
    (``target_in_event_window``; firmware: 120 minutes) even then."""
    if not tool_policy.is_disruptive(tool, proposed.arguments):
        return None
    stops = proposed.rule.stops_recording_call(proposed.arguments)
    window = proposed.rule.window_minutes(lead_minutes)
    for master in proposed.targets:
        name = _name(seen.devices, master)
        if seen.states[master].recording and not stops:
            return Refusal(Code.TARGET_RECORDING, f"{name} is recording; {tool} would interrupt it.")
        event = seen.events.get(master)
        if event is not None and in_event_window(event, seen.now, window):
            during = event.start is not None and event.start <= seen.now
            when = "is in its event" if during else f"has an event starting within {window} minutes"
            return Refusal(
                Code.TARGET_IN_EVENT_WINDOW,
                f"{name} {when} ({event.title or event.id}); {tool} is not allowed then.",
            )
    return None


def facts_refusal(fresh: BoundFacts, facts_hash: str, shown: Mapping[str, str] | None) -> Refusal | None:
    """``card_facts_changed`` when the binding facts read just now (`fresh`) no longer hash to
    `facts_hash`, the hash of what the card showed; the message names what changed (against
    `shown`, the facts the approval recorded)."""
    if hmac.compare_digest(fresh.hash, facts_hash):
        return None
    return Refusal(
        Code.CARD_FACTS_CHANGED,
        f"What the card showed changed before the write: {changed_words(shown, fresh)}. Nothing ran; "
        "look at the card again.",
    )


def state_refusal(
    record: BoundRecord | None,
    proposed: Proposed,
    *,
    tool_policy: ToolPolicy,
    lead_minutes: int,
    seen: Observed,
) -> Refusal | None:
    """The checks on the freshest reads, in order: the fingerprint (skipped when `record` is
    None, at Prepare), the ``event_id``, the disruptive rule."""
    if record is not None:
        refusal = fingerprint_refusal(record.fingerprint, seen.states, seen.devices)
        if refusal is not None:
            return refusal
    tool = record.tool if record is not None else proposed.rule.tool
    return event_refusal(proposed.arguments, seen.events) or disruptive_refusal(
        proposed, tool, tool_policy=tool_policy, lead_minutes=lead_minutes, seen=seen
    )
