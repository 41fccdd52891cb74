"""Which path answered a question, in words: the ask page and ``fleetwatch ask`` say the same."""

from __future__ import annotations

from typing import Final

ANSWERED_BY: Final = {
    "model": ("Answered by the model.", "Respondió el modelo."),
    "demo_model": (
        "Answered by the demo model: the lab's stand-in, not a real model.",
        "Respondió el modelo de demostración: el sustituto del laboratorio, no un modelo real.",
    ),
    "keyword": (
        "Answered by the keyword answer (no model; read-only).",
        "Respondió la respuesta por palabras clave (sin modelo; solo lectura).",
    ),
}
"""Which path answered (`Answer.answered_by`), in words (en, es)."""
