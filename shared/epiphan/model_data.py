"""What the assistant sends to the model and what it never sends: one list for the code, the
documents and ``fleetwatch doctor``.

`SENT_TO_MODEL` and `NEVER_SENT` are the lists SECURITY.md and SECURITY.es.md show, word for
word (held by ``tests/test_docs_drift.py``), and the ones doctor's "model data" line names
(English, each a catalogue message: the Spanish is the catalogue's).

`for_model` applies `NEVER_SENT` to a value on its way to the model (the assistant's data
block calls it for every block, `text_for_model` for the operator's question):

1. secrets are redacted (`shared.epiphan.redact.redact`: stream keys, key-carrying parts of stream
   URLs, passwords, tokens);
2. every field whose name names an IP or network address, a serial number, a MAC address or a
   host name (`withholds_field`: ``IPAddress``, ``ip_address``, ``SerialNumber``, ``sn``,
   ``MACAddress``, ``Gateway``...) is dropped, at any depth;
3. in every remaining string (and map key), IPv4, IPv6 and MAC addresses, and the values of
   fields dropped in step 2, in this result or an earlier one (`WithheldValues`: a serial
   number repeated in a warning or in a device name), become ``[withheld]``.

The operator still sees addresses and serial numbers locally: only what reaches the model is
filtered. Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from shared.epiphan.redact import redact, redact_text
from shared.errors import N_

WITHHELD: Final = "[withheld]"


SENT_TO_MODEL: Final[tuple[str, ...]] = (
    N_(
        "the operator's question, with the time, the language and the lead window (secrets and "
        "addresses in it masked)"
    ),
    N_("devices: ID, name, model, group, firmware, online status and state time"),
    N_("channels: ID, name, recording state, stream publishers (ID, type, state, settings) and warnings"),
    N_("inputs and their signal, channel encoding settings and audio levels"),
    N_("recorder status, CPU load and temperature, uptime, and storage (free and total bytes)"),
    N_(
        "CMS events (ID, title, CMS, status, confirmation, start, finish, channels) and the CMS "
        "of each device"
    ),
    N_("stream destinations: ID, name, type, and the URL's scheme, host and port"),
    N_("team presets: ID, name and description"),
    N_("Epiphan's knowledge-base articles: ID, title, text and link"),
    N_("the sandbox devices a change may target, and the recorded state of each proposal the assistant made"),
    N_("any other field Epiphan adds to these results, unless it is on the list of what is never sent"),
)
"""What reaches the model: the operator's question and the read results the assistant asks for."""

NEVER_SENT: Final[tuple[str, ...]] = (
    N_(
        "IP addresses: fields named for an IP or network address (IPAddress, ip, address, "
        "gateway, netmask, dns), and any IPv4 or IPv6 address in text"
    ),
    N_(
        "serial numbers: fields named for one (SerialNumber, serial, sn), and their values "
        "wherever they appear once the assistant has read them (a device name, a later result or "
        "question)"
    ),
    N_(
        "MAC addresses and device host names: fields named for them (MACAddress, mac, hostname), "
        "and any MAC address in text"
    ),
    N_(
        "stream keys, passwords, passphrases, tokens and other secrets, and the path and "
        "key-carrying query of stream URLs (redacted)"
    ),
    N_("sign-in tokens, the page secret and the model key"),
    N_("channel images"),
)
"""What never reaches the model (the first three are withheld by `for_model`, the fourth is
redacted; the last two are never read into a model request at all)."""

_WITHHELD_WORDS = frozenset(
    {
        "ip",
        "ips",
        "ipv4",
        "ipv6",
        "address",
        "addr",
        "gateway",
        "netmask",
        "subnet",
        "dns",
        "serial",
        "sn",
        "mac",
        "hostname",
    }
)
_WITHHELD_PARTS = ("ipaddr", "ipv4", "ipv6", "serial", "macaddr", "hostname")
"""Pieces of a name with its separators removed (``deviceIPv6Address``, ``serial_no``)."""
_MIN_VALUE = 4
"""Shortest value of a dropped field that is also masked wherever else it appears."""

_IPV4 = re.compile(
    r"(?<![0-9.])(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}"
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?![0-9]|\.[0-9])"
)
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:[0-9]{1,3}\.){3}[0-9]{1,3}|[0-9A-Fa-f]{0,4})"
    r"(?:%[0-9A-Za-z_.-]+)?(?![0-9A-Za-z:]|\.[0-9])"
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL_LOWER = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_UPPER = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_PLURAL_IPS = re.compile(r"(?<![A-Z])IPs(?![a-z])")
_DIGIT = re.compile(r"[0-9]")
_MAC = re.compile(r"(?<![0-9A-Za-z:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![0-9A-Za-z:-])")


