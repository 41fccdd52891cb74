"""Prepare: bind a new proposal to the sandbox team as it is right now, and seal it.

Order: the policy (`checks.policy_refusal`), the fence, the sandbox sign-in, the server's
definition of the tool as reviewed (``tool_changed``, `shared.policy.definitions`), a fresh device
list (team ID, membership, allowlist, channels), the stream endpoint list when the call names
a ``stream_id``, the targets' recorder status and events (the fingerprint: online, recording,
next event start per target) and the ``event_id``. A ``stream_id`` is bound in the form the
sandbox team's list gives it (Epiphan compares stream IDs as it lists them: a UUID proposed in
upper case is found case-insensitively, then sent as listed). The disruptive rule is not applied here:
whether the room is busy is shown on the card (Inspect) and decided at Execute.

The reply also carries each target's name as just read (display text, not sealed): approval_web
keeps it so a person reads the room in words. Prepare does not store anything: approval_web
inserts the proposal (`shared.store.approvals.insert_proposal`) and writes the audit row of a
refusal, which comes back
as an `ErrorReply` with the code.
"""

from __future__ import annotations

from services.executor import ExecutorError
from services.executor.checks import (
    DeviceList,
    Proposed,
    Refusal,
    as_listed,
    channel_of,
    event_refusal,
    fence_refusal,
    policy_refusal,
)
from services.executor.runtime import Runtime
from services.executor.world import raise_refusal, read_and_check
from shared.binding import fingerprint_hash, make_bound_record, record_bytes, seal
from shared.wire.executor import Prepare, Prepared


async def prepare(rt: Runtime, request: Prepare) -> Prepared:
    """The bound record of `request`, sealed with the executor's key.

    Raises:
        ExecutorError: a refusal code of `shared.wire.executor.PREPARE_CODES`.
        CanonicalError: ``not_canonicalizable`` when the record has no canonical form.
    """
    policy, tool_policy = await rt.policies()
    proposed = policy_refusal(request.tool, request.arguments, policy=policy, tool_policy=tool_policy)
    if isinstance(proposed, Refusal):
        raise ExecutorError(proposed.code, proposed.message)
    raise_refusal(fence_refusal(rt.fence))
    async with rt.sandbox() as session:
        reader = rt.reader(session, tool_policy)
        await reader.definition_check(request.tool)
        world = await read_and_check(reader, proposed, rt.fence, proposed.targets)
    raise_refusal(event_refusal(proposed.arguments, world.reads.events))
    record = make_bound_record(
        proposal_id=request.proposal_id,
        tool=request.tool,
        arguments=as_listed(proposed.arguments, world.endpoints),
        targets=proposed.targets,
        fingerprint=world.states,
        schema_version=proposed.rule.schema_version,
        reason=request.reason,
    )
    names = {t: world.listed.devices[t].name for t in proposed.targets if t in world.listed.devices}
    return Prepared(
        record=record_bytes(record),
        seal=seal(record, rt.key),
        fingerprint_hash=fingerprint_hash(world.states),
        target_names=names,
        names=recorded_names(proposed, world.listed),
    )


def recorded_names(proposed: Proposed, listed: DeviceList) -> dict[str, str]:
    """Each target's name and the name of the channel the change touches, as just read, keyed
    as the binding facts are (``device <id> name``, ``device <id> channel <n> name``). Pure."""
    names: dict[str, str] = {}
    for master in proposed.targets:
        device = listed.devices.get(master)
        if device is None:
            continue
        names[f"device {master} name"] = device.name
        number = channel_of(proposed.rule, proposed.arguments, master)
        channel = device.channel(number) if number is not None else None
        if channel is not None:
            names[f"device {master} channel {number} name"] = channel.name
    return names
