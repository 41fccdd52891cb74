"""English and Spanish: the language from Accept-Language, the catalogue complete, and the
translated words still escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from services.approval_web.page.i18n import make_say
from services.approval_web.page.words import Words, refusal_words
from shared.text.accept_language import negotiate
from shared.text.catalogue import BABEL_CFG, LOCALES_DIR, load_translations
from tests.approval_web.page.helpers import REPO, add_proposal, page


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        (None, "en"),
        ("", "en"),
        ("es", "es"),
        ("es-419,es;q=0.9", "es"),
        ("es-MX", "es"),
        ("en-US,en;q=0.9,es;q=0.8", "en"),
        ("fr-FR,es;q=0.5,en;q=0.4", "es"),
        ("de,fr", "en"),
        ("es;q=0,en", "en"),
        ("en;q=0.2, es;q=0.7", "es"),
        ("es;q=bogus, en", "en"),
        ("x" * 5000, "en"),
    ],
)
def test_the_language_follows_accept_language(header: str | None, lang: str) -> None:
    assert negotiate(header) == lang


KEYWORDS = {
    "_": None,
    "N_": None,
    "C_": ((1, "c"), 2),
    "ngettext": (1, 2),
    "Nn_": (1, 2),
    "Cn_": ((1, "c"), 2, 3),
}
"""The markers code uses: `N_`, `C_` (with a context: the fleet words' tables), `Nn_` (a count's
forms) and a keyed plural entry (``Cn_``, from the English catalogue), and the templates'
``_``/``ngettext``."""


def extracted_with_context() -> set[tuple[str | tuple[str, ...], str | None]]:
    with BABEL_CFG.open() as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    return {
        (message, context)
        for _, _, message, _, context in extract_from_dir(
            str(REPO), method_map, options_map, keywords=KEYWORDS
        )
    }


def extracted() -> set[str | tuple[str, ...]]:
    return {message for message, _ in extracted_with_context()}


def test_every_text_of_the_page_the_command_the_fleet_words_and_the_policy_is_translated_to_spanish() -> None:
    messages = extracted_with_context()
    with (LOCALES_DIR / "es" / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        catalog = read_po(handle)
    assert len(messages) > 300
    assert ("1", "priority") in messages  # the fleet words' tables are in the catalogue (keyed)

    def translated(message: str | tuple[str, ...], context: str | None) -> bool:
        entry = catalog.get(message, context=context)
        strings = entry.string if entry is not None else ""
        return bool(strings) and all(strings if isinstance(strings, tuple) else [strings])

    assert [m for m in messages if not translated(*m)] == []
    with (LOCALES_DIR / "en" / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        english = read_po(handle)
    assert [m for m in messages if english.get(m[0], context=m[1]) is None] == []


def test_the_policy_summaries_are_in_the_catalogue() -> None:
    messages = extracted()
    assert (
        "Restart one device. It goes offline for a few minutes, and any recording or stream on it stops."
        in messages
    )


def test_translated_words_escape_their_parameters_nested_ones_included() -> None:
    say = make_say(load_translations()["es"], str)
    words = Words.of("Nothing ran: %(why)s", why=refusal_words("cross_site"))
    assert str(say(words)) == "No se ejecutó nada: la solicitud no vino de esta página."
    hostile = say(Words.of("Event %(id)s was not found.", id="<b>x</b>"))
    assert str(hostile) == "No se encontró el evento &lt;b&gt;x&lt;/b&gt;."


def test_a_text_missing_from_the_catalogue_shows_in_english(tmp_path: Path) -> None:
    say = make_say(load_translations()["es"], str)
    assert str(say(Words.of("A text nobody translated"))) == "A text nobody translated"


async def test_the_outcome_pages_record_command_keeps_the_pages_language_and_the_home(tmp_path: Path) -> None:
    """Issue 28, item 5: the Spanish outcome page's ``pending show`` hint runs, in a new terminal,
    against the same Fleetwatch and in Spanish."""
    async with page(tmp_path, home="/srv/fleetwatch") as h:
        proposal_id = await add_proposal(h.db)
        await h.login()
        _, forms = await h.card()
        location, _ = await h.decide("/approve", forms.forms["/approve"])
        async with h.client.get(f"{location}?lang=es") as response:
            spanish = await response.text()
        async with h.client.get(f"{location}?lang=en") as response:
            english = await response.text()
    assert (
        f"su registro: FLEETWATCH_HOME=/srv/fleetwatch fleetwatch pending show {proposal_id} --language es"
        in spanish
    )
    assert f"its record: FLEETWATCH_HOME=/srv/fleetwatch fleetwatch pending show {proposal_id}" in english
    assert "--language" not in english
