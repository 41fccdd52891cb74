"""The kill switch as the executor trusts it: only a state the executor sealed itself.

An operator's ``pause``/``resume`` is recorded by approval_web (a ``kill_switch`` audit row
``{on}`` under its key; the page shows the state these rows give,
`shared.store.approvals.kill_switch`), which then asks the executor to seal it
(`SealKillSwitch`). The executor checks that the request row exists, says the same, and is the
newest request; then, in one transaction, it writes its own ``kill_switch_sealed`` audit row
``{on, request_seq}`` and ``kv['kill_switch_seal']`` = ``{on, request_seq, row_seq, mac}``, the
MAC under its own audit key; after the commit it keeps ``row_seq`` as its high-water mark in
``<FLEETWATCH_KEYS_DIR>/kill-switch.json`` (outside the store).

`paused` answers Execute's question "may a write run?", failing closed: writes are paused unless
a seal exists whose MAC verifies, which is not older than the high-water mark, whose own row is
there as the executor signed it, and whose request is still the newest ``kill_switch`` row, and
that seal says off. Nothing at all (a new install, never paused) is off. So:

- a pause recorded while the executor was down pauses at once (an unsealed newer request);
- writes resume only once the executor sealed the resume (``kill_switch_not_confirmed``
  otherwise);
- a store writer that adds an "off" request, forges a seal, deletes the pause row or puts back
  an old "off" seal gets paused writes, never running ones.

Pure parts: `judge` decides from the facts `read_facts` gathers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any, Final, Protocol

import aiosqlite
import msgspec

from services.executor import ExecutorError
from shared.config import Settings
from shared.errors import Code, FleetwatchError
from shared.private_files import read_private, write_private
from shared.store.approval_rows import EXECUTOR_ACTOR, KILL_SWITCH_KIND, KILL_SWITCH_SEALED_KIND, one_row
from shared.store.audit_seal import APPROVAL_WEB, EXECUTOR, AuditKey
from shared.store.audit_witness import Witness
from shared.store.db import append_audit, write_tx

log = logging.getLogger(__name__)

SEAL_KEY: Final = "kill_switch_seal"
"""The ``kv`` row holding the executor's seal."""
PURPOSE: Final = "kill_switch"
HIGH_WATER_FILE: Final = "kill-switch.json"


class Holder(Protocol):
    """What the kill switch uses of the executor's shared state (`services.executor.runtime.Runtime`
    is one, without this module importing it): the store and the lock that serialises it, the
    executor's audit key and anchor, and the settings (``keys_dir``, where its mark is kept)."""

    settings: Settings
    conn: aiosqlite.Connection
    db: asyncio.Lock
    audit_key: AuditKey | None
    witness: Witness | None


