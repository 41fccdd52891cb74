"""What every executor operation shares: settings, the store connection (one lock, as a
connection runs one transaction at a time), the binding key, the clock, the call timeout, and
the fresh policy each operation loads, and the warm sandbox connection every operation uses.

The policy is loaded afresh for each operation (two small files), so Execute judges the
policy in force *now* ("still proposes this tool at this schema version"), not the one the
process started with; a policy that no longer loads fails closed (``policy_invalid``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import aiosqlite

from services.executor import ExecutorError
from services.executor.checks import (
    Fence,
    Observed,
    Proposed,
    Refusal,
    fence_refusal,
    policy_refusal,
    state_refusal,
)
from services.executor.facts import secret_digest
from services.executor.kill_switch import paused
from services.executor.world import SandboxReader, sandbox_connection, sandbox_session
from shared.binding import BoundRecord
from shared.config import Settings
from shared.epiphan.signed_session import SignedConnection
from shared.errors import Code
from shared.policy.loader import POLICY_FILE, TOOL_POLICY_FILE, Policy, PolicyError, ToolPolicy, load_policies
from shared.store.audit_seal import AuditKey
from shared.store.audit_witness import Witness

DEFAULT_CALL_TIMEOUT_SECONDS = 20.0
"""Bound on each Epiphan call (reads and the write), seconds."""


def utc_now() -> datetime:
    """The executor's clock: local UTC time (decides event windows and ``until``)."""
    return datetime.now(UTC)


def db_time(moment: datetime) -> str:
    """`moment` in the database clock's text form, ``YYYY-MM-DDTHH:MM:SS.SSSZ`` (UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def policy_signature(policy_dir: Path, override: Path | None) -> tuple[object, ...]:
    """(path, SHA-256 of its bytes) of each policy file ((path, None) when unreadable)."""
    paths = [policy_dir / POLICY_FILE, policy_dir / TOOL_POLICY_FILE, *([override] if override else [])]
    out: list[object] = []
    for path in paths:
        try:
            out.append((str(path), hashlib.sha256(path.read_bytes()).hexdigest()))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Standing:
    """The checks that need no read, in Execute's order (policy, fence, kill switch): the policy
    in force, the checked call (None when the policy refuses it) and the first refusal."""

    policy: Policy
    tool_policy: ToolPolicy
    proposed: Proposed | None
    refusal: Refusal | None

    def state_refusal(self, record: BoundRecord, seen: Observed) -> Refusal | None:
        """`checks.state_refusal` of the checked call under this policy (it passed: `proposed`)."""
        assert self.proposed is not None
        return state_refusal(
            record,
            self.proposed,
            tool_policy=self.tool_policy,
            lead_minutes=self.policy.lead_minutes,
            seen=seen,
        )


@dataclass
class Runtime:
    """The executor's shared state. `key` is the binding key (memory only); `audit_key` its own
    audit key (the one `conn` signs with; it also seals the kill switch) and `witness` its
    anchor (`shared.store.audit_witness`); `db` serialises use of `conn`; `clock` is injectable for
    tests of the pure parts."""

    settings: Settings
    conn: aiosqlite.Connection
    key: bytes
    audit_key: AuditKey | None = None
    witness: Witness | None = None
    call_timeout_seconds: float = DEFAULT_CALL_TIMEOUT_SECONDS
    clock: Callable[[], datetime] = utc_now
    db: asyncio.Lock = field(default_factory=asyncio.Lock)
    _policy_cache: tuple[tuple[object, ...], tuple[Policy, ToolPolicy]] | None = field(
        default=None, repr=False
    )
    _sandbox: SignedConnection = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._sandbox = sandbox_connection(
            self.settings.sandbox_token_file,
            self.settings.epiphan_mcp_url,
            timeout_seconds=self.call_timeout_seconds,
        )

    @property
    def fence(self) -> Fence:
        return Fence(frozenset(self.settings.write_device_ids), self.settings.write_team_id)

    async def policies(self) -> tuple[Policy, ToolPolicy]:
        """The policy files as they are now: loaded again whenever a file's bytes changed since
        the last load (reading and hashing them is cheap; a load takes ~0.1 s).

        Raises:
            ExecutorError: ``policy_invalid`` (fail closed), naming the file and line.
        """
        signature = policy_signature(self.settings.policy_dir, self.settings.policy_override)
        if self._policy_cache is not None and self._policy_cache[0] == signature:
            return self._policy_cache[1]
        try:
            loaded = await asyncio.to_thread(
                load_policies, self.settings.policy_dir, self.settings.policy_override
            )
        except PolicyError as exc:
            self._policy_cache = None
            raise ExecutorError(Code.POLICY_INVALID, f"The policy no longer loads: {exc.message}") from exc
        self._policy_cache = (signature, loaded)
        return loaded

    async def standing(self, record: BoundRecord) -> Standing:
        """Policy (autonomy, the tool at the record's schema version, the arguments), fence and
        kill switch for a sealed `record`, as they are now.

        Raises:
            ExecutorError: ``policy_invalid``.
        """
        policy, tool_policy = await self.policies()
        proposed = policy_refusal(
            record.tool,
            record.arguments,
            policy=policy,
            tool_policy=tool_policy,
            schema_version=record.schema_version,
        )
        refusal = proposed if isinstance(proposed, Refusal) else fence_refusal(self.fence)
        if refusal is None:
            if await paused(self):
                refusal = Refusal(
                    Code.KILL_SWITCH_ON, "Writes are paused (the kill switch is on); nothing ran."
                )
        return Standing(policy, tool_policy, None if isinstance(proposed, Refusal) else proposed, refusal)

    def sandbox(self) -> contextlib.AbstractAsyncContextManager[SignedConnection]:
        """The sandbox sign-in's warm connection for one operation (``async with``): the slot
        read again first, refreshed when its token ended, the MCP session kept while the token
        is the same (`services.executor.world.sandbox_session`). Raises `ExecutorError`
        (``no_sign_in``) on entering."""
        return sandbox_session(self._sandbox)

    async def close(self) -> None:
        """Close the warm sandbox session (the executor stops)."""
        await self._sandbox.close()

    def reader(self, session: SignedConnection, tool_policy: ToolPolicy) -> SandboxReader:
        """Fresh, guarded reads over `session` (the policy's read list); stream endpoints carry
        their secret digest under the binding key; the server's tool list held to the policy's
        reviewed definitions (`shared.policy.definitions`)."""
        return SandboxReader(
            session, tool_policy.read_tools, self.clock, secret_digest(self.key), pins=tool_policy
        )
