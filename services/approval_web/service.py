"""approval.sock's handler: role checks, the proposal intake, and the admin operations.

`ApprovalService.handle` answers one request from one peer (already on the socket's uid
allowlist). It owns one store connection, used by one coroutine at a time, and serialises
`SubmitProposal`: checks, limits, Prepare and the insert run under one lock, so two
submissions at once cannot both take the last place in the queue (only this process stores
proposals).

SubmitProposal, in order (each refusal: a stable code, one ``refusal`` audit row, nothing else
changed): role (``operation_not_allowed``), the policy checks of
`services.approval_web.intake.check_submission`, then what the store says about the rooms
(`services.approval_web.one_change`): an identical proposal still pending is the answer
(`ProposalExists`, one ``proposal_repeated`` audit row; nothing queued), another change in the
way is ``target_busy``, an unsettled last change is ``target_unverified`` unless the
executor's fresh read (``Recheck``) verifies it now; then the limits of
`services.approval_web.limits`, then Prepare on executor.sock (its refusal codes pass through
unchanged; the executor not running: ``service_unavailable``; no answer:
``service_no_answer``), then `shared.store.approvals.insert_proposal` (with the rooms' names the
executor read). The answer is the new proposal's ID and when it expires unreviewed.

LiftDenialPauses and Acknowledge are operator commands (``fleetwatch resume --denials``,
``fleetwatch acknowledge``), each audited (``denial_lift``, ``acknowledgement``).

ListProposalHistory (the assistant's watch, and operators) lists the proposals made since a
time with their outcomes, and the page's address (`page_url`, set once the page serves).

ListWritable is relayed to the executor as it is (this process holds no Epiphan token): the
executor reads the sandbox team afresh. Its refusals pass through with their codes (one
``refusal`` audit row each, like every refusal here); the executor not running:
``service_unavailable``.

SetKillSwitch records the operator's request, then asks the executor to seal it
(`SealKillSwitch`): the executor trusts only a kill switch state it sealed under its own key,
so a pause holds at once even when the executor is down, and a resume the executor did not
confirm is refused (``kill_switch_not_confirmed`` / ``service_unavailable``; writes stay
paused). AuditVerify verifies the log with approval_web's own key and anchor, then asks the
executor to verify it with its own (`CheckAudit`): each service alone can check its own rows.

RecordAsk, RecordRefusal and RecordPageSession are the assistant's audit rows (under the OS-user fence the
assistant's user cannot write the store): this process writes them, actor ``assistant``, only
for a peer whose uid is in ``FLEETWATCH_ASSISTANT_UIDS`` (`intake.check_recorder`).

A request refused before its handler (malformed, an ID not of its format, a text over its cap:
`shared.wire.protocol`) leaves one ``refusal`` row too (`on_refused_request`), naming the operation,
the field and the frame's size, never the value.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiosqlite
import msgspec

from services.approval_web import admin, one_change
from services.approval_web.intake import (
    CheckedProposal,
    IntakeRefused,
    Role,
    check_prepared,
    check_recorder,
    check_role,
    check_submission,
    role_of,
)
from services.approval_web.limits import (
    active_pauses,
    check_limits,
    count_last_hour,
    count_pending,
    lift_pauses,
    read_counts,
)
from shared.config import Settings
from shared.errors import MEANINGS, Code, FleetwatchError
from shared.policy.loader import Policy, ToolPolicy
from shared.store import approvals
from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR
from shared.store.audit_witness import Witness
from shared.store.db import append_audit, db_now, verify_audit
from shared.text.display import visible
from shared.wire import approval
from shared.wire.approval import (
    MAX_PROPOSAL_HISTORY,
    Acknowledge,
    AuditReport,
    AuditRows,
    AuditTail,
    AuditVerify,
    Count,
    Deny,
    DenyAll,
    ExpireTurn,
    GetProposalState,
    GetStatus,
    InspectProposal,
    LiftDenialPauses,
    ListPending,
    ListProposalHistory,
    PausesLifted,
    PendingList,
    ProposalAccepted,
    ProposalDetail,
    ProposalExists,
    ProposalHistory,
    ProposalState,
    RecordAsk,
    RecordPageSession,
    RecordRefusal,
    SetKillSwitch,
    ShowProposal,
    Status,
    SubmitProposal,
)
from shared.wire.client import CallError
from shared.wire.executor import (
    AUDIT_SECONDS,
    HEALTH_SECONDS,
    LIST_WRITABLE_SECONDS,
    PREPARE_SECONDS,
    RECHECK_SECONDS,
    ExecutorClient,
    HealthReport,
    Inspection,
    ListWritable,
    Prepare,
    Prepared,
    Rechecked,
    WritableDevices,
    WriterCheck,
)
from shared.wire.protocol import Capabilities, GetCapabilities, Message, message_tag
from shared.wire.server import PeerCred, RefusedRequest

logger = logging.getLogger(__name__)

ACTOR = "approval_web"
"""The audit actor of this service's own steps (expiry, start)."""
ASSISTANT_ACTOR = "assistant"
"""The audit actor of the rows written for the assistant (`RecordAsk`, `RecordRefusal`,
`RecordPageSession`)."""


