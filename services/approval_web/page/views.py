"""The page's handlers: the secret form, the card, Approve, Deny and Deny all.

- ``GET /``: without a session, the secret form. With one: the oldest pending proposal's
  card, built from the store and a fresh Inspect (`card.build_card`; it goes out first, and
  the page's own store reads run while the executor reads the fleet), "N more waiting", the
  queue and hourly-cap counts, this session's approvals and "Recent decisions" (the last
  `RECENT` decided proposals: change, room, who, when, outcome); after a Deny, that denial
  named at the top (``/?denied=<proposal ID>``).
- ``GET /outcome/<proposal ID>``: the proposal's outcome from the store
  (`outcome.from_decision`): change, room, outcome in words, verification with its time, who
  decided and when, what to do next. It runs nothing and writes nothing, so a reload shows
  the same. **A GET writes nothing** (a
  prefetch or a reload changes nothing): what the person sees travels with the click instead,
  in the Approve form's signed token, which binds the session, the proposal, the card's hash,
  the executor's facts hash and the time the card was shown (the database clock's). The card
  states when Approve stops working: its own window (``approval_ttl_seconds`` after it was
  shown) or the proposal's own expiry, whichever comes first; the page reloads itself then.
- ``POST /login``: the secret, slowed per uid (`shared.web.throttle`; its refusal rows capped
  per uid); right: a new session cookie, its session bound to the uid that signed in.
- Every request with a session: from the uid that signed in, else refused ``session_not_yours``
  (both uids in the audit row) and the session ended (`shared.web.page_session`).
- ``POST /approve``: session and the approve token. A disruptive change (judged from the
  proposal that will run: the one the token names) goes to the second step, the room confirm,
  which issues its own token (``confirm``); nothing is recorded yet. Otherwise: `approve`
  (one statement records the approval consumed, bound as above), then Execute carrying the
  proposal ID, card hash and facts hash, then a 303 to the outcome page. An Approve that
  cannot be consumed ran nothing: its answer (409) says why and links the outcome page.
- ``POST /confirm``: session, the confirm token and the ticked room; then as Approve.
- Any failure between Approve and the executor's answer (not reached, an error, no answer)
  ends the approval unless the executor already claimed it (`shared.store.approvals.end_unclaimed`:
  the proposal becomes ``not_run``, one audit row), so nothing can run it later.
- ``POST /deny``, ``POST /deny-all``: session and token, then `deny` (its audit row keeps the
  names the card showed) / `deny_all`, then back to the queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
from typing import Any, ClassVar

import aiosqlite
from aiohttp import web

from services.approval_web import patterns
from services.approval_web.limits import active_pauses, count_last_hour, count_pending
from services.approval_web.one_change import unsettled
from services.approval_web.page import guards, outcome
from services.approval_web.page.card import Card, build_card
from services.approval_web.page.context import ACTOR, COOKIE, client_of, page_of, refuse, render
from services.approval_web.page.sessions import Session, find_session, start_session
from shared.errors import Code
from shared.store import approvals
from shared.store.approvals import ProposalRow
from shared.store.db import db_now
from shared.text.changes import rooms_from_facts, title_words
from shared.text.display import account_name
from shared.web.forms import read_form
from shared.web.page_session import NotYours, request_uid
from shared.wire.client import CallError
from shared.wire.executor import Execute, Inspect, Inspection

log = logging.getLogger(__name__)

EMPTY_REFRESH_SECONDS = 15
"""How often the page looks for a new proposal while none is waiting."""
OUTCOME_REFRESH_SECONDS = 3
"""How often an outcome page looks again while the executor has not reported."""
RECENT = 10
"""How many decisions "Recent decisions" lists."""


@dataclasses.dataclass(frozen=True, slots=True)
class QueueView:
    pending: int
    max_pending: int
    last_hour: int
    per_hour: int
    kill_switch: bool
    pauses: tuple[Any, ...]
    unsettled: tuple[Any, ...] = ()
    observe: bool = False
    """The policy's autonomy is ``observe``: nothing may be proposed, and Execute refuses."""

    @property
    def queue_full(self) -> bool:
        return self.pending >= self.max_pending

    @property
    def cap_reached(self) -> bool:
        return self.last_hour >= self.per_hour


