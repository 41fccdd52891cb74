"""What ``fleetwatch capture`` writes instead of secrets, addresses and serial numbers: stable
placeholders, and (``--rename``) invented names and IDs. Pure, one object per capture.

`CaptureRedactor` finds what to hide with Fleetwatch's own redaction (`shared.epiphan.redact`: keys,
passwords, tokens, credentialed and key-carrying URLs, secrets in free text) and withholding
(`shared.epiphan.model_data`: IP and MAC addresses, serial numbers and host names, by field name and in
text), but where those write ``[redacted]``/``[withheld]`` it writes a numbered placeholder, the
same for the same value everywhere in one capture: ``redacted-secret-3``, ``redacted-serial-12``,
``redacted-mac-1``, and for an IP address ``ip-4.example`` (a host name, so a stream URL still
has a host). No bracket, quote or comma in them: a placeholder after ``Authorization: Basic``
reads as the credential it replaces. Two
endpoints with different keys keep different keys, and a serial number repeated in a device's
name becomes the same placeholder there. The placeholder → value table lives in memory only and
is never written.

After the placeholders, every string is checked again with `shared.epiphan.redact.redact_text`: a
string in which Fleetwatch's redaction would still find a secret becomes one placeholder as a
whole. So a capture holds nothing the product itself would not redact.

`Renamer` (``--rename``) replaces room (device) names, group names, event titles, stream
destination and preset names, and master, group, event, stream, preset and team IDs with
invented ones of the same form (``Room 001``, master IDs ``19`` + nine digits, UUIDs, event IDs
keeping a colon when they had one), consistently: learned from the parsed results as they come
and replaced wherever the same text appears (as a whole value, a whole word, or a map key).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from shared.epiphan.model_data import WithheldValues, mask_addresses, strings_in, withholds_field
from shared.epiphan.redact import REDACTED, redact_text, secret_keys, sibling_labels

_USERINFO: Final = re.compile(r"(\b[a-z][a-z0-9+.-]{1,15}://)[^\s/\"'<>?#]*@", re.IGNORECASE)
"""The user info of a URL (up to the last ``@`` before the path: a password may hold one)."""
_V6_HOST: Final = re.compile(r"(?<=://)\[([0-9A-Fa-f:.]+(?:%[0-9A-Za-z_.-]+)?)\]")
"""An IPv6 address as a URL's host (in brackets)."""
_PLACEHOLDER: Final = re.compile(r"redacted-(?:secret|serial|mac|host)-[0-9]+|ip-[0-9]+\.example")
_MAC: Final = re.compile(r"(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}")
_KINDS: Final = (
    ("serial", "serial"),
    ("sn", "serial"),
    ("mac", "mac"),
    ("hostname", "host"),
    ("host", "host"),
)


def field_kind(name: str) -> str:
    """The placeholder kind for a withheld field's value: ``serial``, ``mac``, ``host`` or
    ``ip`` (an IP or network address, the rest)."""
    lowered = re.sub(r"[^a-z]", "", name.lower())
    return next((kind for word, kind in _KINDS if word in lowered), "ip")


