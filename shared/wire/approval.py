"""approval.sock's contract: its messages, its operation table (each operation's codes, who
may call it, its line in the manifest) and its client (`ApprovalClient`).

Peers: the assistant user and operators. The operations are the rows of `OPERATIONS` (each
request declares its reply: ``class Deny(Request[ProposalState])``; ``callers`` says which
role may call it); every socket also serves `GetCapabilities`. The assistant proposes, reads
a proposal's state, expires a failed turn's proposals, has its audit rows written (it holds no
store) and lists the writable devices; operators do everything else; nothing here approves.

`ListWritable` and its reply are executor.sock's (`shared.wire.executor`), relayed unchanged, as
is the `Inspection` answering `InspectProposal` (the executor's Inspect: what it would refuse
right now, and why); so are the refusals of the executor's Prepare (`PREPARE_CODES`) and
ListWritable (`LIST_WRITABLE_CODES`), which pass through `SubmitProposal` and `ListWritable`
unchanged, and the policy's refusals are the executor contract's `POLICY_CODES`.

Times on the wire are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``). Every request's IDs have their
format and its free strings a cap (`shared.wire.formats`): decoding refuses anything else with
``invalid_message`` before a handler runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from shared.errors import Code
from shared.text.languages import Language
from shared.wire.client import SocketClient
from shared.wire.executor import (
    CHECK_AUDIT_CODES,
    LIST_WRITABLE_CODES,
    POLICY_CODES,
    PREPARE_CODES,
    SEAL_KILL_SWITCH_CODES,
    Inspection,
    ListWritable,
    WriterCheck,
)
from shared.wire.formats import (
    MAX_QUESTION_CHARS,
    Actor,
    AnsweredBy,
    Arguments,
    Name,
    PageSessionId,
    ProposalId,
    Reason,
    SlackChannelKind,
    SlackMemberId,
    ToolName,
    TurnId,
    Uid,
    UtcText,
)
from shared.wire.formats import Count as CountOf
from shared.wire.protocol import Message, OperationTable, Request, Row


class ProposalAccepted(Message):
    proposal_id: str
    expires_at: str


class ProposalExists(Message):
    """The answer to a `SubmitProposal` identical (tool, canonical arguments, hence targets) to
    a proposal still pending, from any session: nothing new was queued; this is the one
    waiting, with its recorded state (DESIGN §8, applied across sessions)."""

    proposal_id: str
    status: str
    expires_at: str | None


class SubmitProposal(Request[ProposalAccepted | ProposalExists]):
    """A proposal from the assistant (``proposed_by="assistant"``, with the model turn's ID) or
    drafted by an operator (``proposed_by="operator"``). It still needs a person on the page."""

    tool: ToolName
    arguments: Arguments
    reason: Reason
    proposed_by: Literal["assistant", "operator"]
    turn_id: TurnId | None = None


class ProposalState(Message):
    """A proposal's recorded state, from code, never from the model: ``status`` ∈ pending |
    approved | denied | expired | executed | not_run; ``outcome`` ∈ ok | error | unknown |
    refused | running | None; ``verification`` ∈ verified | not_observed | contradicted |
    None; ``acknowledged``: an operator acknowledged a change that ended unknown or was not
    verified. ``action`` is the arguments' ``action`` (``start``/``stop``) when the tool takes
    one; ``targets`` its master IDs and ``target_names`` the rooms' names read at Prepare
    (display text, ``""`` when not read; same order)."""

    proposal_id: str
    tool: str
    status: str
    outcome: str | None = None
    verification: str | None = None
    status_code: Code | None = None
    action: str | None = None
    targets: tuple[str, ...] = ()
    target_names: tuple[str, ...] = ()
    acknowledged: bool = False


class GetProposalState(Request[ProposalState]):
    proposal_id: ProposalId


class Count(Message):
    count: int


class ExpireTurn(Request[Count]):
    """Expire every pending proposal of a model turn that failed partway."""

    turn_id: TurnId


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
    status_code: Code | None = None
    action: str | None = None
    """The proposal's ``action`` argument when it has one (``start``, ``stop``), for its words."""
    names: dict[str, str] = msgspec.field(default_factory=dict)
    """The rooms' and channels' names recorded with the proposal at Prepare (binding-fact keys:
    ``device <id> name``, ``device <id> channel <n> name``; display text): what it is named by."""


class PendingList(Message):
    """The proposals waiting for a person (oldest first) and, apart, those approved in the last
    24 hours that ended without running (``not_run``, newest first, at most 20)."""

    items: tuple[ProposalSummary, ...]
    not_run: tuple[ProposalSummary, ...] = ()


class ListPending(Request[PendingList]):
    pass


class InspectProposal(Request[Inspection]):
    """What the executor would answer right now for a stored proposal: its Inspect, relayed
    unchanged (`shared.wire.executor.Inspection`: ``would_refuse`` and its message, the card's
    facts as just read). Operators only; read-only (``fleetwatch propose`` warns with it)."""

    proposal_id: ProposalId


class ProposalDetail(Message):
    """Everything about one proposal: every argument, times, the fingerprint hash, who proposed,
    and the execution's outcome and verification if it ran.

    Who decided, once someone did (`shared.store.approvals.Decision`): ``decided_kind``
    (``approval``, ``denial``, ``expiry``), ``decided_at`` (UTC, the database clock),
    ``decided_from`` (``page``, ``command``, None: not said) and ``decided_uids`` (the local
    accounts that decided, the first of two approvers first; empty when not known)."""

    summary: ProposalSummary
    arguments: dict[str, Any]
    reason: str
    fingerprint_hash: str
    schema_version: int
    age_seconds: int
    expires_in_seconds: int | None
    outcome: str | None = None
    refusal_code: Code | None = None
    verification: str | None = None
    detail: dict[str, Any] = msgspec.field(default_factory=dict)
    decided_kind: str | None = None
    decided_at: str | None = None
    decided_from: str | None = None
    decided_uids: tuple[int, ...] = ()


class ShowProposal(Request[ProposalDetail]):
    proposal_id: ProposalId


class Deny(Request[ProposalState]):
    proposal_id: ProposalId
    actor: Actor = "operator"


class DenyAll(Request[Count]):
    actor: Actor = "operator"


class DenialPause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`tool` may not be proposed for `target` (a master ID; `target_name` its room's name as
    last read, display text, ``""`` when unknown) until `until` (UTC), after `denials`
    denials (`services.approval_web.limits`)."""

    tool: str
    target: str
    until: str
    target_name: str = ""
    denials: int = 0


class ChangeToSettle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The last change on a room that ended ``unknown`` or ran without being verified, not yet
    acknowledged: until a fresh read verifies it or an operator acknowledges it, nothing new is
    proposed for its rooms. ``targets``/``target_names`` in the same order."""

    proposal_id: str
    tool: str
    action: str | None
    targets: tuple[str, ...]
    target_names: tuple[str, ...]
    outcome: str
    verification: str | None
    finished_at: str | None


class ExportCount(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One writing service's continuous audit export (``FLEETWATCH_AUDIT_EXPORT``): where to,
    rows sent, rows dropped (`shared.store.audit_export.sink_counts`)."""

    writer: str
    target: str
    sent: int
    dropped: int


class Status(Message):
    """Queue state and caps: pending / max_pending, proposals in the last hour / per_hour
    (denied ones not counted), active denial pauses, changes still to settle (unknown or not
    verified, not acknowledged), the kill switch, whether the executor answered Health, the
    fence, and the policy's autonomy; the continuous audit export's counts, per writing service
    (none when ``FLEETWATCH_AUDIT_EXPORT`` is unset)."""

    pending: int
    max_pending: int
    last_hour: int
    per_hour: int
    kill_switch: bool
    executor_up: bool
    fence_configured: bool
    autonomy: str
    pauses: tuple[DenialPause, ...] = ()
    unsettled: tuple[ChangeToSettle, ...] = ()
    audit_export: tuple[ExportCount, ...] = ()


class SetKillSwitch(Request[Status]):
    """``on=True`` pauses every write (the executor refuses with ``kill_switch_on``)."""

    on: bool
    actor: Actor = "operator"


class GetStatus(Request[Status]):
    pass


class PausesLifted(Message):
    """The pauses `LiftDenialPauses` lifted (empty: none was running)."""

    pauses: tuple[DenialPause, ...]


class LiftDenialPauses(Request[PausesLifted]):
    """Lift the denial pauses running now: all of them, or only `tool` on `room` (a device ID,
    or a paused room's name as shown by ``status``). Operators only; one ``denial_lift`` audit
    row per pause lifted."""

    tool: ToolName | None = None
    room: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    actor: Actor = "operator"


class Acknowledge(Request[ProposalState]):
    """An operator looked at a change that ended ``unknown`` or ran without being verified:
    its rooms may get new proposals again. Operators only; one ``acknowledgement`` audit row."""

    proposal_id: ProposalId
    actor: Actor = "operator"


class AuditRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seq: int
    at: str
    actor: str
    kind: str
    proposal_id: str | None
    detail: dict[str, Any]


class AuditRows(Message):
    rows: tuple[AuditRow, ...]


class AuditTail(Request[AuditRows]):
    limit: int = 20


class AuditReport(Message):
    """The audit log verified by each writing service with its own key and anchor (`checks`):
    ``ok`` only when every writer checked it and found nothing; ``first_bad_seq`` the lowest
    row any of them named."""

    ok: bool
    rows: int
    first_bad_seq: int | None = None
    reason: str | None = None
    checks: tuple[WriterCheck, ...] = ()


class AuditVerify(Request[AuditReport]):
    pass


class ExportedAuditRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One audit row as the table holds it: its content, its chain position (``seq``,
    ``prev_hash``, ``hash``) and its MAC under its writer's key (`shared.store.audit_export`).
    ``detail_json`` is the exact text the hash covers."""

    seq: int
    at: str
    actor: str
    kind: str
    proposal_id: str | None
    detail_json: str
    prev_hash: str
    hash: str
    writer: str | None
    mac: str | None


class ExportedAudit(Message):
    """A page of the audit, oldest first; ``more``: rows after the last one wait for the next
    `AuditExport` (``after_seq`` = the last ``seq``)."""

    rows: tuple[ExportedAuditRow, ...]
    more: bool = False


class AuditExport(Request[ExportedAudit]):
    """Audit rows with ``at`` at or after `since` (database-clock text, UTC; None: from the
    first) and ``seq`` above `after_seq`, at most `limit` (1 to `MAX_AUDIT_EXPORT`)."""

    since: str | None = None
    after_seq: int = 0
    limit: int = 200


MAX_AUDIT_EXPORT: Final = 500
"""Most rows one `AuditExport` returns (a frame holds them with room to spare)."""


class ApproverLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One person's decisions over the report's days: ``uid`` (-1: unknown), the proposals they
    acted on (``seen``: approved, gave a first approval, denied, or were refused an Approve),
    ``approved`` (first approvals included), ``denied``, the median whole seconds from a card
    shown to its Approve (None: no approval), and ``fast``: approvals sooner than the policy's
    ``min_read_seconds`` ("decided faster than the card can be read")."""

    uid: int
    seen: int
    approved: int
    denied: int
    median_seconds: int | None
    fast: int


class ApproverReport(Message):
    """How each person decided over the last ``days`` days (`ApproverLine`s, most approvals
    first); ``threshold_seconds``: the policy's ``min_read_seconds``."""

    days: int
    threshold_seconds: int
    people: tuple[ApproverLine, ...] = ()


class GetApproverReport(Request[ApproverReport]):
    """The approvers' report over the last `days` days (1 to 366)."""

    days: int = 7


MAX_RECORDED_PROPOSALS = 32
"""Most proposal IDs one `RecordAsk` lists."""


class AskTokens(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Model tokens one question used."""

    input: CountOf = 0
    output: CountOf = 0
    cache_creation: CountOf = 0
    cache_read: CountOf = 0


class RecordAsk(Request[Count]):
    """The assistant's record of one answered question, counts only (never the question, a
    prompt, a result or a name): approval_web writes it as one ``ask`` audit row, actor
    ``assistant`` (the assistant holds no store). Only the assistant's uid may send it.

    ``outcome``: how the answer ended (``end_turn``, ``keyword_no_model``, ``fallback_<why>``,
    ``budget_exceeded``...); ``code``: the answer's code; ``tools``/``codes``: calls per tool
    (``unknown`` for a name that was not offered) and per code; ``expired``: proposals the
    turn expired; ``elapsed_ms``: wall time.

    Who asked: ``asker_uid``, the asking process's uid (assistant.sock: ``SO_PEERCRED``; the ask
    page: the uid the kernel lists for the browser's connection, when it can be read), and
    ``page_session``, the ask page session the question came through (None on the socket); from
    Slack, ``slack_user``, the asker's member ID, and ``slack_channel``, ``dm`` or ``channel``
    (the asking uid is then the assistant's own: None)."""

    turn_id: TurnId
    question_chars: Annotated[int, msgspec.Meta(ge=0, le=MAX_QUESTION_CHARS)]
    language: Language
    answered_by: AnsweredBy
    outcome: Name
    code: Code | None
    model_calls: CountOf
    tokens: AskTokens
    tools: Annotated[dict[ToolName, CountOf], msgspec.Meta(max_length=64)]
    codes: Annotated[dict[Code, CountOf], msgspec.Meta(max_length=64)]
    proposal_ids: Annotated[tuple[ProposalId, ...], msgspec.Meta(max_length=MAX_RECORDED_PROPOSALS)]
    expired: CountOf
    elapsed_ms: CountOf
    asker_uid: Uid | None = None
    page_session: PageSessionId | None = None
    slack_user: SlackMemberId | None = None
    slack_channel: SlackChannelKind | None = None


class RecordSilence(Request[Count]):
    """An operator silenced the watch on a room or group, or lifted a silence: approval_web
    writes one ``watch_silence`` row (actor ``assistant``) naming who (``uid``, from
    assistant.sock's ``SO_PEERCRED``, and that user's name), what (``target_kind``, ``target``:
    a device ID or a group's name, display text), why, until when and the silence's number.
    Only the assistant's uid may send it."""

    action: Literal["silence", "unsilence"]
    silence_id: CountOf
    target_kind: Literal["room", "group"]
    target: Annotated[str, msgspec.Meta(max_length=200)]
    reason: Annotated[str, msgspec.Meta(max_length=200)]
    until: UtcText
    uid: Uid
    user: Annotated[str, msgspec.Meta(max_length=64)] = ""
    include_classes: bool = False


class RecordPageSession(Request[Count]):
    """A person entered the ask page's secret: approval_web writes one ``ask_session_start`` row
    (actor ``assistant``) naming the session and the uid the kernel lists for the browser's
    connection (-1: unknown). Only the assistant's uid may send it."""

    page_session: PageSessionId
    uid: Uid


class RecordRefusal(Request[Count]):
    """A refusal on assistant.sock or the ask page, for the audit (the assistant holds no
    store): approval_web writes one ``refusal`` row, actor ``assistant``, naming the
    ``surface``. Only the assistant's uid may send it. It never carries a value the refused
    peer sent: the operation (``connect`` for a peer refused by its uid, else the request's tag
    when the socket serves it, ``login``/``ask``... on the page, else ``unknown``), the code,
    the field the decoder named, the frame's size, and the peer's uid, gid and pid as the
    kernel gave them (-1: unknown; on the page only the uid can be known). On the page also:
    ``signed_in_uid``, the uid that began a session another uid used (``session_not_yours``;
    -1: unknown), and ``unrecorded_before``, how many of this uid's wrong-secret refusals had no
    row since its last one (`shared.web.throttle`'s cap). From Slack (operation ``ask``, uid,
    gid and pid -1): ``slack_user``, the asker's member ID, and ``slack_channel``, ``dm`` or
    ``channel``; the code says why (``slack_not_allowed``, ``slack_rate_limited``...)."""

    operation: Name
    code: Code
    uid: Uid
    gid: Uid
    pid: Uid
    field: Annotated[str, msgspec.Meta(pattern=r"^\$[A-Za-z0-9_.\[\]]{0,63}\Z")] | None = None
    frame_bytes: CountOf | None = None
    surface: Literal["assistant.sock", "ask_page", "slack"] = "assistant.sock"
    signed_in_uid: Uid | None = None
    unrecorded_before: CountOf | None = None
    slack_user: SlackMemberId | None = None
    slack_channel: SlackChannelKind | None = None


MAX_PROPOSAL_HISTORY: Final = 500
"""Most proposals one `ProposalHistory` carries (the newest)."""


class ProposalEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One proposal as the watch sees it: its tool and arguments (no reason), targets (master
    IDs), who proposed, when it was made, when it expires unreviewed, decided and ran, its
    ``status`` (pending | approved | denied | expired | executed | not_run) and why
    (``status_code``), and the execution's ``outcome`` and ``verification`` (`ProposalState`'s
    words)."""

    proposal_id: str
    tool: str
    arguments: dict[str, Any]
    targets: tuple[str, ...]
    proposed_by: str
    created_at: str
    status: str
    status_code: Code | None = None
    expires_at: str | None = None
    decided_at: str | None = None
    outcome: str | None = None
    verification: str | None = None
    finished_at: str | None = None
    names: dict[str, str] = msgspec.field(default_factory=dict)
    """The names recorded with the proposal at Prepare (as `ProposalSummary.names`)."""


class ProposalHistory(Message):
    """The proposals (newest first; ``more`` counts those left out), the approval page's
    address when it is serving (None: no page), and the database clock when read."""

    items: tuple[ProposalEvent, ...]
    read_at: str
    page_url: str | None = None
    more: CountOf = 0


class ListProposalHistory(Request[ProposalHistory]):
    """Proposals made at or after ``since``, newest first (at most `MAX_PROPOSAL_HISTORY`), with
    their state and outcome. Read-only; the assistant's uid may ask (the watch)."""

    since: UtcText


# --- the operations -----------------------------------------------------------------------

INTAKE_CODES: Final[tuple[Code, ...]] = (
    Code.INVALID_MESSAGE,
    Code.OPERATION_NOT_ALLOWED,
    *POLICY_CODES[1:],  # the policy file loaded at start: never policy_invalid here
    Code.FENCE_NOT_CONFIGURED,
    Code.TARGET_BUSY,
    Code.TARGET_UNVERIFIED,
    Code.QUEUE_FULL,
    Code.HOURLY_CAP_REACHED,
    Code.DENIAL_PAUSE,
    Code.SERVICE_UNAVAILABLE,
    Code.SERVICE_NO_ANSWER,
)
"""`SubmitProposal`'s own refusals, in the order they are checked; then the executor's
(`PREPARE_CODES`, relayed unchanged, as `LIST_WRITABLE_CODES` are by ``list_writable``). An
executor record that differs from the request, or a code outside the registry, is answered
``internal_error`` (a transport code, declared for every operation)."""

START_CODES: Final[frozenset[Code]] = frozenset({Code.APPROVAL_WEB_RESTARTED})
"""Codes recorded at start (on approved proposals the executor never took), never answered."""

ASSISTANT: Final = "assistant"
"""The role of a uid in ``FLEETWATCH_ASSISTANT_UIDS`` (`services.approval_web.intake.roles_of`)."""
OPERATOR: Final = "operator"
"""The role of an operator: every admitted peer but a uid that is the assistant's only."""
_ADMIN: Final = frozenset({OPERATOR})
_RECORDS: Final = frozenset({ASSISTANT})
"""Audit records written for the assistant: only its uid, whatever else it is."""
_WRITES: Final = frozenset({Code.STORE_BUSY})
_RELAYED: Final = frozenset({Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER})
"""The executor not reached, or no answer: a relayed call's own failures."""

OPERATIONS: Final = OperationTable(
    "approval_web",
    "approval_web",
    (
        Row(
            SubmitProposal,
            frozenset(INTAKE_CODES) | PREPARE_CODES | _WRITES,
            "store a proposal the executor prepared (it still needs a person on the page)",
        ),
        Row(GetProposalState, frozenset({Code.PROPOSAL_NOT_FOUND}), "a proposal's recorded state"),
        Row(ExpireTurn, _WRITES, "expire the pending proposals of a failed model turn"),
        Row(ListPending, frozenset(), "the pending proposals, oldest first", _ADMIN),
        Row(
            ShowProposal,
            frozenset({Code.PROPOSAL_NOT_FOUND}),
            "one proposal in full, with its outcome and verification if it ran",
            _ADMIN,
        ),
        Row(
            Deny,
            _WRITES | {Code.PROPOSAL_NOT_FOUND, Code.PROPOSAL_NOT_PENDING},
            "deny one pending proposal",
            _ADMIN,
        ),
        Row(DenyAll, _WRITES, "deny every pending proposal", _ADMIN),
        Row(
            SetKillSwitch,
            _WRITES | SEAL_KILL_SWITCH_CODES | _RELAYED,
            "pause or resume every write (recorded here, sealed by the executor, which obeys only its seal)",
            _ADMIN,
        ),
        Row(GetStatus, frozenset(), "queue, caps, pauses, kill switch, executor, fence, autonomy", _ADMIN),
        Row(AuditTail, frozenset({Code.INVALID_MESSAGE}), "the newest audit rows", _ADMIN),
        Row(
            AuditVerify,
            CHECK_AUDIT_CODES,
            "the audit log verified by each writing service with its own key and anchor",
            _ADMIN,
        ),
        Row(
            AuditExport,
            frozenset({Code.INVALID_MESSAGE}),
            "audit rows since a time with their chain position and MAC, a page at a time",
            _ADMIN,
        ),
        Row(
            GetApproverReport,
            frozenset({Code.INVALID_MESSAGE}),
            "per person: proposals acted on, approved, denied, median seconds to decide, approvals "
            "faster than the card can be read (the watch's digest reads it too; read-only)",
        ),
        Row(
            RecordAsk,
            _WRITES,
            "the assistant's audit row of one question (counts only; the assistant's user only)",
            _RECORDS,
        ),
        Row(
            RecordRefusal,
            _WRITES,
            "the audit row of a refusal on assistant.sock or the ask page (the assistant's user only)",
            _RECORDS,
        ),
        Row(
            RecordPageSession,
            _WRITES,
            "the audit row of an ask page session begun (the assistant's user only)",
            _RECORDS,
        ),
        Row(
            RecordSilence,
            _WRITES,
            "the audit row of a watch silence set or lifted: who, what, why, until when (the assistant's user only)",
            _RECORDS,
        ),
        Row(
            ListWritable,
            LIST_WRITABLE_CODES | _RELAYED,
            "the devices a change may target now, read afresh by the executor (relayed; read-only)",
        ),
        Row(
            InspectProposal,
            _RELAYED | {Code.PROPOSAL_NOT_FOUND, Code.STORE_BUSY},
            "what the executor would refuse right now for a stored proposal, and why (its Inspect, relayed; read-only)",
            _ADMIN,
        ),
        Row(
            LiftDenialPauses,
            _WRITES | {Code.INVALID_MESSAGE, Code.NO_SUCH_PAUSE, Code.AMBIGUOUS_ROOM},
            "lift the denial pauses running now (all, or one tool on one room); audited",
            _ADMIN,
        ),
        Row(
            Acknowledge,
            _WRITES | {Code.PROPOSAL_NOT_FOUND, Code.NOTHING_TO_ACKNOWLEDGE},
            "an operator acknowledges a change that ended unknown or was not verified; audited",
            _ADMIN,
        ),
        Row(
            ListProposalHistory,
            frozenset(),
            "the proposals made since a time, with their outcomes, and the page's address (the watch; read-only)",
        ),
    ),
)
"""approval.sock's operations, one row each; ``callers``: who may call it (`ASSISTANT`,
`OPERATOR`; None: both)."""
REQUESTS: Final = OPERATIONS.requests
CAPABILITIES: Final = OPERATIONS.manifest
codes_of: Final = OPERATIONS.codes_of
"""The codes an operation of approval.sock declares (`OperationTable.codes_of`)."""


class ApprovalClient(SocketClient):
    """approval.sock's client (the assistant's and the operators' way to approval_web): ``call``
    returns the reply or raises `CallError` with approval_web's code, ``service_unavailable``
    or ``service_no_answer``. None of these approves anything: approving happens on the page.

    Args:
        path: ``settings.approval_socket``.
        timeout_seconds: the bound on one call; a submission waits for the executor's fresh
            sandbox read, so allow several seconds.
    """

    table = OPERATIONS