async def _queue(request: web.Request, conn: aiosqlite.Connection) -> QueueView:
    limits = page_of(request).policy.limits
    return QueueView(
        pending=await count_pending(conn),
        max_pending=limits.max_pending,
        last_hour=await count_last_hour(conn),
        per_hour=limits.per_hour,
        kill_switch=await approvals.kill_switch(conn),
        pauses=await active_pauses(conn, limits),
        unsettled=await unsettled(conn),
        observe=not page_of(request).policy.may_propose,
    )


async def _session(request: web.Request, conn: aiosqlite.Connection) -> Session | NotYours | None:
    """The live session the cookie names, `NotYours` when it was started by another uid than
    this request's (the session is then ended), or None."""
    token = request.cookies.get(COOKIE)
    if not token or len(token) > 200:
        return None
    found = await find_session(conn, guards.session_id(page_of(request).session_key, token))
    owners = page_of(request).owners
    if found is None or not owners.live(found.id):
        return None
    return owners.check(found.id, request_uid(request)) or found


async def _not_yours(request: web.Request, conn: aiosqlite.Connection, found: NotYours) -> web.Response:
    """Refuse a session used by another uid (it is already ended): both uids in the row."""
    signed_in = -1 if found.signed_in_uid is None else found.signed_in_uid
    return await refuse(request, Code.SESSION_NOT_YOURS, conn=conn, noted={"signed_in_uid": signed_in})


async def _form(request: web.Request) -> dict[str, str] | None:
    """The posted form's text fields (none for a body that is no readable form:
    `shared.web.forms.read_form`), or None when the body is over the cap."""
    try:
        return await read_form(request)
    except web.HTTPRequestEntityTooLarge:
        return None


