"""A service's refusal made of catalogue words crosses the socket with them (issue 28): the
command says it in the reader's language; a refusal with only English prose keeps the code's
words and adds the service's English, marked as such."""

from __future__ import annotations

import msgspec

from services.ctl.main import error_line
from shared.errors import Code, FleetwatchError
from shared.text.catalogue import N_
from shared.wire.client import CallError
from shared.wire.protocol import Codec, ErrorReply

CODEC = Codec((ErrorReply,))


def refused(reply: ErrorReply) -> CallError:
    """`reply` sent and read back, as the client raises it."""
    read = CODEC.decode(CODEC.encode(reply))
    assert isinstance(read, ErrorReply)
    return CallError.of(read, service="approval_web", operation="lift_denial_pauses")


def test_a_refusal_in_catalogue_words_is_said_in_the_readers_language() -> None:
    exc = FleetwatchError.said(
        Code.NO_SUCH_PAUSE,
        N_("no denial pause of %(tool)s on %(room)s is running"),
        tool="batch_reboot",
        room="Aula 1",
    )
    error = refused(ErrorReply.of(exc))
    assert error_line(error, "en") == (
        "fleetwatch: no denial pause of batch_reboot on Aula 1 is running [no_such_pause]"
    )
    assert error_line(error, "es") == (
        "fleetwatch: no hay ninguna pausa por rechazos de batch_reboot en Aula 1 [no_such_pause]"
    )


def test_a_refusal_in_english_prose_keeps_the_codes_words_and_marks_the_services_english() -> None:
    error = refused(ErrorReply.of(FleetwatchError(Code.INVALID_ARGUMENTS, "$.device_ids: expected a list")))
    assert error_line(error, "en") == "fleetwatch: $.device_ids: expected a list [invalid_arguments]"
    assert error_line(error, "es") == (
        "fleetwatch: los argumentos no coinciden con el esquema revisado de la herramienta. (el servicio lo "
        "dijo en inglés: $.device_ids: expected a list) [invalid_arguments]"
    )


def test_a_refusal_without_catalogue_words_is_the_same_frame_as_before() -> None:
    class Before(msgspec.Struct, tag="error", tag_field="op"):
        code: Code
        message: str

    plain = ErrorReply(code=Code.PROPOSAL_NOT_FOUND, message="no such proposal")
    assert CODEC.encode(plain) == msgspec.msgpack.encode(Before(Code.PROPOSAL_NOT_FOUND, "no such proposal"))
