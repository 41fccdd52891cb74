"""The watch's words: English in code, each under the catalogue context ``watch``; every
language from the one catalogue (`shared.text.catalogue`, Spanish in
``shared/text/locales/es``), read through `word`.

``{n}`` is a count; other fields are named (filled after translation). Room names never sit in
these strings: code puts them in, through `shared.text.display.visible`. Priorities use
`shared.text.wording.PRIORITY_WORDS`.
"""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import C_, Lexicon

WORDS: Final[Lexicon[str, str]] = Lexicon(
    "watch",
    {
        "digest_first": C_(
            "watch", "Fleetwatch is now watching {rooms} rooms ({online} online). What needs attention:"
        ),
        "digest_head": C_(
            "watch", "Fleetwatch, what changed since {since}: {counts}. {rooms} rooms, {online} online."
        ),
        "digest_head_start": C_(
            "watch", "Fleetwatch, what changed: {counts}. {rooms} rooms, {online} online."
        ),
        "digest_nothing": C_(
            "watch", "Nothing changed since {since}. {rooms} rooms, {online} online; {open} open problem(s)."
        ),
        "digest_not_read": C_("watch", "The fleet has not been read yet."),
        "count_new": C_("watch", "{n} new"),
        "count_worse": C_("watch", "{n} worse"),
        "count_resolved": C_("watch", "{n} resolved"),
        "count_rooms": C_("watch", "{n} room change(s)"),
        "resolved": C_("watch", "Resolved"),
        "fleet": C_("watch", "The fleet"),
        "was": C_("watch", "(was: {priority})"),
        "resolved_line": C_("watch", "{what}: no longer"),
        "came_and_went": C_("watch", "Also: {n} problem(s) came and went since then."),
        "decisions_week": C_(
            "watch",
            "Approvals, last {days} days: {approved} approved and {denied} denied by {people} person(s); "
            "{fast} decided faster than the card can be read (under {seconds} s). fleetwatch audit decisions",
        ),
        "device_new": C_("watch", "{room}: new in the team"),
        "device_gone": C_("watch", "{room}: no longer in the team"),
        "note": C_("watch", "Note (an operator's): {text}"),
        "more": C_("watch", "…and {n} more."),
        "whole_fleet": C_("watch", "The whole fleet"),
        "fleet_unreadable": C_("watch", "could not be read for {beats} heartbeats in a row ({code})"),
        "read_failed": C_(
            "watch",
            "Fleetwatch could not read the fleet ({code}: {meaning}). It will say when it reads it again.",
        ),
        "read_recovered": C_("watch", "Fleetwatch reads the fleet again, after {beats} failed heartbeat(s)."),
        "approval_down": C_(
            "watch",
            "Fleetwatch's approval service has not answered for {minutes} min ({code}: {meaning}): nothing can be approved or run until it is back. 'fleetwatch status' and 'fleetwatch doctor' say why.",
        ),
        "approval_back": C_(
            "watch", "Fleetwatch's approval service answers again: proposals can be approved."
        ),
        "read_partial": C_(
            "watch",
            "Fleetwatch read the fleet, but not all of it: {parts}. What needs those parts is kept as it was until they are read again.",
        ),
        "readiness_head": C_("watch", "Readiness: an event starts within {minutes} min (times in {zone})."),
        "ready": C_("watch", "Ready"),
        "ready_notes": C_("watch", "Ready, with notes"),
        "not_ready": C_("watch", "Not ready"),
        "readiness_line": C_("watch", '{room}: "{title}" at {time} (in {minutes}): {verdict}'),
        "why_offline": C_("watch", "offline"),
        "why_offline_for": C_("watch", "offline for {time}"),
        "why_updating": C_("watch", "a firmware update is running"),
        "why_no_signal": C_("watch", "no signal on {what}"),
        "why_no_storage": C_("watch", "no storage detected"),
        "why_disk_critical": C_("watch", "disk almost full: {free}"),
        "why_disk_low": C_("watch", "disk nearly full: {free}"),
        "why_not_confirmed": C_("watch", "the event is not confirmed on the device"),
        "why_hot": C_("watch", "running hot ({temp} °C, CPU {cpu}%)"),
        "why_rebooted": C_("watch", "restarted {minutes} min ago"),
        "why_unread": C_("watch", "{what}: could not be read"),
        "why_firmware": C_("watch", "firmware {firmware}, newest of its model here {newest}"),
        "untitled": C_("watch", "untitled event"),
        "notice_head": C_("watch", "A change is waiting for a person's approval."),
        "notice_who": C_(
            "watch", "Proposed by {who} at {time}; unless approved or denied it expires at {expires}."
        ),
        "notice_who_no_expiry": C_("watch", "Proposed by {who} at {time}."),
        "notice_page": C_(
            "watch", "Approve or deny it on the approval page, on the Fleetwatch machine: {url}"
        ),
        "notice_no_page": C_("watch", "The approval page is not running: no one can approve it until it is."),
        "notice_inert": C_("watch", "This message cannot approve anything. (proposal {proposal})"),
        "by_assistant": C_("watch", "the assistant"),
        "by_operator": C_("watch", "an operator"),
        "by_other": C_("watch", "someone ({who})"),
        "change_start_recording": C_("watch", "Start recording"),
        "change_stop_recording": C_("watch", "Stop recording"),
        "change_start_stream": C_("watch", "Start a stream"),
        "change_stop_stream": C_("watch", "Stop a stream"),
        "change_confirm_event": C_("watch", "Confirm a scheduled event"),
        "change_reboot": C_("watch", "Restart a device"),
        "change_firmware": C_("watch", "Update a device's firmware"),
        "change_other": C_("watch", "Run the Epiphan tool {tool}"),
        "channel": C_("watch", "channel {channel}"),
        "channel_named": C_("watch", "channel {channel} ({name})"),
        "unknown_room": C_("watch", "a sandbox room (ID {device}; its name could not be read)"),
        "sweep_head": C_("watch", "Nightly sweep, {date}: {rooms} rooms, {online} online."),
        "sweep_offline": C_("watch", "Offline ({n})"),
        "sweep_offline_none": C_("watch", "No room is offline."),
        "sweep_behind": C_("watch", "Behind on firmware ({n})"),
        "sweep_behind_none": C_("watch", "Every room runs the newest firmware of its model here."),
        "sweep_behind_line": C_("watch", "{room}: {model} on {firmware}; newest here {newest}"),
        "sweep_since": C_(
            "watch",
            "Since the last sweep: {opened} problem(s) found, {resolved} resolved, {offline} time(s) a room went offline, {online} came back.",
        ),
        "sweep_first": C_("watch", "This is the first sweep."),
        "h_device_offline": C_("watch", "{room}: went offline"),
        "h_device_online": C_("watch", "{room}: came back online"),
        "h_device_new": C_("watch", "{room}: new in the team"),
        "h_device_gone": C_("watch", "{room}: no longer in the team"),
        "h_finding_opened": C_("watch", "{priority}: {what}"),
        "h_finding_worse": C_("watch", "Worse, now {priority}: {what}"),
        "h_finding_resolved": C_("watch", "Resolved: {what}"),
        "h_read_failed": C_("watch", "The fleet could not be read ({code})"),
        "h_read_recovered": C_("watch", "The fleet was read again after {beats} failed heartbeat(s)"),
        "h_read_partial": C_("watch", "Part of the fleet could not be read ({parts})"),
        "h_read_complete": C_("watch", "The whole fleet was read again"),
        "h_first_read": C_("watch", "The watch started: {rooms} rooms, {online} online"),
        "h_readiness": C_("watch", 'Readiness posted: {room}, "{title}": {verdict}'),
        "h_digest": C_("watch", "Digest posted: {counts}"),
        "h_sweep": C_("watch", "Nightly sweep: {rooms} rooms, {online} online"),
        "h_note": C_("watch", "{room}: note set: {text}"),
        "h_note_cleared": C_("watch", "{room}: note removed"),
        "h_proposal": C_("watch", "Proposed by {who}: {change}"),
        "h_proposal_status": C_("watch", "{change}: {status}"),
        "status_denied": C_("watch", "denied; nothing ran"),
        "status_expired": C_("watch", "expired without approval; nothing ran"),
        "status_approved": C_("watch", "approved, not run yet"),
        "status_pending": C_("watch", "waiting for approval"),
        "status_not_run": C_("watch", "approved, but nothing ran ({code})"),
        "status_ok": C_("watch", "ran ok"),
        "status_verified": C_("watch", "ran ok and verified"),
        "status_contradicted": C_("watch", "ran, but a later read contradicts the change"),
        "status_error": C_("watch", "ran with an error"),
        "status_unknown": C_("watch", "may or may not have run (the outcome is unknown)"),
        "status_refused": C_("watch", "refused by the executor's checks; nothing ran"),
        "status_running": C_("watch", "running"),
        "history_none": C_("watch", "Nothing changed in the last {days} day(s)."),
        "history_partial": C_("watch", "Not shown: {what} could not be read ({code})."),
        "proposals_word": C_("watch", "proposals"),
        "wall_title": C_("watch", "Fleetwatch: the fleet now"),
        "wall_read": C_("watch", "Fleet last read at {time} ({ago} ago)."),
        "wall_not_read": C_("watch", "The fleet has not been read yet."),
        "wall_stale": C_("watch", "Fleet last read at {time}, {ago} ago: more than three heartbeats ago."),
        "wall_problem": C_("watch", "The last {n} heartbeat(s) could not read the fleet ({code})."),
        "wall_counts": C_("watch", "{rooms} rooms, {online} online."),
        "wall_all_clear": C_("watch", "Nothing needs attention."),
        "wall_events": C_("watch", "Classes on now and in the next {hours} h (times in {zone})"),
        "wall_no_events": C_("watch", "No classes on now or in the next hours."),
        "wall_when": C_("watch", "When"),
        "wall_room": C_("watch", "Room"),
        "wall_event": C_("watch", "Class"),
        "wall_ready": C_("watch", "Readiness"),
        "wall_on_now": C_("watch", "on now"),
        "count_missed": C_("watch", "{n} missed recording(s)"),
        "group_offline": C_("watch", "{group}: {n} of {of} rooms went offline"),
        "missed_recording": C_(
            "watch",
            '{room}: missed recording: "{title}" ended at {ended} and no recording was seen on its channels',
        ),
        "missed_maybe": C_(
            "watch",
            '{room}: may have been missed: "{title}" ended at {ended} while the watch was not reading the fleet; {seen}; the recorder now: {recorder}',
        ),
        "seen_on_yes": C_("watch", "it was seen on, not recording"),
        "seen_on_no": C_("watch", "it was not seen on"),
        "recorder_recording": C_("watch", "recording (since after the event ended)"),
        "recorder_not_recording": C_("watch", "not recording"),
        "recorder_offline": C_("watch", "offline"),
        "recorder_not_read": C_("watch", "could not be read"),
        "silenced_head": C_("watch", "Silenced"),
        "silenced_line": C_("watch", "{target}: silenced until {until} by {who}: {reason}"),
        "held_until": C_("watch", "Quiet hours: posts are held until {time} ({zone})."),
        "h_silence": C_("watch", "{room}: silenced until {until} by {who}: {reason}"),
        "h_unsilence": C_("watch", "{room}: silence lifted"),
        "h_missed_recording": C_("watch", "Fix first: {what}"),
        "h_missed_recording_maybe": C_("watch", "Fix first: {what}"),
        "reminder_head": C_("watch", "Reminder: a change is still waiting for a person's approval."),
        "reminder_line": C_("watch", "Unless approved or denied it expires at {expires} (in {minutes})."),
        "closed_approved": C_("watch", "Update: {change}: approved on the approval page."),
        "closed_denied": C_("watch", "Update: {change}: denied; nothing ran."),
        "closed_expired": C_("watch", "Update: {change}: expired without approval; nothing ran."),
        "wall_footer": C_(
            "watch", "Read-only: nothing on this screen can change anything. It refreshes every {seconds} s."
        ),
    },
)
"""Each phrase by key (``WORDS["es"]["wall_title"]``)."""


def word(language: str, key: str, **facts: object) -> str:
    """The phrase `key` in `language` (``es``, else English), with `facts` filled in."""
    table = WORDS["es" if language == "es" else "en"]
    return table[key].format(**facts) if facts else table[key]
