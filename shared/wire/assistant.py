"""assistant.sock's contract: its messages, its operation table (each operation's codes and its
line in the manifest) and its client (`AssistantClient`).

Peers: operators and the ask page's process. The operations are the rows of `OPERATIONS`
(each request declares its reply: ``class Ask(Request[Answer])``): a question, the fleet as the
read sign-in sees it (for an operator, who may not read the token), which model answers, and
the watch's heartbeat, history, digest, room notes and silences. Every socket also serves
`GetCapabilities`.

Times are UTC text (``YYYY-MM-DDTHH:MM:SS.SSSZ``). Every request field has its format or cap,
so decoding refuses anything else with ``invalid_message``.

The assistant's full manifest (`services.assistant.manifest`) adds, beside these operations,
the codes that reach the model per tool group and what the ask page answers with.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from shared.epiphan.fleet import FleetSnapshot
from shared.errors import Code
from shared.text.languages import Language
from shared.wire.client import SocketClient
from shared.wire.formats import AnsweredBy, Question, UtcText
from shared.wire.protocol import Message, OperationTable, Request, Row


class ProposalLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A code-built line about one proposal made in this answer (its recorded state)."""

    proposal_id: str
    state: str
    text: str


class NoteLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An operator's note (``fleetwatch note``) on a room the answer names: the room's device
    ID and the code-built line a person reads (the room's name quoted, then the note)."""

    device_id: str
    text: str


class RefusalLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A change the model tried to propose and that was not queued: the stable ``code`` (for
    scripts: ``ask --json``) and the code-built sentence a person reads (``text``, no code)."""

    code: Code
    text: str


class Answer(Message):
    """The answer: ``text`` (the model's words or the keyword answer), the code-built proposal
    lines, the code-built lines of proposals that were refused (``refusals``), which path
    answered (`AnsweredBy`), the language used, the answer's own code (a fallback, a spent
    budget, a failed read) and the operators' notes on the rooms it names (``notes``)."""

    text: str
    language: str
    answered_by: AnsweredBy
    proposals: tuple[ProposalLine, ...] = ()
    code: Code | None = None
    refusals: tuple[RefusalLine, ...] = ()
    notes: tuple[NoteLine, ...] = ()


class Ask(Request[Answer]):
    """An operator's question (at most `shared.wire.formats.MAX_QUESTION_CHARS` characters).
    ``language`` ∈ en | es | None (detect)."""

    question: Question
    language: Language | None = None


class FleetView(Message):
    """`GetFleet`'s answer: the snapshot (`shared.epiphan.fleet.FleetSnapshot`), redacted as
    every read is. Its frame may be up to `FLEET_FRAME_BYTES` (a fleet of thousands of devices)."""

    snapshot: FleetSnapshot


class GetFleet(Request[FleetView]):
    """The fleet read now through the assistant's read sign-in: how an operator, who may not
    read the token, gets ``fleetwatch fleet``."""


FLEET_FRAME_BYTES: Final = 16 << 20
"""Largest frame on assistant.sock (16 MiB: a `FleetView` of a large fleet; 2,000 devices take
about 0.9 MiB). The request types it serves are small and capped by their own fields."""


class ModelInfo(Message):
    """``kind``: ``model`` (a real model's API), ``demo_model`` (the lab's Messages-API stand-in
    on this machine: nothing leaves it) or ``keyword`` (no model: nothing is sent anywhere);
    ``model``: the model name asked for; ``endpoint``: where requests go (scheme, host and port,
    never a key; ``""`` for keyword)."""

    kind: AnsweredBy
    model: str = ""
    endpoint: str = ""


class GetModel(Request[ModelInfo]):
    """Which model the running assistant answers with, and what it sends there."""


# --- the watch ----------------------------------------------------------------------------

MAX_HISTORY_DAYS: Final = 90
"""The longest history asked for at once (the watch store keeps this long)."""
MAX_HISTORY_ENTRIES: Final = 2000
"""Most entries one `History` reply carries (the newest; ``more`` counts the rest)."""
MAX_ROOM_QUERY_CHARS: Final = 200
"""Longest room name (or part of one) a note command may give."""
MAX_NOTE_CHARS: Final = 280
"""Longest room note kept, in characters, after control and bidi characters are stripped."""
MAX_NOTE_INPUT_CHARS: Final = 4000
"""Longest note text accepted on the wire (it is cleaned, then cut to `MAX_NOTE_CHARS`)."""

RoomQuery = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ROOM_QUERY_CHARS)]
NoteText = Annotated[str, msgspec.Meta(max_length=MAX_NOTE_INPUT_CHARS)]


