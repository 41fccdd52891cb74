"""Every kind of audit row Fleetwatch writes, and what it records, in English and Spanish.

The operator's guides list exactly these (a test holds the guides and the code that writes rows
to this table both ways: ``tests/test_docs_drift.py``). Who wrote a row is its actor; which
service's key signed it, its writer (`shared.store.audit_seal.writer_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple


class Kind(NamedTuple):
    """What a row of one kind records, for a person (``en``, ``es``)."""

    en: str
    es: str


AUDIT_KINDS: Mapping[str, Kind] = MappingProxyType(
    {
        "proposal": Kind(
            "a proposal stored: tool, targets, fingerprint hash, the model turn",
            "una propuesta guardada: herramienta, dispositivos, hash de la huella, el turno del modelo",
        ),
        "refusal": Kind(
            "a refusal: its `code`, the operation and who (a uid, never what was sent); one that "
            'ended an approved proposal carries `"not_run": true`',
            "un rechazo: su `code`, la operación y quién (un uid, nunca lo enviado); el que terminó "
            'una propuesta aprobada lleva `"not_run": true`',
        ),
        "session_start": Kind(
            "a browser session began on the approval page (the secret was right)",
            "comenzó una sesión del navegador en la página de aprobación (el secreto era correcto)",
        ),
        "approval": Kind(
            "Approve pressed: the card's hash, the facts hash, when the card was shown",
            "se pulsó Aprobar: el hash de la tarjeta, el de los datos y cuándo se mostró",
        ),
        "first_approval": Kind(
            "the first of two people pressed Approve on a change that needs two: the card's hash, the "
            "facts hash, when the card was shown, the uid; the proposal keeps waiting for a second person",
            "la primera de dos personas pulsó Aprobar en un cambio que necesita dos: el hash de la tarjeta, "
            "el de los datos, cuándo se mostró, el uid; la propuesta sigue esperando a una segunda persona",
        ),
        "denial": Kind(
            "a proposal denied (one, or all pending)", "una propuesta rechazada (una, o todas las pendientes)"
        ),
        "expiry": Kind(
            "a proposal expired: nobody decided in time, a service started, or its turn failed",
            "una propuesta venció: nadie decidió a tiempo, un servicio arrancó o su turno falló",
        ),
        "execution_start": Kind(
            "the executor took an approval and began its checks",
            "el ejecutor tomó una aprobación y empezó sus comprobaciones",
        ),
        "outcome": Kind(
            "what the write did: ok, error, unknown, or refused with its code",
            "lo que hizo la escritura: ok, error, unknown, o rechazada con su código",
        ),
        "verification": Kind(
            "the executor's own check after the write: verified, not_observed, contradicted "
            '(`"recheck": true` for a later fresh read)',
            "la comprobación propia del ejecutor tras la escritura: verified, not_observed, contradicted "
            '(`"recheck": true` para una lectura nueva posterior)',
        ),
        "kill_switch": Kind(
            "an operator asked to pause (`on`) or resume every write",
            "un operador pidió pausar (`on`) o reanudar toda escritura",
        ),
        "kill_switch_sealed": Kind(
            "the executor confirmed that request under its own key (only a sealed state turns writes back on)",
            "el ejecutor confirmó ese pedido con su propia clave (solo un estado sellado reanuda las escrituras)",
        ),
        "proposal_repeated": Kind(
            "the same change asked again, answered with the one waiting",
            "el mismo cambio pedido otra vez, respondido con el que espera",
        ),
        "denial_lift": Kind(
            "an operator lifted a denial pause (`fleetwatch resume --denials`)",
            "un operador levantó una pausa por rechazos (`fleetwatch resume --denials`)",
        ),
        "acknowledgement": Kind(
            "an operator acknowledged a change that ended unknown or was not verified (`fleetwatch acknowledge`)",
            "un operador reconoció un cambio que terminó desconocido o sin verificar (`fleetwatch acknowledge`)",
        ),
        "ask": Kind(
            "a question answered: counts only (it lists the read tools the answer used), and who asked "
            "(a uid, an ask page session), never the question",
            "una pregunta respondida: solo cifras (lista las herramientas de lectura que usó la "
            "respuesta), y quién preguntó (un uid, una sesión de la página de preguntas), nunca la pregunta",
        ),
        "ask_session_start": Kind(
            "a session began on the ask page (the secret was right), with the browser's uid",
            "comenzó una sesión en la página de preguntas (el secreto era correcto), con el uid del navegador",
        ),
        "watch_silence": Kind(
            "an operator silenced the watch on a room or a group, or lifted a silence "
            "(`fleetwatch silence`, `fleetwatch unsilence`): who (uid and user), what, why, until when",
            "un operador silenció la vigilancia de una sala o un grupo, o levantó un silencio "
            "(`fleetwatch silence`, `fleetwatch unsilence`): quién (uid y usuario), qué, por qué, hasta cuándo",
        ),
    }
)
"""Kind -> what a row of it records."""
