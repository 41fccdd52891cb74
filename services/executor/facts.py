"""The binding facts: every fact an approval card shows that decides what a write does. Pure.

A card is built from the stored proposal and a fresh Inspect. What a person approves is not
only the tool and its IDs but what those IDs stood for on the card: the room's name, the
channel's name, the stream destination (its name, its host, and the full URL and key the card
never shows), the event (its title, start and finish). Inspect returns these as `BoundFacts`:
display text (``facts``, name → value) and ``hash``, SHA-256 over the facts *and* a keyed
digest of each stream destination's full URL and secret fields (`secret_digest`, HMAC under the
executor's in-memory binding key, made from the unredacted entry; the URL and key themselves
are never kept, sent or stored). The page records the hash and the facts with the approval;
Execute carries the hash; the executor builds the same facts from its fresh reads, straight
before the write, and refuses ``card_facts_changed`` when the hashes differ, naming what
changed (`changed_words`).

Facts per tool (keys; ``<id>`` is a master ID, ``<n>`` a device-local channel number):

- every tool: ``tool``, ``arguments`` (canonical JSON), ``device <id> name`` per target;
- a channel (``batch_recording``'s channel ID; the stream tools' ``channel_id``):
  ``device <id> channel <n> name``;
- a stream destination (``stream_id``): ``stream <uuid> name``, ``stream <uuid> host``,
  ``stream <uuid> in use by`` (Epiphan's ``LockByDevice``: the master ID of the device using
  it, empty when none), ``stream <uuid> streaming`` (``CurrentlyStreaming``: yes | no |
  unknown), and in the hash only, its full URL and key;
- the event the card shows (the ``event_id`` argument's, else the first target's current or
  next one): ``event <id> title``, ``event <id> start``, ``event <id> finish`` (UTC text).

The online and recording state are the fingerprint's (`shared.binding`), checked before this.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any

from shared.binding import BoundRecord
from shared.canonical import canonical_json
from shared.epiphan.redact import names_secret, secret_keys
from shared.wire.executor import EventFacts, StreamFacts, TargetFacts

URL_FIELDS = frozenset({"url", "Url", "URL", "uri", "Uri", "type", "Type", "protocol", "Protocol"})
"""Fields of a stream endpoint entry that decide where a stream goes, besides secret-named ones."""


@dataclasses.dataclass(frozen=True, slots=True)
class BoundFacts:
    """The binding facts (display text, name → value) and the hash that also covers the
    secrets they stand for. ``secret_keys``: names of the facts whose secret part entered the
    hash (one per stream destination)."""

    facts: dict[str, str]
    hash: str
    secret_keys: tuple[str, ...] = ()


def secret_digest(key: bytes) -> Callable[[Mapping[str, Any]], str]:
    """A function of an unredacted stream endpoint entry: HMAC-SHA256 under `key` over its
    URL, protocol and every secret field, named or in any shape redaction knows
    (`shared.epiphan.redact.secret_keys`: the stream key, a passphrase, a publisher's ``stream``
    beside its URL, a stream ID that is not a UUID, a setting titled "Stream key"), hex."""

    def digest(entry: Mapping[str, Any]) -> str:
        hidden = secret_keys(entry)
        chosen = {
            k: entry[k] for k in sorted(entry) if k in URL_FIELDS or k in hidden or names_secret(str(k))
        }
        text = json.dumps(chosen, sort_keys=True, ensure_ascii=True, default=str)
        return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()

    return digest


def bound_facts(
    record: BoundRecord,
    targets: tuple[TargetFacts, ...],
    stream: StreamFacts | None,
    event: EventFacts | None,
    *,
    stream_secret: str | None,
) -> BoundFacts:
    """The binding facts of `record` from the card facts read just now (`targets`, `stream`,
    `event`, as `services.executor.inspection.card_facts` builds them) and the stream
    destination's `stream_secret` (its `secret_digest`, None when it has none or was not read).
    """
    facts: dict[str, str] = {
        "tool": record.tool,
        "arguments": canonical_json(record.arguments).decode("utf-8"),
    }
    for target in targets:
        facts[f"device {target.device_id} name"] = target.name if target.found else "(not found)"
        if target.channel_id is not None:
            facts[f"device {target.device_id} channel {target.channel_id} name"] = (
                target.channel_name if target.channel_name is not None else "(not found)"
            )
    secrets: dict[str, str] = {}
    if stream is not None:
        facts[f"stream {stream.stream_id} name"] = stream.name if stream.found else "(not found)"
        facts[f"stream {stream.stream_id} host"] = stream.host or ""
        facts[f"stream {stream.stream_id} in use by"] = stream.locked_by or ""
        facts[f"stream {stream.stream_id} streaming"] = {True: "yes", False: "no", None: "unknown"}[
            stream.streaming
        ]
        secrets[f"stream {stream.stream_id}"] = stream_secret or ""
    if event is not None:
        prefix = f"event {event.event_id}"
        facts[f"{prefix} title"] = event.title if event.found else "(not found)"
        facts[f"{prefix} start"] = event.start or ""
        facts[f"{prefix} finish"] = event.finish or ""
    digest = hashlib.sha256(canonical_json({"facts": facts, "secrets": secrets})).hexdigest()
    return BoundFacts(facts=facts, hash=digest, secret_keys=tuple(sorted(secrets)))


def changed_words(before: Mapping[str, str] | None, after: BoundFacts) -> str:
    """What changed between the facts a card showed (`before`, from the approval; None when
    unknown) and `after`, in words for a person, e.g. ``stream 6f7a… host: "a.example.net" →
    "b.example.net"``. When every shown fact is the same, the change is in what no card shows
    (a stream destination's full URL or key)."""
    if before is None:
        return "the facts the card showed could not be compared"
    parts = []
    for name in sorted(set(before) | set(after.facts)):
        old, new = before.get(name), after.facts.get(name)
        if old == new:
            continue
        if old is None:
            parts.append(f"{name} appeared ({_quote(new)})")
        elif new is None:
            parts.append(f"{name} is gone (was {_quote(old)})")
        else:
            parts.append(f"{name}: {_quote(old)} → {_quote(new)}")
    if parts:
        return "; ".join(parts)
    if after.secret_keys:
        names = ", ".join(after.secret_keys)
        return f"{names}: its full address or stream key changed (the card shows only the host)"
    return "a fact the card showed changed"


def _quote(text: str | None) -> str:
    shown = (text or "")[:80]
    return json.dumps(shown, ensure_ascii=False)
