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
- ``silence ROOM|GROUP --for 2h|--until 14:00 --reason TEXT [--include-classes]``: the watch
  says nothing of the room (or the group's rooms) until then, their return to normal included;
  who ran it is the socket peer's uid; audited; always expires (at most 14 days). A silence
  never hides "not recording during an event" unless ``--include-classes``.
- ``silences`` / ``unsilence ROOM|GROUP|N``.

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
import re
from gettext import gettext as _
from typing import Any, Final

from services.ctl import CtlError, add_language_option, admin_words, stopped
from services.ctl.output import print_json
from shared.config import Settings, load_settings
from shared.epiphan.attention import Priority
from shared.errors import Code
from shared.text.catalogue import N_, Moment, Nn_, Words, keyed, placeholder
from shared.text.changes import quoted_name
from shared.text.display import visible
from shared.text.wording import PRIORITY_WORDS
from shared.wire.assistant import (
    MAX_HISTORY_DAYS,
    MAX_SILENCE_MINUTES,
    AssistantClient,
    GetHistory,
    GetWatchStatus,
    History,
    LiftSilence,
    ListNotes,
    ListSilences,
    NoteOutcome,
    RoomNote,
    RunDigest,
    SetNote,
    SetSilence,
    SilenceOutcome,
    SilenceView,
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
    if status.held_until is not None:
        rows.append(
            [
                "",
                view.text(
                    N_("quiet hours: posts are held until %(at)s (quiet hours in %(zone)s)"),
                    at=Moment(status.held_until),
                    zone=visible(status.timezone, 64),
                ),
            ]
        )
    if status.silences:
        rows.append(
            [
                "",
                view.counted(
                    status.silences,
                    Nn_("%(n)s silence holds: %(command)s", "%(n)s silences hold: %(command)s"),
                    command=view.command("silences"),
                ),
            ]
        )
    if status.failed_beats:
        rows.append(
            [
                "",
                view.counted(
                    status.failed_beats,
                    Nn_("%(n)s failed heartbeat (%(code)s)", "%(n)s failed heartbeats in a row (%(code)s)"),
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
            view.counted(
                posts.failed,
                Nn_(", %(n)s failed (%(code)s; not retried)", ", %(n)s failed (%(code)s; not retried)"),
                code=visible(posts.last_code or "?", 40),
            )
            if posts.failed
            else ""
        )
        rows.append(
            [
                view.text(N_("Posts:")),
                view.counted(
                    posts.sent,
                    Nn_("%(where)s: %(n)s sent%(failed)s", "%(where)s: %(n)s sent%(failed)s"),
                    where=destination_words(view, posts.destination),
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


def destination_words(view: admin_words.View, destination: str) -> str:
    """Where the watch posts (``console``, ``slack``, ``teams``) in the view's words; a name the
    catalogue does not know as it is, made visible."""
    said = keyed("destination", destination)
    return view.say(said) if said is not None else visible(destination, 20)


def history_words(view: admin_words.View, reply: History, days: int) -> str:
    """``history``'s lines: each entry at its time in the operator's zone (the entry's words
    came in `view`'s language), how many older ones were left out, what could not be read."""
    if not reply.entries:
        lines = [
            view.counted(
                days, Nn_("Nothing changed in the last day.", "Nothing changed in the last %(n)s days.")
            )
        ]
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
    """``fleetwatch history [--days N]`` (from the watch's store while the services are stopped)."""
    view = view_of(args)
    settings = load_settings()
    request = GetHistory(days=args.days, language=view.language)
    client = assistant_client(settings)
    reply = await stopped.read_call(
        view, client, request, store=settings.watch_db, readout=stopped.ASSISTANT_READOUT
    )
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
    room = quoted_name(reply.note.room)
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
        names = "; ".join(view.say(quoted_name(c.name)) for c in reply.candidates)
        raise CtlError(reply.code, Words.of(N_("%(why)s Rooms that match: %(names)s"), why=why, names=names))
    raise CtlError(reply.code, _unknown_room(view, why, args.room))


def notes_words(view: admin_words.View, notes: tuple[RoomNote, ...], uid: int) -> str:
    """``notes``' lines: each room's note, when and by whom (``you`` for `uid`)."""
    if not notes:
        return view.text(N_("No room notes."))
    return "\n".join(
        view.text(
            N_("%(room)s: %(text)s  (set %(at)s by %(who)s)"),
            room=quoted_name(item.room),
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
        "--days",
        type=_days,
        default=7,
        metavar=placeholder("N"),
        help=_("how many days back (1 to 90; default: 7)"),
    )
    add_language_option(parser, _("words in English or Spanish (default: FLEETWATCH_LANGUAGE)"))
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
    add_language_option(parser, _("words in English or Spanish (default: the watch's)"))
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    parser.set_defaults(run=digest)

    parser = sub.add_parser(
        "note",
        help=_("keep an operator's one-line note on a room (shown in digests, on the wall, in answers)"),
        epilog=epilog,
    )
    parser.add_argument(
        "room", metavar=placeholder("ROOM"), help=_("the room's name (or enough of it to name one room)")
    )
    parser.add_argument(
        "text",
        metavar=placeholder("TEXT"),
        nargs="*",
        help=_("the note (one line; control characters are removed)"),
    )
    parser.add_argument("--clear", action="store_true", help=_("remove the room's note"))
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=note)

    parser = sub.add_parser("notes", help=_("the room notes"), epilog=epilog)
    parser.add_argument(
        "room", metavar=placeholder("ROOM"), nargs="?", help=_("only rooms whose name holds this")
    )
    parser.add_argument("--search", metavar=placeholder("TEXT"), help=_("only notes that hold this text"))
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=notes)

    parser = sub.add_parser(
        "silence",
        help=_(
            "silence the watch's posts on a room or a group until a time, with a reason (it always expires)"
        ),
        epilog=epilog,
    )
    parser.add_argument(
        "target",
        metavar=placeholder("ROOM|GROUP"),
        help=_("a room's name (enough of it to name one room), or a group's name"),
    )
    when = parser.add_mutually_exclusive_group(required=True)
    when.add_argument(
        "--for",
        dest="duration",
        type=_duration,
        metavar=placeholder("TIME"),
        help=_("how long: 45m, 2h, 1h30m, 3d (at most 14d)"),
    )
    when.add_argument(
        "--until",
        metavar=placeholder("TIME"),
        help=_("until 14:00 (the next one, in FLEETWATCH_TIMEZONE) or 2026-09-17T08:00"),
    )
    parser.add_argument(
        "--reason", required=True, metavar=placeholder("TEXT"), help=_("why (shown with the silence)")
    )
    parser.add_argument(
        "--include-classes",
        action="store_true",
        help=_("also hide 'not recording during an event' and missed recordings in it"),
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=silence)

    parser = sub.add_parser("silences", help=_("the silences that hold now"), epilog=epilog)
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=silences)

    parser = sub.add_parser("unsilence", help=_("lift a silence before it expires"), epilog=epilog)
    parser.add_argument(
        "target",
        metavar=placeholder("ROOM|GROUP|N"),
        help=_("the room or group as silenced, or the silence's number"),
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of text"))
    add_language_option(parser)
    parser.set_defaults(run=unsilence)


_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?")
DURATION: Final = N_("a time such as 45m, 2h, 1h30m or 3d, at most 14 days")


def _duration(text: str) -> int:
    """``--for``'s minutes."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None or not any(match.groups()):
        raise argparse.ArgumentTypeError(_(DURATION))
    days, hours, minutes = (int(g or 0) for g in match.groups())
    total = days * 1440 + hours * 60 + minutes
    if not 1 <= total <= MAX_SILENCE_MINUTES:
        raise argparse.ArgumentTypeError(_(DURATION))
    return total


def until_utc(text: str, zone: dt.tzinfo, now: dt.datetime) -> str:
    """``--until``'s UTC text: ``HH:MM`` is the next such time in `zone`; a date and time
    without a zone is in `zone`.

    Raises:
        CtlError: ``invalid_message`` (not a time).
    """
    try:
        if re.fullmatch(r"\d{1,2}:\d{2}", text.strip()):
            local = now.astimezone(zone)
            moment = dt.datetime.combine(
                local.date(), dt.time.fromisoformat(text.strip().zfill(5)), tzinfo=zone
            )
            if moment <= local:
                moment = dt.datetime.combine(local.date() + dt.timedelta(days=1), moment.time(), tzinfo=zone)
        else:
            moment = dt.datetime.fromisoformat(text.strip())
            moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)
    except ValueError as exc:
        raise CtlError(
            Code.INVALID_MESSAGE,
            Words.of(
                N_("--until takes 14:00 or 2026-09-17T08:00, not %(text)s"), text=repr(visible(text, 40))
            ),
        ) from exc
    moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def silence_words(view: admin_words.View, item: SilenceView) -> str:
    """One silence in words: what, until when (the operator's time), by whom, why."""
    return view.text(
        N_("#%(n)s %(target)s: silenced until %(until)s by %(who)s: %(reason)s%(classes)s"),
        n=item.id,
        target=quoted_name(item.target_name),
        until=Moment(item.until),
        who=visible(item.set_by_name, 40),
        reason=visible(item.reason, 200),
        classes=view.text(N_(" (classes too)")) if item.include_classes else "",
    )


def _silence_refused(view: admin_words.View, reply: SilenceOutcome, target: str) -> CtlError:
    code = reply.code or Code.INVALID_MESSAGE
    why = admin_words.meaning(view, code)
    if reply.candidates:
        names = "; ".join(view.say(quoted_name(c.name)) for c in reply.candidates)
        return CtlError(code, Words.of(N_("%(why)s Rooms that match: %(names)s"), why=why, names=names))
    return CtlError(code, _unknown_room(view, why, target))


def _unknown_room(view: admin_words.View, why: str, asked: str) -> Words:
    """`why` with the room asked for in the reader's quote marks, and the command that lists
    the rooms (``… (asked for “ENG 999”; fleetwatch fleet lists the rooms)``)."""
    return Words.of(
        N_("%(why)s (asked for %(room)s; %(command)s lists the rooms)"),
        why=why,
        room=view.say(quoted_name(asked)),
        command=view.command("fleet"),
    )


async def silence(args: argparse.Namespace) -> int:
    """``fleetwatch silence ROOM|GROUP --for 2h|--until 14:00 --reason TEXT``."""
    view = view_of(args)
    settings = load_settings()
    until = None if args.until is None else until_utc(args.until, settings.timezone, dt.datetime.now(dt.UTC))
    request = SetSilence(
        target=args.target,
        reason=args.reason,
        minutes=args.duration,
        until=until,
        include_classes=args.include_classes,
    )
    reply = await assistant_client(settings).call(request)
    if args.json:
        print_json(reply)
    if reply.code is not None:
        raise _silence_refused(view, reply, args.target)
    if not args.json:
        print("\n".join(silence_words(view, s) for s in reply.silences))
    return 0


async def silences(args: argparse.Namespace) -> int:
    """``fleetwatch silences``."""
    view = view_of(args)
    reply = await assistant_client(load_settings()).call(ListSilences())
    if args.json:
        print_json(reply)
    elif not reply.silences:
        print(view.text(N_("No silences hold now.")))
    else:
        print("\n".join(silence_words(view, s) for s in reply.silences))
    return 0


async def unsilence(args: argparse.Namespace) -> int:
    """``fleetwatch unsilence ROOM|GROUP|N``."""
    view = view_of(args)
    reply = await assistant_client(load_settings()).call(LiftSilence(target=args.target))
    if args.json:
        print_json(reply)
    if reply.code is not None:
        raise _silence_refused(view, reply, args.target)
    if not args.json:
        print(
            "\n".join(
                view.text(N_("#%(n)s %(target)s: silence lifted"), n=s.id, target=quoted_name(s.target_name))
                for s in reply.silences
            )
        )
    return 0
