"""Audit keys for tests that write the store themselves (`shared.store.audit_seal`).

A test that plays approval_web next to a real approval_web process signs with that service's
own key (`service_keyring`: the key file in its ``FLEETWATCH_KEYS_DIR``, made at its first
start, or by this call when the test runs first), so the service's own verification still
holds; a test with no service signs with fresh keys (`fresh_keyring`), by default of both
writers (a unit test of the store plays both services on one connection).
"""

from __future__ import annotations

from shared.config import Settings
from shared.store.audit_seal import APPROVAL_WEB, WRITERS, AuditKey, Keyring, own_keyring


def fresh_keyring(*writers: str) -> Keyring:
    """A keyring with new keys of `writers` (default: both); nobody else holds them."""
    return Keyring(*(AuditKey.new(w) for w in writers or WRITERS))


def service_keyring(settings: Settings, writer: str = APPROVAL_WEB) -> Keyring:
    """`writer`'s own key from the service's ``FLEETWATCH_KEYS_DIR`` (made when missing)."""
    return own_keyring(settings.keys_dir, writer)
