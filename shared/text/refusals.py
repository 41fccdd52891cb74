"""Why something was refused or could not be done, in plain words, for every code the approval
page or the ``fleetwatch`` command meets when a change is refused (the executor's checks, the
approval state, the transport). Pure.

The words are the catalogue's, keyed by the code: ``msgctxt "refusal"``, ``msgid`` the code
(`shared.text.catalogue.keyed`). `refusal_words(code)` gives the `Words`; a code without an
entry is shown as itself.
"""

from __future__ import annotations

from shared.text.catalogue import N_, Words, keyed


def refusal_words(code: str) -> Words:
    """Why, in plain words, for a stable error code; an unknown code is shown as itself."""
    return keyed("refusal", code) or Words.of(N_("error code %(code)s"), code=code)
