"""Why something was refused or could not be done, in plain words, for every code the approval
page or the ``fleetwatch`` command meets when a change is refused (the executor's checks, the
approval state, the transport, the policy). Pure.

The words are the catalogue's, keyed by the code: ``msgctxt "refusal"``, ``msgid`` the code
(`shared.text.catalogue.keyed`), else the code's ``why`` entry (the sentence the assistant and
the CLI give) where it needs no numbers. `refusal_words(code)` gives the `Words`; a code without
either entry is shown as itself.
"""

from __future__ import annotations

from shared.text.catalogue import N_, Words, keyed, translations


def code_meaning(code: str) -> Words | None:
    """The catalogue's words for a stable code: its ``refusal`` entry, else its ``why`` entry
    when that sentence has no parameters (``queue_full``'s names a number); None otherwise."""
    refusal = keyed("refusal", code)
    if refusal is not None:
        return refusal
    why = keyed("why", code)
    if why is None or "%(" in why.template(translations()["en"]):
        return None
    return why


def refusal_words(code: str) -> Words:
    """Why, in plain words, for a stable error code; an unknown code is shown as itself."""
    return code_meaning(code) or Words.of(N_("error code %(code)s"), code=code)