def _seconds_until(later: str, now: str) -> int:
    def parse(text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return max(0, int((parse(later) - parse(now)).total_seconds()))


@dataclasses.dataclass(frozen=True, slots=True)
class Shown:
    """What the person sees, as the approve and confirm forms carry it (signed): the proposal,
    the card's hash, the executor's facts hash and when the card was shown (DB-clock text)."""

    proposal_id: str
    card_hash: str
    facts_hash: str
    shown_at: str

    FIELDS: ClassVar[tuple[str, ...]] = ("proposal_id", "card_hash", "facts_hash", "shown_at")

    def bound(self) -> tuple[str, ...]:
        return (self.proposal_id, self.card_hash, self.facts_hash, self.shown_at)

    @classmethod
    def from_form(cls, form: dict[str, str]) -> Shown:
        return cls(*(form.get(name, "") for name in cls.FIELDS))


@dataclasses.dataclass(frozen=True, slots=True)
class TwoPeople:
    """A change whose rule asks two people, as its card says it: who gave the first approval
    and when (None: nobody yet), whether it was this request's uid (then only another may give
    the second), and whether the page has fewer than two operator accounts (Deny only)."""

    first_operator: str | None
    first_at: str | None
    mine: bool
    deny_only: bool

    @property
    def may_approve(self) -> bool:
        return not (self.mine or self.deny_only)


def _approvers(request: web.Request, proposal: ProposalRow) -> int:
    rule = page_of(request).tool_policy.propose.get(proposal.tool)
    return rule.approvers if rule is not None else 1


async def _two_people(
    request: web.Request, conn: aiosqlite.Connection, proposal: ProposalRow
) -> TwoPeople | None:
    """The card's two-person state, or None for a change one person approves. Reads only."""
    if _approvers(request, proposal) < 2:
        return None
    accounts = page_of(request).operator_uids
    first = await approvals.live_first_approval(conn, proposal.id)
    uid = request_uid(request)
    return TwoPeople(
        first_operator=account_name(first.uid) if first else None,
        first_at=first.created_at if first else None,
        mine=first is not None and uid is not None and first.uid == uid,
        deny_only=accounts is not None and len(accounts) < 2,
    )


def _expiry(proposal: ProposalRow, shown: Shown | None, now: str, ttl_seconds: int) -> dict[str, Any]:
    """When Approve stops working, as the card states it, the proposal's own end when it comes
    later (``proposal_expires_at``, else None: the card names it, as the watch's notice does),
    and the reload at that moment."""
    if shown is None:
        return {"expires_at": None, "proposal_expires_at": None, "refresh_seconds": EMPTY_REFRESH_SECONDS * 2}
    ends = approvals.card_window_end(shown.shown_at, proposal.expires_at, ttl_seconds)
    later = proposal.expires_at if proposal.expires_at is not None and proposal.expires_at > ends else None
    return {
        "expires_at": ends,
        "proposal_expires_at": later,
        "refresh_seconds": _seconds_until(ends, now) + 1,
    }


def _card(
    request: web.Request, proposal: ProposalRow, inspection: Inspection | None, code: str | None
) -> Card:
    tool_policy = page_of(request).tool_policy
    return build_card(
        proposal,
        rule=tool_policy.propose.get(proposal.tool),
        disruptive=tool_policy.is_disruptive(proposal.tool, proposal.arguments),
        inspection=inspection,
        inspect_code=code,
    )


async def _fresh_card(request: web.Request, proposal: ProposalRow) -> Card:
    try:
        inspection = await page_of(request).executor.call(Inspect(proposal_id=proposal.id))
    except CallError as exc:
        return _card(request, proposal, None, str(exc.code))
    return _card(request, proposal, inspection, None)


def _drop(task: asyncio.Future[Any]) -> None:
    """Let go of a task whose answer is no longer wanted: cancelled while under way, else its
    error (if any) logged, never left for "Task exception was never retrieved"."""
    if not task.done():
        task.cancel()
    elif not task.cancelled() and (error := task.exception()) is not None:
        log.error("the card's Inspect failed too", exc_info=error)


def _tokens(request: web.Request, session: Session, proposal_id: str, shown: Shown | None) -> dict[str, str]:
    key = page_of(request).form_key
    out = {
        "deny": guards.form_token(key, "deny", session.id, proposal_id),
        "deny_all": guards.form_token(key, "deny_all", session.id),
    }
    if shown is not None:
        out["approve"] = guards.form_token(key, "approve", session.id, *shown.bound())
    return out


def _confirm_value(proposal: ProposalRow) -> str:
    return "room:" + ",".join(proposal.targets)


async def index(request: web.Request) -> web.StreamResponse:
    page = page_of(request)
    async with page.connect() as conn:
        session = await _session(request, conn)
        if isinstance(session, NotYours):
            return await _not_yours(request, conn, session)
        if session is None:
            return render(request, "login.html", wait_seconds=None, wrong=False)
        now = await db_now(conn)
        pending = [
            p for p in await approvals.list_pending(conn) if p.expires_at is None or p.expires_at > now
        ]
        # The card's fresh Inspect (the executor's reads of the fleet) goes out first; the
        # page's own store reads run while it is under way.
        inspected = asyncio.ensure_future(_fresh_card(request, pending[0])) if pending else None
        try:
            common = {
                "session": session,
                "queue": await _queue(request, conn),
                "deny_all_token": guards.form_token(page.form_key, "deny_all", session.id),
                "recent": [
                    outcome.from_decision(d, viewer_session=session.id)
                    for d in await approvals.recent_decisions(conn, limit=RECENT)
                ],
                "denied": await _denied_notice(request, conn, session),
                **await _my_decisions(request, conn),
            }
            if inspected is None:
                return render(request, "empty.html", refresh_seconds=EMPTY_REFRESH_SECONDS, **common)
            proposal = pending[0]
            two = await _two_people(request, conn, proposal)
            inspecting, inspected = inspected, None
            card = await inspecting
        finally:
            if inspected is not None:  # the page's own reads failed first: their error is raised
                _drop(inspected)
    may = card.can_approve and (two is None or two.may_approve)
    shown = Shown(proposal.id, card.card_hash, card.facts_hash, now) if may else None
    _remember(page, proposal, card)
    return render(
        request,
        "card.html",
        card=card,
        two=two,
        shown=shown,
        more=len(pending) - 1,
        tokens=_tokens(request, session, proposal.id, shown),
        **_expiry(proposal, shown, now, page.policy.limits.approval_ttl_seconds),
        **common,
    )


MY_DAYS = 7
"""The days "Your decisions" covers."""


async def _my_decisions(request: web.Request, conn: aiosqlite.Connection) -> dict[str, Any]:
    """This uid's line of the approvers' report (`services.approval_web.patterns`), or None
    when the page cannot name the uid or it decided nothing lately. Reads only."""
    threshold = page_of(request).policy.limits.min_read_seconds
    uid = request_uid(request)
    mine = None
    if uid is not None:
        report = await patterns.approver_report(conn, days=MY_DAYS, threshold_seconds=threshold)
        mine = next((line for line in report.people if line.uid == uid), None)
    return {"mine": mine, "read_seconds": threshold}


def _remember(page: Any, proposal: ProposalRow, card: Card) -> None:
    """Keep the facts of the card shown (for the approval) and its names (for a denial)."""
    if card.facts_hash and card.can_approve:
        page.facts_seen.remember(card.facts_hash, card.facts)
    names = {}
    for place in card.rooms:
        if place.name:
            names[f"device {place.device_id} name"] = place.name
        if place.channel and place.channel_name:
            names[f"device {place.device_id} channel {place.channel} name"] = place.channel_name
    if names:
        page.rooms_seen.remember(proposal.id, names)


async def _denied_notice(
    request: web.Request, conn: aiosqlite.Connection, session: Session
) -> outcome.Outcome | None:
    """After a Deny (``?denied=<ID>``): that proposal's outcome, so a stray Enter shows what was
    denied, with its room. Reads only."""
    proposal_id = request.query.get("denied", "")
    if not proposal_id or len(proposal_id) > 64:
        return None
    found = await approvals.decision(conn, proposal_id)
    if found is None or found.proposal.status != "denied":
        return None
    return outcome.from_decision(found, viewer_session=session.id)


async def outcome_page(request: web.Request) -> web.StreamResponse:
    """``GET /outcome/<proposal ID>``: what happened to that proposal, from the store. Reads
    only; a reload shows the same (see the module doc)."""
    async with page_of(request).connect() as conn:
        session = await _session(request, conn)
        if isinstance(session, NotYours):
            return await _not_yours(request, conn, session)
        if session is None:
            return render(request, "login.html", wait_seconds=None, wrong=False)
        proposal_id = request.match_info["proposal_id"]
        found = await approvals.decision(conn, proposal_id) if len(proposal_id) <= 64 else None
    if found is None:
        result = outcome.refused_click(None, Code.PROPOSAL_NOT_FOUND)
        return render(request, "outcome.html", status=404, outcome=result, session=session, refresh_seconds=0)
    shown = outcome.from_decision(found, viewer_session=session.id)
    refresh = 0 if shown.final else OUTCOME_REFRESH_SECONDS
    return render(
        request,
        "outcome.html",
        outcome=shown,
        session=session,
        refresh_seconds=refresh,
        refresh_to=request.path,
    )


async def login(request: web.Request) -> web.StreamResponse:
    page = page_of(request)
    client, uid, now = client_of(request), request_uid(request), page.clock()
    form = await _form(request)
    if form is None:
        return await refuse(request, Code.BODY_TOO_LARGE)
    wait = page.throttle.wait_left(uid, now)
    if wait > 0:
        return await _refuse_login(request, Code.SLOW_DOWN, wait, uid, now)
    if not page.secret.matches(form.get("secret", "")):
        return await _refuse_login(request, Code.SECRET_WRONG, page.throttle.failed(uid, now), uid, now)
    page.throttle.succeeded(uid)
    token = guards.new_session_token()
    session_id = guards.session_id(page.session_key, token)
    async with page.connect() as conn:
        await start_session(conn, session_id, client=client, uid=-1 if uid is None else uid)
    page.owners.bind(session_id, uid)
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
    return response


async def _refuse_login(
    request: web.Request, code: Code, wait: float, uid: int | None, now: float
) -> web.Response:
    """A wrong secret or a slow-down: its row only within the uid's cap (`refusal_row`), the
    first row after a capped stretch counting the refusals left without one."""
    wait_seconds = int(wait + 0.999) or None
    unrecorded = page_of(request).throttle.refusal_row(uid, now)
    return await refuse(
        request,
        code,
        wait_seconds=wait_seconds,
        template="login.html",
        wrong=code is Code.SECRET_WRONG,
        audited=unrecorded is not None,
        noted={"unrecorded_before": unrecorded} if unrecorded else None,
    )


async def _checked(
    request: web.Request, conn: aiosqlite.Connection, action: str, *bound_names: str
) -> tuple[Session, dict[str, str]] | web.Response:
    """The session and form of a POST whose token verifies for `action` and the form fields
    `bound_names`, or the refusal's response (``body_too_large``, ``secret_required``,
    ``csrf_failed``)."""
    form = await _form(request)
    if form is None:
        return await refuse(request, Code.BODY_TOO_LARGE, conn=conn)
    session = await _session(request, conn)
    if isinstance(session, NotYours):
        return await _not_yours(request, conn, session)
    if session is None:
        return await refuse(request, Code.SECRET_REQUIRED, conn=conn)
    bound = [form.get(name, "") for name in bound_names]
    if not guards.token_ok(page_of(request).form_key, form.get("token"), action, session.id, *bound):
        return await refuse(request, Code.CSRF_FAILED, conn=conn)
    return session, form


async def approve(request: web.Request) -> web.StreamResponse:
    """Approve: straight to `_approve_and_run`, or for a disruptive change to the room confirm."""
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "approve", *Shown.FIELDS)
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        shown = Shown.from_form(form)
        proposal = await approvals.get_proposal(conn, shown.proposal_id)
        if proposal is None:  # the token was made for it, so this is a deleted row
            return _refused(request, None, Code.PROPOSAL_NOT_FOUND, session, shown)
        # The confirm step is decided from the proposal the token names: the one that will run.
        # One no longer pending goes straight to `approve`, which refuses it (with its audit row).
        if page_of(request).tool_policy.is_disruptive(proposal.tool, proposal.arguments) and (
            proposal.status == "pending"
        ):
            return await _confirm_step(request, conn, session, proposal)
        return await _approve_and_run(request, conn, session, shown, proposal)


