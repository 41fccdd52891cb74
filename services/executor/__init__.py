"""The executor: the only process that can change a fleet, and only once per approval.

It is its own process (``python -m services.executor``) listening on ``executor.sock``
(peers: the approval_web user only, checked with ``SO_PEERCRED``). It answers Prepare,
Inspect, Execute, Health, ListWritable, Recheck, SealKillSwitch, CheckAudit and
GetCapabilities (`shared.wire.executor`).

What it holds, and nobody else:
- the **sandbox sign-in**: this package is the only code that reads the sandbox token slot
  (``settings.sandbox_token_file``; `services.executor.world.sandbox_session`), read afresh
  before each operation and each read, so a removed sign-in stops reads and writes at once; its
  MCP session stays open between operations while the token is the same;
- the **binding key**: made at start (`shared.binding.new_binding_key`), kept in memory only,
  so a restarted executor vouches for no earlier seal (every pending proposal expires at start);
- its **audit key** (``FLEETWATCH_KEYS_DIR/executor.key``, its user's alone): every audit row it
  writes carries its MAC, and it seals the kill switch with it (`shared.store.audit_seal`).

Layers (each may import the ones above it, and `shared.*`)::

    facts.py         pure: the binding facts a card shows that decide what a write does, their
                     hash, and the stream endpoints' secret digest
    checks.py        pure checks over frozen data: the seal, policy, fence, membership,
                     stream, fingerprint, event, disruptive rule -> the first Refusal
    world.py         the fresh reads through the guarded read client over the sandbox sign-in
                     (the only reader of the sandbox slot; one warm session, refreshed when its
                     token ended, a read refused in-band repeated once); a failed read is a
                     refusal code
    verify.py        pure: the postcondition each write tool should leave, judged on a read
    write_client.py  the write client: with `EpiphanReadClient`, the only caller of
                     `McpConnection.call`; one write, once, with a timeout, never retried
    executions.py    the executor's rows in the store: the claim of a consumed approval, the
                     outcome, the verification, recovery after a crash (one transaction each)
    kill_switch.py   the kill switch as the executor trusts it: only a state it sealed under
                     its own audit key (fails closed); what it uses of `Runtime` is its own
                     `Holder` type, so it never imports runtime.py
    runtime.py       what operations share: settings, store + lock, key, clock, timeouts,
                     the policy as it is now, a fresh sandbox connection
    prepare.py       Prepare: bind a proposal to the sandbox team as it is, and seal it
    inspection.py    Inspect: fresh card facts and what Execute would refuse right now
    recheck.py       the fresh read after a write that judges its postcondition, and
                     Recheck: the same read later (it settles a change that ended unknown or
                     was not verified)
    execute.py       Execute: the ordered checks, the claim, the one write, the outcome,
                     the independent verification
    writable.py      ListWritable: the devices a change may target now (sandbox list and
                     allowlist, read afresh), so targets are resolved through code
    service.py       the socket handler: Prepare, Inspect, Execute, Health, ListWritable,
                     Recheck, SealKillSwitch, CheckAudit (the log verified with its own key
                     and anchor), GetCapabilities
    __main__.py      start: settings, policy, audit key, store, migrate, anchor, key, expire,
                     recover, serve

It never imports `services.approval_web` or `services.assistant`.

Errors: `ExecutorError` (the tree is drawn in `shared.errors`).
"""

from __future__ import annotations

from shared.errors import FleetwatchError


class ExecutorError(FleetwatchError):
    """An executor operation refused or failed; ``code`` says why, ``message`` for a person."""
