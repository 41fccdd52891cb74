"""The demo model's own words and the questions it understands, in English and Latin American
Spanish (data only; a test double's, not the product's: `shared.text` is never imported here).

``WORDS`` holds what the demo model says; ``TOPICS`` and ``ACTIONS`` the patterns it maps a
question to (first match wins); ``WHAT`` names each read for "I could not read …".
"""

from __future__ import annotations

import re
from typing import Final

from services.lab.model_scripts.demo_reads import DEVICES, ENDPOINTS, EVENT, EVENTS, RECORDER, STORAGE, SYSTEM

ACTIONS: Final = (
    ("start_stream", re.compile(r"\b(start|begin)\w*\b.*\bstream|\binici\w*\b.*\btransmi")),
    ("stop_stream", re.compile(r"\bstop\w*\b.*\bstream|\bdet[eé]n\w*\b.*\btransmi|^para\b.*\btransmi")),
    ("firmware_update", re.compile(r"\b(update|upgrade)\b.*\bfirmware|\bactualiz\w*\b.*\bfirmware")),
    ("reboot", re.compile(r"\b(reboot|restart)|\breinici")),
    ("stop_recording", re.compile(r"\bstop\b.*\brecord|\bdet[eé]n\w*\b.*\bgrab|^para\b.*\bgrab")),
    (
        "start_recording",
        re.compile(
            r"\b(start|begin)\b.*\brecord|\brecording started|\b(inici|empie|empez|comien)\w*\b.*\bgrab"
        ),
    ),
)
DUE: Final = re.compile(
    r"\bany\b.*\bshould\b|\bcualquier\b.*\bdeba\b|\bneeds? a recording\b|\bnecesita\w* empezar"
)
EVERY: Final = re.compile(r"\b(every|all|todos|todas)\b")
TOPICS: Final = (
    ("writable", re.compile(r"\b(can|may) (you )?(be )?chang|\bpued\w* cambiar")),
    ("readiness", re.compile(r"\bbefore (their|the) next|\bready\b|\bantes de su próxima|\blist[oa]s\b")),
    ("attention", re.compile(r"\battention\b|\batención\b")),
    ("offline", re.compile(r"offline|desconectad")),
    ("temperature", re.compile(r"\bhot\b|temperat|\bheat|calient")),
    ("disk", re.compile(r"\bdisk|storage|\bspace\b|disco|almacenamiento|espacio")),
    ("firmware", re.compile(r"firmware")),
    ("signal", re.compile(r"signal|señal")),
    ("streams", re.compile(r"stream|transmisi|destin")),
    ("recording", re.compile(r"recording|grabando|graban")),
    ("schedule", re.compile(r"\bclass|schedule|\bclases\b|horario")),
)

