"""The watch's commands: ``fleetwatch history``, ``digest``, ``note``, ``notes``, and
``status --check``. They ask the assistant over assistant.sock (operators are allowed peers
there); none changes a device, and none approves anything.

- ``status --check``: exit 0 when a heartbeat read the fleet within three intervals, else 1
  (also when the assistant does not answer): for monitors and container health checks.
- ``history [--days N] [--json]``: what changed, when (rooms offline and back, problems found
  and resolved, readiness posts, digests, notes, proposals and their outcomes), newest first.
- ``digest [--post] [--json]``: one heartbeat now and the digest of what changed since the
  last posted one; ``--post`` also posts it (to the console, Slack, Teams as configured).
- ``note ROOM TEXT`` / ``note ROOM --clear``: an operator's one-line note on a room (control
  and bidi characters stripped, capped); a name that matches several rooms lists them and
  saves nothing (exit 2, ``room_ambiguous``).
- ``notes [ROOM] [--search TEXT] [--json]``.

Every text from the fleet passes through `shared.text.display.visible`; ``--json`` escapes hidden
characters (`services.ctl.output.print_json`).

Errors: the assistant's refusal (or the assistant not running) is raised by
`shared.wire.assistant.AssistantClient` as `shared.wire.client.CallError`; a note that saved
nothing (``room_ambiguous``, ``room_not_found``) and a note without text are `CtlError`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from gettext import gettext as _
from typing import Any, Final

from services.ctl import CtlError, add_language_option, admin_words
from services.ctl.output import print_json
from shared.config import Settings, load_settings
from shared.epiphan.attention import Priority
from shared.errors import Code
from shared.text.catalogue import N_, Moment, Words
from shared.text.display import visible
from shared.text.languages import LANGUAGES
from shared.text.wording import PRIORITY_WORDS
from shared.wire.assistant import (
    MAX_HISTORY_DAYS,
    AssistantClient,
    GetHistory,
    GetWatchStatus,
    History,
    ListNotes,
    NoteOutcome,
    RoomNote,
    RunDigest,
    SetNote,
    WatchStatus,
)
from shared.wire.client import CallError

TIMEOUT_SECONDS: Final = 10.0
DIGEST_TIMEOUT_SECONDS: Final = 120.0
"""A digest runs a whole heartbeat (a large fleet takes seconds)."""
TEXT_CAP: Final = 2000
DAYS: Final = N_("a whole number of days from 1 to %s")
"""``history --days``'s complaint (said to argparse in the language `services.ctl.main.said_in`
holds)."""


def assistant_client(settings: Settings) -> AssistantClient:
    """assistant.sock's client, from the settings. Its calls raise `CallError`."""
    return AssistantClient(settings.assistant_socket, timeout_seconds=TIMEOUT_SECONDS)


def render_status(status: WatchStatus, view: admin_words.View | None = None) -> str:
    """The watch's status in words (``status`` shows it under the queue), in the view's
    language and the operator's time (English and UTC's zone without a view)."""
    view = view or admin_words.view_for("en", "en", dt.UTC)
    if status.last_read_at is None:
        read = view.text(N_("the fleet has not been read yet"))
    else:
        read = view.text(N_("the fleet was last read %(at)s"), at=Moment(status.last_read_at))
    state = view.text(N_("alive") if status.alive else N_("NOT alive (no read within three heartbeats)"))
    rows = [
        [
            view.text(N_("Watch:")),
            view.text(
                N_("%(state)s; %(read)s; a heartbeat every %(seconds)s s"),
                state=state,
                read=read,
                seconds=f"{status.interval_seconds:g}",
            ),
        ]
    ]
    if status.failed_beats:
        rows.append(
            [
                "",
                view.text(
                    N_("%(n)s failed heartbeat(s) in a row (%(code)s)"),
                    n=status.failed_beats,
                    code=visible(status.last_code or "?", 64),
                ),
            ]
        )
    if status.last_read_at is not None:
        priorities = PRIORITY_WORDS[view.language]
        rows.append(
            [
                view.text(N_("Fleet:")),
                view.text(
                    N_(
                        "%(n)s rooms, %(online)s online; %(first)s %(a)s, %(soon)s %(b)s, %(convenient)s %(c)s"
                    ),
                    n=status.devices,
                    online=status.online,
                    first=priorities[Priority.FIX_FIRST],
                    a=status.fix_first,
                    soon=priorities[Priority.FIX_SOON],
                    b=status.fix_soon,
                    convenient=priorities[Priority.WHEN_CONVENIENT],
                    c=status.when_convenient,
                ),
            ]
        )
    for posts in status.posts:
        failed = (
            view.text(
                N_(", %(n)s failed (%(code)s; not retried)"),
                n=posts.failed,
                code=visible(posts.last_code or "?", 40),
            )
            if posts.failed
            else ""
        )
        rows.append(
            [
                view.text(N_("Posts:")),
                view.text(
                    N_("%(where)s: %(n)s sent%(failed)s"),
                    where=visible(posts.destination, 20),
                    n=posts.sent,
                    failed=failed,
                ),
            ]
        )
    return "\n".join(admin_words.table(["", ""], rows, indent="")[1:])


