"""The bound record and its seal (DESIGN §4)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.binding import (
    BoundRecord,
    TargetState,
    fingerprint_hash,
    make_bound_record,
    new_binding_key,
    record_bytes,
    record_from_bytes,
    seal,
    verify_seal,
)
from shared.canonical import CanonicalError
from shared.errors import Code

A, B, C = "19012341234", "19012340000", "abcdef0123"
KEY = bytes(range(32))


def a_record(**changes) -> BoundRecord:
    fields = {
        "proposal_id": "p-1",
        "tool": "batch_reboot",
        "arguments": {"device_ids": [A, B]},
        "targets": (B, A),
        "fingerprint": {
            A: TargetState(online=True, recording=False, next_event_start=None),
            B: TargetState(online=True, recording=False, next_event_start="2030-01-01T09:00:00Z"),
        },
        "schema_version": 1,
        "reason": "Room 101 is frozen.",
    }
    fields.update(changes)
    return make_bound_record(**fields)


def flipped(state: TargetState, field: str) -> TargetState:
    if field == "next_event_start":
        return msgspec.structs.replace(
            state, next_event_start=None if state.next_event_start else "2030-01-01T10:00:00Z"
        )
    return msgspec.structs.replace(state, **{field: not getattr(state, field)})


MUTATIONS = {
    "proposal_id": lambda r: {"proposal_id": r.proposal_id + "x"},
    "tool": lambda r: {"tool": "batch_firmware_update"},
    "arguments": lambda r: {"arguments": {"device_ids": [A]}},
    "arguments_type": lambda r: {"arguments": {"device_ids": [A, B], "n": True}},
    "targets": lambda r: {
        "targets": (A, B, C),
        "fingerprint": {**r.fingerprint, C: TargetState(online=True, recording=False, next_event_start=None)},
    },
    "fingerprint.online": lambda r: {
        "fingerprint": {**r.fingerprint, A: flipped(r.fingerprint[A], "online")}
    },
    "fingerprint.recording": lambda r: {
        "fingerprint": {**r.fingerprint, A: flipped(r.fingerprint[A], "recording")}
    },
    "fingerprint.next_event_start": lambda r: {
        "fingerprint": {**r.fingerprint, B: flipped(r.fingerprint[B], "next_event_start")}
    },
    "schema_version": lambda r: {"schema_version": r.schema_version + 1},
    "slot": lambda r: {"slot": "read"},
    "reason": lambda r: {"reason": r.reason + " "},
}


def test_every_field_of_the_record_has_a_mutation_below():
    covered = {name.split(".")[0].split("_type")[0] for name in MUTATIONS}
    assert covered == set(BoundRecord.__struct_fields__)


@given(st.sampled_from(sorted(MUTATIONS)), st.binary(min_size=32, max_size=32))
def test_the_seal_changes_when_any_bound_field_changes(field, key):
    original = a_record()
    changed = a_record(**MUTATIONS[field](original))
    assert record_bytes(changed) != record_bytes(original)
    assert seal(changed, key) != seal(original, key)
    assert not verify_seal(changed, seal(original, key), key)
    assert verify_seal(changed, seal(changed, key), key)


def test_a_seal_made_with_another_key_does_not_verify():
    record = a_record()
    assert verify_seal(record, seal(record, KEY), KEY)
    assert not verify_seal(record, seal(record, new_binding_key()), KEY)


@pytest.mark.parametrize("tampered", ["", "0" * 64, "zz", "\u00e9" * 64, None])
def test_a_tampered_or_malformed_seal_does_not_verify(tampered):
    record = a_record()
    assert not verify_seal(record, tampered, KEY)


def test_a_seal_with_one_hex_digit_changed_does_not_verify():
    good = seal(a_record(), KEY)
    bad = good[:10] + ("0" if good[10] != "0" else "1") + good[11:]
    assert not verify_seal(a_record(), bad, KEY)


def test_binding_keys_are_32_fresh_random_bytes():
    first, second = new_binding_key(), new_binding_key()
    assert len(first) == 32 and first != second


def test_targets_are_sorted_and_arguments_canonical_whatever_order_they_came_in():
    record = a_record(targets=[A, B, A], arguments={"z": "e\u0301", "a": 1})
    assert record.targets == tuple(sorted({A, B}))
    assert record.arguments == {"a": 1, "z": "\u00e9"}
    assert record_bytes(record).startswith(b'{"arguments":{"a":1,"z":"\xc3\xa9"}')


def test_a_record_reads_back_from_its_bytes_and_still_verifies():
    record = a_record()
    back = record_from_bytes(record_bytes(record))
    assert back == record
    assert verify_seal(back, seal(record, KEY), KEY)


@pytest.mark.parametrize(
    "data",
    [
        b'{"proposal_id": "p"}',
        b"not json",
        b'{"arguments":{"x":1.5}}',
    ],
)
def test_stored_bytes_that_are_not_a_record_are_refused(data):
    with pytest.raises(CanonicalError) as caught:
        record_from_bytes(data)
    assert caught.value.code is Code.NOT_CANONICALIZABLE


def test_stored_bytes_that_are_not_canonical_are_refused_even_if_they_decode():
    spaced = record_bytes(a_record()).replace(b'"tool":', b'"tool": ')
    with pytest.raises(CanonicalError):
        record_from_bytes(spaced)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"targets": ["NOT-AN-ID"], "fingerprint": {}}, "not a master ID"),
        ({"targets": []}, "at least one target"),
        ({"targets": [A]}, "fingerprint keys"),
        ({"proposal_id": ""}, "must not be empty"),
        ({"arguments": {"title": "a\u202eb"}}, "hidden character"),
    ],
)
def test_a_record_that_breaks_an_invariant_is_refused(changes, problem):
    with pytest.raises(CanonicalError) as caught:
        a_record(**changes)
    assert problem in caught.value.message


def test_decoding_a_record_with_unsorted_targets_is_refused():
    raw = msgspec.to_builtins(a_record())
    raw["targets"] = list(reversed(raw["targets"]))
    with pytest.raises(CanonicalError):
        msgspec.convert(raw, BoundRecord)


def test_the_fingerprint_hash_ignores_key_order_and_follows_every_state_change():
    record = a_record()
    reordered = dict(reversed(list(record.fingerprint.items())))
    assert fingerprint_hash(reordered) == fingerprint_hash(record.fingerprint)
    for field in ("online", "recording", "next_event_start"):
        changed = {**record.fingerprint, A: flipped(record.fingerprint[A], field)}
        assert fingerprint_hash(changed) != fingerprint_hash(record.fingerprint)
    assert len(fingerprint_hash(record.fingerprint)) == 64