WORDS: Final = {
    "en": {
        "look": "Let me look at the fleet.",
        "read": "I read {rooms} rooms ({online} online).",
        "partial": "I was shown only part of the fleet; rooms beyond it are not in this answer.",
        "failed": "I could not read {what} just now, so I can't answer that from the fleet.",
        "unread": "I could not read {what} ({tool}: {code}); that part is left out.",
        "unknown": (
            'The demo model only understands fleet questions such as "which rooms are offline?", '
            '"how is <room>?" or "start recording in <practice room>"; set '
            "FLEETWATCH_ANTHROPIC_API_KEY for the real assistant."
        ),
        "offline": "Offline rooms",
        "recording": "Rooms recording now",
        "disk": "Rooms short of storage",
        "temperature": "Rooms running hot or busy (80 °C or 90 % CPU and above)",
        "firmware": "Rooms behind the newest firmware of their model",
        "signal": "Rooms with an input without signal",
        "schedule": "Classes on now or in the next 24 hours",
        "readiness": "Rooms with a class within the hour",
        "streams": "Stream destinations",
        "streaming": "Rooms streaming now",
        "stopped": "Rooms with a stream set up but stopped",
        "none": "{what}: none.",
        "online_word": "online",
        "offline_word": "offline",
        "recording_on": "recording on {channels}",
        "idle_word": "not recording",
        "next": "next: {title} at {time} UTC",
        "on_now": "on now: {title}, since {time} UTC",
        "no_event": "no class in the next 24 hours",
        "load": "{temp} °C, CPU {cpu} %",
        "free": "{pct} free",
        "missing": "no storage detected",
        "low": "storage low",
        "disk_unknown": "storage not read",
        "firmware_line": "{model} on {firmware}, newest {newest}",
        "dark": "no signal on {what}",
        "ready": "looks ready",
        "used": "used by {rooms}",
        "unused": "not used",
        "off": "Proposals are off here, so I can't propose any change; I can only read the fleet.",
        "unlisted": "I could not list the rooms I may change, so I proposed nothing.",
        "writable_head": "I may propose changes only for {n} practice rooms (the sandbox team, read just now):",
        "writable_none": "No room can be changed from here right now: the practice (sandbox) team lists none.",
        "writable_what": (
            "There I can propose {changes}; a person approves each change on the approval page, "
            "and nothing runs before that."
        ),
        "others": "The {n} rooms of the fleet I read can be read but not changed.",
        "read_only": (
            "{room} can be read but not changed from here: only the practice rooms ({names}) can be "
            "changed, so I proposed nothing."
        ),
        "not_found": "I could not find that room, so I proposed nothing. The rooms I may change are: {names}.",
        "which": "Which room? I propose one change for one room at a time, and only for: {names}.",
        "every": (
            "I propose one change for one room at a time, never for every room at once, and only for "
            "the practice rooms: {names}. Name one of them."
        ),
        "stream": (
            "I can't choose a stream destination for {room}: the practice team's destinations are not "
            "readable from here, so I proposed nothing."
        ),
        "offline_room": "{room} is offline, so I proposed nothing.",
        "already": "{room} is already recording, so I proposed nothing.",
        "idle": "{room} is not recording, so there is nothing to stop; I proposed nothing.",
        "busy": "{room} is recording; {change} would interrupt it, so I proposed nothing.",
        "near": "{room} has a class on now or soon ({event}); {change} is not allowed then, so I proposed nothing.",
        "due_read_only": (
            "Rooms above that are not recording yet can be read but not changed from here; only the "
            "practice rooms can be changed."
        ),
        "due_room": "Of the rooms I may change, {room} has its next class in {minutes} min and is not recording.",
        "due_none": (
            "None of the rooms I may change (the sandbox team) is online, idle and has a class within "
            "the hour, so I proposed nothing."
        ),
        "proposed": "I proposed {what} in {room}; a person must approve it on the approval page.",
        "refused": "I asked for it, but the proposal was not accepted; the reason is below.",
        "already_waiting": "That change is already waiting for a person on the approval page, so I did not propose it again.",
        "ask_to_start": (
            "I changed nothing. To have a recording that should be running proposed for the rooms "
            'I may change, ask for it, e.g. "Start any recording that should be running."'
        ),
        "start_recording": "starting the recording",
        "stop_recording": "stopping the recording",
        "reboot_done": "a reboot",
        "firmware_update_done": "a firmware update",
        "reason_due": (
            "The next class in this room starts in {minutes} min and the room is not recording; "
            "start recording so the class is captured."
        ),
        "reason": "The operator asked for {what} in {room}.",
    },
    "es": {
        "look": "Revisaré la flota.",
        "read": "Revisé {rooms} salas ({online} conectadas).",
        "partial": "Solo se me mostró una parte de la flota; las salas que faltan no están en esta respuesta.",
        "failed": "No pude leer {what} ahora, así que no puedo responder eso desde la flota.",
        "unread": "No pude leer {what} ({tool}: {code}); esa parte queda fuera.",
        "unknown": (
            'El modelo de demostración solo entiende preguntas sobre la flota como "¿qué salas están '
            'desconectadas?", "¿cómo está <sala>?" o "empieza a grabar en <sala de práctica>"; '
            "configure FLEETWATCH_ANTHROPIC_API_KEY para el asistente real."
        ),
        "offline": "Salas desconectadas",
        "recording": "Salas grabando ahora",
        "disk": "Salas con poco almacenamiento",
        "temperature": "Salas calientes o cargadas (80 °C o 90 % de CPU o más)",
        "firmware": "Salas con un firmware más viejo que el más nuevo de su modelo",
        "signal": "Salas con una entrada sin señal",
        "schedule": "Clases en curso o en las próximas 24 horas",
        "readiness": "Salas con una clase dentro de la hora",
        "streams": "Destinos de transmisión",
        "streaming": "Salas transmitiendo ahora",
        "stopped": "Salas con una transmisión configurada pero detenida",
        "none": "{what}: ninguna.",
        "online_word": "conectada",
        "offline_word": "desconectada",
        "recording_on": "graba en {channels}",
        "idle_word": "no está grabando",
        "next": "próxima: {title} a las {time} UTC",
        "on_now": "en curso: {title}, desde las {time} UTC",
        "no_event": "sin clases en las próximas 24 horas",
        "load": "{temp} °C, CPU {cpu} %",
        "free": "{pct} libre",
        "missing": "no se detecta almacenamiento",
        "low": "almacenamiento bajo",
        "disk_unknown": "almacenamiento sin leer",
        "firmware_line": "{model} con {firmware}, el más nuevo es {newest}",
        "dark": "sin señal en {what}",
        "ready": "parece lista",
        "used": "la usan {rooms}",
        "unused": "sin uso",
        "off": "Aquí las propuestas están desactivadas, así que no puedo proponer cambios; solo puedo leer la flota.",
        "unlisted": "No pude listar las salas que puedo cambiar, así que no propuse nada.",
        "writable_head": "Solo puedo proponer cambios para estas {n} salas de práctica (el grupo de práctica, leído ahora):",
        "writable_none": "Ahora no se puede cambiar ninguna sala desde aquí: el grupo de práctica no tiene ninguna.",
        "writable_what": (
            "Allí puedo proponer {changes}; una persona aprueba cada cambio en la página de "
            "aprobación, y nada se ejecuta antes."
        ),
        "others": "Las {n} salas de la flota que revisé se pueden consultar, pero no cambiar.",
        "read_only": (
            "{room} se puede consultar, pero no cambiar desde aquí: solo se pueden cambiar las salas "
            "de práctica ({names}), así que no propuse nada."
        ),
        "not_found": "No encontré esa sala, así que no propuse nada. Las salas que puedo cambiar son: {names}.",
        "which": "¿Qué sala? Propongo un cambio para una sala a la vez, y solo para: {names}.",
        "every": (
            "Propongo un cambio para una sala a la vez, nunca para todas juntas, y solo para las "
            "salas de práctica: {names}. Nombre una de ellas."
        ),
        "stream": (
            "No puedo elegir un destino de transmisión para {room}: los destinos del grupo de "
            "práctica no se pueden leer desde aquí, así que no propuse nada."
        ),
        "offline_room": "{room} está desconectada, así que no propuse nada.",
        "already": "{room} ya está grabando, así que no propuse nada.",
        "idle": "{room} no está grabando, así que no hay nada que detener; no propuse nada.",
        "busy": "{room} está grabando; {change} la interrumpiría, así que no propuse nada.",
        "near": (
            "{room} tiene una clase en curso o pronto ({event}); {change} no se permite entonces, "
            "así que no propuse nada."
        ),
        "due_read_only": (
            "Las salas de arriba que todavía no graban se pueden consultar, pero no cambiar desde "
            "aquí; solo se pueden cambiar las salas de práctica."
        ),
        "due_room": (
            "De las salas que puedo cambiar, {room} tiene su próxima clase en {minutes} min y no está grabando."
        ),
        "due_none": (
            "Ninguna de las salas que puedo cambiar (el grupo de práctica) está conectada, libre y "
            "con una clase dentro de la hora, así que no propuse nada."
        ),
        "proposed": "Propuse {what} en {room}; una persona debe aprobarlo en la página de aprobación.",
        "refused": "La pedí, pero la propuesta no fue aceptada; el motivo está abajo.",
        "already_waiting": "Ese cambio ya espera a una persona en la página de aprobación, así que no lo propuse de nuevo.",
        "ask_to_start": (
            "No cambié nada. Para que se proponga una grabación que debería estar en marcha en las "
            'salas que puedo cambiar, pídalo, por ejemplo: "Inicia cualquier grabación que deba '
            'estar en marcha."'
        ),
        "start_recording": "empezar a grabar",
        "stop_recording": "detener la grabación",
        "reboot_done": "un reinicio",
        "firmware_update_done": "una actualización de firmware",
        "reason_due": (
            "La próxima clase en esta sala empieza en {minutes} min y la sala no está grabando; "
            "hay que empezar a grabar para registrar la clase."
        ),
        "reason": "El operador pidió {what} en {room}.",
    },
}
WHAT: Final = {
    "en": {
        DEVICES: "the device list",
        RECORDER: "the recording state",
        STORAGE: "the storage state",
        SYSTEM: "the temperature and load",
        EVENTS: "the classes",
        EVENT: "the room's next class",
        ENDPOINTS: "the stream destinations",
    },
    "es": {
        DEVICES: "la lista de dispositivos",
        RECORDER: "el estado de grabación",
        STORAGE: "el estado del almacenamiento",
        SYSTEM: "la temperatura y la carga",
        EVENTS: "las clases",
        EVENT: "la próxima clase de la sala",
        ENDPOINTS: "los destinos de transmisión",
    },
}

CHANGE_NAMES: Final = {
    "en": {
        "batch_recording": "starting or stopping a recording",
        "start_stream_endpoint": "starting a stream",
        "stop_stream_endpoint": "stopping a stream",
        "confirm_cms_event_on_device": "confirming a scheduled class on a device",
        "batch_reboot": "a reboot",
        "batch_firmware_update": "a firmware update",
        "and": " and ",
    },
    "es": {
        "batch_recording": "empezar o detener una grabación",
        "start_stream_endpoint": "iniciar una transmisión",
        "stop_stream_endpoint": "detener una transmisión",
        "confirm_cms_event_on_device": "confirmar una clase programada en un dispositivo",
        "batch_reboot": "un reinicio",
        "batch_firmware_update": "una actualización de firmware",
        "and": " y ",
    },
}
"""The demo model's words for each change ``propose_change`` offers (its ``tool`` enum, the
policy's proposable tools); a tool without words here is named as it is."""
