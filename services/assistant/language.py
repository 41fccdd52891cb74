"""The operator's language (English or Latin American Spanish) and the words code writes, from
the one catalogue (`shared.text.catalogue`: English IDs here, Spanish in ``shared/text/locales``).
Pure.

`detect` guesses from the question (Spanish marks and common Spanish words against common
English ones); an explicit ``language`` on the request wins. `proposal_line` is the code-built
sentence about one proposal's *recorded* state: it comes from ``GetProposalState``, never from
the model's text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Final

from shared.text.catalogue import N_, Lexicon, Words, say_text, translate
from shared.text.change_words import change_in
from shared.text.changes import quoted_name
from shared.text.display import visible
from shared.text.languages import LANGUAGES, language_of
from shared.wire.approval import ProposalState
from shared.wire.assistant import NoteLine, ProposalLine

_WORD = re.compile(r"[a-záéíóúüñ]+", re.IGNORECASE)
_SPANISH_MARKS = re.compile(r"[¿¡ñáéíóú]", re.IGNORECASE)
_SPANISH: Final = frozenset(
    "qué que cuál cuáles cuándo cuando dónde donde cómo como está están esta hay sala salas aula "
    "grabando grabar grabación lista listo listas necesita necesitan atención desconectado "
    "desconectados conectado próximos próximo eventos evento clase clases equipos equipo dispositivos dispositivo flota del los "
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
    return LANGUAGES[1] if spanish > english else LANGUAGES[0]


def choose(question: str, language: str | None) -> str:
    """The language to answer in: `language` when it is ``en`` or ``es``, else `detect`."""
    return language if language in LANGUAGES else detect(question)


PROPOSAL_LINE: Final = Lexicon("proposal line")
"""A proposal's state (`proposal_status`) in words."""
NOTES: Final = Lexicon("note")
"""The fixed sentences code writes under an answer (``budget_exceeded``, ``asks_operator``...)."""


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
    lang = language_of(language)
    words = PROPOSAL_LINE[lang][key]
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
        text=translate(lang, N_("%(proposal)s %(id)s: %(what)s: %(state)s."))
        % {"proposal": translate(lang, N_("Proposal")), "id": proposal_id, "what": what, "state": words},
    )


def note(name: str, language: str, **facts: str) -> str:
    """A fixed sentence written by code (`NOTES`), in `language`."""
    return NOTES[language_of(language)][name] % facts


NOTE_CAP: Final = 280
"""Longest note shown in an answer (characters; the store keeps at most as many)."""


def _named(name: str, text: str) -> bool:
    """Whether `text` names `name` as a whole (not inside a longer word or number)."""
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def note_lines(notes: Sequence[tuple[str, str, str]], said: str, language: str) -> tuple[NoteLine, ...]:
    """The code-built lines of the operators' notes, ``(device ID, room name, note)``, on every
    room `said` (the answer's text and its code-built lines) names by its name or its device
    ID: ``“ENG 210”: Switch port dead; IT ticket 4411`` (the name quoted, the note made
    visible)."""
    lang = language_of(language)
    out = []
    for device_id, room, text in notes:
        if _named(room, said) or _named(device_id, said):
            words = Words.of(
                N_("%(room)s: %(note)s"), room=quoted_name(room or device_id), note=visible(text, NOTE_CAP)
            )
            out.append(
                NoteLine(
                    device_id=device_id, text=say_text(words, lang, zone=dt.UTC, now=dt.datetime.now(dt.UTC))
                )
            )
    return tuple(out)
