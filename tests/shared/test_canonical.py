"""The canonical form (DESIGN §4): properties over generated JSON values, and refusals."""

from __future__ import annotations

import copy
import json
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.canonical import (
    HIDDEN_CODEPOINTS,
    MAX_DEPTH,
    CanonicalError,
    canonical_flat_json,
    canonical_json,
    canonicalize_arguments,
    normalize,
    parse_json_strict,
)
from shared.errors import Code

nfc_text = st.text(max_size=12).map(lambda s: unicodedata.normalize("NFC", s))
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
scalars = st.none() | st.booleans() | int64 | nfc_text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(nfc_text, inner, max_size=4),
    max_leaves=20,
)
visible_text = st.text(
    alphabet=st.characters(
        exclude_categories=("Cc", "Cf", "Co", "Cs", "Zl", "Zp"),
        exclude_characters="".join(map(chr, HIDDEN_CODEPOINTS)),
    ),
    max_size=12,
).map(lambda s: unicodedata.normalize("NFC", s))
visible_values = st.recursive(
    st.none() | st.booleans() | int64 | visible_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(visible_text, inner, max_size=4),
    max_leaves=20,
)
argument_objects = st.dictionaries(visible_text, visible_values, max_size=5)


def reversed_insertion(value):
    """The same value with every dict's insertion order reversed."""
    if isinstance(value, dict):
        return {k: reversed_insertion(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_insertion(v) for v in value]
    return value


def with_float_inside(value, x: float):
    """`value` wrapped so that the float sits one level down, in a dict or a list."""
    return {"outer": [value, {"x": x}]}


@given(json_values)
def test_canonical_json_is_idempotent_through_parsing(value):
    once = canonical_json(value)
    assert canonical_json(parse_json_strict(once)) == once


@given(json_values)
def test_parsing_the_canonical_bytes_gives_back_the_value(value):
    assert parse_json_strict(canonical_json(value)) == value


@given(json_values)
def test_dict_insertion_order_does_not_change_the_bytes(value):
    assert canonical_json(reversed_insertion(value)) == canonical_json(value)


@given(json_values)
def test_equal_inputs_give_equal_bytes(value):
    assert canonical_json(copy.deepcopy(value)) == canonical_json(value)


@given(json_values)
def test_tuples_and_lists_give_the_same_bytes(value):
    as_tuple = (value, [value])
    assert canonical_json(as_tuple) == canonical_json([value, [value]])


@given(st.text(max_size=20))
def test_nfc_equivalent_strings_give_equal_bytes_as_values_and_keys(text):
    nfd, nfc = unicodedata.normalize("NFD", text), unicodedata.normalize("NFC", text)
    assert canonical_json(nfd) == canonical_json(nfc)
    assert canonical_json({nfd: nfd}) == canonical_json({nfc: nfc})


@given(json_values, st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_anywhere_is_refused(value, x):
    with pytest.raises(CanonicalError) as caught:
        canonical_json(with_float_inside(value, x))
    assert caught.value.code is Code.NOT_CANONICALIZABLE
    assert caught.value.path == "$.outer[1].x"


@given(argument_objects, argument_objects)
def test_canonical_arguments_are_idempotent_and_defaults_never_override(args, defaults):
    once = canonicalize_arguments(args, defaults)
    assert canonicalize_arguments(once, defaults) == once
    assert canonical_json(canonicalize_arguments(once, defaults)) == canonical_json(once)
    for key, value in args.items():
        assert once[key] == value
    for key, value in defaults.items():
        assert once[key] == args.get(key, value)


@given(
    st.sampled_from(sorted(HIDDEN_CODEPOINTS) + [0x00, 0x0A, 0x1B, 0x7F, 0x2028, 0x2029, 0xE000, 0xAD]),
    st.text(alphabet="abc19", max_size=5),
)
def test_a_hidden_character_in_an_argument_is_refused_with_its_path(codepoint, text):
    args = {"device_ids": ["19012341234", text + chr(codepoint) + text]}
    with pytest.raises(CanonicalError) as caught:
        canonicalize_arguments(args)
    assert caught.value.code is Code.HIDDEN_CHARACTER
    assert caught.value.path == "arguments.device_ids[1]"
    assert f"U+{codepoint:04X}" in caught.value.message


def test_a_hidden_character_in_a_key_is_named_escaped_never_raw():
    with pytest.raises(CanonicalError) as caught:
        canonicalize_arguments({"channel": {"na\u202eme": "x"}})
    assert caught.value.code is Code.HIDDEN_CHARACTER
    assert caught.value.path == 'arguments.channel["na\\u202eme"]'
    assert "\u202e" not in caught.value.message


def test_a_hidden_character_in_a_default_is_refused_too():
    with pytest.raises(CanonicalError) as caught:
        canonicalize_arguments({}, {"title": "a\u200bb"})
    assert caught.value.code is Code.HIDDEN_CHARACTER
    assert caught.value.path == "defaults.title"


def test_plain_canonical_json_keeps_newlines_for_audit_details_and_reasons():
    assert canonical_json({"reason": "line one\nline two"}) == b'{"reason":"line one\\nline two"}'


def test_the_bytes_are_sorted_compact_utf8_with_integers_and_booleans_kept():
    value = {"b": [1, True, None], "a": "caf\u00e9", "c": {"z": 0, "y": False}}
    assert canonical_json(value) == '{"a":"café","b":[1,true,null],"c":{"y":false,"z":0}}'.encode()
    assert canonical_json(True) != canonical_json(1)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"n": 2**63}, "$.n"),
        ({"n": -(2**63) - 1}, "$.n"),
        ({1: "x"}, "$"),
        ({"b": b"bytes"}, "$.b"),
        ({"s": {1, 2}}, "$.s"),
        ({"s": "\ud800"}, "$.s"),
        ({"e\u0301": 1, "\u00e9": 2}, '$["\\u00e9"]'),
    ],
)
def test_values_without_a_canonical_form_are_refused_naming_the_path(value, path):
    with pytest.raises(CanonicalError) as caught:
        canonical_json(value)
    assert caught.value.code is Code.NOT_CANONICALIZABLE
    assert caught.value.path == path


