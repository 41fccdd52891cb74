"""Audit MACs: each writing service's own key, the SQL functions that sign and check rows, and
the anchors each service keeps outside the store.

The audit table is a SHA-256 hash chain (`shared.store`), which anyone able to write the store
could recompute. So each row also carries a **MAC under the key of the service that wrote it**
(HMAC-SHA256 over the row's chained hash and the writer's name): the executor's rows under the
executor's key, approval_web's (its own and those it records for the assistant and operators)
under approval_web's. A key is 32 random bytes in ``<FLEETWATCH_KEYS_DIR>/<writer>.key``, a
``0600`` file of the service's user in a ``0700`` folder, made at the service's first start
and kept across restarts: on a server neither service can read the other's key, so neither can
forge, change or re-chain the other's rows (a change to any row changes every later hash, and
the later rows of the other writer then fail their MACs).

Who wrote a row is fixed by its actor (`writer_of`): actor ``executor`` is the executor's, every
other actor approval_web's; a row whose ``writer`` column disagrees does not verify.

The key never leaves its process as bytes: `install` registers SQL functions on the service's
own connection (``fleetwatch_audit_writer``, ``fleetwatch_audit_mac``,
``fleetwatch_audit_check``) that close over its `Keyring`; `shared.store.db.append_audit` signs
through them and `shared.store.db.verify_audit` checks through them. A connection without a key
can read and check the chain, but appending to the audit log fails (``internal_error``): a
process without a key writes no rows.

**Anchors**: a service also keeps, outside the store, the newest head of the chain it has seen
(``<writer>.anchor``: seq, hash, when; `shared.store.audit_witness` moves it forward). Rows removed
from the end of the log, or a whole log rewritten, leave an anchor pointing at a row that is
gone or different: verification names the first missing row.

Errors: `AuditKeyError` (``config_invalid``: an unsafe or malformed key file;
``internal_error``: signing without a key, or a row this writer may not write).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import aiosqlite
import msgspec

from shared.canonical import canonical_json
from shared.errors import Code, FleetwatchError
from shared.private_files import UnsafePath, create_private, ensure_folder, read_private, write_private

EXECUTOR: Final = "executor"
APPROVAL_WEB: Final = "approval_web"
WRITERS: Final = (APPROVAL_WEB, EXECUTOR)
"""The services that write the store's audit log, each under its own key."""
KEY_BYTES: Final = 32

_ROW_DOMAIN: Final = b"fleetwatch audit row v1\x00"
_SEAL_DOMAIN: Final = b"fleetwatch seal v1\x00"


class AuditKeyError(FleetwatchError):
    """A key file is unsafe or malformed, or a row could not be signed."""


class RowMac(enum.StrEnum):
    """What checking one row's MAC found."""

    OK = "ok"
    BAD = "bad"
    """The MAC does not match: the row was changed, or forged by someone without the key."""
    UNCHECKED = "unchecked"
    """The row's writer's key is not in this keyring (the other service checks it)."""
    UNSIGNED = "unsigned"
    """The row has no MAC (written before MACs existed, or stripped)."""
    WRONG_WRITER = "wrong_writer"
    """The row's ``writer`` is unknown or disagrees with its actor."""


def writer_of(actor: str) -> str:
    """The service whose key signs a row of `actor`: ``executor`` for the executor's own
    actor, approval_web for every other (operators, page sessions, the assistant, peers)."""
    return EXECUTOR if actor == EXECUTOR else APPROVAL_WEB


