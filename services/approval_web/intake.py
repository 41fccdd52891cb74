"""The proposal intake's pure decisions: who may do what on approval.sock, and whether a
submitted proposal passes the propose policy. No sockets, no SQL, no clock.

Roles (from the peer's uid, ``SO_PEERCRED``, never from anything it sent). The socket admits
uids in ``FLEETWATCH_ASSISTANT_UIDS`` or ``FLEETWATCH_APPROVAL_UIDS`` and members of
``FLEETWATCH_APPROVAL_GIDS``; then:

- **assistant**: a uid in ``FLEETWATCH_ASSISTANT_UIDS`` and not in
  ``FLEETWATCH_APPROVAL_UIDS``. May only make the requests whose row in
  `shared.wire.approval.OPERATIONS` lets the assistant call it (`ASSISTANT_OPERATIONS`: submit
  with ``proposed_by="assistant"``, a proposal's state, a turn's expiry, the writable devices,
  the proposal history, the approvers' report (the watch's digest), its audit records, the
  manifest); anything else is refused with
  ``operation_not_allowed``.
- **operator**: every other admitted peer (a uid in ``FLEETWATCH_APPROVAL_UIDS``, or a member
  of ``FLEETWATCH_APPROVAL_GIDS``). May do everything, including drafting a proposal
  (``proposed_by="operator"``); a draft still needs a person on the page. Nothing here approves.
- In single-account mode (supervisord on one user, the default: both settings are the running
  uid) that uid is an operator, so every operation is allowed; the boundary between assistant
  and operator is then the process, not the OS user, and ``doctor`` says so.
- **Records** (`RecordAsk`, `RecordRefusal`, `RecordPageSession`, `RecordSilence`: audit rows
  written for the assistant, which holds no store) come only from a uid in ``FLEETWATCH_ASSISTANT_UIDS``,
  whatever its role (their rows' ``callers``): an operator who is not the assistant cannot
  write the assistant's rows. `check_caller` makes these checks.

`check_submission` runs the policy checks of a `SubmitProposal`, in this order, each refusal a
stable code: the message's own fields (``invalid_message``: ``proposed_by`` not assistant or
operator, a blank or over-long reason); autonomy ``observe`` (``observe_mode``); the tool is
proposable (``not_proposable``, or ``schema_not_reviewed`` for an unreviewed write tool); the
arguments have a canonical form (``hidden_character``, ``not_canonicalizable``); they name at
most ``max_targets`` targets (``too_many_targets``) and fit the reviewed schema
(``invalid_arguments``, naming each JSON path); the fence is configured
(``fence_not_configured``). The limits (`services.approval_web.limits`) and the executor's
Prepare come after, in the service.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

from services.approval_web import ApprovalWebError
from shared.binding import BoundRecord, fingerprint_hash, record_from_bytes
from shared.canonical import CanonicalError, canonicalize_arguments
from shared.errors import Code, FleetwatchError
from shared.policy.loader import ArgumentsError, Policy, ProposeRule, ToolPolicy
from shared.text.catalogue import N_
from shared.text.display import visible
from shared.wire import approval
from shared.wire import formats as wire
from shared.wire.approval import OPERATIONS, SubmitProposal
from shared.wire.executor import Prepared
from shared.wire.protocol import Message, message_tag

PROPOSED_BY: Final = ("assistant", "operator")
"""Who may be named as a proposal's author: the assistant (a model turn) or an operator (a draft)."""
MAX_REASON_CHARS: Final = wire.MAX_REASON_CHARS
"""Longest reason accepted, in characters (the page shows it, escaped, in a capped box); the
message's own cap, so decoding refuses a longer one first."""


class IntakeRefused(ApprovalWebError):
    """A request on approval.sock was refused; ``code`` says why.

    Attributes:
        detail: extra facts for the refusal's audit row (no secrets, fleet text made visible).
        audited: the refusal's audit row is already written (by `shared.store.approvals`).
    """

    def __init__(
        self,
        code: Code,
        message: str | None = None,
        *,
        detail: Mapping[str, Any] | None = None,
        audited: bool = False,
    ) -> None:
        super().__init__(code, message)
        self.detail: Mapping[str, Any] = dict(detail or {})
        self.audited = audited

    @classmethod
    def words(cls, code: Code, template: str, /, *, audited: bool = False, **params: object) -> IntakeRefused:
        """The refusal with `template` (marked `N_`) as its message, `params` put in: a command
        says it in the reader's language (`shared.errors.FleetwatchError.said`); the English
        message, the log and the model's copy are unchanged."""
        refusal = cls.said(code, template, **params)
        refusal.audited = audited
        return refusal


