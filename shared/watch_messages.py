"""The watch's messages: on assistant.sock (operators ask the watch) and on approval.sock (the
watch learns of proposals and their outcomes). Tagged msgspec Structs like `shared.messages`,
whose per-socket unions include these.

assistant.sock (peers: operators, the ask page's process)
    GetWatchStatus → WatchStatus      is the heartbeat alive (``fleetwatch status --check``)
    GetHistory → History              what changed, when (``fleetwatch history``)
    RunDigest → DigestReport          one beat now, its digest (``fleetwatch digest [--post]``)
    SetNote → NoteOutcome             an operator's one-line note on a room (``fleetwatch note``)
    ListNotes → Notes                 the notes (``fleetwatch notes``)
approval.sock (peers: the assistant user and operators)
    ListProposalHistory → ProposalHistory   proposals made since a time, with their outcomes,
                                            and the approval page's address (read-only)

Times are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``). Every request field has its format or cap
(`shared.wire`), so decoding refuses anything else with ``invalid_message``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from shared.protocol import Message
from shared.wire import Count, ErrorCode

MAX_HISTORY_DAYS: Final = 90
"""The longest history asked for at once (the watch store keeps this long)."""
MAX_HISTORY_ENTRIES: Final = 2000
"""Most entries one `History` reply carries (the newest; ``more`` counts the rest)."""
MAX_PROPOSAL_HISTORY: Final = 500
"""Most proposals one `ProposalHistory` carries (the newest)."""
MAX_ROOM_QUERY_CHARS: Final = 200
"""Longest room name (or part of one) a note command may give."""
MAX_NOTE_CHARS: Final = 280
"""Longest room note kept, in characters, after control and bidi characters are stripped."""
MAX_NOTE_INPUT_CHARS: Final = 4000
"""Longest note text accepted on the wire (it is cleaned, then cut to `MAX_NOTE_CHARS`)."""

UtcText = Annotated[str, msgspec.Meta(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z\Z")]
"""A UTC time on the wire (``2026-09-16T20:36:00.000Z``)."""
Language = Literal["en", "es"]
RoomQuery = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ROOM_QUERY_CHARS)]
NoteText = Annotated[str, msgspec.Meta(max_length=MAX_NOTE_INPUT_CHARS)]

# --- assistant.sock --------------------------------------------------------------------------


class GetWatchStatus(Message):
    """Is the watch's heartbeat alive?"""


class PostCounts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Posts to one destination since the assistant started: sent, failed (each failure was
    logged once; none was retried), and the last failure's code."""

    destination: str
    sent: int = 0
    failed: int = 0
    last_code: str | None = None


class WatchStatus(Message):
    """``alive``: a heartbeat read the fleet within three intervals of ``now`` (``fleetwatch
    status --check`` exits 0 only then). ``last_read_at``: the last beat that read the fleet;
    ``last_beat_at``: the last beat at all; ``failed_beats``: failed beats in a row, with the
    last one's ``last_code``. Counts come from the last good read. ``posts``: per destination."""

    alive: bool
    now: str
    interval_seconds: float
    last_read_at: str | None
    last_beat_at: str | None
    failed_beats: int
    last_code: str | None
    devices: int
    online: int
    fix_first: int
    fix_soon: int
    when_convenient: int
    posts: tuple[PostCounts, ...] = ()


class GetHistory(Message):
    """What changed in the last ``days`` days (1 to `MAX_HISTORY_DAYS`), newest first, in
    ``language``."""

    days: Annotated[int, msgspec.Meta(ge=1, le=MAX_HISTORY_DAYS)] = 7
    language: Language = "en"


class HistoryEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One thing that changed. ``kind``: ``device_offline``, ``device_online``, ``device_new``,
    ``device_gone``, ``finding_opened``, ``finding_worse``, ``finding_resolved``,
    ``read_failed``, ``read_recovered``, ``readiness``, ``digest``, ``sweep``, ``note``,
    ``proposal`` (made), ``proposal_decided``, ``proposal_outcome``. ``room`` is the room's name
    as last read (display text: shown through `shared.display.visible`); ``text`` the line in
    words, in the language asked; ``facts`` the values it was made from."""

    at: str
    kind: str
    text: str
    room: str | None = None
    device_id: str | None = None
    facts: dict[str, str] = msgspec.field(default_factory=dict)


class History(Message):
    """Entries newest first (at most `MAX_HISTORY_ENTRIES`; ``more`` counts the older ones left
    out). ``unread``: sources that could not be read, as ``{source: code}`` (``proposals``
    when approval.sock did not answer): the history is then partial, and says so."""

    since: str
    entries: tuple[HistoryEntry, ...]
    more: int = 0
    unread: dict[str, str] = msgspec.field(default_factory=dict)


class RunDigest(Message):
    """Run one beat now (read, diff, record) and return the digest of what changed since the
    last posted digest; with ``post`` also post it (quiet hours or not)."""

    post: bool = False
    language: Language | None = None


class DigestReport(Message):
    """``read``: the beat read the fleet (else ``code`` says why). ``changed``: something changed
    since the last posted digest; ``text``: the digest (or what the fleet looks like when
    nothing changed), in words. ``posted``: the destinations it went to (with ``post``)."""

    read: bool
    changed: bool
    text: str
    code: str | None = None
    posted: tuple[str, ...] = ()


class SetNote(Message):
    """Keep ``text`` as the note of the one room whose name matches ``room`` (``clear``: remove
    it). Control and bidi characters are stripped and the text cut to `MAX_NOTE_CHARS`."""

    room: RoomQuery
    text: NoteText = ""
    clear: bool = False


class RoomRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A room as the watch last read it: its device ID and name (display text)."""

    device_id: str
    name: str


class RoomNote(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A room's note: the room, the text (cleaned), when and by which uid it was set."""

    device_id: str
    room: str
    text: str
    set_at: str
    set_by: int


class NoteOutcome(Message):
    """``status``: ``saved``, ``cleared``, or nothing saved: ``ambiguous`` (``candidates`` lists
    the rooms that match; name one of them exactly) or ``not_found``; ``code`` is then
    ``room_ambiguous`` / ``room_not_found``."""

    status: Literal["saved", "cleared", "ambiguous", "not_found"]
    note: RoomNote | None = None
    candidates: tuple[RoomRef, ...] = ()
    code: ErrorCode | None = None


class ListNotes(Message):
    """The notes, by room name; ``room``: only rooms whose name holds it; ``search``: only
    notes whose text holds it (both without regard to case or accents)."""

    room: RoomQuery | None = None
    search: RoomQuery | None = None


class Notes(Message):
    notes: tuple[RoomNote, ...]


# --- approval.sock --------------------------------------------------------------------------


class ListProposalHistory(Message):
    """Proposals made at or after ``since``, newest first (at most `MAX_PROPOSAL_HISTORY`), with
    their state and outcome. Read-only; the assistant's uid may ask."""

    since: UtcText


class ProposalEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One proposal: its tool and arguments (no reason), targets (master IDs), who proposed,
    when it was made, when it expires unreviewed, decided and run, its ``status`` (pending |
    approved | denied | expired | executed | not_run) and why (``status_code``), and the execution's ``outcome`` and
    ``verification`` (`shared.messages.ProposalState`'s words)."""

    proposal_id: str
    tool: str
    arguments: dict[str, Any]
    targets: tuple[str, ...]
    proposed_by: str
    created_at: str
    status: str
    status_code: str | None = None
    expires_at: str | None = None
    decided_at: str | None = None
    outcome: str | None = None
    verification: str | None = None
    finished_at: str | None = None


class ProposalHistory(Message):
    """The proposals (newest first; ``more`` counts those left out), the approval page's
    address when it is serving (None: no page), and the database clock when read."""

    items: tuple[ProposalEvent, ...]
    read_at: str
    page_url: str | None = None
    more: Count = 0