class PostCounts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Posts to one destination since the assistant started: sent, failed (each failure was
    logged once; none was retried), and the last failure's code. ``to``: where in it the
    running assistant posts, as its own settings say (the Slack channel; "" for the console
    and Teams, whose webhook is a secret): what ``doctor`` and ``status`` show."""

    destination: str
    sent: int = 0
    failed: int = 0
    last_code: Code | None = None
    to: str = ""


class WatchStatus(Message):
    """``alive``: a heartbeat read the fleet within three intervals of ``now`` (``fleetwatch
    status --check`` exits 0 only then). ``last_read_at``: the last beat that read the fleet;
    ``last_beat_at``: the last beat at all; ``failed_beats``: failed beats in a row, with the
    last one's ``last_code``. Counts come from the last good read. ``posts``: per destination."""

    alive: bool
    now: UtcText
    interval_seconds: float
    last_read_at: UtcText | None
    last_beat_at: UtcText | None
    failed_beats: int
    last_code: Code | None
    devices: int
    online: int
    fix_first: int
    fix_soon: int
    when_convenient: int
    posts: tuple[PostCounts, ...] = ()
    held_until: UtcText | None = None
    """Inside quiet hours: when they end (digests are held until then); else None."""
    timezone: str = "UTC"
    """The zone quiet hours and the watch's times are in (the policy's, else the operator's)."""
    silences: int = 0
    """Silences holding now."""


class GetWatchStatus(Request[WatchStatus]):
    """Is the watch's heartbeat alive?"""


class HistoryEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One thing that changed. ``kind``: ``device_offline``, ``device_online``, ``device_new``,
    ``device_gone``, ``finding_opened``, ``finding_worse``, ``finding_resolved``,
    ``read_failed``, ``read_recovered``, ``read_partial``, ``read_complete``, ``readiness``,
    ``digest``, ``sweep``, ``note``, ``note_cleared``, ``first_read``, ``proposal`` (made),
    ``proposal_decided``, ``proposal_outcome``. ``room`` is the room's name as last read (display text, already
    through `shared.text.display.visible`); ``text`` the line in words, in the language asked;
    ``facts`` the values it was made from."""

    at: UtcText
    kind: str
    text: str
    room: str | None = None
    device_id: str | None = None
    facts: dict[str, str] = msgspec.field(default_factory=dict)


class History(Message):
    """Entries newest first (at most `MAX_HISTORY_ENTRIES`; ``more`` counts the older ones left
    out). ``unread``: sources that could not be read, as ``{source: code}`` (``proposals``
    when approval.sock did not answer): the history is then partial, and says so."""

    since: UtcText
    entries: tuple[HistoryEntry, ...]
    more: int = 0
    unread: dict[str, Code] = msgspec.field(default_factory=dict)


class GetHistory(Request[History]):
    """What changed in the last ``days`` days (1 to `MAX_HISTORY_DAYS`), newest first, in
    ``language``."""

    days: Annotated[int, msgspec.Meta(ge=1, le=MAX_HISTORY_DAYS)] = 7
    language: Language = "en"


class DigestReport(Message):
    """``read``: the beat read the fleet (else ``code`` says why). ``changed``: something changed
    since the last posted digest; ``text``: the digest (or what the fleet looks like when
    nothing changed), in words. ``posted``: the destinations it went to (with ``post``)."""

    read: bool
    changed: bool
    text: str
    code: Code | None = None
    posted: tuple[str, ...] = ()


class RunDigest(Request[DigestReport]):
    """Run one beat now (read, diff, record) and return the digest of what changed since the
    last posted digest; with ``post`` also post it (quiet hours or not)."""

    post: bool = False
    language: Language | None = None


class RoomRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A room as the watch last read it: its device ID and name (display text)."""

    device_id: str
    name: str


