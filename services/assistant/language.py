"""The operator's language (English or Latin American Spanish) and the words code writes. Pure.

`detect` guesses from the question (Spanish marks and common Spanish words against common
English ones); an explicit ``language`` on the request wins. `proposal_line` is the code-built
sentence about one proposal's *recorded* state: it comes from ``GetProposalState``, never from
the model's text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from shared.text.change_words import change_in
from shared.text.languages import LANGUAGES
from shared.wire.approval import ProposalState
from shared.wire.assistant import ProposalLine

_WORD = re.compile(r"[a-záéíóúüñ]+", re.IGNORECASE)
_SPANISH_MARKS = re.compile(r"[¿¡ñáéíóú]", re.IGNORECASE)
_SPANISH: Final = frozenset(
    "qué que cuál cuáles cuándo cuando dónde donde cómo como está están esta hay sala salas aula "
    "grabando grabar grabación lista listo listas necesita necesitan atención desconectado "
    "desconectados conectado próximos próximo eventos evento clase clases equipos equipo del los "
    "las una por para con sin hoy ahora mañana puedes favor empezar iniciar detener dime muestra "
    "revisa fuera línea algún alguna ninguna todas todos es son el la en y "
    "reinicia reiniciar inicia iniciar empieza comienza detén deten detener actualiza actualizar "
    "graba transmisión destinos señal disco espacio poco caliente".split()
)
_ENGLISH: Final = frozenset(
    "what which when where how is are the a an room rooms ready recording record needs need "
    "attention offline online next events event class classes devices device of for with "
    "today now please start stop show tell me any all and in on it this that".split()
)


def detect(question: str) -> str:
    """``es`` when the question reads as Spanish, else ``en``."""
    words = [w.lower() for w in _WORD.findall(question)]
    spanish = sum(w in _SPANISH for w in words) + 2 * len(_SPANISH_MARKS.findall(question))
    english = sum(w in _ENGLISH for w in words)
    return "es" if spanish > english else "en"


def choose(question: str, language: str | None) -> str:
    """The language to answer in: `language` when it is ``en`` or ``es``, else `detect`."""
    return language if language in LANGUAGES else detect(question)


_STATE_WORDS: Final = {
    "waiting_for_approval": (
        "waiting for approval on the approval page",
        "esperando aprobación en la página de aprobación",
    ),
    "approved": ("approved, not run yet", "aprobada, todavía no se ejecutó"),
    "running": ("running now", "ejecutándose ahora"),
    "denied": ("denied by a person; nothing ran", "denegada por una persona; no se ejecutó nada"),
    "expired": ("expired without approval; nothing ran", "venció sin aprobación; no se ejecutó nada"),
    "already_waiting": (
        "already waiting for approval on the approval page (proposed earlier; not queued again)",
        "ya espera aprobación en la página de aprobación (se propuso antes; no se volvió a poner en cola)",
    ),
    "not_run": ("approved, but nothing ran", "aprobada, pero no se ejecutó nada"),
    "acknowledged": (
        "ran with an outcome nobody could confirm; an operator acknowledged it",
        "se ejecutó con un resultado que nadie pudo confirmar; un operador lo reconoció",
    ),
    "refused": (
        "refused by the executor's checks; nothing ran",
        "rechazada por las comprobaciones del ejecutor; no se ejecutó nada",
    ),
    "ran_ok": (
        "ran ok (the change was not confirmed afterwards)",
        "se ejecutó bien (el cambio no se confirmó después)",
    ),
    "verified": ("ran ok and verified", "se ejecutó bien y se verificó"),
    "contradicted": (
        "ran, but a later read contradicts the change",
        "se ejecutó, pero una lectura posterior contradice el cambio",
    ),
    "error": ("ran with an error", "se ejecutó con un error"),
    "unknown": (
        "may or may not have run (the outcome is unknown)",
        "puede que se haya ejecutado o no (resultado desconocido)",
    ),
    "unreadable": ("its state could not be read", "no se pudo leer su estado"),
}
_PROPOSAL_WORD: Final = {"en": "Proposal", "es": "Propuesta"}


def proposal_status(state: ProposalState | None, *, existing: bool = False) -> str:
    """The stable state key of a recorded proposal state (a key of the words table);
    `existing`: the proposal was not made now, an identical one was already waiting."""
    if state is None:
        return "unreadable"
    if existing and state.status == "pending":
        return "already_waiting"
    if state.acknowledged and state.verification != "verified" and state.outcome in ("ok", "unknown"):
        return "acknowledged"
    if state.outcome == "running":
        return "running"
    if state.outcome == "refused":
        return "refused"
    if state.outcome == "unknown":
        return "unknown"
    if state.outcome == "error":
        return "error"
    if state.outcome == "ok":
        if state.verification == "verified":
            return "verified"
        return "contradicted" if state.verification == "contradicted" else "ran_ok"
    return {
        "pending": "waiting_for_approval",
        "approved": "approved",
        "denied": "denied",
        "expired": "expired",
        "not_run": "not_run",
    }.get(state.status, "unreadable")


def proposal_line(
    proposal_id: str,
    state: ProposalState | None,
    language: str,
    *,
    tool: str,
    names: Mapping[str, str] | None = None,
    existing: bool = False,
) -> ProposalLine:
    """The code-built line for one proposal, in words: ``Proposal <id>: start recording in
    Sandbox Classroom: <state words>.`` The change and the rooms come from the recorded state
    (the rooms' names read at Prepare); `names` (read in this question) stand in for a name
    the state lacks; `tool` when the state could not be read."""
    key = proposal_status(state, existing=existing)
    words = _STATE_WORDS[key][1 if language == "es" else 0]
    known = dict(names or {})
    if state is not None:
        read = state.target_names
        names_now = [
            (read[i] if i < len(read) else "") or known.get(t, "") for i, t in enumerate(state.targets)
        ]
        what = change_in(state.tool, state.action, names_now, state.targets, language)
    else:
        what = change_in(tool, None, [], [], language)
    return ProposalLine(
        proposal_id=proposal_id,
        state=key,
        text=f"{_PROPOSAL_WORD.get(language, 'Proposal')} {proposal_id}: {what}: {words}.",
    )


_NOTES: Final = {
    "budget_exceeded": (
        "I stopped because this question's budget ({limit}) was spent; this is what I found so far.",
        "Me detuve porque se agotó el presupuesto de esta pregunta ({limit}); esto es lo que encontré hasta ahora.",
    ),
    "model_unavailable": (
        "The model could not be used just now.",
        "No se pudo usar el modelo en este momento.",
    ),
    "asks_operator": ("The assistant asks: {question}", "El asistente pregunta: {question}"),
    "turn_expired": (
        "Proposals made in this turn were expired.",
        "Las propuestas hechas en este turno se dejaron vencer.",
    ),
    "no_answer": ("The model gave no answer.", "El modelo no dio una respuesta."),
}


def note(name: str, language: str, **facts: str) -> str:
    """A fixed sentence written by code (see `_NOTES`), in `language`."""
    return _NOTES[name][1 if language == "es" else 0].format(**facts)