@dataclasses.dataclass(frozen=True, slots=True)
class AuditKey:
    """One writer's key. ``repr`` never shows it."""

    writer: str
    secret: bytes = dataclasses.field(repr=False)

    def __post_init__(self) -> None:
        if self.writer not in WRITERS:
            raise AuditKeyError(Code.CONFIG_INVALID, f"no audit writer called {self.writer!r}")
        if len(self.secret) != KEY_BYTES:
            raise AuditKeyError(Code.CONFIG_INVALID, f"an audit key is {KEY_BYTES} bytes")

    @classmethod
    def new(cls, writer: str) -> AuditKey:
        """A fresh key from the OS's random source."""
        return cls(writer, secrets.token_bytes(KEY_BYTES))

    def row_mac(self, row_hash: str) -> str:
        """The MAC of a row whose chained hash is `row_hash` (hex)."""
        message = _ROW_DOMAIN + self.writer.encode("ascii") + b"\x00" + row_hash.encode("ascii")
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def seal(self, purpose: str, payload: Mapping[str, Any]) -> str:
        """A MAC over `payload` (canonical JSON) for `purpose` (e.g. ``kill_switch``), kept
        apart from row MACs by its domain."""
        message = _SEAL_DOMAIN + purpose.encode("utf-8") + b"\x00" + canonical_json(dict(payload))
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def seal_ok(self, purpose: str, payload: Mapping[str, Any], mac: object) -> bool:
        """True when `mac` is `seal(purpose, payload)` (constant time)."""
        return isinstance(mac, str) and hmac.compare_digest(self.seal(purpose, payload), mac)


class Keyring:
    """The keys one connection signs and checks rows with. A service's keyring holds its own
    key only, so it can sign (and check) only its own rows; ``fleetwatch audit verify --local``
    run as root holds both to check every row, and a test playing both services may too."""

    def __init__(self, *keys: AuditKey) -> None:
        self.keys: Mapping[str, AuditKey] = {k.writer: k for k in keys}

    def __repr__(self) -> str:
        return f"Keyring(writers={sorted(self.keys)!r})"

    @property
    def writers(self) -> tuple[str, ...]:
        """The writers whose rows this keyring can sign and check."""
        return tuple(sorted(self.keys))

    def writer_for(self, actor: str) -> str:
        """The ``writer`` column of a row of `actor` signed here.

        Raises:
            AuditKeyError: ``internal_error`` when this keyring lacks the key of `actor`'s
                writer (approval_web cannot write an ``executor`` row, and back; a connection
                with no key writes no row).
        """
        writer = writer_of(actor)
        if writer not in self.keys:
            held = ", ".join(self.writers) or "no key"
            raise AuditKeyError(
                Code.INTERNAL_ERROR,
                f"an audit row of {actor!r} needs the {writer}'s key; this connection holds {held}",
            )
        return writer

    def sign(self, actor: str, row_hash: str) -> str:
        """The MAC of a row of `actor` with chained hash `row_hash` (raises as `writer_for`)."""
        return self.keys[self.writer_for(actor)].row_mac(row_hash)

    def check(self, writer: str | None, actor: str, row_hash: str, mac: str | None) -> RowMac:
        """What one row's MAC says (see `RowMac`)."""
        if mac is None and writer is None:
            return RowMac.UNSIGNED
        if writer not in WRITERS or writer != writer_of(actor):
            return RowMac.WRONG_WRITER
        if mac is None:
            return RowMac.UNSIGNED
        key = self.keys.get(writer)
        if key is None:
            return RowMac.UNCHECKED
        return RowMac.OK if hmac.compare_digest(key.row_mac(row_hash), mac) else RowMac.BAD


async def install(conn: aiosqlite.Connection, keyring: Keyring) -> None:
    """Register the audit SQL functions of `keyring` on `conn` (once, right after opening):
    ``fleetwatch_audit_writer(actor)``, ``fleetwatch_audit_mac(actor, hash)`` (both raise
    inside SQLite for a row this keyring may not sign, failing the statement) and
    ``fleetwatch_audit_check(writer, actor, hash, mac)`` (a `RowMac` value)."""
    await conn.create_function("fleetwatch_audit_writer", 1, keyring.writer_for, deterministic=True)
    await conn.create_function("fleetwatch_audit_mac", 2, keyring.sign, deterministic=True)
    await conn.create_function(
        "fleetwatch_audit_check",
        4,
        lambda writer, actor, row_hash, mac: str(keyring.check(writer, actor, row_hash, mac)),
        deterministic=True,
    )