async def confirm(request: web.Request) -> web.StreamResponse:
    """The room confirm's own POST: its own token (only the confirm page issues it) and the
    ticked room; then `_approve_and_run`."""
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "confirm", *Shown.FIELDS)
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        shown = Shown.from_form(form)
        proposal = await approvals.get_proposal(conn, shown.proposal_id)
        if proposal is None:
            return _refused(request, None, Code.PROPOSAL_NOT_FOUND, session, shown)
        if form.get("confirm_room") != _confirm_value(proposal):
            return await _confirm_step(request, conn, session, proposal)
        return await _approve_and_run(request, conn, session, shown, proposal)


async def _approve_and_run(
    request: web.Request, conn: aiosqlite.Connection, session: Session, shown: Shown, proposal: ProposalRow
) -> web.Response:
    """Record the approval (consumed, bound to what was shown), then Execute, then a 303 to
    the outcome page (which reads what the executor recorded). `proposal` is the row the token
    names, as the handler read it on this connection (`approve` checks it in its own statement)."""
    page = page_of(request)
    approvers = _approvers(request, proposal)
    if approvers >= 2 and page.operator_uids is not None and len(page.operator_uids) < 2:
        code = Code.APPROVALS_INSUFFICIENT  # one operator account: this change is Deny-only
        await approvals.audit_refusal(
            conn, actor=ACTOR, operation="approve", code=code, proposal_id=shown.proposal_id
        )
        return _refused(request, proposal, str(code), session, shown)
    consumed = await approvals.approve(
        conn,
        proposal_id=shown.proposal_id,
        session_id=session.id,
        card_hash=shown.card_hash,
        facts_hash=shown.facts_hash,
        facts=page.facts_seen.recall(shown.facts_hash),
        shown_at=shown.shown_at,
        ttl_seconds=page.policy.limits.approval_ttl_seconds,
        uid=request_uid(request),
        approvers=approvers,
    )
    if not consumed.ok:
        proposal = await approvals.get_proposal(conn, shown.proposal_id)
        return _refused(request, proposal, str(consumed.code), session, shown)
    if consumed.first:  # the first of two people: nothing runs; the card now says who approved
        raise web.HTTPSeeOther("/")
    execute = Execute(
        approval_id=consumed.approval_id,
        proposal_id=shown.proposal_id,
        card_hash=shown.card_hash,
        facts_hash=shown.facts_hash,
    )
    try:
        await page.executor.call(execute)
    except CallError as exc:
        await _after_error(conn, exc, execute)
    raise web.HTTPSeeOther(f"/outcome/{shown.proposal_id}")


