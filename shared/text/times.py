"""Times a person reads: one format, in the operator's time zone, with relative time. Pure.

Every time the store, Epiphan or the executor hands over is UTC text (``2026-03-02T10:00:00Z``,
``2026-03-02T10:00:00.000Z`` or with an offset). A person reads it through `say_time` in the
operator's zone (`FLEETWATCH_TIMEZONE`, default the system's: `shared.config`'s ``timezone``), in one format:

- the same local day as now: ``09:55``;
- another day: ``Wed 2 Dec, 09:55`` (``mié 2 dic, 09:55`` in Spanish);
- within `RELATIVE_WITHIN` of now, the distance follows: ``09:55, in 23 minutes`` /
  ``09:55, hace 23 minutos``.

Formats and words come from Babel (CLDR data), imported at the first time said (a command
that says none never loads it); `shared.config` finds the zone (`zoneinfo`, the
system's through ``tzlocal``). ``--json`` output and the audit keep the UTC text untouched; this module is only
for what a person reads.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from shared.text.display import visible
from shared.text.languages import Language

RELATIVE_WITHIN: Final = dt.timedelta(hours=12)
"""A time closer to now than this also says how far it is ("in 23 minutes")."""
BABEL_LOCALE: Final[dict[str, str]] = {"en": "en", "es": "es_419"}
"""Babel's locale for each language (Latin American Spanish)."""
NUMBER_LOCALE: Final[dict[str, str]] = {"en": "en", "es": "es"}
"""Babel's locale for each language's numbers: Spanish writes a decimal comma (``2,5 GB``; the
glossary, ``docs/glossary.es.md``), which CLDR's Latin American Spanish does not."""
SAME_DAY: Final = "HH:mm"
OTHER_DAY: Final = "EEE d MMM, HH:mm"


def zone_name(zone: dt.tzinfo) -> str:
    """The zone's IANA name (``Pacific/Auckland``), for a heading that says which zone times are in."""
    return str(getattr(zone, "key", None) or zone)


def parse_utc(text: str | None) -> dt.datetime | None:
    """`text` (ISO 8601; ``Z`` or an offset; none means UTC) as an aware datetime, or None
    when it is None or does not parse."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def say_time(
    moment: dt.datetime | str | None,
    *,
    zone: dt.tzinfo,
    now: dt.datetime,
    language: Language = "en",
    relative: bool = True,
) -> str:
    """`moment` as a person reads it (see the module doc); ``—`` for None, and text that is not
    a time shown as itself, made visible.

    `now` is an aware datetime (the caller's clock: this module reads none)."""
    if moment is None or moment == "":
        return "—"
    parsed = parse_utc(moment) if isinstance(moment, str) else moment
    if parsed is None:
        return visible(str(moment), 80)
    from babel.dates import format_datetime

    locale = BABEL_LOCALE[language]
    local, today = parsed.astimezone(zone), now.astimezone(zone)
    pattern = SAME_DAY if local.date() == today.date() else OTHER_DAY
    text = format_datetime(local, pattern, tzinfo=zone, locale=locale)
    if relative and abs(parsed - now) < RELATIVE_WITHIN:
        return f"{text}, {say_ago(parsed, now=now, language=language)}"
    return text


def say_ago(moment: dt.datetime, *, now: dt.datetime, language: Language = "en") -> str:
    """How far `moment` is from `now`, in words (CLDR's, through Babel): ``35 minutes ago`` /
    ``hace 35 minutos``, ``in 2 hours`` / ``dentro de 2 horas``, ``12 seconds ago``; the same
    moment is a second ago (never "in 0 seconds"). The one relative time of every surface
    (`say_time`, the wall, the status lines)."""
    from babel.dates import format_timedelta

    seconds = (moment - now).total_seconds()
    if abs(seconds) < 1:
        seconds = -1.0
    return format_timedelta(
        dt.timedelta(seconds=seconds), add_direction=True, threshold=1.5, locale=BABEL_LOCALE[language]
    )


def say_number(value: float, *, decimals: int = 0, language: Language = "en") -> str:
    """`value` rounded to `decimals` places as the language writes it: ``2.5`` / ``2,5``,
    ``1,234`` / ``1234``. The one number formatter of what a person reads."""
    from babel.numbers import format_decimal

    pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
    return format_decimal(round(value, decimals), format=pattern, locale=NUMBER_LOCALE[language])


def say_duration(seconds: float, *, language: Language = "en") -> str:
    """A length of time in words (``24 minutes``, ``2 hours``)."""
    from babel.dates import format_timedelta

    return format_timedelta(dt.timedelta(seconds=seconds), threshold=1.5, locale=BABEL_LOCALE[language])
