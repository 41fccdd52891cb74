"""Times as the watch writes and shows them. Pure.

The store keeps UTC text (`utc_text`, fixed width so text order is time order). People read
times in the team's own zone: the policy's quiet-hours time zone (``policy.yaml``), named once
in each post (`zone_label`).
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, tzinfo

from shared.text.languages import language_of
from shared.text.times import say_time


def utc_text(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.SSSZ`` of an aware `moment` (the store's and the wire's time form)."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_utc(text: str) -> datetime:
    """The aware datetime of a `utc_text` (or any ISO 8601 UTC text)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def zone(name: str) -> tzinfo:
    """The IANA zone `name` (the policy loader already checked that it exists)."""
    return zoneinfo.ZoneInfo(name)


def zone_label(name: str) -> str:
    """How a post names the zone its times are in (``UTC``, ``America/Bogota``)."""
    return name


def clock(moment: datetime, where: tzinfo, now: datetime, language: str = "en") -> str:
    """``10:25`` in `where`, or ``Wed 16 Sep, 10:25`` (``mié 16 sep, 10:25``) when it is not on
    the same local day as `now`: the one format of every surface
    (`shared.text.times.say_time`)."""
    return say_time(moment, zone=where, now=now, language=language_of(language), relative=False)


def zone_name_of(where: tzinfo) -> str:
    """The IANA name of `where` (``America/Mexico_City``), else its own name (``UTC``)."""
    return str(getattr(where, "key", None) or where)
