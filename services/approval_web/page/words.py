"""The plain words for each code the page can meet, as catalogue messages.

`Words`, `Moment` and `N_` are the one catalogue's (`shared.text.catalogue`), re-exported here
for the page's pure modules; `services.approval_web.page.i18n.make_say` translates them when a
page renders. Parameters are escaped there; the message itself is the catalogue's trusted text.

`refusal_words(code)` (why something was refused or could not be done, in plain words, for
every code the page can meet; an unknown code is shown as itself) is `shared.text.refusals`',
shared with the ``fleetwatch`` command.
"""

from __future__ import annotations

from shared.text.catalogue import N_, Moment, Words
from shared.text.refusals import refusal_words

__all__ = ["N_", "Moment", "Words", "refusal_words"]
