"""The words of `shared.text.fleet_answers`, in English and Latin American Spanish (data only).

``HEADINGS`` holds each list's first sentence as a (one, many) pair, ``{n}`` the count;
``WORDS`` every other phrase. Keys are the same in both languages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

HEADINGS: Final[Mapping[str, Mapping[str, tuple[str, str]]]] = {
    "en": {
        "offline": ("1 room is offline:", "{n} rooms are offline:"),
        "recording": ("1 room is recording now:", "{n} rooms are recording now:"),
        "disk": ("1 room is short of storage:", "{n} rooms are short of storage:"),
        "heat": (
            "1 room is running hot (≥ {temp:.0f} °C) or busy (CPU ≥ {cpu:.0f}%):",
            "{n} rooms are running hot (≥ {temp:.0f} °C) or busy (CPU ≥ {cpu:.0f}%):",
        ),
        "firmware": (
            "1 room runs older firmware than the newest of its model in this fleet:",
            "{n} rooms run older firmware than the newest of their model in this fleet:",
        ),
        "signal": ("1 room has an input without signal:", "{n} rooms have an input without signal:"),
        "signal_offline": (
            "1 room is offline, so its signal is unknown.",
            "{n} rooms are offline, so their signal is unknown.",
        ),
        "stopped": (
            "1 room has a stream set up but stopped:",
            "{n} rooms have a stream set up but stopped:",
        ),
        "ready": (
            "1 room has a class on now or within the hour; {problems}",
            "{n} rooms have a class on now or within the hour; {problems}",
        ),
        "streaming": ("1 room is streaming now:", "{n} rooms are streaming now:"),
        "streams": ("1 stream destination:", "{n} stream destinations:"),
    },
    "es": {
        "offline": ("1 sala está desconectada:", "{n} salas están desconectadas:"),
        "recording": ("1 sala está grabando ahora:", "{n} salas están grabando ahora:"),
        "disk": ("1 sala tiene poco almacenamiento:", "{n} salas tienen poco almacenamiento:"),
        "heat": (
            "1 sala está muy caliente (≥ {temp:.0f} °C) o con mucha carga (CPU ≥ {cpu:.0f}%):",
            "{n} salas están muy calientes (≥ {temp:.0f} °C) o con mucha carga (CPU ≥ {cpu:.0f}%):",
        ),
        "firmware": (
            "1 sala tiene un firmware más viejo que el más nuevo de su modelo en este equipo:",
            "{n} salas tienen un firmware más viejo que el más nuevo de su modelo en este equipo:",
        ),
        "signal": ("1 sala tiene una entrada sin señal:", "{n} salas tienen una entrada sin señal:"),
        "signal_offline": (
            "1 sala está desconectada, así que no se sabe su señal.",
            "{n} salas están desconectadas, así que no se sabe su señal.",
        ),
        "stopped": (
            "1 sala tiene una transmisión configurada pero detenida:",
            "{n} salas tienen una transmisión configurada pero detenida:",
        ),
        "ready": (
            "1 sala tiene una clase en curso o dentro de la hora; {problems}",
            "{n} salas tienen una clase en curso o dentro de la hora; {problems}",
        ),
        "streaming": ("1 sala está transmitiendo ahora:", "{n} salas están transmitiendo ahora:"),
        "streams": ("1 destino de transmisión:", "{n} destinos de transmisión:"),
    },
}
WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "more": "…and {n} more.",
        "offline_none": "No room is offline: all {total} are online.",
        "offline_for": "offline for {time}",
        "offline_word": "offline",
        "recording_none": "No room is recording now ({online} online rooms checked).",
        "recording_on": "recording {channels} since {time}",
        "recording_now": "recording {channels}",
        "disk_none": "No room is short of storage ({count} checked).",
        "disk_missing": "no storage detected",
        "heat_none": "No room is running hot or busy (highest {temp} °C, CPU {cpu}%).",
        "firmware_none": "Every room runs the newest firmware of its model in this fleet.",
        "firmware_line": "{model} on {firmware}; newest here {newest}",
        "signal_none": "Every input of the online rooms has a signal.",
        "signal_on": "no signal on {what}",
        "schedule": "Classes on now or in the next 24 hours, soonest first:",
        "schedule_none": "No classes in the next 24 hours.",
        "ready_problems": "these need attention first: {names}.",
        "ready_fine": "all look ready.",
        "ready_none": "No room has a class on now or within the hour.",
        "ready": "ready",
        "no_problem": "no problems found",
        "needs": "needs attention: {problems}",
        "not_recording": "not recording during its class",
        "not_yet": "not recording yet",
        "hot": "running hot ({temp} °C, CPU {cpu}%)",
        "hot_line": "{temp} °C, CPU {cpu}%",
        "streams_none": "No stream destinations are set up.",
        "stream_used": "used by {rooms}",
        "stream_unused": "no channel uses it",
        "streaming_none": "No room is streaming now.",
        "channel_stream": "{channel} ({type})",
        "on": "on",
        "off": "stopped",
        "room_online": "online",
        "room_offline": "OFFLINE for {time}",
        "room_idle": "not recording",
        "room_recording": "recording: {state}",
        "room_next": "next: {event}",
        "room_no_event": "no class in the next 24 hours",
        "room_cpu": "CPU {cpu}%, {temp} °C",
        "room_storage": "storage: {free}",
        "room_firmware": "firmware {firmware} ({model})",
        "room_behind": "; newest here {newest}",
        "room_streams": "streams: {streams}",
        "examples": (
            "which rooms are offline, which are recording, disk space, temperature, firmware, "
            'inputs without signal, the next classes and whether rooms are ready, "how is SCI 101?", '
            "stream destinations, what may be changed, or a change such as "
            '"start recording in <room>"'
        ),
    },
    "es": {
        "more": "…y {n} más.",
        "offline_none": "Ninguna sala está desconectada: las {total} están conectadas.",
        "offline_for": "desconectada hace {time}",
        "offline_word": "desconectada",
        "recording_none": "Ninguna sala está grabando ahora (revisé {online} salas conectadas).",
        "recording_on": "graba {channels} desde las {time}",
        "recording_now": "graba {channels}",
        "disk_none": "Ninguna sala tiene poco almacenamiento (revisé {count}).",
        "disk_missing": "no se detecta almacenamiento",
        "heat_none": "Ninguna sala está muy caliente ni con mucha carga (máximo {temp} °C, CPU {cpu}%).",
        "firmware_none": "Cada sala tiene el firmware más nuevo de su modelo en este equipo.",
        "firmware_line": "{model} con {firmware}; el más nuevo aquí es {newest}",
        "signal_none": "Todas las entradas de las salas conectadas tienen señal.",
        "signal_on": "sin señal en {what}",
        "schedule": "Clases en curso o en las próximas 24 horas, la más próxima primero:",
        "schedule_none": "No hay clases en las próximas 24 horas.",
        "ready_problems": "necesitan atención primero: {names}.",
        "ready_fine": "todas parecen listas.",
        "ready_none": "Ninguna sala tiene una clase en curso o dentro de la hora.",
        "ready": "lista",
        "no_problem": "sin problemas",
        "needs": "necesita atención: {problems}",
        "not_recording": "no está grabando durante su clase",
        "not_yet": "todavía no graba",
        "hot": "muy caliente ({temp} °C, CPU {cpu}%)",
        "hot_line": "{temp} °C, CPU {cpu}%",
        "streams_none": "No hay destinos de transmisión configurados.",
        "stream_used": "lo usan {rooms}",
        "stream_unused": "ningún canal lo usa",
        "streaming_none": "Ninguna sala está transmitiendo ahora.",
        "channel_stream": "{channel} ({type})",
        "on": "en curso",
        "off": "detenida",
        "room_online": "conectada",
        "room_offline": "DESCONECTADA hace {time}",
        "room_idle": "no está grabando",
        "room_recording": "grabación: {state}",
        "room_next": "próxima: {event}",
        "room_no_event": "sin clases en las próximas 24 horas",
        "room_cpu": "CPU {cpu}%, {temp} °C",
        "room_storage": "almacenamiento: {free}",
        "room_firmware": "firmware {firmware} ({model})",
        "room_behind": "; el más nuevo aquí es {newest}",
        "room_streams": "transmisiones: {streams}",
        "examples": (
            "qué salas están desconectadas, cuáles graban, espacio en disco, temperatura, firmware, "
            'entradas sin señal, las próximas clases y si las salas están listas, "¿cómo está SCI 101?", '
            "destinos de transmisión, qué se puede cambiar, o un cambio como "
            '"empieza a grabar en <sala>"'
        ),
    },
}
