"""Changes and refusals in words, in English and Latin American Spanish. Pure.

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
from shared.text.display import visible

CHANGES: Final[Mapping[tuple[str, str | None], tuple[str, str]]] = MappingProxyType(
    {
        ("batch_recording", "start"): ("start recording", "empezar a grabar"),
        ("batch_recording", "stop"): ("stop recording", "detener la grabación"),
        ("batch_recording", None): ("start or stop recording", "empezar o detener la grabación"),
        ("start_stream_endpoint", None): ("start streaming", "empezar a transmitir"),
        ("stop_stream_endpoint", None): ("stop streaming", "detener la transmisión"),
        ("confirm_cms_event_on_device", None): (
            "confirm the scheduled event",
            "confirmar el evento programado",
        ),
        ("batch_reboot", None): ("reboot", "reiniciar"),
        ("batch_firmware_update", None): ("update the firmware", "actualizar el firmware"),
    }
)
"""(tool, its ``action`` argument or None) -> what the change does, (en, es)."""
OTHER_CHANGE: Final = ("a change", "un cambio")

REFUSALS: Final[Mapping[Code, tuple[str, str]]] = MappingProxyType(
    {
        Code.QUEUE_FULL: (
            "the queue already holds {max_pending} proposals; approve or deny one on the approval page first",
            "la cola ya tiene {max_pending} propuestas; apruebe o rechace una en la página de aprobación primero",
        ),
        Code.HOURLY_CAP_REACHED: (
            "{per_hour} changes were already proposed in the last hour, the most allowed; try again later",
            "ya se propusieron {per_hour} cambios en la última hora, el máximo permitido; intente más tarde",
        ),
        Code.DENIAL_PAUSE: (
            "a person denied this change for this room several times, so it is paused for a while; "
            "'fleetwatch status' says until when, and an operator can lift it with 'fleetwatch resume --denials'",
            "una persona rechazó este cambio para esta sala varias veces, así que está en pausa por un tiempo; "
            "'fleetwatch status' dice hasta cuándo, y un operador puede levantarla con 'fleetwatch resume --denials'",
        ),
        Code.POST_DROPPED: (
            "too many posts were waiting to be sent, so this one was dropped (it is logged and counted)",
            "había demasiadas publicaciones esperando, así que esta se descartó (queda en el registro y se cuenta)",
        ),
        Code.POST_FAILED: (
            "Slack or Teams refused or failed the post; it is logged and counted, and not sent again",
            "Slack o Teams rechazó o no completó la publicación; queda en el registro y se cuenta, y no se reenvía",
        ),
        Code.POST_TIMEOUT: (
            "Slack or Teams did not answer the post in time; it is logged and counted, and not sent again",
            "Slack o Teams no respondió a tiempo a la publicación; queda en el registro y se cuenta, y no se reenvía",
        ),
        Code.ROOM_AMBIGUOUS: (
            "more than one room matches that name; nothing was saved: name one of them exactly",
            "más de una sala coincide con ese nombre; no se guardó nada: nombra exactamente una de ellas",
        ),
        Code.ROOM_NOT_FOUND: (
            "no room of the fleet, as the watch last read it, matches that name",
            "ninguna sala del equipo, tal como la vigilancia la leyó por última vez, coincide con ese nombre",
        ),
        Code.WATCH_NOT_READY: (
            "the watch has not read the fleet yet; try again after its first heartbeat",
            "la vigilancia aún no ha leído el equipo; inténtalo después de su primer latido",
        ),
        Code.TARGET_BUSY: (
            "another change for this room is already waiting for a person or has not finished; "
            "decide that one on the approval page first",
            "otro cambio para esta sala ya espera a una persona o no ha terminado; "
            "decida ese primero en la página de aprobación",
        ),
        Code.TARGET_UNVERIFIED: (
            "the last change to this room may or may not have worked and a fresh read could not confirm it; "
            "check the room, then an operator acknowledges it ('fleetwatch status' shows which)",
            "el último cambio en esta sala puede haber funcionado o no y una lectura nueva no lo confirmó; "
            "revise la sala y luego un operador lo reconoce ('fleetwatch status' muestra cuál)",
        ),
        Code.DUPLICATE_PROPOSAL: (
            "the same change was already proposed and is shown above",
            "el mismo cambio ya se propuso y se muestra arriba",
        ),
        Code.FSM_BLOCKED: (
            "the assistant had not yet read which rooms it may change, or another change for this room "
            "is still open in this question",
            "el asistente todavía no había leído qué salas puede cambiar, u otro cambio para esta sala "
            "sigue abierto en esta pregunta",
        ),
        Code.BUDGET_EXCEEDED: (
            "this question used up its budget of model calls, words or time before it finished",
            "esta pregunta agotó su presupuesto de llamadas al modelo, palabras o tiempo antes de terminar",
        ),
        Code.OBSERVE_MODE: (
            "the policy is set to only watch, so nothing may be proposed",
            "la política está configurada solo para observar, así que no se puede proponer nada",
        ),
        Code.FENCE_NOT_CONFIGURED: (
            "no room is set up to be changed from here (the write fence is not configured)",
            "ninguna sala está configurada para cambiarse desde aquí (la cerca de escritura no está configurada)",
        ),
        Code.NOT_PROPOSABLE: (
            "the policy does not allow this kind of change to be proposed",
            "la política no permite proponer este tipo de cambio",
        ),
        Code.SCHEMA_NOT_REVIEWED: (
            "this kind of change has not been reviewed yet, so it cannot be proposed",
            "este tipo de cambio todavía no se revisó, así que no se puede proponer",
        ),
        Code.INVALID_ARGUMENTS: (
            "the change was not described in the form the policy requires",
            "el cambio no se describió en la forma que exige la política",
        ),
        Code.TOO_MANY_TARGETS: (
            "the change named more rooms than one proposal may change",
            "el cambio nombró más salas de las que una propuesta puede cambiar",
        ),
        Code.HIDDEN_CHARACTER: (
            "the change held a hidden or control character",
            "el cambio contenía un carácter oculto o de control",
        ),
        Code.NOT_CANONICALIZABLE: (
            "the change held a value that cannot be checked exactly (a fraction, or a repeated field)",
            "el cambio contenía un valor que no se puede comprobar con exactitud (una fracción o un campo repetido)",
        ),
        Code.TARGET_NOT_ALLOWLISTED: (
            "this room is not on the list of rooms Fleetwatch may change",
            "esta sala no está en la lista de salas que Fleetwatch puede cambiar",
        ),
        Code.TARGET_NOT_IN_SANDBOX: (
            "this room is not one of the practice rooms that may be changed; it can only be read",
            "esta sala no es una de las salas de práctica que se pueden cambiar; solo se puede consultar",
        ),
        Code.TEAM_MISMATCH: (
            "the practice team's sign-in belongs to another team than the one configured",
            "el inicio de sesión del equipo de práctica pertenece a otro equipo que el configurado",
        ),
        Code.CHANNEL_NOT_FOUND: (
            "the room has no such channel",
            "la sala no tiene ese canal",
        ),
        Code.STREAM_NOT_FOUND: (
            "that stream destination is not on the practice team's list",
            "ese destino de transmisión no está en la lista del equipo de práctica",
        ),
        Code.EVENT_NOT_CURRENT: (
            "that event is not the room's current or next event",
            "ese evento no es el evento actual ni el próximo de la sala",
        ),
        Code.DEVICE_LIST_UNREADABLE: (
            "the practice team's room list could not be read just now",
            "no se pudo leer ahora la lista de salas del equipo de práctica",
        ),
        Code.STATE_READ_FAILED: (
            "the room's state could not be read just now",
            "no se pudo leer ahora el estado de la sala",
        ),
        Code.NO_SIGN_IN: (
            "there is no usable sign-in for this (see 'fleetwatch doctor')",
            "no hay un inicio de sesión utilizable para esto (vea 'fleetwatch doctor')",
        ),
        Code.POLICY_INVALID: (
            "the policy files no longer load (see 'fleetwatch doctor')",
            "los archivos de política ya no se cargan (vea 'fleetwatch doctor')",
        ),
        Code.CONFIG_INVALID: (
            "a setting is missing or wrong (see 'fleetwatch doctor')",
            "falta un ajuste o está mal (vea 'fleetwatch doctor')",
        ),
        Code.INVALID_MESSAGE: (
            "the request was malformed or too long",
            "la solicitud estaba mal formada o era demasiado larga",
        ),
        Code.OPERATION_NOT_ALLOWED: (
            "the assistant is not allowed to do that",
            "el asistente no tiene permiso para hacer eso",
        ),
        Code.PEER_NOT_ALLOWED: (
            "the service refused this process's user",
            "el servicio rechazó al usuario de este proceso",
        ),
        Code.SERVICE_UNAVAILABLE: (
            "a Fleetwatch service it needs is not running",
            "un servicio de Fleetwatch que necesita no está en marcha",
        ),
        Code.SERVICE_NO_ANSWER: (
            "a Fleetwatch service did not answer in time",
            "un servicio de Fleetwatch no respondió a tiempo",
        ),
        Code.INTERNAL_ERROR: (
            "an unexpected error happened; it was logged",
            "ocurrió un error inesperado; quedó registrado",
        ),
        Code.STORE_BUSY: (
            "the store was busy; nothing was written, try again",
            "el almacén estaba ocupado; no se escribió nada, intente de nuevo",
        ),
        Code.PROPOSAL_NOT_FOUND: (
            "that proposal does not exist",
            "esa propuesta no existe",
        ),
        Code.UNKNOWN_TOOL: (
            "the model asked for something that does not exist; nothing was done",
            "el modelo pidió algo que no existe; no se hizo nada",
        ),
        Code.TOOL_NOT_ALLOWED: (
            "the model tried to change something directly, which is never allowed; nothing was done",
            "el modelo intentó cambiar algo directamente, lo que nunca se permite; no se hizo nada",
        ),
        Code.MODEL_UNAVAILABLE: (
            "the model could not be used, so the keyword answer was given",
            "no se pudo usar el modelo, así que se dio la respuesta por palabras clave",
        ),
        Code.EPIPHAN_AUTH: (
            "Epiphan refused the sign-in (see 'fleetwatch doctor')",
            "Epiphan rechazó el inicio de sesión (vea 'fleetwatch doctor')",
        ),
        Code.EPIPHAN_TOOL_ERROR: (
            "Epiphan answered with an error",
            "Epiphan respondió con un error",
        ),
        Code.EPIPHAN_UNREACHABLE: (
            "Epiphan could not be reached",
            "no se pudo contactar a Epiphan",
        ),
        Code.EPIPHAN_TIMEOUT: (
            "Epiphan did not answer in time",
            "Epiphan no respondió a tiempo",
        ),
        Code.EPIPHAN_BAD_RESULT: (
            "Epiphan's answer could not be read",
            "no se pudo leer la respuesta de Epiphan",
        ),
        Code.SIGN_IN_DEAD: (
            "the sign-in has ended; sign in again ('fleetwatch login')",
            "el inicio de sesión terminó; vuelva a iniciar sesión ('fleetwatch login')",
        ),
        Code.REFRESH_FAILED: (
            "the sign-in could not be refreshed just now; it is tried again later",
            "no se pudo renovar el inicio de sesión ahora; se intentará más tarde",
        ),
        Code.CSRF_FAILED: (
            "the form does not belong to this page and browser session; reload the page",
            "el formulario no pertenece a esta página y sesión del navegador; recargue la página",
        ),
        Code.CROSS_SITE: (
            "the request did not come from this page itself",
            "la solicitud no vino de esta misma página",
        ),
        Code.BAD_HOST: (
            "the page was reached by a name it does not answer to; use 127.0.0.1 or localhost",
            "se llegó a la página por un nombre al que no responde; use 127.0.0.1 o localhost",
        ),
        Code.BODY_TOO_LARGE: (
            "the request was larger than this page accepts",
            "la solicitud era más grande de lo que esta página acepta",
        ),
        Code.SECRET_REQUIRED: (
            "enter the page's secret first; it is asked once per browser session",
            "escriba primero el secreto de la página; se pide una vez por sesión del navegador",
        ),
        Code.SECRET_WRONG: (
            "that is not the page's secret",
            "ese no es el secreto de la página",
        ),
        Code.SLOW_DOWN: (
            "too many wrong entries; wait a little, then try again",
            "demasiados intentos fallidos; espere un poco y vuelva a intentarlo",
        ),
        Code.SIGN_IN_BUSY: (
            "another process was renewing the sign-in; try again",
            "otro proceso estaba renovando el inicio de sesión; intente de nuevo",
        ),
        Code.METHOD_NOT_ALLOWED: (
            "this address only accepts the page's own form",
            "esta dirección solo acepta el formulario de la propia página",
        ),
        Code.PAGE_NOT_FOUND: (
            "the page has no such address",
            "la página no tiene esa dirección",
        ),
        Code.STORE_FULL: (
            "the disk of the record store is full; ask an administrator to free space",
            "el disco del almacén de registros está lleno; pida a un administrador que libere espacio",
        ),
        Code.STORE_READ_ONLY: (
            "the record store cannot be written; ask an administrator",
            "no se puede escribir en el almacén de registros; avise a un administrador",
        ),
    }
)
"""Code -> why, in words a person reads (en, es)."""

_INDEX: Final = {"en": 0, "es": 1}
_NOT_PROPOSED: Final = ("Not proposed", "No se propuso")
_UNKNOWN_ROOM: Final = ("device {id}", "el equipo {id}")
_IN: Final = ("in", "en")
SNAKE_CASE: Final = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
"""What a raw code or tool name looks like (``queue_full``, ``batch_recording``)."""


def _pick(pair: tuple[str, str], language: str) -> str:
    return pair[_INDEX.get(language, 0)]


def change(tool: str, action: str | None, language: str) -> str:
    """What a change does, in words: ``start recording``, ``reboot``..."""
    pair = CHANGES.get((tool, action)) or CHANGES.get((tool, None)) or OTHER_CHANGE
    return _pick(pair, language)


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
    return f"{what} {_pick(_IN, language)} {where}" if where else what


def why(code: Code, language: str, *, max_pending: int = 3, per_hour: int = 10) -> str:
    """Why, in words, for a stable code (`REFUSALS`); a code without a sentence gets the plain
    "it could not be done" (never the code itself)."""
    pair = REFUSALS.get(code, ("it could not be done", "no se pudo hacer"))
    return _pick(pair, language).format(max_pending=max_pending, per_hour=per_hour)


def not_proposed(what: str, code: Code, language: str, **numbers: int) -> str:
    """``Not proposed: start recording in Sandbox Classroom: the queue already holds …``."""
    return f"{_pick(_NOT_PROPOSED, language)}: {what}: {why(code, language, **numbers)}."
