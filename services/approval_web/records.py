"""approval.sock's assistant records: the assistant's audit rows (under the OS-user fence the
assistant's user cannot write the store): `RecordAsk`, `RecordRefusal`, `RecordPageSession`,
`RecordSilence`, each written as one row, actor ``assistant``. Only a uid in
``FLEETWATCH_ASSISTANT_UIDS`` may send them (their rows' ``callers``; the service checks).
"""

from __future__ import annotations

from typing import Final

import msgspec

from services.approval_web.desk import Desk, Jobs
from shared.errors import MEANINGS
from shared.store import approvals
from shared.store.db import append_audit
from shared.wire.approval import Count, RecordAsk, RecordPageSession, RecordRefusal, RecordSilence
from shared.wire.server import PeerCred

ASSISTANT_ACTOR: Final = "assistant"
"""The audit actor of the rows written for the assistant."""


async def ask(desk: Desk, message: RecordAsk, peer: PeerCred) -> Count:
    """The assistant's ``ask`` row: its counts and who asked (a uid, an ask page session) as
    sent (every field already of its form; never the question)."""
    return await _record_as_sent(desk, message, kind="ask")


async def _record_as_sent(desk: Desk, message: RecordAsk | RecordSilence, *, kind: str) -> Count:
    """One row of `kind` whose detail is the record's fields as sent."""
    detail = msgspec.to_builtins(message)
    detail.pop("op", None)
    async with desk.db:
        await append_audit(desk.conn, actor=ASSISTANT_ACTOR, kind=kind, detail=detail)
    return Count(count=1)


async def refusal(desk: Desk, message: RecordRefusal, peer: PeerCred) -> Count:
    """A refusal on assistant.sock or the ask page, recorded for the assistant (one
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
    )
    detail |= {k: v for k, v in noted if v is not None}
    async with desk.db:
        await approvals.audit_refusal(
            desk.conn,
            actor=ASSISTANT_ACTOR,
            operation=message.operation,
            code=code,
            message=f"{MEANINGS[code]} ({message.surface})",
            detail=detail,
        )
    return Count(count=1)


async def page_session(desk: Desk, message: RecordPageSession, peer: PeerCred) -> Count:
    """An ask page session began (the secret was right): one ``ask_session_start`` row."""
    detail = {"page_session": message.page_session, "uid": message.uid}
    async with desk.db:
        await append_audit(desk.conn, actor=ASSISTANT_ACTOR, kind="ask_session_start", detail=detail)
    return Count(count=1)


async def silence(desk: Desk, message: RecordSilence, peer: PeerCred) -> Count:
    """A watch silence set or lifted: one ``watch_silence`` row (who, what, why, until)."""
    return await _record_as_sent(desk, message, kind="watch_silence")


JOBS: Jobs = {
    RecordAsk: ask,
    RecordRefusal: refusal,
    RecordPageSession: page_session,
    RecordSilence: silence,
}
