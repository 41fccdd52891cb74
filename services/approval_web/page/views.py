"""The page's handlers: the secret form, the card, Approve, Deny and Deny all.

- ``GET /``: without a session, the secret form. With one: the oldest pending proposal's
  card, built from the store and a fresh Inspect (`card.build_card`), "N more waiting", the
  queue and hourly-cap counts and this session's approvals. A card that may be approved is
  recorded as shown (`shared.approvals.create_approval`: the approval, 5 minutes on the
  database clock); the page reloads itself when it expires. Nothing else changes on a GET.
- ``POST /login``: the secret, slowed per address (`throttle`); right: a new session cookie.
- ``POST /approve``: session, token (bound to session, proposal and approval); a disruptive
  change first shows a second step naming the room, with a tick box; then
  `consume_approval` (one statement), then Execute, then the outcome in plain words.
- ``POST /deny``, ``POST /deny-all``: session and token, then `deny` / `deny_all`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import aiosqlite
from aiohttp import web

from services.approval_web.limits import active_pauses, count_last_hour, count_pending
from services.approval_web.page import guards, outcome
from services.approval_web.page.card import Card, build_card, show_time
from services.approval_web.page.context import COOKIE, client_of, page_of, refuse, render
from services.approval_web.page.executor_client import ExecutorError
from services.approval_web.page.sessions import Session, find_session, start_session
from shared import approvals
from shared.approvals import ApprovalError, ApprovalRow, ProposalRow
from shared.errors import Code
from shared.messages import Inspection
from shared.store import db_now

EMPTY_REFRESH_SECONDS = 15
"""How often the page looks for a new proposal while none is waiting."""


@dataclasses.dataclass(frozen=True, slots=True)
class QueueView:
    pending: int
    max_pending: int
    last_hour: int
    per_hour: int
    kill_switch: bool
    pauses: tuple[Any, ...]

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
    )


async def _session(request: web.Request, conn: aiosqlite.Connection) -> Session | None:
    token = request.cookies.get(COOKIE)
    if not token or len(token) > 200:
        return None
    return await find_session(conn, guards.session_id(page_of(request).session_key, token))


async def _form(request: web.Request) -> dict[str, str] | None:
    """The posted form's text fields, or None when the body is over the cap."""
    try:
        data = await request.post()
    except web.HTTPRequestEntityTooLarge:
        return None
    return {k: v for k, v in data.items() if isinstance(v, str)}


