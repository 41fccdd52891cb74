"""executor.sock's contract: its messages, its operations with the codes each may answer, the
manifest made from them, and its client (`ExecutorClient`).

Peers: the approval_web user only. Every socket also serves `GetCapabilities`.

    Prepare → Prepared          bind a new proposal: fresh sandbox read, targets, fingerprint, seal
    Inspect → Inspection        a fresh read of every fact the approval card shows (read-only)
    Execute → ExecutionReport   run one consumed approval once, or refuse ("nothing ran")
    Health  → HealthReport
    ListWritable → WritableDevices  the devices a change may target now (fresh sandbox read)
    SealKillSwitch → HealthReport   confirm the operator's kill switch request (the executor's seal)
    CheckAudit → AuditChecked       verify the audit log with the executor's own key and anchor
    Recheck → Rechecked         a fresh read that judges a change's postcondition again

A code is "answered" either as an `ErrorReply` or, for Execute, as the ``refusal_code`` of an
`ExecutionReport` with outcome ``refused``, and for Inspect as ``would_refuse``. Contract
tests check `OPERATIONS` against the request union both ways
(`shared.wire.protocol.manifest_problems`) and that every code the executor can raise is
declared.

Times on the wire are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``, the database clock's form) unless
a field says otherwise. Arguments travel as plain maps; the receiver puts them in canonical form
(`shared.canonical`) and checks them; nothing here is trusted. Every request's IDs have their
format and its free strings a cap (`shared.wire.formats`): decoding refuses anything else with
``invalid_message`` before a handler runs.
"""

from __future__ import annotations

import typing
from typing import Annotated, Final

import msgspec

from shared.errors import Code
from shared.wire.client import SocketClient
from shared.wire.formats import MAX_COUNT, ApprovalId, Arguments, ProposalId, Reason, Sha256Hex, ToolName
from shared.wire.protocol import Capabilities, ErrorReply, GetCapabilities, Message, Operation


class Prepare(Message):
    """Bind a proposal: approval_web chose ``proposal_id``; the executor reads the sandbox team
    afresh, resolves the targets, takes the fingerprint and seals the bound record."""

    proposal_id: ProposalId
    tool: ToolName
    arguments: Arguments
    reason: Reason


class Prepared(Message):
    """The bound record (canonical JSON bytes, `shared.binding.record_bytes`) and its seal
    (HMAC-SHA256 hex under the executor's in-memory key). ``target_names``: each target's
    name (master ID -> name) on the sandbox team's list as just read: display text only,
    never sealed or bound, kept so a person reads rooms in words."""

    record: bytes
    seal: str
    fingerprint_hash: str
    target_names: dict[str, str] = msgspec.field(default_factory=dict)


class Inspect(Message):
    """A fresh read of everything the card for this stored proposal shows."""

    proposal_id: ProposalId


class TargetFacts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One target as read just now. ``found`` is False when it is not on the sandbox list."""

    device_id: str
    found: bool
    name: str = ""
    model: str = ""
    online: bool | None = None
    recording: bool | None = None
    channel_id: str | None = None
    channel_name: str | None = None


class StreamFacts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stream destination: name and URL host only, never its key or full URL; the device
    using it now (``locked_by``, Epiphan's ``LockByDevice``: a master ID, and that device's name
    when it is on the sandbox team's list; None: no device) and whether it is streaming now
    (``streaming``, ``CurrentlyStreaming``; None: not reported)."""

    stream_id: str
    found: bool
    name: str = ""
    host: str | None = None
    locked_by: str | None = None
    locked_by_name: str | None = None
    streaming: bool | None = None


class EventFacts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The event an ``event_id`` names, or the target's current/next event."""

    event_id: str
    found: bool
    title: str = ""
    start: str | None = None
    finish: str | None = None