view_of = admin_words.view_of


def check_words(view: admin_words.View, status: WatchStatus | None, code: str | None = None) -> str:
    """``status --check``'s one line in `view`'s language and zone: OK with when the heartbeat
    last read the fleet, or NOT OK and why (`status` None: the watch did not answer, `code`)."""
    if status is None:
        return view.text(
            N_("NOT OK: the watch did not answer (%(why)s)"),
            why=admin_words.meaning(view, code) if code else "—",
        )
    if status.alive and status.last_read_at:
        return view.text(
            N_("OK: the heartbeat read the fleet at %(at)s (every %(seconds)s s)"),
            at=Moment(status.last_read_at),
            seconds=f"{status.interval_seconds:g}",
        )
    return view.text(
        N_("NOT OK: no heartbeat read the fleet within three intervals (last read: %(at)s)"),
        at=Moment(status.last_read_at) if status.last_read_at else view.text(N_("never")),
    )


async def status_check(args: argparse.Namespace) -> int:
    """``fleetwatch status --check``: 0 when the heartbeat is alive, else 1 (one line either way)."""
    view = view_of(args)
    try:
        status = await assistant_client(load_settings()).call(GetWatchStatus())
    except CallError as exc:
        if args.json:
            print_json({"alive": False, "code": str(exc.code), "message": exc.message})
        else:
            print(check_words(view, None, str(exc.code)))
        return 1
    if args.json:
        print_json(status)
    else:
        print(check_words(view, status))
    return 0 if status.alive else 1


async def watch_status(settings: Settings) -> WatchStatus | None:
    """The watch's status for ``fleetwatch status`` (None when the assistant does not answer)."""
    try:
        return await assistant_client(settings).call(GetWatchStatus())
    except CallError:
        return None


def history_words(view: admin_words.View, reply: History, days: int) -> str:
    """``history``'s lines: each entry at its time in the operator's zone (the entry's words
    came in `view`'s language), how many older ones were left out, what could not be read."""
    if not reply.entries:
        lines = [view.text(N_("Nothing changed in the last %(n)s day(s)."), n=days)]
    else:
        lines = [f"{view.when(entry.at)}  {visible(entry.text, TEXT_CAP)}" for entry in reply.entries]
    if reply.more:
        lines.append(view.text(N_("… and %(n)s older entries not shown."), n=reply.more))
    for source, code in reply.unread.items():
        lines.append(
            view.text(
                N_("Not shown: %(source)s could not be read (%(why)s)."),
                source=visible(source, 40),
                why=admin_words.meaning(view, str(code)).rstrip("."),
            )
        )
    return "\n".join(lines)


async def history(args: argparse.Namespace) -> int:
    """``fleetwatch history [--days N]``."""
    view = view_of(args)
    reply = await assistant_client(load_settings()).call(GetHistory(days=args.days, language=view.language))
    if args.json:
        print_json(reply)
    else:
        print(history_words(view, reply, args.days))
    return 0


def posted_words(view: admin_words.View, posted: tuple[str, ...]) -> str:
    """Where ``digest --post`` posted (or that nothing changed, so nothing was posted)."""
    if posted:
        return view.text(N_("Posted to: %(where)s."), where=", ".join(visible(p, 40) for p in posted))
    return view.text(N_("Nothing to post: nothing changed."))


async def digest(args: argparse.Namespace) -> int:
    """``fleetwatch digest [--post]``."""
    view = view_of(args)
    reply = await assistant_client(load_settings()).call(
        RunDigest(post=args.post, language=args.language), timeout_seconds=DIGEST_TIMEOUT_SECONDS
    )
    if args.json:
        print_json(reply)
        return 0
    print("\n".join(visible(line, TEXT_CAP) for line in reply.text.splitlines()))
    if args.post:
        print(posted_words(view, reply.posted))
    return 0