class CaptureRedactor:
    """Stable placeholders for one capture (see the module docstring). Call it on each result,
    in the order they were read: values of withheld fields seen in one result are hidden in
    every later one too."""

    def __init__(self) -> None:
        self._table: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._withheld = WithheldValues()

    @property
    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were replaced (never the values)."""
        return dict(self._counts)

    def placeholder(self, value: str, kind: str) -> str:
        """The placeholder of `value` (made on first sight, as `kind`)."""
        found = self._table.get(value)
        if found is None:
            self._counts[kind] = number = self._counts.get(kind, 0) + 1
            found = f"ip-{number}.example" if kind == "ip" else f"redacted-{kind}-{number}"
            self._table[value] = found
        return found

    def __call__(self, value: Any) -> Any:
        """A copy of a JSON-like value with every secret, address and serial number replaced."""
        self._learn(value)
        return self._walk(value)

    def text(self, text: str) -> str:
        """Free text (an error message) with everything of the module docstring replaced."""
        return self._string(text)

    def _learn(self, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and withholds_field(key):
                    found = list(strings_in(item)) or ([str(item)] if isinstance(item, int | float) else [])
                    self._withheld.learn(found)
                    for text in found:
                        self.placeholder(text, field_kind(key))
                else:
                    self._learn(item)
        elif isinstance(value, list | tuple):
            for item in value:
                self._learn(item)

    def _walk(self, value: Any, siblings: tuple[str, ...] = ()) -> Any:
        if isinstance(value, Mapping):
            hidden = secret_keys(value, siblings)
            out: dict[Any, Any] = {}
            for key, item in value.items():
                name = self._string(key) if isinstance(key, str) else key
                if isinstance(key, str) and withholds_field(key):
                    out[name] = self._hidden(item, field_kind(key))
                elif key in hidden:
                    out[name] = self._hidden(item, "secret")
                else:
                    out[name] = self._walk(item)
            return out
        if isinstance(value, list | tuple):
            labels = sibling_labels(value)
            return [self._walk(item, labels) for item in value]
        if isinstance(value, str):
            return self._string(value)
        return value

    def _hidden(self, value: Any, kind: str) -> Any:
        """Every scalar inside `value` as a placeholder of `kind` (None and "" stay)."""
        if isinstance(value, Mapping):
            return {k: self._hidden(v, kind) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._hidden(v, kind) for v in value]
        if value is None or value == "" or isinstance(value, bool):
            return value
        return self.placeholder(str(value), kind)

    def _string(self, text: str) -> str:
        if _PLACEHOLDER.fullmatch(text):
            return text
        out = self._secrets(text)
        out = _V6_HOST.sub(lambda m: self.placeholder(m.group(1), "ip"), out)
        out = mask_addresses(out, lambda found: self.placeholder(found, _address_kind(found)))
        out = self._withheld.mask(
            out, lambda found: self._table.get(found) or self.placeholder(found, "serial")
        )
        if not holds_no_secret(out):  # something Fleetwatch would still redact: hide the whole text
            return self.placeholder(text, "secret")
        return out

    def _secrets(self, text: str) -> str:
        plain = _USERINFO.sub(r"\1", text)
        found = _aligned(plain)
        if found is None:
            return self.placeholder(text, "secret")
        pieces, secrets = found
        out = [pieces[0]]
        for secret, piece in zip(secrets, pieces[1:], strict=True):
            out.append(secret if secret in ("", REDACTED) else self.placeholder(secret, "secret"))
            out.append(piece)
        return "".join(out)


def _aligned(text: str) -> tuple[list[str], list[str]] | None:
    """`shared.epiphan.redact.redact_text` of `text` as (the pieces it kept, the parts it replaced
    between them), or None when the two cannot be lined up (then the caller hides it all)."""
    redacted = redact_text(text)
    pieces = redacted.split(REDACTED)
    if len(pieces) == 1:
        return ([text], []) if redacted == text else None
    pattern = "(.*?)".join(re.escape(piece) for piece in pieces)
    match = re.fullmatch(pattern, text, re.DOTALL | re.IGNORECASE)
    return (pieces, list(match.groups())) if match is not None else None


def holds_no_secret(text: str) -> bool:
    """True when Fleetwatch's redaction finds nothing in `text` but the placeholders themselves
    (a stream URL's path is always redacted, placeholder or not)."""
    found = _aligned(text)
    return found is not None and all(_PLACEHOLDER.fullmatch(s) or s == REDACTED for s in found[1])


def verified(value: Any, siblings: tuple[str, ...] = ()) -> Any:
    """`value` (a `CaptureRedactor`'s output) checked once more, independently of how it was
    made: a string in which Fleetwatch's redaction (`shared.epiphan.redact`) or address masking
    (`shared.epiphan.model_data`) would still find something gets the ordinary treatment (``[redacted]``,
    ``[withheld]``); so does a value under a secret (`shared.epiphan.redact.secret_keys`) or withheld
    field that is not a placeholder. What passes comes back unchanged. The guarded read client
    applies this to every answer read for a capture, so a capture is never redacted less than the
    product's own view. `siblings`: the labels of the other settings of the list `value` is in."""
    if isinstance(value, Mapping):
        hidden = secret_keys(value, siblings)
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = verified(key) if isinstance(key, str) else key
            if key in hidden or (isinstance(key, str) and withholds_field(key)):
                out[name] = _placeholders_only(item)
            else:
                out[name] = verified(item)
        return out
    if isinstance(value, list | tuple):
        labels = sibling_labels(value)
        return [verified(item, labels) for item in value]
    if isinstance(value, str) and (not holds_no_secret(value) or mask_addresses(value) != value):
        return mask_addresses(redact_text(value))
    return value


def _placeholders_only(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _placeholders_only(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_placeholders_only(v) for v in value]
    if value is None or value == "" or isinstance(value, bool):
        return value
    return value if isinstance(value, str) and _PLACEHOLDER.fullmatch(value) else REDACTED


def _address_kind(address: str) -> str:
    return "mac" if _MAC.fullmatch(address) else "ip"


class Renamer:
    """Invented names and IDs for one capture (``--rename``; see the module docstring)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._ids: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._pattern: re.Pattern[str] | None = None

    def _next(self, kind: str) -> int:
        self._counts[kind] = number = self._counts.get(kind, 0) + 1
        return number

    def name(self, old: str, kind: str) -> None:
        """Learn a name of `kind` (``room``, ``group``, ``event``, ``stream``, ``preset``)."""
        if old and old not in self._names and old not in self._names.values():
            label = {"room": "Room", "group": "Group", "event": "Event", "stream": "Stream destination"}
            self._names[old] = f"{label.get(kind, 'Preset')} {self._next(kind):03d}"
            self._pattern = None

    def identifier(self, old: str, kind: str) -> None:
        """Learn an ID of `kind` (``master``, ``uuid``, ``event``)."""
        if not old or old in self._ids or old in self._ids.values():
            return
        number = self._next(f"{kind} ID")
        if kind == "master":
            new = f"19{number:0{max(len(old) - 2, 9)}d}"
        elif kind == "uuid":
            new = str(uuid.UUID(int=number, version=4))
        else:
            head, colon, tail = old.partition(":")
            new = f"event{number:04d}" + (f":{tail}" if colon and tail.isdigit() else "")
        self._ids[old] = new
        self._pattern = None

    def learn(self, names: Iterable[tuple[str, str]] = (), ids: Iterable[tuple[str, str]] = ()) -> None:
        """Learn (value, kind) pairs of names and of IDs."""
        for old, kind in names:
            self.name(old, kind)
        for old, kind in ids:
            self.identifier(old, kind)

    def _replace(self) -> Callable[[str], str]:
        table = {**self._names, **self._ids}
        if self._pattern is None:
            alternatives = "|".join(map(re.escape, sorted(table, key=len, reverse=True))) or r"(?!)"
            self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
        pattern = self._pattern
        return lambda text: table.get(text) or pattern.sub(lambda m: table[m.group(0)], text)

    def __call__(self, value: Any) -> Any:
        """A copy of a JSON-like value with every learned name and ID replaced (map keys too)."""
        replace = self._replace()

        def walk(item: Any) -> Any:
            if isinstance(item, Mapping):
                return {replace(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
            if isinstance(item, list | tuple):
                return [walk(v) for v in item]
            return replace(item) if isinstance(item, str) else item

        return walk(value)