def _seconds_until(later: str, now: str) -> int:
    def parse(text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return max(0, int((parse(later) - parse(now)).total_seconds()))


def _expiry(approval: ApprovalRow | None, now: str) -> dict[str, Any]:
    """The card's expiry as shown, and the reload when it passes (the only countdown)."""
    if approval is None:
        return {"expires_at": None, "refresh_seconds": EMPTY_REFRESH_SECONDS * 2}
    return {
        "expires_at": show_time(approval.expires_at),
        "refresh_seconds": _seconds_until(approval.expires_at, now) + 1,
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
        inspection = await page_of(request).executor.inspect(proposal.id)
    except ExecutorError as exc:
        return _card(request, proposal, None, exc.raw_code)
    return _card(request, proposal, inspection, None)


def _tokens(
    request: web.Request, session: Session, proposal_id: str, approval_id: str | None
) -> dict[str, str]:
    key = page_of(request).form_key
    out = {
        "deny": guards.form_token(key, "deny", session.id, proposal_id),
        "deny_all": guards.form_token(key, "deny_all", session.id),
    }
    if approval_id is not None:
        out["approve"] = guards.form_token(key, "approve", session.id, proposal_id, approval_id)
    return out


def _confirm_value(proposal: ProposalRow) -> str:
    return "room:" + ",".join(proposal.targets)


async def index(request: web.Request) -> web.StreamResponse:
    async with page_of(request).connect() as conn:
        session = await _session(request, conn)
        if session is None:
            return render(request, "login.html", wait_seconds=None, wrong=False)
        now = await db_now(conn)
        pending = [
            p for p in await approvals.list_pending(conn) if p.expires_at is None or p.expires_at > now
        ]
        queue = await _queue(request, conn)
        common = {
            "session": session,
            "queue": queue,
            "deny_all_token": _tokens(request, session, "", None)["deny_all"],
        }
        if not pending:
            return render(request, "empty.html", refresh_seconds=EMPTY_REFRESH_SECONDS, **common)
        proposal = pending[0]
        card = await _fresh_card(request, proposal)
        approval = None
        if card.can_approve:
            try:
                approval = await approvals.create_approval(
                    conn,
                    proposal_id=proposal.id,
                    session_id=session.id,
                    card_hash=card.card_hash,
                    ttl_seconds=page_of(request).policy.limits.approval_ttl_seconds,
                )
            except ApprovalError:  # decided or expired meanwhile: show the queue again
                raise web.HTTPSeeOther("/") from None
        return render(
            request,
            "card.html",
            card=card,
            approval=approval,
            more=len(pending) - 1,
            tokens=_tokens(request, session, proposal.id, approval.id if approval else None),
            **_expiry(approval, now),
            **common,
        )


async def login(request: web.Request) -> web.StreamResponse:
    page = page_of(request)
    client, now = client_of(request), page.clock()
    form = await _form(request)
    if form is None:
        return await refuse(request, Code.BODY_TOO_LARGE)
    wait = page.throttle.wait_left(client, now)
    if wait > 0:
        return await _refuse_login(request, Code.SLOW_DOWN, wait)
    if not page.secret.matches(form.get("secret", "")):
        return await _refuse_login(request, Code.SECRET_WRONG, page.throttle.failed(client, now))
    page.throttle.succeeded(client)
    token = guards.new_session_token()
    async with page.connect() as conn:
        await start_session(conn, guards.session_id(page.session_key, token), client=client)
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
    return response


async def _refuse_login(request: web.Request, code: Code, wait: float) -> web.Response:
    wait_seconds = int(wait + 0.999) or None
    return await refuse(
        request, code, wait_seconds=wait_seconds, template="login.html", wrong=code is Code.SECRET_WRONG
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
    if session is None:
        return await refuse(request, Code.SECRET_REQUIRED, conn=conn)
    bound = [form.get(name, "") for name in bound_names]
    if not guards.token_ok(page_of(request).form_key, form.get("token"), action, session.id, *bound):
        return await refuse(request, Code.CSRF_FAILED, conn=conn)
    return session, form


async def approve(request: web.Request) -> web.StreamResponse:
    page = page_of(request)
    async with page.connect() as conn:
        checked = await _checked(request, conn, "approve", "proposal_id", "approval_id")
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        proposal_id, approval_id = form["proposal_id"], form["approval_id"]
        proposal = await approvals.get_proposal(conn, proposal_id)
        if proposal is None:  # the token was made for it, so this is a deleted row
            return _outcome(request, outcome.nothing_ran(Code.PROPOSAL_NOT_FOUND), session, status=409)
        disruptive = page.tool_policy.is_disruptive(proposal.tool, proposal.arguments)
        # The second step naming the room; a proposal no longer pending goes straight to the
        # consume below, which refuses it (with its audit row).
        if (
            disruptive
            and proposal.status == "pending"
            and form.get("confirm_room") != _confirm_value(proposal)
        ):
            return await _confirm_step(request, conn, session, proposal, approval_id)
        consumed = await approvals.consume_approval(conn, approval_id, session_id=session.id)
        if not consumed.ok:
            shown = outcome.nothing_ran(str(consumed.code), proposal_id)
            return _outcome(request, shown, session, status=409)
        try:
            report = await page.executor.execute(approval_id)
            shown = outcome.from_report(report)
        except ExecutorError as exc:
            shown = await _after_error(conn, exc, approval_id, proposal_id)
        session = await find_session(conn, session.id) or session
        return _outcome(request, shown, session)


async def _after_error(
    conn: aiosqlite.Connection, exc: ExecutorError, approval_id: str, proposal_id: str
) -> outcome.Outcome:
    """Execute did not answer with a report: "nothing ran" only when the executor provably never
    took the approval (not reached, and no execution recorded for it); else "may or may not"."""
    if (
        exc.code is Code.SERVICE_UNAVAILABLE
        and await approvals.execution_for_approval(conn, approval_id) is None
    ):
        return outcome.nothing_ran(exc.raw_code, proposal_id)
    return outcome.after_transport_error(
        exc.raw_code if exc.code is not Code.SERVICE_UNAVAILABLE else Code.SERVICE_NO_ANSWER, proposal_id
    )


async def _confirm_step(
    request: web.Request,
    conn: aiosqlite.Connection,
    session: Session,
    proposal: ProposalRow,
    approval_id: str,
) -> web.Response:
    approval = await approvals.get_approval(conn, approval_id)
    card = await _fresh_card(request, proposal)
    return render(
        request,
        "confirm.html",
        card=card,
        approval_id=approval_id,
        confirm_value=_confirm_value(proposal),
        tokens=_tokens(request, session, proposal.id, approval_id),
        session=session,
        **_expiry(approval, await db_now(conn)),
    )


def _outcome(
    request: web.Request, shown: outcome.Outcome, session: Session, *, status: int = 200
) -> web.Response:
    return render(request, "outcome.html", status=status, outcome=shown, session=session)


async def deny(request: web.Request) -> web.StreamResponse:
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "deny", "proposal_id")
        if isinstance(checked, web.Response):
            return checked
        session, form = checked
        await approvals.deny(conn, form["proposal_id"], actor=f"page {session.id}")
    raise web.HTTPSeeOther("/")


async def deny_all(request: web.Request) -> web.StreamResponse:
    async with page_of(request).connect() as conn:
        checked = await _checked(request, conn, "deny_all")
        if isinstance(checked, web.Response):
            return checked
        session, _ = checked
        await approvals.deny_all(conn, actor=f"page {session.id}")
    raise web.HTTPSeeOther("/")
