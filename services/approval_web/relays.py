"""approval.sock's relays to the executor (this process holds no Epiphan token): ListWritable
(the assistant and operators) and InspectProposal (operators; the executor's Inspect), each
sent on and answered unchanged. The executor reads the sandbox team afresh; its refusals pass
through with their codes (one ``refusal`` audit row each, like every refusal here); the
executor not running: ``service_unavailable``; no answer: ``service_no_answer``.
"""

from __future__ import annotations

from services.approval_web.desk import Desk, Jobs
from shared.wire.approval import InspectProposal
from shared.wire.executor import Inspect, Inspection, ListWritable, WritableDevices
from shared.wire.server import PeerCred


async def list_writable(desk: Desk, message: ListWritable, peer: PeerCred) -> WritableDevices:
    """The devices a change may target now, as the executor just read them. Raises
    `IntakeRefused` (the executor's code, unchanged)."""
    return await desk.relay(message)


async def inspect(desk: Desk, message: InspectProposal, peer: PeerCred) -> Inspection:
    """What the executor would refuse right now for a stored proposal, and why. Raises
    `IntakeRefused` (``proposal_not_found``, ``store_busy``, or not reached)."""
    return await desk.relay(Inspect(proposal_id=message.proposal_id))


JOBS: Jobs = {ListWritable: list_writable, InspectProposal: inspect}