def note_words(view: admin_words.View, reply: NoteOutcome) -> str:
    """What ``note`` did, in words (empty when it saved nothing: the error says why)."""
    if reply.note is None:
        return ""
    room = visible(reply.note.room, 80)
    if reply.status == "cleared":
        return view.text(N_("Note on %(room)s removed."), room=room)
    return view.text(N_("Note on %(room)s saved: %(text)s"), room=room, text=visible(reply.note.text, 400))


async def note(args: argparse.Namespace) -> int:
    """``fleetwatch note ROOM TEXT`` / ``--clear``."""
    if not args.clear and not args.text:
        raise CtlError(
            Code.INVALID_MESSAGE, Words.of(N_("give the note's text, or --clear to remove the room's note"))
        )
    view = view_of(args)
    message = SetNote(room=args.room, text=" ".join(args.text or ()), clear=args.clear)
    reply = await assistant_client(load_settings()).call(message)
    if args.json:
        print_json(reply)
    elif reply.note is not None:
        print(note_words(view, reply))
    if reply.code is None:
        return 0
    why = admin_words.meaning(view, reply.code)
    if reply.candidates:
        names = "; ".join(visible(c.name, 80) for c in reply.candidates)
        raise CtlError(reply.code, Words.of(N_("%(why)s Rooms that match: %(names)s"), why=why, names=names))
    raise CtlError(
        reply.code, Words.of(N_("%(why)s (asked for %(room)s)"), why=why, room=repr(visible(args.room, 80)))
    )


def notes_words(view: admin_words.View, notes: tuple[RoomNote, ...], uid: int) -> str:
    """``notes``' lines: each room's note, when and by whom (``you`` for `uid`)."""
    if not notes:
        return view.text(N_("No room notes."))
    return "\n".join(
        view.text(
            N_("%(room)s: %(text)s  (set %(at)s by %(who)s)"),
            room=visible(item.room, 80),
            text=visible(item.text, 400),
            at=Moment(item.set_at),
            who=view.text(N_("you")) if item.set_by == uid else f"uid {item.set_by}",
        )
        for item in notes
    )


async def notes(args: argparse.Namespace) -> int:
    """``fleetwatch notes [ROOM] [--search TEXT]``."""
    reply = await assistant_client(load_settings()).call(
        ListNotes(room=args.room or None, search=args.search or None)
    )
    if args.json:
        print_json(reply)
    else:
        print(notes_words(view_of(args), reply.notes, os.getuid()))
    return 0


def _days(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_HISTORY_DAYS:
        raise argparse.ArgumentTypeError(_(DAYS) % MAX_HISTORY_DAYS)
    return int(text)


def add_commands(sub: Any, epilog: str) -> None:
    """Add the watch's commands to ``fleetwatch``'s subparsers `sub` (``status --check`` is
    added by ``status`` itself)."""
    parser = sub.add_parser(
        "history",
        help=_("what changed, when: rooms, problems, readiness, digests, notes, proposals and outcomes"),
        epilog=epilog,
    )
    parser.add_argument(
        "--days", type=_days, default=7, metavar="N", help=_("how many days back (1 to 90; default: 7)")
    )
    parser.add_argument(
        "--language", choices=LANGUAGES, help=_("words in English or Spanish (default: FLEETWATCH_LANGUAGE)")
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    parser.set_defaults(run=history)

    parser = sub.add_parser(
        "digest",
        help=_("one heartbeat now, and the digest of what changed since the last posted one"),
        epilog=epilog,
    )
    parser.add_argument(
        "--post", action="store_true", help=_("also post it (console, Slack, Teams as configured)")
    )
    parser.add_argument(
        "--language", choices=LANGUAGES, help=_("words in English or Spanish (default: the watch's)")
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    parser.set_defaults(run=digest)

    parser = sub.add_parser(
        "note",
        help=_("keep an operator's one-line note on a room (shown in digests, on the wall, in answers)"),
        epilog=epilog,
    )
    parser.add_argument("room", metavar="ROOM", help=_("the room's name (or enough of it to name one room)"))
    parser.add_argument(
        "text", metavar="TEXT", nargs="*", help=_("the note (one line; control characters are removed)")
    )
    parser.add_argument("--clear", action="store_true", help=_("remove the room's note"))
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=note)

    parser = sub.add_parser("notes", help=_("the room notes"), epilog=epilog)
    parser.add_argument("room", metavar="ROOM", nargs="?", help=_("only rooms whose name holds this"))
    parser.add_argument("--search", metavar="TEXT", help=_("only notes that hold this text"))
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=notes)