# --- key files ------------------------------------------------------------------------------


def key_path(folder: Path, writer: str) -> Path:
    """``<folder>/<writer>.key``."""
    return folder / f"{writer}.key"


def anchor_path(folder: Path, writer: str) -> Path:
    """``<folder>/<writer>.anchor``: the newest audit head `writer` has seen."""
    return folder / f"{writer}.anchor"


def _parse_key(path: Path, writer: str, raw: bytes) -> AuditKey:
    text = raw.decode("ascii", errors="replace").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != KEY_BYTES:
        raise AuditKeyError(Code.CONFIG_INVALID, f"{path}: not an audit key ({KEY_BYTES * 2} hex digits)")
    return AuditKey(writer, secret)


def load_key(folder: Path, writer: str, *, create: bool) -> AuditKey:
    """`writer`'s key from `folder`; with `create`, made first when missing (a service at its
    first start). The folder is made ``0700`` when missing; the file is ``0600`` of this user.

    Raises:
        AuditKeyError: ``config_invalid`` when the key is missing (without `create`), unsafe
            (a symlink, another owner, readable by others) or malformed.
    """
    path = key_path(folder, writer)
    try:
        if create:
            ensure_folder(folder, 0o700)
            create_private(path, AuditKey.new(writer).secret.hex().encode("ascii") + b"\n")
        raw = read_private(path)
    except FileNotFoundError as exc:
        raise AuditKeyError(
            Code.CONFIG_INVALID, f"{path}: no audit key (the {writer} makes it at its first start)"
        ) from exc
    except UnsafePath as exc:
        raise AuditKeyError(Code.CONFIG_INVALID, exc.message) from exc
    except PermissionError as exc:
        raise AuditKeyError(Code.CONFIG_INVALID, f"{path}: this user may not read it") from exc
    return _parse_key(path, writer, raw)


def own_keyring(folder: Path, writer: str) -> Keyring:
    """The keyring of a writing service: its own key from `folder` (made at its first start),
    which it signs and checks with (raises as `load_key`)."""
    return Keyring(load_key(folder, writer, create=True))


# --- anchors --------------------------------------------------------------------------------


class Anchor(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The newest audit row a service has seen: its ``seq`` and ``hash``, when it was seen
    (database-clock text), and ``signed_from``, the first row that carried a MAC when the
    anchor was first made (every row from it on must carry one; 0: not known)."""

    seq: int
    hash: str
    seen_at: str = ""
    signed_from: int = 0


def read_anchor(path: Path) -> Anchor | None:
    """The anchor in `path`, or None when there is none yet.

    Raises:
        AuditKeyError: ``config_invalid`` when the file is unsafe or malformed.
    """
    try:
        raw = read_private(path)
    except FileNotFoundError:
        return None
    except UnsafePath as exc:
        raise AuditKeyError(Code.CONFIG_INVALID, exc.message) from exc
    try:
        return msgspec.json.decode(raw, type=Anchor)
    except msgspec.DecodeError as exc:
        raise AuditKeyError(Code.CONFIG_INVALID, f"{path}: not an audit anchor") from exc


def write_anchor(path: Path, anchor: Anchor) -> None:
    """Replace the anchor in `path` (atomically, ``0600``; its folder made ``0700`` if missing).

    Raises:
        AuditKeyError: ``config_invalid`` when the folder is unsafe.
    """
    try:
        ensure_folder(path.parent, 0o700)
        write_private(path, msgspec.json.encode(anchor) + b"\n")
    except UnsafePath as exc:
        raise AuditKeyError(Code.CONFIG_INVALID, exc.message) from exc
