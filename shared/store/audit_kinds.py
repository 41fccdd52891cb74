"""Every kind of audit row Fleetwatch writes.

What a row of each kind records, for a person, is the catalogue's (keyed entries under the
context ``audit row``, English and Spanish: `shared.text.catalogue.Lexicon`). The operator's
guides list exactly these (a test holds the guides, the catalogue and the code that writes rows
to this table: ``tests/test_docs_drift.py``). Who wrote a row is its actor; which service's key
signed it, its writer (`shared.store.audit_seal.writer_of`).
"""

from __future__ import annotations

from typing import Final

AUDIT_KINDS: Final = frozenset(
    {
        "proposal",
        "refusal",
        "session_start",
        "approval",
        "first_approval",
        "denial",
        "expiry",
        "execution_start",
        "outcome",
        "verification",
        "kill_switch",
        "kill_switch_sealed",
        "proposal_repeated",
        "denial_lift",
        "acknowledgement",
        "ask",
        "ask_session_start",
        "watch_silence",
    }
)
"""Every audit row kind."""
