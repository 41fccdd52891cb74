"""executor.sock's contract: its messages, its operation table (each operation's codes, its
bound, its line in the manifest) and its client (`ExecutorClient`).

Peers: the approval_web user only. The operations are the rows of `OPERATIONS` (each request
declares its reply: ``class Prepare(Request[Prepared])``); every socket also serves
`GetCapabilities`. A code is "answered" either as an `ErrorReply` or, for Execute, as the
``refusal_code`` of an `ExecutionReport` with outcome ``refused``, and for Inspect as
``would_refuse``.

Times on the wire are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``, the database clock's form) unless
a field says otherwise. Arguments travel as plain maps; the receiver puts them in canonical form
(`shared.canonical`) and checks them; nothing here is trusted. Every request's IDs have their
format and its free strings a cap (`shared.wire.formats`): decoding refuses anything else with
``invalid_message`` before a handler runs.
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from shared.errors import Code
from shared.wire.client import SocketClient
from shared.wire.formats import MAX_COUNT, ApprovalId, Arguments, ProposalId, Reason, Sha256Hex, ToolName
from shared.wire.protocol import Message, OperationTable, Request, Row


class Prepared(Message):
    """The bound record (canonical JSON bytes, `shared.binding.record_bytes`) and its seal
    (HMAC-SHA256 hex under the executor's in-memory key). ``target_names``: each target's
    name (master ID -> name) on the sandbox team's list as just read: display text only,
    never sealed or bound, kept so a person reads rooms in words. ``names``: the same names and
    the name of each channel the change touches, as binding-fact keys (``device <id> name``,
    ``device <id> channel <n> name``): recorded with the proposal, every page, outcome and command
    names its rooms from them."""

    record: bytes
    seal: str
    fingerprint_hash: str
    target_names: dict[str, str] = msgspec.field(default_factory=dict)
    names: dict[str, str] = msgspec.field(default_factory=dict)


class Prepare(Request[Prepared]):
    """Bind a proposal: approval_web chose ``proposal_id``; the executor reads the sandbox team
    afresh, resolves the targets, takes the fingerprint and seals the bound record."""

    proposal_id: ProposalId
    tool: ToolName
    arguments: Arguments
    reason: Reason


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


class Inspect(Request[Inspection]):
    """A fresh read of everything the card for this stored proposal shows."""

    proposal_id: ProposalId


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


class Execute(Request[ExecutionReport]):
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


class HealthReport(Message):
    started_at: str
    boot_id: str
    sandbox_signed_in: bool
    fence_configured: bool
    kill_switch: bool


class Health(Request[HealthReport]):
    """Is the executor up, signed in to the sandbox, and is the kill switch on?"""


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


class SealKillSwitch(Request[HealthReport]):
    """Confirm the kill switch request approval_web just recorded (its ``kill_switch`` audit row
    ``request_seq``, turning writes ``on``/off): the executor checks the row is the newest such
    request, records its own ``kill_switch_sealed`` row and keeps the state under its own key.
    The executor trusts only a state it sealed: an unsealed or changed one counts as on."""

    request_seq: Annotated[int, msgspec.Meta(ge=1, le=MAX_COUNT)]
    on: bool


class ListWritable(Request[WritableDevices]):
    """Which devices a change may target right now: read afresh through the sandbox sign-in.
    Read-only; served on executor.sock and relayed on approval.sock. With no fence configured
    it is refused (``fence_not_configured``), never answered with an empty list."""


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


class AuditChecked(Message):
    check: WriterCheck


class CheckAudit(Request[AuditChecked]):
    """Verify the audit log with the executor's own key and anchor (approval_web asks, for
    ``fleetwatch audit verify``; only the executor can check the executor's rows)."""


class Rechecked(Message):
    """The verdict of a `Recheck` (verified | not_observed | contradicted), observed at
    ``verified_at`` (database clock), with what was seen in words; recorded on the execution."""

    proposal_id: str
    verification: str
    verified_at: str
    detail: str = ""


class Recheck(Request[Rechecked]):
    """Read the targets of a change that ran (or may have run) afresh and judge its
    postcondition again (`services.executor.verify`): the "fresh read" that settles a change
    that ended ``unknown`` or was not verified. Read-only; nothing is written to Epiphan."""

    proposal_id: ProposalId


# --- the operations -----------------------------------------------------------------------

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
    Code.APPROVALS_INSUFFICIENT,
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
    Code.APPROVALS_INSUFFICIENT,
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

OPERATIONS: Final = OperationTable(
    "executor",
    "the executor",
    (
        Row(Prepare, PREPARE_CODES, "bind a proposal: fresh sandbox read, fingerprint, seal", seconds=20.0),
        Row(
            Inspect,
            INSPECT_WOULD_REFUSE | {Code.PROPOSAL_NOT_FOUND, Code.STORE_BUSY},
            "fresh facts for the approval card and what Execute would refuse now (read-only)",
            seconds=20.0,
        ),
        Row(
            Execute,
            frozenset(EXECUTE_REFUSALS) | {Code.STORE_BUSY},
            "run one consumed approval once, or refuse (nothing ran)",
            seconds=90.0,  # reads, one write, one or two verification reads
        ),
        Row(
            Health,
            frozenset({Code.STORE_BUSY}),
            "up, signed in to the sandbox, fence, kill switch",
            seconds=2.0,
        ),
        Row(
            ListWritable,
            LIST_WRITABLE_CODES,
            "the devices a change may target now: sandbox list and allowlist, read afresh (read-only)",
            seconds=20.0,
        ),
        Row(
            SealKillSwitch,
            SEAL_KILL_SWITCH_CODES,
            "confirm an operator's kill switch request under the executor's own key",
            seconds=60.0,
        ),
        Row(
            CheckAudit,
            CHECK_AUDIT_CODES,
            "verify the audit log with the executor's own key and anchor",
            seconds=60.0,  # it walks the whole audit log
        ),
        Row(
            Recheck,
            RECHECK_CODES | {Code.STORE_BUSY},
            "judge a change's postcondition again on a fresh read of its rooms (read-only on Epiphan)",
            seconds=20.0,
        ),
    ),
)
"""executor.sock's operations, one row each (the bound on a call: its ``seconds``; the sandbox
reads take seconds)."""
REQUESTS: Final = OPERATIONS.requests
CAPABILITIES: Final = OPERATIONS.manifest


class ExecutorClient(SocketClient):
    """executor.sock's client (approval_web's only way to the executor: the socket side and the
    page): ``call`` returns the reply or raises `CallError` with the executor's code,
    ``service_unavailable`` (not reached: nothing ran) or ``service_no_answer`` (sent, no
    answer: the outcome is unknown). An Execute refused after it arrived is a ``refused``
    report, not an exception.

    Args:
        path: ``settings.executor_socket``.
    """

    table = OPERATIONS
