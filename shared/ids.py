"""Epiphan ID patterns: the single source every module (and every argument schema) uses.

Pure: compiled patterns and validators, no I/O. Source of the facts: EPIPHAN.md ("IDs").

- Master (device) ID: real ones are 11 digits (``19012341234``); we accept lower-case hex or
  digits, 8 to 32 long. Upper-case hex is refused: IDs are compared as exact strings, and an
  upper-case copy of a real ID would name a device that does not exist.
- Channel ID (the target of ``batch_recording``): ``<master>-N``, N from 1 to 999
  (``19012341234-1``). Inside device results a channel's own ID is just ``"1"``, ``"2"``...
  (a *channel number*). The master and channel patterns never accept each other's IDs.
- Stream endpoint ID: a UUID in canonical 8-4-4-4-12 form, either case (not the stream key).
- Event ID: the reviewed schema allows ``[A-Za-z0-9][A-Za-z0-9_-]{0,127}``. One live-shaped
  example holds a colon (``abc123:1791484740``), unconfirmed. Decision: *reading* accepts a
  colon (`EVENT_ID_READ`), so such an event is shown and reasoned about; *proposing* keeps the
  reviewed pattern (`EVENT_ID`), so an event ID with a colon cannot be proposed until the
  schema is reviewed on a live run.

The pattern strings are written the JSON Schema way (``^...$``) because argument schemas in
``policy/tool_policy.yaml`` must repeat them verbatim (the policy loader checks they are equal,
so they cannot drift). Matching always uses ``re.fullmatch``: Python's ``$`` also matches
before a trailing newline, and ``fullmatch`` does not let that newline through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

MASTER_ID: Final = r"^[0-9a-f]{8,32}$"
CHANNEL_ID: Final = r"^[0-9a-f]{8,32}-[1-9][0-9]{0,2}$"
CHANNEL_NUMBER: Final = r"^[1-9][0-9]{0,2}$"
STREAM_ID: Final = r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
EVENT_ID: Final = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"
EVENT_ID_READ: Final = r"^[A-Za-z0-9][A-Za-z0-9_:-]{0,127}$"

SCHEMA_PATTERNS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "MASTER_ID": MASTER_ID,
        "CHANNEL_ID": CHANNEL_ID,
        "CHANNEL_NUMBER": CHANNEL_NUMBER,
        "STREAM_ID": STREAM_ID,
        "EVENT_ID": EVENT_ID,
    }
)
"""The patterns an argument schema may use, by name. `EVENT_ID_READ` is absent on purpose."""

_MASTER: Final = re.compile(MASTER_ID)
_CHANNEL: Final = re.compile(CHANNEL_ID)


def _whole(pattern: re.Pattern[str], value: object) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def is_master_id(value: object) -> bool:
    """True for a master (device) ID: 8-32 lower-case hex or digits, nothing else."""
    return _whole(_MASTER, value)


def is_channel_id(value: object) -> bool:
    """True for a channel ID as ``batch_recording`` takes it: ``<master>-<1..999>``."""
    return _whole(_CHANNEL, value)


def split_channel_id(channel_id: str) -> tuple[str, str]:
    """``"19012341234-2"`` -> ``("19012341234", "2")`` (master ID, channel number).

    Raises:
        ValueError: ``channel_id`` is not a channel ID (the message does not repeat it).
    """
    if not is_channel_id(channel_id):
        raise ValueError("not a channel ID (<master ID>-<1..999>)")
    master, _, number = channel_id.rpartition("-")
    return master, number


def master_of_channel(channel_id: str) -> str:
    """The master ID a channel ID belongs to: ``"19012341234-2"`` -> ``"19012341234"``.

    Raises:
        ValueError: ``channel_id`` is not a channel ID.
    """
    return split_channel_id(channel_id)[0]