@dataclass(frozen=True)
class ServiceOptions:
    """Timings of the service.

    Attributes:
        proposal_ttl_seconds: how long a proposal waits, neither approved nor denied, before
            it expires; None: the policy's ``proposal_ttl_seconds``.
        prepare_timeout_seconds: the whole Prepare exchange with the executor (it reads the
            sandbox team afresh).
        health_timeout_seconds: the Health exchange behind `GetStatus`.
        list_timeout_seconds: the ListWritable exchange (the executor reads the sandbox team).
        audit_timeout_seconds: the CheckAudit and SealKillSwitch exchanges (the executor walks
            the whole log, or seals).
        recheck_timeout_seconds: one Recheck exchange (the executor reads a change's rooms).
    """

    proposal_ttl_seconds: int | None = None
    prepare_timeout_seconds: float = PREPARE_SECONDS
    health_timeout_seconds: float = HEALTH_SECONDS
    list_timeout_seconds: float = LIST_WRITABLE_SECONDS
    audit_timeout_seconds: float = AUDIT_SECONDS
    recheck_timeout_seconds: float = RECHECK_SECONDS


class ApprovalService:
    """The handler behind approval.sock; see the module doc.

    Args:
        conn: an open, migrated store connection (this service's own).
        settings: uids, the executor socket, the fence.
        policy, tool_policy: loaded once at start.
        options: timings.
        witness: approval_web's audit anchor (`shared.store.audit_witness`); None: none kept.
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        *,
        settings: Settings,
        policy: Policy,
        tool_policy: ToolPolicy,
        options: ServiceOptions | None = None,
        witness: Witness | None = None,
    ) -> None:
        self._conn = conn
        self.witness = witness
        self._settings = settings
        self._policy = policy
        self._tool_policy = tool_policy
        self._options = options or ServiceOptions()
        self._executor = ExecutorClient(settings.executor_socket)
        self._db = asyncio.Lock()
        self._submitting = asyncio.Lock()
        self.page_url: str | None = None
        """The approval page's address once it serves (``ListProposalHistory`` names it)."""
        self._handlers: Mapping[type[Message], Callable[[Any, PeerCred], Awaitable[Message]]] = {
            SubmitProposal: self._submit,
            GetProposalState: self._get_state,
            ExpireTurn: self._expire_turn,
            ListPending: self._list_pending,
            ShowProposal: self._show,
            InspectProposal: self._inspect,
            Deny: self._deny,
            DenyAll: self._deny_all,
            SetKillSwitch: self._set_kill_switch,
            GetStatus: self._status,
            AuditTail: self._audit_tail,
            AuditVerify: self._audit_verify,
            ListWritable: self._list_writable,
            ListProposalHistory: self._proposal_history,
            RecordAsk: self._record_ask,
            RecordRefusal: self._record_refusal,
            RecordPageSession: self._record_page_session,
            LiftDenialPauses: self._lift_pauses,
            Acknowledge: self._acknowledge,
            GetCapabilities: self._capabilities,
        }

    @property
    def allowed_uids(self) -> frozenset[int]:
        """Uids that may connect: the assistant's and the operators'."""
        return self._settings.assistant_uids | self._settings.approval_uids

    @property
    def allowed_gids(self) -> frozenset[int]:
        """Groups whose members may connect (as operators)."""
        return self._settings.approval_gids

    @property
    def proposal_ttl_seconds(self) -> int:
        ttl = self._options.proposal_ttl_seconds
        return self._policy.limits.proposal_ttl_seconds if ttl is None else ttl

    def role(self, peer: PeerCred) -> Role:
        return role_of(
            peer.uid, operator_uids=self._settings.approval_uids, assistant_uids=self._settings.assistant_uids
        )

    # --- entry points -------------------------------------------------------------------

    async def handle(self, request: Message, peer: PeerCred) -> Message:
        """Answer one request (the `shared.wire.server.Handler` of approval.sock).

        Raises:
            FleetwatchError: the refusal; `serve_unix` sends it as an `ErrorReply`.
        """
        try:
            check_role(request, self.role(peer))
            check_recorder(request, peer.uid, assistant_uids=self._settings.assistant_uids)
            return await self._handlers[type(request)](request, peer)
        except IntakeRefused as exc:
            if not exc.audited:
                await self._audit_refusal(peer, message_tag(type(request)), exc, exc.detail)
            raise
        finally:
            if self.witness is not None:
                # The rows this request wrote are in the anchor before it is answered.
                await self.witness.settle()
                self.witness.nudge()

    @property
    def db(self) -> asyncio.Lock:
        """The lock of this service's store connection (one user at a time)."""
        return self._db

    async def on_refused_peer(self, peer: PeerCred) -> None:
        """A connection from a uid not on the allowlist: one ``refusal`` audit row."""
        async with self._db:
            await approvals.audit_refusal(
                self._conn,
                actor=f"peer:{peer.uid}",
                operation="connect",
                code=Code.PEER_NOT_ALLOWED,
                message=f"uid {peer.uid} may not use approval.sock",
                detail={"uid": peer.uid, "gid": peer.gid, "pid": peer.pid},
            )

    async def on_refused_request(self, peer: PeerCred, refused: RefusedRequest) -> None:
        """A request refused before its handler (`shared.wire.server.RefusedRequest`): one
        ``refusal`` audit row naming the operation, the field and the frame's size."""
        async with self._db:
            await approvals.audit_refusal(
                self._conn,
                actor=self._actor(peer),
                operation=refused.operation,
                code=refused.code,
                detail={"uid": peer.uid, **refused.detail()},
            )

    async def expire_due(self) -> int:
        """Expire every pending proposal past its ``expires_at`` (database clock); the count."""
        async with self._db:
            return await approvals.expire_due(self._conn, actor=ACTOR)

    async def expire_all_pending(self, reason: str) -> int:
        """Expire every pending proposal (on start); the count."""
        async with self._db:
            return await approvals.expire_all_pending(self._conn, actor=ACTOR, reason=reason)

    # --- helpers ------------------------------------------------------------------------

    def _actor(self, peer: PeerCred, name: str | None = None) -> str:
        role = self.role(peer)
        who = visible(name, 40) if name else str(role)
        return f"{who}:{peer.uid}"

    async def _audit_refusal(
        self, peer: PeerCred, operation: str, exc: FleetwatchError, detail: Mapping[str, Any]
    ) -> None:
        async with self._db:
            await approvals.audit_refusal(
                self._conn,
                actor=self._actor(peer),
                operation=operation,
                code=exc.code,
                message=exc.message,
                detail={"uid": peer.uid, **detail},
            )

    # --- SubmitProposal -----------------------------------------------------------------

    async def _submit(self, submit: SubmitProposal, peer: PeerCred) -> ProposalAccepted | ProposalExists:
        detail = {"tool": visible(submit.tool, 80), "proposed_by": visible(submit.proposed_by, 40)}
        async with self._submitting:
            try:
                checked = check_submission(
                    submit,
                    policy=self._policy,
                    tool_policy=self._tool_policy,
                    fence_configured=self._settings.fence_configured,
                )
                existing = await self._rooms_free(checked, submit, peer)
                if existing is not None:
                    return existing
                async with self._db:
                    counts = await read_counts(
                        self._conn, tool=checked.tool, targets=checked.targets, limits=self._policy.limits
                    )
                check_limits(counts, self._policy.limits, tool=checked.tool)
                proposal_id = approvals.new_proposal_id()
                prepared = await self._prepare(proposal_id, checked, submit.reason)
                record = check_prepared(
                    prepared, proposal_id=proposal_id, checked=checked, reason=submit.reason
                )
            except FleetwatchError as exc:
                raise IntakeRefused(exc.code, exc.message, detail=detail) from exc
            async with self._db:
                row = await approvals.insert_proposal(
                    self._conn,
                    record=record,
                    record_bytes=prepared.record,
                    seal=prepared.seal,
                    fingerprint_hash=prepared.fingerprint_hash,
                    proposed_by=submit.proposed_by,
                    turn_id=submit.turn_id,
                    ttl_seconds=self.proposal_ttl_seconds,
                    target_names={k: visible(v, 200) for k, v in prepared.target_names.items()},
                )
        assert row.expires_at is not None
        return ProposalAccepted(proposal_id=row.id, expires_at=row.expires_at)

    async def _rooms_free(
        self, checked: CheckedProposal, submit: SubmitProposal, peer: PeerCred
    ) -> ProposalExists | None:
        """What the store says about the new proposal's rooms (`one_change`): the identical
        pending proposal (the answer), or None when nothing is in the way.

        Raises:
            IntakeRefused: ``target_busy``; ``target_unverified`` (after a fresh read that did
                not verify the last change, or could not be made).
        """
        async with self._db:
            state = await one_change.read_room_state(
                self._conn, tool=checked.tool, arguments=checked.arguments, targets=checked.targets
            )
        found = one_change.judge(state)
        if isinstance(found, one_change.Identical):
            async with self._db:
                await append_audit(
                    self._conn,
                    actor=self._actor(peer, submit.proposed_by),
                    kind="proposal_repeated",
                    proposal_id=found.proposal_id,
                    detail={"tool": checked.tool, "turn_id": submit.turn_id},
                )
            return ProposalExists(
                proposal_id=found.proposal_id, status=found.status, expires_at=found.expires_at
            )
        if isinstance(found, one_change.Busy):
            what = {"pending": "is waiting for a person", "approved": "was approved and has not run yet"}
            raise IntakeRefused(
                Code.TARGET_BUSY,
                f"another change for {found.target} ({found.proposal_id}) {what.get(found.why, 'is running')}; "
                "decide or wait for it first",
            )
        for change in found or ():
            verdict = await self._recheck(change.proposal_id)
            if verdict is None or verdict.verification != "verified":
                seen = (
                    "could not be read again"
                    if verdict is None
                    else f"is {verdict.verification} on a fresh read"
                )
                raise IntakeRefused(
                    Code.TARGET_UNVERIFIED,
                    f"the last change on {change.target} ({change.proposal_id}) ended {change.outcome} and {seen}; "
                    f"check the room, then acknowledge it (fleetwatch acknowledge {change.proposal_id})",
                )
        return None

    async def _recheck(self, proposal_id: str) -> Rechecked | None:
        """The executor's fresh read of a change's rooms (it records the verdict), or None
        when it could not be made (the executor down or refusing; logged with its code)."""
        try:
            return await self._executor.recheck(
                proposal_id, timeout_seconds=self._options.recheck_timeout_seconds
            )
        except CallError as exc:
            logger.warning("recheck of %s not made (%s)", proposal_id, exc.code)
            return None

    async def _prepare(self, proposal_id: str, checked: CheckedProposal, reason: str) -> Prepared:
        """Prepare on executor.sock.

        Raises:
            IntakeRefused: the executor's refusal code, unchanged, or ``service_unavailable``
                / ``service_no_answer``.
        """
        message = Prepare(
            proposal_id=proposal_id, tool=checked.tool, arguments=checked.arguments, reason=reason
        )
        try:
            return await self._executor.prepare(
                message, timeout_seconds=self._options.prepare_timeout_seconds
            )
        except CallError as exc:
            raise IntakeRefused(exc.code, visible(exc.message, 400)) from exc

    # --- the assistant's other operations ----------------------------------------------

    async def _get_state(self, message: GetProposalState, peer: PeerCred) -> ProposalState:
        async with self._db:
            status = await approvals.proposal_state(self._conn, message.proposal_id)
        if status is None:
            raise IntakeRefused(Code.PROPOSAL_NOT_FOUND, f"no proposal {visible(message.proposal_id, 40)}")
        return admin.state_of(status)

    async def _expire_turn(self, message: ExpireTurn, peer: PeerCred) -> Count:
        async with self._db:
            count = await approvals.expire_turn(self._conn, message.turn_id, actor=self._actor(peer))
        return Count(count=count)

    async def _record_ask(self, message: RecordAsk, peer: PeerCred) -> Count:
        """The assistant's ``ask`` row: its counts and who asked (a uid, an ask page session) as
        sent (every field already of its form; never the question)."""
        detail = msgspec.to_builtins(message)
        detail.pop("op", None)
        async with self._db:
            await append_audit(self._conn, actor=ASSISTANT_ACTOR, kind="ask", detail=detail)
        return Count(count=1)

    async def _record_refusal(self, message: RecordRefusal, peer: PeerCred) -> Count:
        """A refusal on assistant.sock, the ask page or Slack, recorded for the assistant (one
        ``refusal`` row naming the surface).

        The code is a declared one: decoding refused any other (``invalid_message``).
        """
        code = message.code
        detail = {"socket": message.surface, "uid": message.uid, "gid": message.gid, "pid": message.pid}
        noted = (
            ("field", message.field),
            ("frame_bytes", message.frame_bytes),
            ("signed_in_uid", message.signed_in_uid),
            ("unrecorded_before", message.unrecorded_before),
            ("slack_user", message.slack_user),
            ("slack_channel", message.slack_channel),
        )
        detail |= {k: v for k, v in noted if v is not None}
        async with self._db:
            await approvals.audit_refusal(
                self._conn,
                actor=ASSISTANT_ACTOR,
                operation=message.operation,
                code=code,
                message=f"{MEANINGS[code]} ({message.surface})",
                detail=detail,
            )
        return Count(count=1)

    async def _record_page_session(self, message: RecordPageSession, peer: PeerCred) -> Count:
        """An ask page session began (the secret was right): one ``ask_session_start`` row."""
        detail = {"page_session": message.page_session, "uid": message.uid}
        async with self._db:
            await append_audit(self._conn, actor=ASSISTANT_ACTOR, kind="ask_session_start", detail=detail)
        return Count(count=1)

    async def _lift_pauses(self, message: LiftDenialPauses, peer: PeerCred) -> PausesLifted:
        """Lift the denial pauses running now (all, or `tool` on `room`).

        Raises:
            IntakeRefused: ``invalid_message`` (a tool without a room or the other way round),
                ``no_such_pause`` (nothing running matches), ``ambiguous_room`` (two paused
                rooms have that name).
        """
        if (message.tool is None) != (message.room is None):
            raise IntakeRefused(Code.INVALID_MESSAGE, "name both the tool and the room, or neither")
        actor = self._actor(peer, message.actor)
        limits = self._policy.limits
        target = None
        if message.tool is not None and message.room is not None:
            async with self._db:
                running = await active_pauses(self._conn, limits, tool=message.tool)
            matches = {p.target for p in running if message.room in (p.target, p.target_name)}
            if not matches:
                raise IntakeRefused(
                    Code.NO_SUCH_PAUSE,
                    f"no denial pause of {visible(message.tool, 64)} on {visible(message.room, 80)} is running",
                )
            if len(matches) > 1:
                raise IntakeRefused(
                    Code.AMBIGUOUS_ROOM,
                    f"{len(matches)} paused rooms are named {visible(message.room, 80)}: "
                    f"{', '.join(sorted(matches))}; name one by its device ID",
                )
            (target,) = matches
        async with self._db:
            lifted = await lift_pauses(self._conn, limits, actor=actor, tool=message.tool, target=target)
        return PausesLifted(pauses=lifted)

    async def _acknowledge(self, message: Acknowledge, peer: PeerCred) -> ProposalState:
        """An operator acknowledges a change that ended unknown or was not verified.

        Raises:
            IntakeRefused: ``proposal_not_found``, ``nothing_to_acknowledge`` (audited).
        """
        async with self._db:
            refused = await one_change.acknowledge(
                self._conn, message.proposal_id, actor=self._actor(peer, message.actor)
            )
            status = await approvals.proposal_state(self._conn, message.proposal_id)
        if refused is not None or status is None:
            raise IntakeRefused(refused or Code.PROPOSAL_NOT_FOUND, audited=True)
        return admin.state_of(status)

    async def _capabilities(self, message: GetCapabilities, peer: PeerCred) -> Capabilities:
        return approval.capabilities()

    async def _list_writable(self, message: ListWritable, peer: PeerCred) -> WritableDevices:
        """ListWritable relayed to executor.sock, its answer unchanged.

        Raises:
            IntakeRefused: the executor's refusal code, or ``service_unavailable`` /
                ``service_no_answer``.
        """
        try:
            return await self._executor.list_writable(timeout_seconds=self._options.list_timeout_seconds)
        except CallError as exc:
            raise IntakeRefused(exc.code, visible(exc.message, 400)) from exc

    async def _proposal_history(self, message: ListProposalHistory, peer: PeerCred) -> ProposalHistory:
        """Proposals made since a time, with their outcomes, and the page's address (the
        watch's notices and history; read-only)."""
        async with self._db:
            items, more = await approvals.proposal_history(self._conn, message.since, MAX_PROPOSAL_HISTORY)
            now = await db_now(self._conn)
        return ProposalHistory(
            items=tuple(admin.event_of(i) for i in items), read_at=now, page_url=self.page_url, more=more
        )

    # --- admin --------------------------------------------------------------------------

    async def _list_pending(self, message: ListPending, peer: PeerCred) -> PendingList:
        async with self._db:
            rows = await approvals.list_pending(self._conn)
            ended = await approvals.list_recent_not_run(self._conn)
            now = await db_now(self._conn)
        fresh = [r for r in rows if r.expires_at is None or r.expires_at > now]
        return PendingList(
            items=tuple(admin.summary_of(r) for r in fresh), not_run=tuple(admin.summary_of(r) for r in ended)
        )

    async def _inspect(self, message: InspectProposal, peer: PeerCred) -> Inspection:
        """The executor's Inspect of a stored proposal, relayed unchanged (operators only).

        Raises:
            IntakeRefused: the executor's refusal (``proposal_not_found``, ``store_busy``), or
                ``service_unavailable`` / ``service_no_answer``.
        """
        try:
            return await self._executor.inspect(message.proposal_id)
        except CallError as exc:
            raise IntakeRefused(exc.code, visible(exc.message, 400)) from exc

    async def _show(self, message: ShowProposal, peer: PeerCred) -> ProposalDetail:
        async with self._db:
            row = await approvals.get_proposal(self._conn, message.proposal_id)
            status = await approvals.proposal_state(self._conn, message.proposal_id)
            now = await db_now(self._conn)
        if row is None:
            raise IntakeRefused(Code.PROPOSAL_NOT_FOUND, f"no proposal {visible(message.proposal_id, 40)}")
        return admin.detail_of(row, status, now=now)

    async def _deny(self, message: Deny, peer: PeerCred) -> ProposalState:
        async with self._db:
            denied = await approvals.deny(
                self._conn, message.proposal_id, actor=self._actor(peer, message.actor)
            )
            status = await approvals.proposal_state(self._conn, message.proposal_id)
        shown = visible(message.proposal_id, 40)
        if status is None:
            raise IntakeRefused(Code.PROPOSAL_NOT_FOUND, f"no proposal {shown}", audited=True)
        if not denied:
            raise IntakeRefused(
                Code.PROPOSAL_NOT_PENDING, f"proposal {shown} is {status.status}, not pending", audited=True
            )
        return admin.state_of(status)

    async def _deny_all(self, message: DenyAll, peer: PeerCred) -> Count:
        async with self._db:
            count = await approvals.deny_all(self._conn, actor=self._actor(peer, message.actor))
        return Count(count=count)

    async def _set_kill_switch(self, message: SetKillSwitch, peer: PeerCred) -> Status:
        """Record the request, then have the executor seal it (see the module doc).

        Raises:
            IntakeRefused: a resume the executor did not seal: ``kill_switch_not_confirmed``
                (its refusal), ``service_unavailable`` / ``service_no_answer`` (not reached).
                A pause holds even then (the executor counts an unsealed request as paused).
        """
        async with self._db:
            head = await approvals.set_kill_switch(
                self._conn, message.on, actor=self._actor(peer, message.actor)
            )
        try:
            await self._executor.seal_kill_switch(
                head.seq, message.on, timeout_seconds=self._options.audit_timeout_seconds
            )
        except CallError as exc:
            if not message.on:
                raise IntakeRefused(
                    exc.code,
                    "writes stay paused: the executor did not confirm the resume"
                    f" ({exc.code}); run resume again once it answers",
                ) from exc
            logger.warning("the executor did not seal a pause (%s); it counts as paused anyway", exc.code)
        return await self._status(GetStatus(), peer)

    async def _status(self, message: GetStatus, peer: PeerCred) -> Status:
        limits = self._policy.limits
        async with self._db:
            pending = await count_pending(self._conn)
            last_hour = await count_last_hour(self._conn)
            pauses = await active_pauses(self._conn, limits)
            unsettled = await one_change.unsettled(self._conn)
            kill_switch = await approvals.kill_switch(self._conn)
        health = await self._executor_health()
        return Status(
            pending=pending,
            max_pending=limits.max_pending,
            last_hour=last_hour,
            per_hour=limits.per_hour,
            kill_switch=health.kill_switch if health is not None else kill_switch,
            executor_up=health is not None,
            fence_configured=self._settings.fence_configured,
            autonomy=str(self._policy.autonomy),
            pauses=pauses,
            unsettled=unsettled,
        )

    async def _executor_health(self) -> HealthReport | None:
        """The executor's Health (its own view of the kill switch), or None when it does not
        answer."""
        try:
            return await self._executor.health(timeout_seconds=self._options.health_timeout_seconds)
        except CallError:
            return None

    async def _audit_tail(self, message: AuditTail, peer: PeerCred) -> AuditRows:
        if not 1 <= message.limit <= admin.MAX_AUDIT_TAIL:
            raise IntakeRefused(Code.INVALID_MESSAGE, f"limit must be 1 to {admin.MAX_AUDIT_TAIL}")
        async with self._db:
            return AuditRows(rows=await admin.audit_tail(self._conn, message.limit))

    async def _audit_verify(self, message: AuditVerify, peer: PeerCred) -> AuditReport:
        """The log verified by both writers, each with its own key and anchor."""
        # Each writer walks the chain in its own process: at once, not one after the other.
        checks = tuple(await asyncio.gather(self.check_audit(), self._executor_check()))
        bad = [c for c in checks if not c.ok]
        named = [c for c in bad if c.first_bad_seq is not None]
        first = min(named, key=lambda c: c.first_bad_seq or 0) if named else (bad[0] if bad else None)
        return AuditReport(
            ok=not bad,
            rows=max(c.rows for c in checks),
            first_bad_seq=first.first_bad_seq if first else None,
            reason=f"{first.writer}: {first.reason}" if first else None,
            checks=checks,
        )

    async def check_audit(self) -> WriterCheck:
        """The log verified with approval_web's own key (its rows' MACs) and anchor."""
        if self.witness is not None:
            async with self._db:
                await self.witness.observe(self._conn)
        anchors = self.witness.anchors if self.witness is not None else ()
        # The walk takes the store lock one chunk at a time: the page keeps serving meanwhile.
        result = await verify_audit(self._conn, anchors=anchors, lock=self._db)
        anchor = self.witness.anchor if self.witness is not None else None
        return WriterCheck(
            writer=APPROVAL_WEB,
            ok=result.ok,
            rows=result.rows,
            signed=result.signed_by(APPROVAL_WEB),
            first_bad_seq=result.first_bad_seq,
            reason=result.reason,
            anchor_seq=anchor.seq if anchor is not None else None,
        )

    async def _executor_check(self) -> WriterCheck:
        """The executor's own verification, or a failed check saying why it is missing."""
        try:
            return await self._executor.check_audit(timeout_seconds=self._options.audit_timeout_seconds)
        except CallError as exc:
            why = f"not checked: the executor did not answer ({exc.code}); only it holds its key"
            return WriterCheck(writer=EXECUTOR, ok=False, rows=0, reason=why)