def test_nesting_deeper_than_the_cap_is_refused_not_a_recursion_crash():
    value: object = []
    for _ in range(MAX_DEPTH + 1):
        value = [value]
    with pytest.raises(CanonicalError) as caught:
        canonical_json(value)
    assert caught.value.code is Code.NOT_CANONICALIZABLE
    assert canonical_json(json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"x": {"\u00e9": 1, "e\u0301": 2}}',
        '{"a": 1.0}',
        '{"a": 1e3}',
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": -Infinity}',
        '{"a": ',
        "[1] [2]",
        b'{"a": "\xff"}',
        "1" * 5000,
    ],
)
def test_strict_parsing_refuses_duplicates_floats_and_malformed_text(text):
    with pytest.raises(CanonicalError) as caught:
        parse_json_strict(text)
    assert caught.value.code is Code.NOT_CANONICALIZABLE


def test_arguments_that_are_not_an_object_are_refused():
    not_a_mapping: Any = ["device_ids"]
    with pytest.raises(CanonicalError) as caught:
        canonicalize_arguments(not_a_mapping)
    assert caught.value.code is Code.NOT_CANONICALIZABLE


def test_an_explicit_null_argument_is_kept_rather_than_replaced_by_its_default():
    assert canonicalize_arguments({"until": None}, {"until": "2030-01-01T00:00:00Z"}) == {"until": None}


def test_normalize_returns_fresh_plain_data():
    args = {"ids": ("a", "b")}
    out = normalize(args)
    assert out == {"ids": ["a", "b"]}
    out["ids"].append("c")
    assert args == {"ids": ("a", "b")}


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
flat_values = st.none() | st.booleans() | st.integers() | st.text(max_size=12)


@given(st.dictionaries(identifiers, flat_values, max_size=7))
def test_the_flat_form_gives_the_same_bytes_or_the_same_refusal_as_the_general_walk(fields):
    """`canonical_flat_json` (the audit walk's row hash) never differs from `canonical_json`:
    unnormalised text, booleans, integers out of range and lone surrogates included."""
    try:
        expected: bytes | Code = canonical_json(fields)
    except CanonicalError as exc:
        expected = exc.code
    try:
        got: bytes | Code = canonical_flat_json(fields)
    except CanonicalError as exc:
        got = exc.code
    assert got == expected


def test_the_flat_form_refuses_a_key_that_is_not_a_plain_identifier():
    with pytest.raises(CanonicalError) as caught:
        canonical_flat_json({"a b": 1})
    assert caught.value.code is Code.NOT_CANONICALIZABLE
