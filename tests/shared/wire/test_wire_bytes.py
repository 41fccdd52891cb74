"""The same wire bytes for every operation: one representative instance of every request and
reply type of the three sockets (and `ErrorReply`, and each socket's `Capabilities`) encodes to
the bytes recorded in ``wire_bytes.hex``, and those bytes decode back to the instance.

Each instance is built from its type alone (`sample`): the first value of a literal or an enum,
a value of each ID's format, one item in each collection, every optional field filled. A change
to a message's fields, tags, defaults or order changes its bytes and fails here; a refactor of
where the messages are declared does not. ``python -m tests.shared.wire.test_wire_bytes``
rewrites the file (only for a change to the wire that is meant).

`Capabilities` holds sets, whose order on the wire follows Python's string hashing (it differs
between processes): its bytes are compared in msgspec's deterministic order.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import msgspec.inspect as mi

from services.assistant import manifest as assistant_manifest
from shared.errors import Code
from shared.wire import approval, assistant, executor, formats, protocol

DATA = Path(__file__).with_name("wire_bytes.hex")
SOCKETS: dict[str, ModuleType] = {"approval": approval, "executor": executor, "assistant": assistant}

_IDS = {
    formats.PROPOSAL_ID: "p-0123456789ab",
    formats.APPROVAL_ID: "a-0123456789ab",
    formats.EXECUTION_ID: "x-0123456789ab",
    formats.TURN_ID: "t_" + "0123456789abcdef" * 2,
    formats.PAGE_SESSION_ID: "k-" + "0123456789abcdef" * 2,
    formats.TOOL_NAME: "batch_reboot",
    formats.NAME: "end_turn",
    formats.SHA256_HEX: "0123456789abcdef" * 4,
    formats.UTC_TEXT: "2026-09-16T20:36:00.000Z",
    r"^\$[A-Za-z0-9_.\[\]]{0,63}\Z": "$.approval_id",
}


def _value(info: mi.Type, path: str) -> Any:
    """A representative value of one field's type (deterministic)."""
    match info:
        case mi.StructType():
            return sample(info.cls, path)
        case mi.UnionType():
            real = [t for t in info.types if not isinstance(t, mi.NoneType)]
            return _value(real[0], path)
        case mi.LiteralType():
            return info.values[0]
        case mi.EnumType():
            members = list(info.cls)
            return Code.PROPOSAL_NOT_FOUND if info.cls is Code else members[0]
        case mi.StrType():
            return _IDS[info.pattern] if info.pattern else f"{path}·é"
        case mi.BoolType():
            return True
        case mi.IntType():
            return max(info.ge or 0, 3) if info.le is None or info.le >= 3 else info.le
        case mi.FloatType():
            return 1.5
        case mi.BytesType():
            return b"\x00\x01\xfe"
        case mi.DateTimeType():
            return datetime.datetime(2026, 9, 16, 20, 36, tzinfo=datetime.UTC)
        case mi.DictType():
            return {_value(info.key_type, path + ".key"): _value(info.value_type, path + "[]")}
        case mi.ListType() | mi.VarTupleType():
            return (_value(info.item_type, path + "[]"),)
        case mi.FrozenSetType() | mi.SetType():
            return frozenset({_value(info.item_type, path + "[]")})
        case mi.AnyType():
            return {"any": [1, "two"]}
    raise TypeError(f"no sample for {info!r} at {path}")


def sample(cls: type[Any], path: str = "") -> Any:
    """One instance of the Struct `cls`, every field filled."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    values = {f.name: _value(f.type, f"{path}{cls.__name__}.{f.name}") for f in info.fields}
    return cls(**values)


def messages(module: ModuleType) -> list[type[protocol.Message]]:
    """Every `Message` class a contract module declares, by name."""
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, protocol.Message) and v.__module__ == module.__name__
    ]
    return sorted(found, key=lambda t: t.__name__)


def manifests() -> dict[str, protocol.Capabilities]:
    return {
        "approval": approval.CAPABILITIES,
        "executor": executor.CAPABILITIES,
        "assistant": assistant_manifest.capabilities(),
    }


_DETERMINISTIC = msgspec.msgpack.Encoder(order="deterministic")


def current() -> dict[str, bytes]:
    """``socket Type`` -> its bytes, as this code encodes them."""
    wire = protocol.Codec((protocol.ErrorReply,))
    out: dict[str, bytes] = {}
    for socket, module in SOCKETS.items():
        for cls in messages(module):
            out[f"{socket} {cls.__name__}"] = wire.encode(sample(cls))
    for cls in (protocol.ErrorReply, protocol.GetCapabilities):
        out[f"protocol {cls.__name__}"] = wire.encode(sample(cls))
    for socket, caps in manifests().items():
        out[f"{socket} Capabilities"] = _DETERMINISTIC.encode(caps)
    return out


def recorded() -> dict[str, bytes]:
    lines = [line.split() for line in DATA.read_text().splitlines() if line and not line.startswith("#")]
    return {f"{s} {name}": bytes.fromhex(h) for s, name, h in lines}


def test_every_message_of_every_socket_has_its_recorded_bytes() -> None:
    assert set(current()) == set(recorded())


def test_every_message_encodes_to_the_bytes_recorded_before_the_operation_tables() -> None:
    now, before = current(), recorded()
    changed = sorted(k for k in before if now.get(k) != before[k])
    assert changed == []


def test_the_recorded_bytes_decode_back_to_the_same_message() -> None:
    before = recorded()
    for socket, module in SOCKETS.items():
        for cls in messages(module):
            decoded = protocol.Codec((cls,)).decode(before[f"{socket} {cls.__name__}"])
            assert decoded == sample(cls), cls.__name__


def test_every_sample_fills_every_field_so_each_one_is_on_the_wire() -> None:
    for module in SOCKETS.values():
        for cls in messages(module):
            instance = sample(cls)
            empty = [f for f in cls.__struct_fields__ if getattr(instance, f) in (None, (), {}, "")]
            assert empty == [], cls.__name__
    assert sample(protocol.ErrorReply).code is Code.PROPOSAL_NOT_FOUND


if __name__ == "__main__":
    rows = [f"{k} {v.hex()}" for k, v in sorted(current().items())]
    DATA.write_text(
        "# socket type msgpack-hex (tests/shared/wire/test_wire_bytes.py)\n" + "\n".join(rows) + "\n"
    )
    sys.stdout.write(f"{len(rows)} messages written to {DATA}\n")