def proposal_not_found(proposal_id: str, *, audited: bool = False) -> IntakeRefused:
    """``proposal_not_found`` for `proposal_id` (made visible), in catalogue words."""
    return IntakeRefused.words(
        Code.PROPOSAL_NOT_FOUND, N_("no proposal %(id)s"), audited=audited, id=visible(proposal_id, 40)
    )


NOT_PENDING: Final = {
    "approved": N_("proposal %(id)s is approved, not pending"),
    "denied": N_("proposal %(id)s is denied, not pending"),
    "expired": N_("proposal %(id)s is expired, not pending"),
    "executed": N_("proposal %(id)s is executed, not pending"),
    "not_run": N_("proposal %(id)s is not_run, not pending"),
}
"""``proposal_not_pending`` by the state the proposal is in (one sentence each, so a command can
say the state in the reader's language)."""


def proposal_not_pending(proposal_id: str, state: str) -> IntakeRefused:
    """``proposal_not_pending`` (audited by the store) naming the `state` it is in."""
    template = NOT_PENDING.get(state)
    shown = visible(proposal_id, 40)
    if template is None:  # a state this build does not know: said as it is
        return IntakeRefused(
            Code.PROPOSAL_NOT_PENDING, f"proposal {shown} is {visible(state, 20)}, not pending", audited=True
        )
    return IntakeRefused.words(Code.PROPOSAL_NOT_PENDING, template, audited=True, id=shown)


class Role(enum.StrEnum):
    """What a peer on approval.sock may do; see the module doc."""

    ASSISTANT = approval.ASSISTANT
    OPERATOR = approval.OPERATOR


ASSISTANT_OPERATIONS: Final[frozenset[type[Message]]] = frozenset(
    row.request for row in OPERATIONS.rows if OPERATIONS.allows(row.request, {Role.ASSISTANT})
)
"""The only requests the assistant's uid may send (the rows whose ``callers`` hold it)."""


def role_of(uid: int, *, operator_uids: Collection[int], assistant_uids: Collection[int]) -> Role:
    """The role of an admitted peer: assistant when its uid is on `assistant_uids` and not on
    `operator_uids`; operator otherwise (also when on both: single-account mode)."""
    if uid in assistant_uids and uid not in operator_uids:
        return Role.ASSISTANT
    return Role.OPERATOR


def check_caller(
    request: Message, uid: int, *, operator_uids: Collection[int], assistant_uids: Collection[int]
) -> None:
    """Refuse a request the peer may not make: its row's ``callers`` (`OPERATIONS`) hold none of
    the peer's roles (an operator unless its role is the assistant's; the assistant when its uid
    is the assistant's, whatever else it is), or the assistant submits a proposal labelled as
    drafted by an operator.

    Raises:
        IntakeRefused: ``operation_not_allowed``.
    """
    role = role_of(uid, operator_uids=operator_uids, assistant_uids=assistant_uids)
    roles = {role} | ({Role.ASSISTANT} if uid in assistant_uids else set())
    op = message_tag(type(request))
    if not OPERATIONS.allows(type(request), roles):
        if role is Role.ASSISTANT:
            raise IntakeRefused(Code.OPERATION_NOT_ALLOWED, f"the assistant's user may not use {op!r}")
        raise IntakeRefused(Code.OPERATION_NOT_ALLOWED, f"only the assistant's user may send {op!r}")
    if role is Role.ASSISTANT and isinstance(request, SubmitProposal) and request.proposed_by != role:
        raise IntakeRefused(
            Code.OPERATION_NOT_ALLOWED, "the assistant's user may only submit proposals as the assistant"
        )


@dataclass(frozen=True)
class CheckedProposal:
    """A submission that passed the policy checks.

    Attributes:
        rule: the tool's propose rule (schema version, target kind...).
        arguments: the canonical arguments (`shared.canonical.canonicalize_arguments`).
        targets: the master IDs the targets belong to (a channel counts as its master), sorted.
    """

    rule: ProposeRule
    arguments: dict[str, Any]
    targets: tuple[str, ...]

    @property
    def tool(self) -> str:
        return self.rule.tool