async def _after_error(conn: aiosqlite.Connection, exc: CallError, execute: Execute) -> None:
    """Execute did not answer with a report. Unless the executor already claimed the approval,
    end it now (the proposal becomes ``not_run``, one audit row): nothing can run it later, so
    "nothing ran" is then certain. A claimed one "may or may not have run": its execution row
    decides (the outcome page and ``fleetwatch pending show`` read it)."""
    ended = await approvals.end_unclaimed(
        conn,
        approval_id=execute.approval_id,
        proposal_id=execute.proposal_id,
        code=exc.code,
        message=f"Execute did not answer ({exc.code}); the approval was ended before the executor took it.",
        actor=ACTOR,
        step="execute_not_answered",
    )
    del ended  # either way the store now says what happened; the outcome page reads it


async def _confirm_step(
    request: web.Request, conn: aiosqlite.Connection, session: Session, proposal: ProposalRow
) -> web.Response:
    """The second step of a disruptive change: the card read afresh, the room named, a tick box
    and the confirm token, bound to this card as shown now (the only place that token is
    issued). Writes nothing."""
    page = page_of(request)
    now = await db_now(conn)
    card = await _fresh_card(request, proposal)
    shown = Shown(proposal.id, card.card_hash, card.facts_hash, now) if card.can_approve else None
    tokens = _tokens(request, session, proposal.id, None)
    _remember(page, proposal, card)
    if shown is not None:
        tokens["confirm"] = guards.form_token(page.form_key, "confirm", session.id, *shown.bound())
    return render(
        request,
        "confirm.html",
        card=card,
        shown=shown,
        confirm_value=_confirm_value(proposal),
        tokens=tokens,
        session=session,
        **_expiry(proposal, shown, now, page.policy.limits.approval_ttl_seconds),
    )