@functools.lru_cache(maxsize=4096)
def withholds_field(name: str) -> bool:
    """True when a field name (any case, snake, camel or kebab) names an IP or network address,
    a serial number, a MAC address or a host name. (Cached: the same few names repeat in every
    device of a result.)

    >>> withholds_field("IPAddress"), withholds_field("SerialNumber"), withholds_field("Description")
    (True, True, False)
    """
    spaced = _CAMEL_LOWER.sub(r"\1 \2", name)
    spaced = _CAMEL_UPPER.sub(r"\1 \2", spaced)
    words = [w for w in _SEPARATORS.split(spaced.lower()) if w]
    squashed = "".join(words)
    return (
        any(w in _WITHHELD_WORDS for w in words)
        or any(p in squashed for p in _WITHHELD_PARTS)
        or _PLURAL_IPS.search(name) is not None
    )


def _withheld(_: str) -> str:
    return WITHHELD


def _ipv6(match: re.Match[str], replace: Callable[[str], str]) -> str:
    candidate = match.group(0)
    address = candidate.split("%", 1)[0]
    if len(address) < 3 or not re.search(r"[0-9A-Fa-f]", address):
        return candidate
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return candidate
    return replace(candidate)


def mask_addresses(text: str, replace: Callable[[str], str] = _withheld) -> str:
    """`text` with every IPv4, IPv6 and MAC address replaced by ``[withheld]`` (or by
    ``replace(address)``: a capture gives each address its own stable placeholder).

    Times (``13:25:00``), versions (``4.24.6``) and UUIDs stay.
    """
    if text.count(":") >= 2:
        text = _IPV6.sub(lambda m: _ipv6(m, replace), text)
    if ":" in text or "-" in text:
        text = _MAC.sub(lambda m: replace(m.group(0)), text)
    return _IPV4.sub(lambda m: replace(m.group(0)), text) if "." in text else text


def _drop(value: Any, found: set[str]) -> Any:
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and withholds_field(key):
                found.update(strings_in(item))
            else:
                out[key] = _drop(item, found)
        return out
    if isinstance(value, list | tuple):
        return [_drop(item, found) for item in value]
    return value


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (not its map keys), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


class WithheldValues:
    """The values of withheld fields seen so far (serial numbers, addresses): masked in every
    later text too, so a serial number read once in a device's ``SerialNumber`` is withheld
    where a device *name* repeats it in another result or in a later question.

    One per assistant process (the assistant owns it and passes it in); values only grow.
    Values with a digit and at least `_MIN_VALUE` characters count (``auto`` or ``dhcp`` in
    an address field do not).
    """

    def __init__(self) -> None:
        self._words: set[str] = set()
        self._others: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def learn(self, values: Iterable[str]) -> None:
        """Remember `values` (values of dropped fields)."""
        for value in values:
            if len(value) < _MIN_VALUE or not _DIGIT.search(value) or mask_addresses(value) == WITHHELD:
                continue
            if _WORD.fullmatch(value):
                self._words.add(value)
            elif value not in self._others:
                self._others.add(value)
                self._pattern = None

    def mask(self, text: str, replace: Callable[[str], str] = _withheld) -> str:
        """`text` with every remembered value (as a whole word) replaced by ``[withheld]`` (or
        by ``replace(value)``)."""
        if self._words and not self._words.isdisjoint(_WORD.findall(text)):
            text = _WORD.sub(lambda m: replace(m.group(0)) if m.group(0) in self._words else m.group(0), text)
        if self._others:
            if self._pattern is None:
                alternatives = "|".join(map(re.escape, sorted(self._others, key=len, reverse=True)))
                self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
            text = self._pattern.sub(lambda m: replace(m.group(0)), text)
        return text


def _mask(value: Any, seen: WithheldValues) -> Any:
    if isinstance(value, str):
        return seen.mask(mask_addresses(value))
    if isinstance(value, Mapping):
        return {_mask(key, seen): _mask(item, seen) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(item, seen) for item in value]
    return value


def for_model(value: Any, seen: WithheldValues | None = None) -> Any:
    """A copy of a JSON-like `value` as the model may see it (see the module docstring).

    `seen` remembers the values of the fields dropped here and masks those seen before; without
    it only this value's own are masked.
    """
    seen = seen if seen is not None else WithheldValues()
    found: set[str] = set()
    kept = _drop(redact(value), found)
    seen.learn(found)
    return _mask(kept, seen)


def text_for_model(text: str, seen: WithheldValues | None = None) -> str:
    """Free text as the model may see it: secrets redacted, addresses and values in `seen`
    withheld."""
    text = mask_addresses(redact_text(text))
    return seen.mask(text) if seen is not None else text
