"""A language is chosen as a person names it (issue 28, item 5): any case, a locale, a name, and
the system locale when ``FLEETWATCH_LANGUAGE`` is unset."""

from __future__ import annotations

import pytest

from shared.config import ConfigError, load_settings
from shared.language_tags import parse_language, system_language


@pytest.mark.parametrize(
    ("raw", "language"),
    [
        ("es", "es"),
        ("ES", "es"),
        (" Es ", "es"),
        ("es-419", "es"),
        ("es_ES.UTF-8", "es"),
        ("es_MX@euro", "es"),
        ("Spanish", "es"),
        ("español", "es"),
        ("EN", "en"),
        ("en_US.UTF-8", "en"),
        ("English", "en"),
        ("fr", None),
        ("fr_FR.UTF-8", None),
        ("C.UTF-8", None),
        ("POSIX", None),
        ("", None),
        ("esperanto", None),
    ],
)
def test_a_language_is_read_in_any_case_as_a_tag_a_locale_or_a_name(raw: str, language: str | None) -> None:
    assert parse_language(raw) == language


def test_the_system_locale_is_read_as_posix_orders_its_variables() -> None:
    assert system_language({"LANG": "es_ES.UTF-8"}) == "es"
    assert system_language({"LC_MESSAGES": "es_MX.UTF-8", "LANG": "en_US.UTF-8"}) == "es"
    assert system_language({"LC_ALL": "C.UTF-8", "LC_MESSAGES": "es_MX.UTF-8"}) is None
    assert system_language({"LC_ALL": "", "LANG": "es_AR.UTF-8"}) == "es"
    assert system_language({}) is None


def test_the_commands_language_follows_the_locale_unless_fleetwatch_language_says_otherwise(tmp_path) -> None:
    home = {"HOME": str(tmp_path)}
    assert load_settings({**home, "LANG": "es_ES.UTF-8"}).language == "es"
    assert load_settings({**home, "LANG": "C.UTF-8"}).language == "en"
    assert load_settings({**home, "LANG": "fr_FR.UTF-8"}).language == "en"
    assert load_settings({**home, "LANG": "es_ES.UTF-8", "FLEETWATCH_LANGUAGE": "en"}).language == "en"
    assert load_settings({**home, "FLEETWATCH_LANGUAGE": "ES"}).language == "es"
    assert load_settings({**home, "FLEETWATCH_LANGUAGE": "Spanish"}).language == "es"
    with pytest.raises(ConfigError) as caught:
        load_settings({**home, "FLEETWATCH_LANGUAGE": "fr"})
    assert caught.value.name == "FLEETWATCH_LANGUAGE" and "'fr'" in caught.value.message