class Inspection(Message):
    """Card facts. ``complete`` is False when any list could not be read or an ID was not found;
    ``would_refuse`` is the code the executor would refuse with right now (None: would run).

    ``facts`` are the binding facts (`services.executor.facts`): every fact the card shows
    that decides what the write does, as display text (name → value: the tool, the arguments,
    each target's name, channel names, the stream destination's name and host, the event's
    ID, title, start and finish). ``facts_hash`` is SHA-256 over them *and* a keyed digest of
    what no card may show (the stream destination's full URL and key): the page records it
    with the approval and Execute carries it; the executor re-reads and refuses
    ``card_facts_changed`` when it differs. Empty when the facts could not all be read."""

    proposal_id: str
    complete: bool
    targets: tuple[TargetFacts, ...]
    stream: StreamFacts | None = None
    event: EventFacts | None = None
    would_refuse: Code | None = None
    would_refuse_message: str | None = None
    read_at: str = ""
    facts: dict[str, str] = msgspec.field(default_factory=dict)
    facts_hash: str = ""


class Execute(Message):
    """Run the proposal a consumed approval approves, once.

    What the person approved travels with the click: the proposal's ID, the page's hash of the
    card as shown and the executor's facts hash from the Inspect behind it. The executor
    refuses (``approval_mismatch``) when the approval row, the sealed proposal and these
    disagree, and (``card_facts_changed``) when the facts read afresh no longer hash to
    ``facts_hash``."""

    approval_id: ApprovalId
    proposal_id: ProposalId
    card_hash: Sha256Hex
    facts_hash: Sha256Hex


class ExecutionReport(Message):
    """What happened: ``outcome`` ∈ ok | error | unknown | refused; ``refusal_code`` is set for
    refused; ``detail`` is the per-device error map for error (redacted); ``verification`` ∈
    verified | not_observed | contradicted | None, observed at ``verified_at``."""

    execution_id: str | None
    proposal_id: str
    outcome: str
    refusal_code: Code | None = None
    message: str = ""
    detail: dict[str, str] = msgspec.field(default_factory=dict)
    verification: str | None = None
    verified_at: str | None = None


class Health(Message):
    """Is the executor up, signed in to the sandbox, and is the kill switch on?"""


class HealthReport(Message):
    started_at: str
    boot_id: str
    sandbox_signed_in: bool
    fence_configured: bool
    kill_switch: bool


class ListWritable(Message):
    """Which devices a change may target right now: read afresh through the sandbox sign-in.
    Read-only; served on executor.sock and relayed on approval.sock. With no fence configured
    it is refused (``fence_not_configured``), never answered with an empty list."""


class WritableChannel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One channel of a writable device: its device-local ``channel_id`` (``"1"``...), its name
    (display text, never bound) and whether it records (from the recorder status; None:
    unknown). A proposal names it as ``<device_id>-<channel_id>``."""

    channel_id: str
    name: str = ""
    recording: bool | None = None


class UpcomingEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A device's event on now, or its next one within 24 hours: ID, title (display text),
    start and finish (UTC text, None when unknown)."""

    event_id: str
    title: str = ""
    start: str | None = None
    finish: str | None = None


class WritableDevice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A device on the sandbox team's own list (and on ``FLEETWATCH_WRITE_DEVICE_IDS`` when that
    is set), as just read. Names and titles are display data only: proposals bind IDs."""

    device_id: str
    name: str = ""
    model: str = ""
    online: bool = False
    channels: tuple[WritableChannel, ...] = ()
    next_event: UpcomingEvent | None = None


class WritableDevices(Message):
    """The devices a change may target, ordered by ID (empty: none is), read at ``read_at``."""

    devices: tuple[WritableDevice, ...]
    read_at: str


class SealKillSwitch(Message):
    """Confirm the kill switch request approval_web just recorded (its ``kill_switch`` audit row
    ``request_seq``, turning writes ``on``/off): the executor checks the row is the newest such
    request, records its own ``kill_switch_sealed`` row and keeps the state under its own key.
    The executor trusts only a state it sealed: an unsealed or changed one counts as on."""

    request_seq: Annotated[int, msgspec.Meta(ge=1, le=MAX_COUNT)]
    on: bool


class WriterCheck(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One writing service's verification of the whole audit log with its own key and anchor:
    the chain, the MACs of its own rows, rows removed after what its anchor saw.

    ``signed``: rows of `writer` whose MAC verified; ``anchor_seq``: the newest row its anchor
    has seen (None: none yet)."""

    writer: str
    ok: bool
    rows: int
    signed: int = 0
    first_bad_seq: int | None = None
    reason: str | None = None
    anchor_seq: int | None = None