def _refused(
    request: web.Request, proposal: ProposalRow | None, code: str, session: Session, shown: Shown
) -> web.Response:
    """The 409 answer to an Approve that ran nothing (`code`), naming the change and the room
    as the card showed them."""
    title = None
    if proposal is not None:
        facts = proposal.recorded_names(page_of(request).facts_seen.recall(shown.facts_hash))
        rooms = rooms_from_facts(proposal.tool, proposal.arguments, proposal.targets, facts)
        title = title_words(proposal.tool, proposal.arguments, rooms)
    result = outcome.refused_click(proposal, code, title)
    return render(
        request,
        "outcome.html",
        status=409,
        outcome=result,
        session=session,
        refresh_seconds=0,
        status_link=proposal is not None,
    )


async def deny(request: web.Request) -> web.StreamResponse:
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "deny", "proposal_id")
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        proposal_id = form["proposal_id"]
        names = page_of(request).rooms_seen.recall(proposal_id)
        denied = await approvals.deny(conn, proposal_id, actor=f"page {session.id}", shown=names)
    raise web.HTTPSeeOther(f"/?denied={proposal_id}" if denied else "/")


async def deny_all(request: web.Request) -> web.StreamResponse:
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "deny_all")
        if isinstance(checked, web.Response):
            return checked
        session, _ = checked
        await approvals.deny_all(conn, actor=f"page {session.id}")
    raise web.HTTPSeeOther("/")
