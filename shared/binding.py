"""The bound record and its seal (DESIGN §4). Pure functions, no I/O, no clock.

At proposal time the executor resolves every target to a master ID on the sandbox team's
fresh device list, takes the state fingerprint, and seals the record below with an HMAC key it
made at start (`new_binding_key`) and keeps only in memory. At run time it verifies the seal
before anything else, so a record changed in the store, or sealed by an earlier executor, is
refused (`Code.SEAL_INVALID`, raised by the executor, not here).

The sealed bytes are `record_bytes(record)`: the canonical JSON (`shared.canonical`) of the
record's fields. The record is the only thing sealed; display text (names, titles) never is.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

import msgspec

from shared.canonical import CanonicalError, canonical_json, canonicalize_arguments, parse_json_strict
from shared.errors import Code
from shared.ids import is_master_id

BINDING_KEY_BYTES = 32
SANDBOX_SLOT = "sandbox"


class TargetState(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One target's state fingerprint, read from Epiphan at proposal time and again at run time.

    Attributes:
        online: the device reports online.
        recording: any channel of the device is recording.
        next_event_start: the current or next CMS event's start, UTC ``YYYY-MM-DDTHH:MM:SSZ``
            as Epiphan gives it, or None when the device has no such event.
    """

    online: bool
    recording: bool
    next_event_start: str | None


Fingerprint = Mapping[str, TargetState]
"""master ID -> `TargetState`, with exactly the record's targets as keys."""


class BoundRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What a person approves and the executor runs, sealed by the executor's binding key.

    Attributes:
        proposal_id: the proposal's ID.
        tool: the Epiphan write tool, e.g. ``batch_reboot``.
        arguments: the canonical arguments (`shared.canonical.canonicalize_arguments`).
        targets: resolved master IDs, sorted, unique, each a master ID (`shared.ids.is_master_id`).
        fingerprint: master ID -> `TargetState`; its keys are exactly `targets`.
        schema_version: the reviewed argument schema's version for `tool`.
        slot: the sign-in slot that will run it; always ``"sandbox"`` today.
        reason: the model's reason, as written (display only, but bound so it cannot change).

    Construction (and decoding) checks the invariants above and raises `CanonicalError`
    (`not_canonicalizable`, path ``record``) when one fails. It does not canonicalise
    `arguments`; `make_bound_record` does.
    """

    proposal_id: str
    tool: str
    arguments: dict[str, Any]
    targets: tuple[str, ...]
    fingerprint: dict[str, TargetState]
    schema_version: int
    slot: str = SANDBOX_SLOT
    reason: str

    def __post_init__(self) -> None:
        problem = _record_problem(self)
        if problem is not None:
            raise CanonicalError(Code.NOT_CANONICALIZABLE, "record", problem)


def _record_problem(record: BoundRecord) -> str | None:
    if not record.proposal_id or not record.tool or not record.slot:
        return "proposal_id, tool and slot must not be empty"
    if list(record.targets) != sorted(set(record.targets)):
        return "targets must be sorted and unique"
    if not record.targets:
        return "a bound record needs at least one target"
    bad = [t for t in record.targets if not is_master_id(t)]
    if bad:
        return f"not a master ID: {bad[0]!r}"
    if set(record.fingerprint) != set(record.targets):
        return "fingerprint keys must be exactly the targets"
    return None


def make_bound_record(
    *,
    proposal_id: str,
    tool: str,
    arguments: Mapping[str, Any],
    targets: list[str] | tuple[str, ...] | frozenset[str],
    fingerprint: Mapping[str, TargetState],
    schema_version: int,
    reason: str,
    slot: str = SANDBOX_SLOT,
) -> BoundRecord:
    """Build a `BoundRecord`, sorting and de-duplicating `targets`.

    `arguments` go through `canonicalize_arguments` (without defaults: the caller filled the
    tool's defaults already; canonicalising twice changes nothing).

    Raises:
        CanonicalError: `not_canonicalizable` when an invariant of `BoundRecord` fails;
            `hidden_character` or `not_canonicalizable` for bad arguments.
    """
    return BoundRecord(
        proposal_id=proposal_id,
        tool=tool,
        arguments=canonicalize_arguments(arguments),
        targets=tuple(sorted(set(targets))),
        fingerprint=dict(fingerprint),
        schema_version=schema_version,
        slot=slot,
        reason=reason,
    )


def record_bytes(record: BoundRecord) -> bytes:
    """The canonical JSON bytes of `record`: what is sealed, and what the store keeps."""
    return canonical_json(msgspec.to_builtins(record))


def record_from_bytes(data: bytes) -> BoundRecord:
    """Read a record back from `record_bytes` output (e.g. the store's ``bound_record``).

    Raises:
        CanonicalError: `not_canonicalizable` when `data` is not strict JSON, does not fit
            `BoundRecord`, or is not byte-for-byte the canonical form of what it decodes to.
    """
    value = parse_json_strict(data)
    try:
        record = msgspec.convert(value, BoundRecord)
    except msgspec.ValidationError as exc:
        raise CanonicalError(Code.NOT_CANONICALIZABLE, "record", str(exc)) from exc
    if record_bytes(record) != bytes(data):
        raise CanonicalError(Code.NOT_CANONICALIZABLE, "record", "stored record is not in canonical form")
    return record


def new_binding_key() -> bytes:
    """A fresh HMAC key: `BINDING_KEY_BYTES` (32) random bytes from the OS. Keep it in memory."""
    return secrets.token_bytes(BINDING_KEY_BYTES)


def seal(record: BoundRecord, key: bytes) -> str:
    """HMAC-SHA256 of `record_bytes(record)` under `key`, as 64 lowercase hex characters."""
    return hmac.new(key, record_bytes(record), hashlib.sha256).hexdigest()


def verify_seal(record: BoundRecord, seal_hex: str, key: bytes) -> bool:
    """True only if `seal_hex` is `seal(record, key)`; compared in constant time."""
    if not isinstance(seal_hex, str):
        return False
    expected = seal(record, key).encode("ascii")
    return hmac.compare_digest(expected, seal_hex.encode("utf-8", "replace"))


def fingerprint_hash(fingerprint: Fingerprint) -> str:
    """SHA-256 hex of the canonical JSON of `fingerprint` (master ID -> state); key order
    does not matter. Stored beside the proposal so a changed state is easy to spot."""
    return hashlib.sha256(canonical_json(msgspec.to_builtins(dict(fingerprint)))).hexdigest()