class HighWater(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The newest ``kill_switch_sealed`` row this executor wrote (kept outside the store)."""

    row_seq: int


@dataclasses.dataclass(frozen=True, slots=True)
class Facts:
    """What `judge` needs, as read from the store and the executor's own files.

    Attributes:
        seal: ``kv['kill_switch_seal']`` parsed (None: missing or not JSON).
        seal_mac_ok: the seal's MAC verified under the executor's key.
        sealed_row: the audit row the seal names (``writer``, ``kind``, ``detail``, ``mac_ok``),
            or None when it is gone.
        newest_request: seq and ``on`` of the newest ``kill_switch`` request row, or None.
        high_water: the executor's own mark (0: it never sealed), or None when unreadable.
    """

    seal: dict[str, Any] | None
    seal_mac_ok: bool
    sealed_row: dict[str, Any] | None
    newest_request: tuple[int, bool] | None
    high_water: int | None


def judge(facts: Facts) -> tuple[bool, str]:
    """(paused, why) from `facts`; see the module doc. Pure."""
    if facts.high_water is None:
        return True, "the executor's own kill switch mark cannot be read"
    if facts.seal is None:
        if facts.newest_request is None and facts.high_water == 0:
            return False, "never paused"
        return True, "a kill switch request the executor has not sealed"
    if not facts.seal_mac_ok:
        return True, "the kill switch seal does not verify under the executor's key"
    seal = facts.seal
    if seal["row_seq"] < facts.high_water:
        return True, "an older kill switch seal was put back"
    row = facts.sealed_row
    if (
        row is None
        or row["writer"] != EXECUTOR
        or row["kind"] != KILL_SWITCH_SEALED_KIND
        or not row["mac_ok"]
        or row["detail"] != {"on": seal["on"], "request_seq": seal["request_seq"]}
    ):
        return True, "the executor's kill switch row is missing or changed"
    if facts.newest_request is None or facts.newest_request[0] != seal["request_seq"]:
        return True, "a newer kill switch request is not sealed, or the sealed one is gone"
    return bool(seal["on"]), "sealed on" if seal["on"] else "sealed off"


def _seal_payload(seal: dict[str, Any]) -> dict[str, Any]:
    return {"on": seal["on"], "request_seq": seal["request_seq"], "row_seq": seal["row_seq"]}


def _parse_seal(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        seal = json.loads(text)
    except ValueError:
        return None
    types = {"on": bool, "request_seq": int, "row_seq": int, "mac": str}
    if not isinstance(seal, dict) or set(seal) != set(types):
        return None
    if not all(type(seal[k]) is t for k, t in types.items()):
        return None
    return seal


def _read_high_water(rt: Holder) -> int | None:
    try:
        raw = read_private(rt.settings.keys_dir / HIGH_WATER_FILE)
    except FileNotFoundError:
        return 0
    except (FleetwatchError, OSError) as exc:
        log.error("kill switch mark unreadable: %s", exc)
        return None
    try:
        return msgspec.json.decode(raw, type=HighWater).row_seq
    except msgspec.DecodeError:
        log.error("kill switch mark is not valid")
        return None


async def read_facts(rt: Holder, key: AuditKey | None) -> Facts:
    """Gather `Facts` from the store (under ``rt.db``) and the executor's own mark."""
    async with rt.db:
        kv = await one_row(rt.conn, "SELECT value FROM kv WHERE key = ?", (SEAL_KEY,))
        seal = _parse_seal(None if kv is None else str(kv[0]))
        sealed_row = None
        if seal is not None:
            row = await one_row(
                rt.conn,
                "SELECT writer, kind, detail_json, fleetwatch_audit_check(writer, actor, hash, mac) AS mac_check"
                " FROM audit WHERE seq = ?",
                (seal["row_seq"],),
            )
            if row is not None:
                sealed_row = {
                    "writer": row["writer"],
                    "kind": row["kind"],
                    "detail": json.loads(row["detail_json"]),
                    "mac_ok": row["mac_check"] == "ok",
                }
        newest = await one_row(
            rt.conn,
            "SELECT seq, detail_json FROM audit WHERE kind = ? ORDER BY seq DESC LIMIT 1",
            (KILL_SWITCH_KIND,),
        )
    newest_request = None
    if newest is not None:
        detail = json.loads(newest["detail_json"])
        newest_request = (int(newest["seq"]), bool(detail.get("on")) if isinstance(detail, dict) else True)
    mac_ok = seal is not None and key is not None and key.seal_ok(PURPOSE, _seal_payload(seal), seal["mac"])
    return Facts(seal, mac_ok, sealed_row, newest_request, _read_high_water(rt))


async def paused(rt: Holder) -> bool:
    """True unless the executor's own valid seal says writes may run (fails closed)."""
    is_paused, why = judge(await read_facts(rt, rt.audit_key))
    if is_paused and why != "sealed on":
        log.warning("writes paused: %s", why)
    return is_paused


async def seal(rt: Holder, request_seq: int, on: bool) -> None:
    """Seal the operator's request `request_seq` (turning writes `on`/off).

    Raises:
        ExecutorError: ``kill_switch_not_confirmed`` when the row is not a ``kill_switch``
            request by approval_web saying `on`, or not the newest one, or the executor holds
            no audit key; ``store_busy``.
    """
    key = rt.audit_key
    if key is None:
        raise ExecutorError(Code.KILL_SWITCH_NOT_CONFIRMED, "the executor holds no audit key")
    async with rt.db, write_tx(rt.conn):
        row = await one_row(
            rt.conn, "SELECT writer, kind, detail_json FROM audit WHERE seq = ?", (request_seq,)
        )
        newest = await one_row(rt.conn, "SELECT max(seq) FROM audit WHERE kind = ?", (KILL_SWITCH_KIND,))
        detail = json.loads(row["detail_json"]) if row is not None else None
        if (
            row is None
            or row["kind"] != KILL_SWITCH_KIND
            or row["writer"] != APPROVAL_WEB
            or detail != {"on": on}
            or newest is None
            or newest[0] != request_seq
        ):
            raise ExecutorError(
                Code.KILL_SWITCH_NOT_CONFIRMED,
                f"audit row {request_seq} is not the newest kill switch request turning writes {'on' if on else 'off'}",
            )
        head = await append_audit(
            rt.conn,
            actor=EXECUTOR_ACTOR,
            kind=KILL_SWITCH_SEALED_KIND,
            detail={"on": on, "request_seq": request_seq},
        )
        payload = {"on": on, "request_seq": request_seq, "row_seq": head.seq}
        value = json.dumps({**payload, "mac": key.seal(PURPOSE, payload)}, sort_keys=True)
        await rt.conn.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (SEAL_KEY, value),
        )
    try:
        write_private(rt.settings.keys_dir / HIGH_WATER_FILE, msgspec.json.encode(HighWater(head.seq)))
    except (FleetwatchError, OSError) as exc:  # the seal stands; an older mark only weakens replay checks
        log.error("could not keep the kill switch mark: %s", exc)
    if rt.witness is not None:
        rt.witness.nudge()
    log.info(
        "kill switch sealed %s (request row %d, own row %d)", "on" if on else "off", request_seq, head.seq
    )
