"""The messages of Fleetwatch's three sockets: tagged msgspec Structs, one union per socket.

Framing, the error reply and the manifest types are in `shared.protocol`. Every socket also
serves `GetCapabilities`. Replies that are errors are `ErrorReply(code, message)`.

executor.sock (peers: the approval_web user only)
    Prepare → Prepared          bind a new proposal: fresh sandbox read, targets, fingerprint, seal
    Inspect → Inspection        a fresh read of every fact the approval card shows (read-only)
    Execute → ExecutionReport   run one consumed approval once, or refuse ("nothing ran")
    Health  → HealthReport
    ListWritable → WritableDevices  the devices a change may target now (fresh sandbox read)
approval.sock (peers: the assistant user and operators)
    SubmitProposal → ProposalAccepted
    GetProposalState → ProposalState     (the assistant reads a proposal's recorded state)
    ExpireTurn → Count                   (a model turn that failed partway expires its proposals)
    RecordAsk → Count, RecordRefusal → Count   (the assistant's audit rows: it holds no store)
    ListProposalHistory → ProposalHistory (the watch: proposals and outcomes; `shared.watch_messages`)
    ListWritable → WritableDevices       (relayed to the executor; the assistant and operators)
    ListPending → PendingList, ShowProposal → ProposalDetail, Deny → ProposalState,
    DenyAll → Count, SetKillSwitch → Status, GetStatus → Status, AuditTail → AuditRows,
    AuditVerify → AuditReport
assistant.sock (peers: operators, the ask page's process)
    Ask → Answer
    GetWatchStatus, GetHistory, RunDigest, SetNote, ListNotes   (the watch: `shared.watch_messages`)

Times on the wire are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``, the database clock's form) unless
a field says otherwise. Arguments travel as plain maps; the receiver puts them in canonical form
(`shared.canonical`) and checks them; nothing here is trusted.

Every request's IDs have their format and its free strings a cap (`shared.wire`): decoding
refuses anything else with ``invalid_message`` before a handler runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from shared.protocol import Capabilities, ErrorReply, GetCapabilities, Message
from shared.watch_messages import (
    DigestReport,
    GetHistory,
    GetWatchStatus,
    History,
    ListNotes,
    ListProposalHistory,
    NoteOutcome,
    Notes,
    ProposalHistory,
    RunDigest,
    SetNote,
    WatchStatus,
)
from shared.wire import (
    MAX_ARGUMENTS,
    MAX_QUESTION_CHARS,
    Actor,
    ApprovalId,
    ArgumentName,
    ErrorCode,
    Name,
    ProposalId,
    Question,
    Reason,
    Sha256Hex,
    ToolName,
    TurnId,
    Uid,
)
from shared.wire import Count as CountOf

Arguments = Annotated[dict[ArgumentName, Any], msgspec.Meta(max_length=MAX_ARGUMENTS)]
"""A proposal's arguments as sent: a map of at most `MAX_ARGUMENTS` named values (the reviewed
schema judges the values)."""

# --- executor.sock ------------------------------------------------------------------------


class Prepare(Message):
    """Bind a proposal: approval_web chose ``proposal_id``; the executor reads the sandbox team
    afresh, resolves the targets, takes the fingerprint and seals the bound record."""

    proposal_id: ProposalId
    tool: ToolName
    arguments: Arguments
    reason: Reason


class Prepared(Message):
    """The bound record (canonical JSON bytes, `shared.binding.record_bytes`) and its seal
    (HMAC-SHA256 hex under the executor's in-memory key)."""

    record: bytes
    seal: str
    fingerprint_hash: str


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
    """A stream destination: name and URL host only, never its key or full URL."""

    stream_id: str
    found: bool
    name: str = ""
    host: str | None = None


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
    would_refuse: str | None = None
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
    refusal_code: str | None = None
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


ExecutorRequest = Prepare | Inspect | Execute | Health | ListWritable | GetCapabilities
ExecutorReply = (
    Prepared | Inspection | ExecutionReport | HealthReport | WritableDevices | Capabilities | ErrorReply
)

# --- approval.sock -----------------------------------------------------------------------


class SubmitProposal(Message):
    """A proposal from the assistant (``proposed_by="assistant"``, with the model turn's ID) or
    drafted by an operator (``proposed_by="operator"``). It still needs a person on the page."""

    tool: ToolName
    arguments: Arguments
    reason: Reason
    proposed_by: Literal["assistant", "operator"]
    turn_id: TurnId | None = None


class ProposalAccepted(Message):
    proposal_id: str
    expires_at: str


class GetProposalState(Message):
    proposal_id: ProposalId


class ProposalState(Message):
    """A proposal's recorded state, from code, never from the model: ``status`` ∈ pending |
    approved | denied | expired | executed; ``outcome`` ∈ ok | error | unknown | refused | running |
    None; ``verification`` ∈ verified | not_observed | contradicted | None."""

    proposal_id: str
    tool: str
    status: str
    outcome: str | None = None
    verification: str | None = None
    status_code: str | None = None


class ExpireTurn(Message):
    """Expire every pending proposal of a model turn that failed partway."""

    turn_id: TurnId


class Count(Message):
    count: int


class ListPending(Message):
    pass


class ProposalSummary(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One proposal in a list: ``status`` ∈ pending | approved | denied | expired | executed |
    not_run; ``status_code`` says why for not_run (the refusal or failure that ended it)."""

    proposal_id: str
    tool: str
    targets: tuple[str, ...]
    created_at: str
    expires_at: str | None
    proposed_by: str
    status: str
    status_code: str | None = None


class PendingList(Message):
    """The proposals waiting for a person (oldest first) and, apart, those approved in the last
    24 hours that ended without running (``not_run``, newest first, at most 20)."""

    items: tuple[ProposalSummary, ...]
    not_run: tuple[ProposalSummary, ...] = ()


class ShowProposal(Message):
    proposal_id: ProposalId


class ProposalDetail(Message):
    """Everything about one proposal: every argument, times, the fingerprint hash, who proposed,
    and the execution's outcome and verification if it ran."""

    summary: ProposalSummary
    arguments: dict[str, Any]
    reason: str
    fingerprint_hash: str
    schema_version: int
    age_seconds: int
    expires_in_seconds: int | None
    outcome: str | None = None
    refusal_code: str | None = None
    verification: str | None = None
    detail: dict[str, Any] = msgspec.field(default_factory=dict)


class Deny(Message):
    proposal_id: ProposalId
    actor: Actor = "operator"


class DenyAll(Message):
    actor: Actor = "operator"


class SetKillSwitch(Message):
    """``on=True`` pauses every write (the executor refuses with ``kill_switch_on``)."""

    on: bool
    actor: Actor = "operator"


class GetStatus(Message):
    pass


class DenialPause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`tool` may not be proposed for `target` (a master ID) until `until` (after repeated denials)."""

    tool: str
    target: str
    until: str


class Status(Message):
    """Queue state and caps: pending / max_pending, proposals in the last hour / per_hour
    (denied ones not counted), active denial pauses, the kill switch, whether the executor
    answered Health, the fence, and the policy's autonomy."""

    pending: int
    max_pending: int
    last_hour: int
    per_hour: int
    kill_switch: bool
    executor_up: bool
    fence_configured: bool
    autonomy: str
    pauses: tuple[DenialPause, ...] = ()


class AuditTail(Message):
    limit: int = 20


class AuditRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seq: int
    at: str
    actor: str
    kind: str
    proposal_id: str | None
    detail: dict[str, Any]


class AuditRows(Message):
    rows: tuple[AuditRow, ...]


class AuditVerify(Message):
    pass


class AuditReport(Message):
    ok: bool
    rows: int
    first_bad_seq: int | None = None
    reason: str | None = None


MAX_RECORDED_PROPOSALS = 32
"""Most proposal IDs one `RecordAsk` lists."""


class AskTokens(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Model tokens one question used."""

    input: CountOf = 0
    output: CountOf = 0
    cache_creation: CountOf = 0
    cache_read: CountOf = 0


class RecordAsk(Message):
    """The assistant's record of one answered question, counts only (never the question, a
    prompt, a result or a name): approval_web writes it as one ``ask`` audit row, actor
    ``assistant`` (the assistant holds no store). Only the assistant's uid may send it.

    ``outcome``: how the answer ended (``end_turn``, ``keyword_no_model``, ``fallback_<why>``,
    ``budget_exceeded``...); ``code``: the answer's code; ``tools``/``codes``: calls per tool
    (``unknown`` for a name that was not offered) and per code; ``expired``: proposals the
    turn expired; ``elapsed_ms``: wall time."""

    turn_id: TurnId
    question_chars: Annotated[int, msgspec.Meta(ge=0, le=MAX_QUESTION_CHARS)]
    language: Literal["en", "es"]
    answered_by: Literal["model", "keyword"]
    outcome: Name
    code: ErrorCode | None
    model_calls: CountOf
    tokens: AskTokens
    tools: Annotated[dict[ToolName, CountOf], msgspec.Meta(max_length=64)]
    codes: Annotated[dict[ErrorCode, CountOf], msgspec.Meta(max_length=64)]
    proposal_ids: Annotated[tuple[ProposalId, ...], msgspec.Meta(max_length=MAX_RECORDED_PROPOSALS)]
    expired: CountOf
    elapsed_ms: CountOf


class RecordRefusal(Message):
    """A refusal on assistant.sock, for the audit (the assistant holds no store): approval_web
    writes one ``refusal`` row, actor ``assistant``, naming ``assistant.sock``. Only the
    assistant's uid may send it. It never carries a value the refused peer sent: the operation
    (``connect`` for a peer refused by its uid, else the request's tag when the socket serves
    it, else ``unknown``), the code, the field the decoder named, the frame's size, and the
    peer's uid, gid and pid as the kernel gave them."""

    operation: Name
    code: ErrorCode
    uid: Uid
    gid: Uid
    pid: Uid
    field: Annotated[str, msgspec.Meta(pattern=r"^\$[A-Za-z0-9_.\[\]]{0,63}\Z")] | None = None
    frame_bytes: CountOf | None = None


ApprovalRequest = (
    SubmitProposal
    | GetProposalState
    | ExpireTurn
    | ListPending
    | ShowProposal
    | Deny
    | DenyAll
    | SetKillSwitch
    | GetStatus
    | AuditTail
    | AuditVerify
    | ListWritable
    | RecordAsk
    | RecordRefusal
    | ListProposalHistory
    | GetCapabilities
)
ApprovalReply = (
    ProposalAccepted
    | ProposalState
    | Count
    | WritableDevices
    | PendingList
    | ProposalDetail
    | Status
    | AuditRows
    | AuditReport
    | ProposalHistory
    | Capabilities
    | ErrorReply
)

# --- assistant.sock ----------------------------------------------------------------------


class Ask(Message):
    """An operator's question (at most `shared.wire.MAX_QUESTION_CHARS` characters).
    ``language`` ∈ en | es | None (detect)."""

    question: Question
    language: Literal["en", "es"] | None = None


class ProposalLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A code-built line about one proposal made in this answer (its recorded state)."""

    proposal_id: str
    state: str
    text: str


class Answer(Message):
    """The answer: ``text`` (the model's words or the keyword answer), the code-built proposal
    lines, which path answered (``model`` | ``keyword``), and the language used."""

    text: str
    language: str
    answered_by: str
    proposals: tuple[ProposalLine, ...] = ()
    code: str | None = None


AssistantRequest = Ask | GetWatchStatus | GetHistory | RunDigest | SetNote | ListNotes | GetCapabilities
AssistantReply = (
    Answer | WatchStatus | History | DigestReport | NoteOutcome | Notes | Capabilities | ErrorReply
)