class CheckAudit(Message):
    """Verify the audit log with the executor's own key and anchor (approval_web asks, for
    ``fleetwatch audit verify``; only the executor can check the executor's rows)."""


class AuditChecked(Message):
    check: WriterCheck


class Recheck(Message):
    """Read the targets of a change that ran (or may have run) afresh and judge its
    postcondition again (`services.executor.verify`): the "fresh read" that settles a change
    that ended ``unknown`` or was not verified. Read-only; nothing is written to Epiphan."""

    proposal_id: ProposalId


class Rechecked(Message):
    """The verdict of a `Recheck` (verified | not_observed | contradicted), observed at
    ``verified_at`` (database clock), with what was seen in words; recorded on the execution."""

    proposal_id: str
    verification: str
    verified_at: str
    detail: str = ""


ExecutorRequest = (
    Prepare
    | Inspect
    | Execute
    | Health
    | ListWritable
    | Recheck
    | SealKillSwitch
    | CheckAudit
    | GetCapabilities
)
ExecutorReply = (
    Prepared
    | Inspection
    | ExecutionReport
    | HealthReport
    | WritableDevices
    | AuditChecked
    | Rechecked
    | Capabilities
    | ErrorReply
)

# --- the manifest -------------------------------------------------------------------------

SERVICE: Final = "executor"
REQUESTS: Final[tuple[type[Message], ...]] = typing.get_args(ExecutorRequest)
"""The request types executor.sock serves."""

POLICY_CODES: Final[tuple[Code, ...]] = (
    Code.POLICY_INVALID,
    Code.OBSERVE_MODE,
    Code.NOT_PROPOSABLE,
    Code.SCHEMA_NOT_REVIEWED,
    Code.HIDDEN_CHARACTER,
    Code.NOT_CANONICALIZABLE,
    Code.TOO_MANY_TARGETS,
    Code.INVALID_ARGUMENTS,
)
"""The policy's refusals of a proposed change, in the order they are checked (the policy file
still loads, autonomy, the tool, its schema, canonical arguments, targets, the schema): the one
list every socket's manifest takes them from."""

READ_CODES: Final = (
    Code.NO_SIGN_IN,
    Code.DEVICE_LIST_UNREADABLE,
    Code.TEAM_MISMATCH,
    Code.TARGET_NOT_IN_SANDBOX,
    Code.TARGET_NOT_ALLOWLISTED,
    Code.CHANNEL_NOT_FOUND,
    Code.MODEL_NOT_CAPABLE,
    Code.TARGET_OFFLINE,
    Code.STREAM_NOT_FOUND,
    Code.STREAM_IN_USE,
    Code.STREAM_NOT_STREAMING,
    Code.STATE_READ_FAILED,
    Code.TOOL_CHANGED,
)

PREPARE_CODES: Final[frozenset[Code]] = frozenset(
    {*POLICY_CODES, Code.FENCE_NOT_CONFIGURED, *READ_CODES, Code.EVENT_NOT_CURRENT, Code.STORE_BUSY}
)
"""Prepare's refusals (ErrorReply), relayed unchanged by approval.sock's ``submit_proposal``.
Prepare writes no audit row: the intake that asked does."""

EXECUTE_REFUSALS: Final[tuple[Code, ...]] = (
    Code.APPROVAL_NOT_FOUND,
    Code.PROPOSAL_NOT_FOUND,
    Code.APPROVAL_MISMATCH,
    Code.SEAL_INVALID,
    Code.APPROVAL_NOT_CONSUMED,
    Code.APPROVAL_EXPIRED,
    Code.APPROVAL_ALREADY_USED,
    Code.PROPOSAL_NOT_PENDING,
    *POLICY_CODES[:4],
    Code.SCHEMA_VERSION_CHANGED,
    *POLICY_CODES[4:],
    Code.FENCE_NOT_CONFIGURED,
    Code.KILL_SWITCH_ON,
    *READ_CODES,
    Code.FINGERPRINT_CHANGED,
    Code.EVENT_NOT_CURRENT,
    Code.TARGET_RECORDING,
    Code.TARGET_IN_EVENT_WINDOW,
    Code.CARD_FACTS_CHANGED,
    Code.PLAN_REQUIRED,
)
"""Execute's refusals (``refusal_code`` of a ``refused`` report), in the order checked."""

