"""The Spanish catalogue names one thing one way: the kill switch is always "interruptor de
parada", a device is a "dispositivo" (or a "codificador"), the fleet is "la flota" and an
Epiphan team a "grupo"; "equipo", which read as any of the three, is not used."""

from __future__ import annotations

import re

from babel.messages.pofile import read_po

from shared.text.catalogue import LOCALES_DIR


def spanish() -> list[tuple[str, str]]:
    """Every (English, Spanish text) pair of the es catalogue, plural forms one by one (the
    English of a keyed entry is the en catalogue's words)."""
    with (LOCALES_DIR / "en" / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        english = read_po(handle, locale="en")
    with (LOCALES_DIR / "es" / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        catalog = read_po(handle, locale="es")
    pairs = []
    for message in catalog:
        if not message.id:
            continue
        words = english.get(message.id, context=message.context)
        ids = [
            words.string
            if words is not None and isinstance(words.string, str) and words.string
            else message.id
        ]
        ids = ids if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        pairs += [(ids[0], s) for s in strings]
    return pairs


def test_the_kill_switch_has_one_spanish_name() -> None:
    named = [(i, s) for i, s in spanish() if "kill switch" in i.lower()]
    assert len(named) >= 7
    assert [(i, s) for i, s in named if "interruptor de parada" not in s.lower()] == []
    assert [s for _, s in spanish() if re.search(r"interruptor de (?!parada)", s, re.IGNORECASE)] == []


def test_equipo_is_not_used_a_device_is_a_dispositivo_and_the_fleet_la_flota() -> None:
    assert [s for _, s in spanish() if re.search(r"\bequipos?\b", s, re.IGNORECASE)] == []
    by_id = dict(spanish())
    assert by_id["Restart a device"] == "Reiniciar un dispositivo"
    assert by_id["no room of the fleet, as the watch last read it, matches that name"].startswith(
        "ninguna sala de la flota"
    )


def test_a_room_is_feminine_whatever_is_said_of_it() -> None:
    """The same offline room reads "desconectada" in the digest, the fleet view and the answers,
    never "desconectado" beside "desconectada" (issue 28, item 9)."""
    from shared.text.catalogue import Lexicon

    said = {
        Lexicon("finding")["es"]["offline"],
        Lexicon("fleet")["es"]["offline_word"],
    }
    assert said == {"desconectada"}
    assert Lexicon("fleet")["es"]["room_online"] == "conectada"
    rooms = [s for i, s in spanish() if re.search(r"\brooms?\b", i) and re.search(r"\bsalas?\b", s)]
    assert [s for s in rooms if re.search(r"\bsalas?\b[^.;:,]*\b(?:des)?conectados?\b", s)] == []