class RoomNote(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A room's note: the room, the text (cleaned), when and by which uid it was set."""

    device_id: str
    room: str
    text: str
    set_at: UtcText
    set_by: int


class NoteOutcome(Message):
    """``status``: ``saved``, ``cleared``, or nothing saved: ``ambiguous`` (``candidates`` lists
    the rooms that match; name one of them exactly) or ``not_found``; ``code`` is then
    ``room_ambiguous`` / ``room_not_found``."""

    status: Literal["saved", "cleared", "ambiguous", "not_found"]
    note: RoomNote | None = None
    candidates: tuple[RoomRef, ...] = ()
    code: Code | None = None


class SetNote(Request[NoteOutcome]):
    """Keep ``text`` as the note of the one room whose name matches ``room`` (``clear``: remove
    it). Control and bidi characters are stripped and the text cut to `MAX_NOTE_CHARS`."""

    room: RoomQuery
    text: NoteText = ""
    clear: bool = False


class Notes(Message):
    notes: tuple[RoomNote, ...]


class ListNotes(Request[Notes]):
    """The notes, by room name; ``room``: only rooms whose name holds it; ``search``: only
    notes whose text holds it (both without regard to case or accents)."""

    room: RoomQuery | None = None
    search: RoomQuery | None = None


MAX_SILENCE_MINUTES: Final = 14 * 24 * 60
"""The longest silence (`services.assistant.watch.silences.MAX_SILENCE`)."""
MAX_REASON_CHARS: Final = 200


class SilenceView(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One silence: its number, what it names (``room``: a device ID; ``group``), who set it
    (uid and user name), why, from when, until when, and when it was lifted if it was."""

    id: int
    target_kind: Literal["room", "group"]
    target: str
    target_name: str
    reason: str
    include_classes: bool
    set_by: int
    set_by_name: str
    set_at: UtcText
    until: UtcText
    lifted_at: UtcText | None = None


class SilenceOutcome(Message):
    """``status``: ``silenced``, ``lifted`` (``silences`` lists what was lifted), or nothing
    done: ``ambiguous`` (``candidates``: the rooms a name matches; ``room_ambiguous``) or
    ``not_found`` (``room_not_found``, ``silence_not_found``)."""

    status: Literal["silenced", "lifted", "ambiguous", "not_found"]
    silences: tuple[SilenceView, ...] = ()
    candidates: tuple[RoomRef, ...] = ()
    code: Code | None = None


class SetSilence(Request[SilenceOutcome]):
    """Silence ``target`` (a room's name or device ID, or a group's or building's name) for
    ``minutes`` or ``until`` a time (exactly one of them; at most `MAX_SILENCE_MINUTES`),
    because ``reason``; ``include_classes``: also hide "not recording during an event" and
    missed recordings in it. Who set it is the peer's uid (``SO_PEERCRED``), never a field."""

    target: RoomQuery
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_REASON_CHARS)]
    minutes: Annotated[int, msgspec.Meta(ge=1, le=MAX_SILENCE_MINUTES)] | None = None
    until: UtcText | None = None
    include_classes: bool = False


class Silences(Message):
    silences: tuple[SilenceView, ...]
    timezone: str = "UTC"


class ListSilences(Request[Silences]):
    """The silences that hold now, soonest to end first."""


class LiftSilence(Request[SilenceOutcome]):
    """Lift the silences that hold on ``target`` (a room's or group's name as silenced, a
    device ID, or a silence's number)."""

    target: RoomQuery


# --- the operations -----------------------------------------------------------------------

EPIPHAN_CODES: Final[frozenset[Code]] = frozenset(
    {
        Code.EPIPHAN_AUTH,
        Code.EPIPHAN_TOOL_ERROR,
        Code.EPIPHAN_UNREACHABLE,
        Code.EPIPHAN_TIMEOUT,
        Code.EPIPHAN_BAD_RESULT,
        Code.TOOL_CHANGED,
    }
)
"""What a read through `shared.epiphan.read_client.EpiphanReadClient` may fail with (an offered tool is
never refused by its guard; one whose reviewed definition changed is, ``tool_changed``)."""

READ_CODES: Final[frozenset[Code]] = EPIPHAN_CODES | {
    Code.NO_SIGN_IN,
    Code.CONFIG_INVALID,
    Code.SIGN_IN_DEAD,
    Code.REFRESH_FAILED,
    Code.SIGN_IN_BUSY,
}
"""A read by the assistant (`shared.epiphan.signed_session.SignedReader`): the read client's codes,
plus the read slot's (empty, unsafe, dead, refresh failed, locked)."""

ASK_CODES: Final[frozenset[Code]] = READ_CODES | {
    Code.MODEL_UNAVAILABLE,
    Code.MODEL_BAD_TOOL_CALL,
    Code.BUDGET_EXCEEDED,
    Code.INVALID_MESSAGE,
}
"""What an `Answer`'s ``code`` (or the `ErrorReply` to an ``ask``) may hold."""

POST_CODES: Final[frozenset[Code]] = frozenset(
    {Code.POST_FAILED, Code.POST_TIMEOUT, Code.POST_DROPPED, Code.INTERNAL_ERROR}
)
"""What a destination's last failure may be (`PostCounts.last_code`): logged, counted, never
retried."""

_NO_WATCH: Final = frozenset({Code.WATCH_NOT_READY})
"""A process that runs no watch, or a watch that has not read the fleet yet (a note)."""

_AUDIT: Final = frozenset({Code.SERVICE_UNAVAILABLE, Code.SERVICE_NO_ANSWER, Code.OPERATION_NOT_ALLOWED})
"""A silence is audited through approval.sock before it is kept: that socket not answering (or
refusing the record) refuses the silence, and nothing is kept."""

WATCH_OPERATIONS: Final = (
    Row(
        GetWatchStatus,
        READ_CODES | POST_CODES | _NO_WATCH | {Code.STORE_BUSY},
        "is the heartbeat alive: last read, failed beats in a row and the last code, posts per destination",
    ),
    Row(
        GetHistory,
        _NO_WATCH | {Code.STORE_BUSY},
        "what changed in the last days, with proposals and outcomes",
    ),
    Row(
        RunDigest,
        READ_CODES | _NO_WATCH | {Code.STORE_BUSY},
        "one heartbeat now and the digest of what changed (posted with post=true)",
    ),
    Row(
        SetNote,
        _NO_WATCH | {Code.INVALID_MESSAGE, Code.ROOM_AMBIGUOUS, Code.ROOM_NOT_FOUND, Code.STORE_BUSY},
        "keep an operator's one-line note on the one room a name matches (ambiguous: nothing saved)",
    ),
    Row(ListNotes, _NO_WATCH | {Code.STORE_BUSY}, "the room notes"),
    Row(
        SetSilence,
        _NO_WATCH
        | _AUDIT
        | {Code.INVALID_MESSAGE, Code.ROOM_AMBIGUOUS, Code.ROOM_NOT_FOUND, Code.STORE_BUSY},
        "silence a room or a group until a time, with a reason (audited; always expires)",
    ),
    Row(ListSilences, _NO_WATCH | {Code.STORE_BUSY}, "the silences that hold now"),
    Row(
        LiftSilence,
        _NO_WATCH | _AUDIT | {Code.SILENCE_NOT_FOUND, Code.STORE_BUSY},
        "lift the silences that hold on a room or group (audited)",
    ),
)
"""The watch's operations (`services.assistant.watch.answers`)."""

OPERATIONS: Final = OperationTable(
    "assistant",
    "the assistant",
    (
        Row(Ask, ASK_CODES, "answer one question (the model, or the keyword answer)"),
        Row(GetFleet, READ_CODES, "the fleet read now through the read sign-in (fleetwatch fleet)"),
        Row(GetModel, frozenset(), "which model answers (real, the lab's demo model, keyword only)"),
        *WATCH_OPERATIONS,
    ),
    frame_bytes=FLEET_FRAME_BYTES,
)
"""assistant.sock's operations, one row each. Its manifest is `services.assistant.manifest`'s,
which adds the codes that reach the model per tool group and the ask page's."""
REQUESTS: Final = OPERATIONS.requests


class AssistantClient(SocketClient):
    """assistant.sock's client (operators' ``fleetwatch ask``, ``fleet``, ``status --check``,
    ``history``, ``digest``, ``note``, ``notes``): ``call`` returns the reply, or raises
    `CallError`. Its frames may be up to `FLEET_FRAME_BYTES` (a fleet's snapshot is large).

    Args:
        path: ``settings.assistant_socket``.
        timeout_seconds: the bound on one call (a model turn takes seconds).
    """

    table = OPERATIONS