START_CODES: Final[frozenset[Code]] = frozenset({Code.EXECUTOR_RESTARTED})
"""Codes the executor records at its start (on approved proposals it never took), never answered."""

INSPECT_WOULD_REFUSE: Final[frozenset[Code]] = frozenset(EXECUTE_REFUSALS) - {
    Code.APPROVAL_NOT_FOUND,
    Code.PROPOSAL_NOT_FOUND,
    Code.APPROVAL_MISMATCH,
    Code.CARD_FACTS_CHANGED,
    Code.APPROVAL_NOT_CONSUMED,
    Code.APPROVAL_EXPIRED,
    Code.APPROVAL_ALREADY_USED,
    Code.PLAN_REQUIRED,
}
"""What Inspect's ``would_refuse`` may hold: Execute's checks that do not need an approval."""

LIST_WRITABLE_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.FENCE_NOT_CONFIGURED,
        Code.POLICY_INVALID,
        *READ_CODES[:3],
        Code.EPIPHAN_AUTH,
        Code.STATE_READ_FAILED,
    }
)
"""ListWritable's refusals (ErrorReply): no fence, the policy, then the reads' own (the sandbox
sign-in, the device list, the team ID; the recorder status and events), and ``epiphan_auth``
when Epiphan refuses the sandbox sign-in to the device list after the one refresh. Relayed unchanged by
approval.sock's ``list_writable``."""

SEAL_KILL_SWITCH_CODES: Final[frozenset[Code]] = frozenset({Code.KILL_SWITCH_NOT_CONFIRMED, Code.STORE_BUSY})
"""SealKillSwitch's refusals, relayed by approval.sock's ``set_kill_switch``."""

CHECK_AUDIT_CODES: Final[frozenset[Code]] = frozenset({Code.CONFIG_INVALID, Code.STORE_BUSY})
"""CheckAudit's refusals (an unreadable key or anchor; the store), relayed by approval.sock's
``audit_verify``."""
RECHECK_CODES: Final[frozenset[Code]] = frozenset(
    {Code.PROPOSAL_NOT_FOUND, Code.POLICY_INVALID, Code.NO_SIGN_IN}
)
"""Recheck's refusals (ErrorReply): no change of that proposal ran; the policy; no sandbox
sign-in (a read that fails is a ``not_observed`` verdict, not a refusal)."""

OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation("prepare", PREPARE_CODES, "bind a proposal: fresh sandbox read, fingerprint, seal"),
    Operation(
        "inspect",
        INSPECT_WOULD_REFUSE | {Code.PROPOSAL_NOT_FOUND, Code.STORE_BUSY},
        "fresh facts for the approval card and what Execute would refuse now (read-only)",
    ),
    Operation(
        "execute",
        frozenset(EXECUTE_REFUSALS) | {Code.STORE_BUSY},
        "run one consumed approval once, or refuse (nothing ran)",
    ),
    Operation("health", frozenset({Code.STORE_BUSY}), "up, signed in to the sandbox, fence, kill switch"),
    Operation(
        "list_writable",
        LIST_WRITABLE_CODES,
        "the devices a change may target now: sandbox list and allowlist, read afresh (read-only)",
    ),
    Operation(
        "seal_kill_switch",
        SEAL_KILL_SWITCH_CODES,
        "confirm an operator's kill switch request under the executor's own key",
    ),
    Operation(
        "check_audit",
        CHECK_AUDIT_CODES,
        "verify the audit log with the executor's own key and anchor",
    ),
    Operation(
        "recheck",
        RECHECK_CODES | {Code.STORE_BUSY},
        "judge a change's postcondition again on a fresh read of its rooms (read-only on Epiphan)",
    ),
    Operation("get_capabilities", frozenset(), "this manifest"),
)

CAPABILITIES: Final = Capabilities(service=SERVICE, operations=OPERATIONS)


def declared_codes() -> frozenset[Code]:
    """Every code some operation of executor.sock declares."""
    return frozenset(code for op in OPERATIONS for code in op.codes)


