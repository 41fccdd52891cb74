"""The words of `shared.text.fleet_answers`, in English and Latin American Spanish (data only).

``HEADINGS`` holds each list's first sentence as a (one, many) pair, ``{n}`` the count;
``WORDS`` every other phrase. Keys are the same in both languages.
"""

from __future__ import annotations

from typing import Final

from shared.text.catalogue import C_, Lexicon

HEADINGS: Final[Lexicon[str, tuple[str, ...]]] = Lexicon(
    "fleet heading",
    {
        "offline": (C_("fleet heading", "1 room is offline:"), C_("fleet heading", "{n} rooms are offline:")),
        "recording": (
            C_("fleet heading", "1 room is recording now:"),
            C_("fleet heading", "{n} rooms are recording now:"),
        ),
        "disk": (
            C_("fleet heading", "1 room is short of storage:"),
            C_("fleet heading", "{n} rooms are short of storage:"),
        ),
        "heat": (
            C_("fleet heading", "1 room is running hot (≥ {temp:.0f} °C) or busy (CPU ≥ {cpu:.0f}%):"),
            C_("fleet heading", "{n} rooms are running hot (≥ {temp:.0f} °C) or busy (CPU ≥ {cpu:.0f}%):"),
        ),
        "firmware": (
            C_("fleet heading", "1 room runs older firmware than the newest of its model in this fleet:"),
            C_("fleet heading", "{n} rooms run older firmware than the newest of their model in this fleet:"),
        ),
        "signal": (
            C_("fleet heading", "1 room has an input without signal:"),
            C_("fleet heading", "{n} rooms have an input without signal:"),
        ),
        "signal_offline": (
            C_("fleet heading", "1 room is offline, so its signal is unknown."),
            C_("fleet heading", "{n} rooms are offline, so their signal is unknown."),
        ),
        "stopped": (
            C_("fleet heading", "1 room has a stream set up but stopped:"),
            C_("fleet heading", "{n} rooms have a stream set up but stopped:"),
        ),
        "ready": (
            C_("fleet heading", "1 room has a class on now or within the hour; {problems}"),
            C_("fleet heading", "{n} rooms have a class on now or within the hour; {problems}"),
        ),
        "streaming": (
            C_("fleet heading", "1 room is streaming now:"),
            C_("fleet heading", "{n} rooms are streaming now:"),
        ),
        "streams": (
            C_("fleet heading", "1 stream destination:"),
            C_("fleet heading", "{n} stream destinations:"),
        ),
    },
)
WORDS: Final[Lexicon[str, str]] = Lexicon(
    "fleet",
    {
        "more": C_("fleet", "…and {n} more."),
        "offline_none": C_("fleet", "No room is offline: all {total} are online."),
        "offline_for": C_("fleet", "offline for {time}"),
        "offline_word": C_("fleet", "offline"),
        "recording_none": C_("fleet", "No room is recording now ({online} online rooms checked)."),
        "recording_on": C_("fleet", "recording {channels} since {time}"),
        "recording_now": C_("fleet", "recording {channels}"),
        "disk_none": C_("fleet", "No room is short of storage ({count} checked)."),
        "disk_missing": C_("fleet", "no storage detected"),
        "disk_unknown": C_("fleet", "storage unknown"),
        "heat_none": C_("fleet", "No room is running hot or busy (highest {temp} °C, CPU {cpu}%)."),
        "firmware_none": C_("fleet", "Every room runs the newest firmware of its model in this fleet."),
        "firmware_line": C_("fleet", "{model} on {firmware}; newest here {newest}"),
        "signal_none": C_("fleet", "Every input of the online rooms has a signal."),
        "signal_on": C_("fleet", "no signal on {what}"),
        "schedule": C_("fleet", "Classes on now or in the next 24 hours, soonest first:"),
        "schedule_none": C_("fleet", "No classes in the next 24 hours."),
        "ready_problems": C_("fleet", "these need attention first: {names}."),
        "ready_fine": C_("fleet", "all look ready."),
        "ready_none": C_("fleet", "No room has a class on now or within the hour."),
        "ready": C_("fleet", "ready"),
        "no_problem": C_("fleet", "no problems found"),
        "needs": C_("fleet", "needs attention: {problems}"),
        "not_recording": C_("fleet", "not recording during its class"),
        "not_yet": C_("fleet", "not recording yet"),
        "hot": C_("fleet", "running hot ({temp} °C, CPU {cpu}%)"),
        "hot_line": C_("fleet", "{temp} °C, CPU {cpu}%"),
        "streams_none": C_("fleet", "No stream destinations are set up."),
        "stream_used": C_("fleet", "used by {rooms}"),
        "stream_unused": C_("fleet", "no channel uses it"),
        "streaming_none": C_("fleet", "No room is streaming now."),
        "channel_stream": C_("fleet", "{channel} ({type})"),
        "on": C_("fleet", "on"),
        "off": C_("fleet", "stopped"),
        "room_online": C_("fleet", "online"),
        "room_offline": C_("fleet", "OFFLINE for {time}"),
        "room_idle": C_("fleet", "not recording"),
        "room_recording": C_("fleet", "recording: {state}"),
        "room_next": C_("fleet", "next: {event}"),
        "room_no_event": C_("fleet", "no class in the next 24 hours"),
        "room_cpu": C_("fleet", "CPU {cpu}%, {temp} °C"),
        "room_storage": C_("fleet", "storage: {free}"),
        "room_firmware": C_("fleet", "firmware {firmware} ({model})"),
        "room_behind": C_("fleet", "; newest here {newest}"),
        "room_streams": C_("fleet", "streams: {streams}"),
        "examples": C_(
            "fleet",
            'which rooms are offline, which are recording, disk space, temperature, firmware, inputs without signal, the next classes and whether rooms are ready, "how is SCI 101?", stream destinations, what may be changed, or a change such as "start recording in <room>"',
        ),
    },
)