def _check_message(submit: SubmitProposal) -> None:
    if submit.proposed_by not in PROPOSED_BY:
        raise IntakeRefused(Code.INVALID_MESSAGE, f"proposed_by must be one of {', '.join(PROPOSED_BY)}")
    if not submit.reason.strip():
        raise IntakeRefused.words(Code.INVALID_MESSAGE, N_("a proposal needs a reason"))
    if len(submit.reason) > MAX_REASON_CHARS:
        raise IntakeRefused.words(
            Code.INVALID_MESSAGE,
            N_("the reason has %(n)s characters; at most %(most)s"),
            n=len(submit.reason),
            most=MAX_REASON_CHARS,
        )


def canonical_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`canonicalize_arguments`, its error re-raised as `IntakeRefused` with the same code.

    Raises:
        IntakeRefused: ``hidden_character`` or ``not_canonicalizable``, naming the path.
    """
    try:
        return canonicalize_arguments(arguments)
    except CanonicalError as exc:
        raise IntakeRefused(exc.code, exc.message) from exc


def check_submission(
    submit: SubmitProposal, *, policy: Policy, tool_policy: ToolPolicy, fence_configured: bool
) -> CheckedProposal:
    """The intake's policy checks of one submission, in the order of the module doc.

    Args:
        submit: the request as received (nothing in it is trusted).
        policy: the loaded ``policy.yaml`` (autonomy).
        tool_policy: the loaded ``tool_policy.yaml`` (propose rules).
        fence_configured: `shared.config.Settings.fence_configured`.

    Raises:
        IntakeRefused: with the first failing check's code; the message names the reason in
            words (tool names are shown through `shared.text.display.visible`).
    """
    _check_message(submit)
    if not policy.may_propose:
        raise IntakeRefused.words(
            Code.OBSERVE_MODE, N_("autonomy is 'observe' in the policy: nothing may be proposed")
        )
    try:
        rule = tool_policy.rule_for(submit.tool)
    except FleetwatchError as exc:
        raise IntakeRefused(exc.code, visible(exc.message)) from exc
    arguments = canonical_arguments(submit.arguments)
    try:
        rule.validate(arguments)
    except ArgumentsError as exc:
        raise IntakeRefused(exc.code, exc.message) from exc
    if not fence_configured:
        raise IntakeRefused.words(
            Code.FENCE_NOT_CONFIGURED,
            N_("set %(ids)s or %(team)s (or both) before proposing"),
            ids="FLEETWATCH_WRITE_DEVICE_IDS",
            team="FLEETWATCH_WRITE_TEAM_ID",
        )
    return CheckedProposal(
        rule=rule, arguments=arguments, targets=tuple(sorted(rule.target_device_ids(arguments)))
    )


def as_asked(bound: Mapping[str, Any], asked: Mapping[str, Any]) -> bool:
    """Whether the executor bound `asked` (canonical arguments) as `bound`: every argument the
    same, except a ``stream_id`` the executor binds in the form the sandbox team lists it
    (Epiphan's stream destination IDs are UUIDs, compared case-insensitively:
    `services.executor.prepare`), which may differ from the asked one in case only."""
    if set(bound) != set(asked):
        return False
    for name, value in asked.items():
        same = bound[name] == value or (
            name == "stream_id"
            and isinstance(value, str)
            and isinstance(bound[name], str)
            and bound[name].casefold() == value.casefold()
        )
        if not same:
            return False
    return True


def check_prepared(
    prepared: Prepared, *, proposal_id: str, checked: CheckedProposal, reason: str
) -> BoundRecord:
    """The executor's bound record, checked to be exactly what was asked: this process cannot
    verify the seal (the key never leaves the executor), but it can compare the record. The
    record's arguments are what is stored (a ``stream_id`` as the sandbox team lists it).

    Raises:
        IntakeRefused: ``internal_error`` when the record does not decode or differs from the
            request (proposal ID, tool, canonical arguments but a stream ID's case
            (`as_asked`), reason in NFC, schema version, targets, fingerprint hash).
    """
    try:
        record = record_from_bytes(prepared.record)
    except CanonicalError as exc:
        raise IntakeRefused(Code.INTERNAL_ERROR, "the executor's bound record does not decode") from exc
    same = (
        record.proposal_id == proposal_id
        and record.tool == checked.tool
        and as_asked(record.arguments, checked.arguments)
        and record.reason == unicodedata.normalize("NFC", reason)
        and record.schema_version == checked.rule.schema_version
        and set(record.targets) == set(checked.targets)
        and fingerprint_hash(record.fingerprint) == prepared.fingerprint_hash
    )
    if not same:
        raise IntakeRefused(Code.INTERNAL_ERROR, "the executor's bound record differs from the proposal")
    return record