# --- the client ---------------------------------------------------------------------------


PREPARE_SECONDS: Final = 20.0
"""Default bound on Prepare (the executor reads the sandbox team afresh)."""
INSPECT_SECONDS: Final = 20.0
"""Default bound on Inspect (a fresh read of every fact on the card)."""
EXECUTE_SECONDS: Final = 90.0
"""Default bound on Execute (reads, one write, one or two verification reads)."""
HEALTH_SECONDS: Final = 2.0
"""Default bound on Health."""
LIST_WRITABLE_SECONDS: Final = 20.0
"""Default bound on ListWritable (a fresh sandbox read)."""
AUDIT_SECONDS: Final = 60.0
"""Default bound on SealKillSwitch and CheckAudit (CheckAudit walks the whole audit log)."""
RECHECK_SECONDS: Final = 20.0
"""Default bound on Recheck (a fresh sandbox read of a change's rooms)."""


class ExecutorClient(SocketClient):
    """executor.sock's client (approval_web's only way to the executor: the socket side and the
    page): each call returns its reply or raises `CallError` with the executor's code,
    ``service_unavailable`` (not reached: nothing ran) or ``service_no_answer`` (sent, no
    answer: the outcome is unknown). Each method's bound defaults to its ``*_SECONDS``.

    Args:
        path: ``settings.executor_socket``.
    """

    service = "the executor"

    async def prepare(self, request: Prepare, *, timeout_seconds: float = PREPARE_SECONDS) -> Prepared:
        """Bind a proposal (a fresh sandbox read). Raises `CallError` (`PREPARE_CODES`)."""
        return await self.call(request, Prepared, timeout_seconds=timeout_seconds)

    async def inspect(self, proposal_id: str, *, timeout_seconds: float = INSPECT_SECONDS) -> Inspection:
        """A fresh read of the card's facts. Raises `CallError`."""
        return await self.call(Inspect(proposal_id=proposal_id), Inspection, timeout_seconds=timeout_seconds)

    async def execute(self, request: Execute, *, timeout_seconds: float = EXECUTE_SECONDS) -> ExecutionReport:
        """Run the consumed approval once (`request` carries what the person approved); every
        refusal after the request arrived is a ``refused`` report, not an exception. Raises
        `CallError`."""
        return await self.call(request, ExecutionReport, timeout_seconds=timeout_seconds)

    async def health(self, *, timeout_seconds: float = HEALTH_SECONDS) -> HealthReport:
        """Is the executor up, signed in, fenced, paused? Raises `CallError`."""
        return await self.call(Health(), HealthReport, timeout_seconds=timeout_seconds)

    async def list_writable(self, *, timeout_seconds: float = LIST_WRITABLE_SECONDS) -> WritableDevices:
        """The devices a change may target now (a fresh sandbox read). Raises `CallError`
        (`LIST_WRITABLE_CODES`)."""
        return await self.call(ListWritable(), WritableDevices, timeout_seconds=timeout_seconds)

    async def seal_kill_switch(
        self, request_seq: int, on: bool, *, timeout_seconds: float = AUDIT_SECONDS
    ) -> HealthReport:
        """Seal the operator's kill switch request `request_seq` (its ``kill_switch`` audit row);
        the executor's health after. Raises `CallError` (`SEAL_KILL_SWITCH_CODES`)."""
        return await self.call(
            SealKillSwitch(request_seq=request_seq, on=on), HealthReport, timeout_seconds=timeout_seconds
        )

    async def check_audit(self, *, timeout_seconds: float = AUDIT_SECONDS) -> WriterCheck:
        """The executor's verification of the whole audit log with its own key and anchor.
        Raises `CallError` (`CHECK_AUDIT_CODES`)."""
        return (await self.call(CheckAudit(), AuditChecked, timeout_seconds=timeout_seconds)).check

    async def recheck(self, proposal_id: str, *, timeout_seconds: float = RECHECK_SECONDS) -> Rechecked:
        """Judge a change's postcondition again on a fresh read of its rooms (read-only on
        Epiphan). Raises `CallError` (`RECHECK_CODES`)."""
        return await self.call(Recheck(proposal_id=proposal_id), Rechecked, timeout_seconds=timeout_seconds)
