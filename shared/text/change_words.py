"""Changes and refusals in words, in English and Latin American Spanish, from the one
catalogue (`shared.text.catalogue`: the messages here are its English IDs; a translator edits
the Spanish in ``shared/text/locales/es``). Pure.

A person reads rooms and changes in words, never tool names or codes alone: "start recording
in Sandbox Classroom", "the queue already holds 3 proposals; approve or deny one first". Used
by the assistant's code-built lines (proposals made, proposals refused), ``fleetwatch status``
and ``fleetwatch demo``. Every name from the fleet passes through `shared.text.display.visible`.

`REFUSALS` has a sentence for every code a proposal can be refused with, or an answer can end
on (the assistant's manifest: ``propose_change``, ``list_writable_devices``, reads, ``ask``);
a test holds the two together and checks that no sentence holds a snake_case word. A sentence
may name ``{max_pending}``, ``{per_hour}`` (the policy's numbers), nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from shared.errors import Code
from shared.text.catalogue import N_, translate
from shared.text.display import visible

CHANGES: Final[Mapping[tuple[str, str | None], str]] = MappingProxyType(
    {
        ("batch_recording", "start"): N_("start recording"),
        ("batch_recording", "stop"): N_("stop recording"),
        ("batch_recording", None): N_("start or stop recording"),
        ("start_stream_endpoint", None): N_("start streaming"),
        ("stop_stream_endpoint", None): N_("stop streaming"),
        ("confirm_cms_event_on_device", None): N_("confirm the scheduled event"),
        ("batch_reboot", None): N_("reboot"),
        ("batch_firmware_update", None): N_("update the firmware"),
    }
)
"""(tool, its ``action`` argument or None) -> what the change does (a catalogue message)."""
OTHER_CHANGE: Final = N_("a change")

REFUSALS: Final[Mapping[Code, str]] = MappingProxyType(
    {
        Code.QUEUE_FULL: N_(
            "the queue already holds {max_pending} proposals; approve or deny one on the approval page first"
        ),
        Code.HOURLY_CAP_REACHED: N_(
            "{per_hour} changes were already proposed in the last hour, the most allowed; try again later"
        ),
        Code.DENIAL_PAUSE: N_(
            "a person denied this change for this room several times, so it is paused for a while; "
            "'fleetwatch status' says until when, and an operator can lift it with 'fleetwatch resume --denials'"
        ),
        Code.POST_DROPPED: N_(
            "too many posts were waiting to be sent, so this one was dropped (it is logged and counted)"
        ),
        Code.POST_FAILED: N_(
            "Slack or Teams refused or failed the post; it is logged and counted, and not sent again"
        ),
        Code.POST_TIMEOUT: N_(
            "Slack or Teams did not answer the post in time; it is logged and counted, and not sent again"
        ),
        Code.ROOM_AMBIGUOUS: N_(
            "more than one room matches that name; nothing was saved: name one of them exactly"
        ),
        Code.ROOM_NOT_FOUND: N_("no room of the fleet, as the watch last read it, matches that name"),
        Code.SILENCE_NOT_FOUND: N_(
            "no silence that still holds matches that room, group or number; nothing was lifted"
        ),
        Code.WATCH_NOT_READY: N_("the watch has not read the fleet yet; try again after its first heartbeat"),
        Code.TARGET_BUSY: N_(
            "another change for this room is already waiting for a person or has not finished; "
            "decide that one on the approval page first"
        ),
        Code.TARGET_UNVERIFIED: N_(
            "the last change to this room may or may not have worked and a fresh read could not confirm it; "
            "check the room, then an operator acknowledges it ('fleetwatch status' shows which)"
        ),
        Code.DUPLICATE_PROPOSAL: N_("the same change was already proposed and is shown above"),
        Code.FSM_BLOCKED: N_(
            "the assistant had not yet read which rooms it may change, or another change for this room "
            "is still open in this question"
        ),
        Code.BUDGET_EXCEEDED: N_(
            "this question used up its budget of model calls, words or time before it finished"
        ),
        Code.OBSERVE_MODE: N_("the policy is set to only watch, so nothing may be proposed"),
        Code.FENCE_NOT_CONFIGURED: N_(
            "no room is set up to be changed from here (the write fence is not configured)"
        ),
        Code.NOT_PROPOSABLE: N_("the policy does not allow this kind of change to be proposed"),
        Code.SCHEMA_NOT_REVIEWED: N_(
            "this kind of change has not been reviewed yet, so it cannot be proposed"
        ),
        Code.INVALID_ARGUMENTS: N_("the change was not described in the form the policy requires"),
        Code.TOO_MANY_TARGETS: N_("the change named more rooms than one proposal may change"),
        Code.HIDDEN_CHARACTER: N_("the change held a hidden or control character"),
        Code.NOT_CANONICALIZABLE: N_(
            "the change held a value that cannot be checked exactly (a fraction, or a repeated field)"
        ),
        Code.TARGET_NOT_ALLOWLISTED: N_("this room is not on the list of rooms Fleetwatch may change"),
        Code.TARGET_NOT_IN_SANDBOX: N_(
            "this room is not one of the practice rooms that may be changed; it can only be read"
        ),
        Code.TEAM_MISMATCH: N_("the practice team's sign-in belongs to another team than the one configured"),
        Code.CHANNEL_NOT_FOUND: N_("the room has no such channel"),
        Code.MODEL_NOT_CAPABLE: N_(
            "this kind of device cannot do that (an EC20 camera cannot record, stream or hold events)"
        ),
        Code.TARGET_OFFLINE: N_("the room is offline, so a reboot or firmware update cannot reach it"),
        Code.STREAM_NOT_FOUND: N_("that stream destination is not on the practice team's list"),
        Code.STREAM_IN_USE: N_("another room is using that stream destination, so a start would fail"),
        Code.STREAM_NOT_STREAMING: N_(
            "that stream destination is not streaming from the room, so there is nothing to stop"
        ),
        Code.EVENT_NOT_CURRENT: N_("that event is not the room's current or next event"),
        Code.DEVICE_LIST_UNREADABLE: N_("the practice team's room list could not be read just now"),
        Code.STATE_READ_FAILED: N_("the room's state could not be read just now"),
        Code.TOOL_CHANGED: N_(
            "Epiphan changed how this kind of change is defined since a person reviewed it, so it cannot be proposed or run until it is reviewed again (see 'fleetwatch tools diff')"
        ),
        Code.NO_SIGN_IN: N_("there is no usable sign-in for this (see 'fleetwatch doctor')"),
        Code.POLICY_INVALID: N_("the policy files no longer load (see 'fleetwatch doctor')"),
        Code.CONFIG_INVALID: N_("a setting is missing or wrong (see 'fleetwatch doctor')"),
        Code.INVALID_MESSAGE: N_("the request was malformed or too long"),
        Code.OPERATION_NOT_ALLOWED: N_("the assistant is not allowed to do that"),
        Code.PEER_NOT_ALLOWED: N_("the service refused this process's user"),
        Code.SERVICE_UNAVAILABLE: N_("a Fleetwatch service it needs is not running"),
        Code.SERVICE_NO_ANSWER: N_("a Fleetwatch service did not answer in time"),
        Code.INTERNAL_ERROR: N_("an unexpected error happened; it was logged"),
        Code.STORE_BUSY: N_("the store was busy; nothing was written, try again"),
        Code.PROPOSAL_NOT_FOUND: N_("that proposal does not exist"),
        Code.UNKNOWN_TOOL: N_("the model asked for something that does not exist; nothing was done"),
        Code.TOOL_NOT_ALLOWED: N_(
            "the model tried to change something directly, which is never allowed; nothing was done"
        ),
        Code.MODEL_UNAVAILABLE: N_("the model could not be used, so the keyword answer was given"),
        Code.MODEL_BAD_TOOL_CALL: N_("the model's tool call came malformed, so nothing of it was run"),
        Code.MODEL_NOT_LOCAL: N_(
            "the model's address is not on this machine or a private network, and only a local model is allowed"
        ),
        Code.EPIPHAN_AUTH: N_("Epiphan refused the sign-in (see 'fleetwatch doctor')"),
        Code.EPIPHAN_TOOL_ERROR: N_("Epiphan answered with an error"),
        Code.PLAN_REQUIRED: N_(
            "Epiphan refused the change because this team's plan does not allow changes "
            "(they need Epiphan Edge Premium); reading the rooms keeps working"
        ),
        Code.EPIPHAN_UNREACHABLE: N_("Epiphan could not be reached"),
        Code.EPIPHAN_TIMEOUT: N_("Epiphan did not answer in time"),
        Code.EPIPHAN_BAD_RESULT: N_("Epiphan's answer could not be read"),
        Code.SIGN_IN_DEAD: N_("the sign-in has ended; sign in again ('fleetwatch login')"),
        Code.REFRESH_FAILED: N_("the sign-in could not be refreshed just now; it is tried again later"),
        Code.CSRF_FAILED: N_("the form does not belong to this page and browser session; reload the page"),
        Code.CROSS_SITE: N_("the request did not come from this page itself"),
        Code.BAD_HOST: N_(
            "the page was reached by a name it does not answer to; open the address Fleetwatch printed"
        ),
        Code.BODY_TOO_LARGE: N_("the request was larger than this page accepts"),
        Code.SECRET_REQUIRED: N_("enter the page's secret first; it is asked once per browser session"),
        Code.SECRET_WRONG: N_("that is not the page's secret"),
        Code.SLOW_DOWN: N_("too many wrong entries; wait a little, then try again"),
        Code.SIGN_IN_BUSY: N_("another process was renewing the sign-in; try again"),
        Code.METHOD_NOT_ALLOWED: N_("this address only accepts the page's own form"),
        Code.PAGE_NOT_FOUND: N_("the page has no such address"),
        Code.SLACK_NOT_ALLOWED: N_("this Slack member is not on the list of people who may ask"),
        Code.SLACK_WRONG_TEAM: N_("the ask came from another Slack workspace than this Fleetwatch's"),
        Code.SLACK_CHANNEL_NOT_SERVED: N_(
            "questions are answered in direct messages and the ask channels only"
        ),
        Code.SLACK_RATE_LIMITED: N_("too many questions from this member in the last minute; wait a moment"),
        Code.SLACK_QUESTION_TOO_LONG: N_("the question is longer than the cap; ask a shorter one"),
        Code.SESSION_NOT_YOURS: N_(
            "this browser session was signed in by another user of this computer; it has been ended, enter the secret again"
        ),
        Code.STORE_FULL: N_("the disk of the record store is full; ask an administrator to free space"),
        Code.STORE_READ_ONLY: N_("the record store cannot be written; ask an administrator"),
    }
)
"""Code -> why, in words a person reads (a catalogue message; ``{max_pending}`` and
``{per_hour}`` are filled after translation)."""

_NOT_PROPOSED: Final = N_("Not proposed")
_UNKNOWN_ROOM: Final = N_("device {id}")
_CANNOT: Final = N_("it could not be done")
SNAKE_CASE: Final = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
"""What a raw code or tool name looks like (``queue_full``, ``batch_recording``)."""


def _pick(msgid: str, language: str) -> str:
    return translate("es" if language == "es" else "en", msgid)


def change(tool: str, action: str | None, language: str) -> str:
    """What a change does, in words: ``start recording``, ``reboot``..."""
    msgid = CHANGES.get((tool, action)) or CHANGES.get((tool, None)) or OTHER_CHANGE
    return _pick(msgid, language)


def rooms(names: Sequence[str], ids: Sequence[str], language: str) -> str:
    """The rooms a change names: their names (made visible), or ``device <ID>`` where a name is
    not known; joined with commas."""
    out = []
    for index, device_id in enumerate(ids):
        name = names[index] if index < len(names) else ""
        out.append(
            visible(name, 80) if name else _pick(_UNKNOWN_ROOM, language).format(id=visible(device_id, 40))
        )
    return ", ".join(out)


def change_in(tool: str, action: str | None, names: Sequence[str], ids: Sequence[str], language: str) -> str:
    """``start recording in Sandbox Classroom`` (no rooms known: the change alone)."""
    what = change(tool, action, language)
    where = rooms(names, ids, language)
    return _pick(N_("%(what)s in %(where)s"), language) % {"what": what, "where": where} if where else what


def why(code: Code, language: str, *, max_pending: int = 3, per_hour: int = 10) -> str:
    """Why, in words, for a stable code (`REFUSALS`); a code without a sentence gets the plain
    "it could not be done" (never the code itself)."""
    msgid = REFUSALS.get(code, _CANNOT)
    return _pick(msgid, language).format(max_pending=max_pending, per_hour=per_hour)


def not_proposed(what: str, code: Code, language: str, **numbers: int) -> str:
    """``Not proposed: start recording in Sandbox Classroom: the queue already holds …``."""
    return _pick(N_("%(label)s: %(what)s: %(why)s."), language) % {
        "label": _pick(_NOT_PROPOSED, language),
        "what": what,
        "why": why(code, language, **numbers),
    }
