"""shared.ids: the ID patterns every module and every argument schema uses."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import ids

masters = st.from_regex(ids.MASTER_ID, fullmatch=True)
channels = st.from_regex(ids.CHANNEL_ID, fullmatch=True)
id_like_text = st.text(alphabet="0123456789abcdefABCDEF-: \n\t_", max_size=40)


def matches(pattern: str, value: str) -> bool:
    """Whether `value` is whole of `pattern` (an argument schema's pattern, matched as the
    product matches: ``re.fullmatch``, so no trailing newline gets through)."""
    return re.fullmatch(pattern, value) is not None


@given(masters)
def test_a_master_id_is_never_a_channel_id(master: str) -> None:
    assert ids.is_master_id(master)
    assert not ids.is_channel_id(master)


@given(channels)
def test_a_channel_id_is_never_a_master_id_and_names_its_master(channel: str) -> None:
    assert ids.is_channel_id(channel)
    assert not ids.is_master_id(channel)
    master = ids.master_of_channel(channel)
    assert ids.is_master_id(master)
    assert f"{master}-{ids.split_channel_id(channel)[1]}" == channel


@given(id_like_text)
def test_no_text_is_both_a_master_and_a_channel_id(text: str) -> None:
    assert not (ids.is_master_id(text) and ids.is_channel_id(text))


@given(st.one_of(masters, channels), st.sampled_from(["\n", " ", "\t", "\r\n", "\x00"]))
def test_an_id_with_trailing_whitespace_is_refused(value: str, tail: str) -> None:
    assert not ids.is_master_id(value + tail)
    assert not ids.is_channel_id(value + tail)


def test_a_trailing_newline_is_refused_although_dollar_would_let_it_through() -> None:
    assert re.search(ids.MASTER_ID, "19012341234\n") is not None  # the trap fullmatch avoids
    assert ids.is_master_id("19012341234")
    assert not ids.is_master_id("19012341234\n")
    assert not ids.is_channel_id("19012341234-1\n")
    assert not matches(ids.CHANNEL_NUMBER, "1\n")
    assert not matches(ids.EVENT_ID, "abc\n")


@pytest.mark.parametrize("value", ["19012341234", "0123abcd", "f" * 32])
def test_real_and_hex_master_ids_are_accepted(value: str) -> None:
    assert ids.is_master_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "ABCDEF12",
        "19012341234A",
        "1234567",
        "f" * 33,
        "１９０１２３４１２３４",
        "",
        " 19012341234",
        19012341234,
    ],
)
def test_master_ids_are_lower_case_hex_or_digits_only(value: object) -> None:
    assert not ids.is_master_id(value)


@pytest.mark.parametrize(
    "value", ["19012341234-0", "19012341234-01", "19012341234-1000", "19012341234-", "1-1"]
)
def test_a_channel_id_needs_a_master_and_a_channel_from_1_to_999(value: str) -> None:
    assert not ids.is_channel_id(value)


@pytest.mark.parametrize(
    ("value", "ok"), [("1", True), ("999", True), ("0", False), ("01", False), ("1000", False)]
)
def test_a_channel_number_runs_from_1_to_999_without_leading_zeros(value: str, ok: bool) -> None:
    assert matches(ids.CHANNEL_NUMBER, value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("3f2b8c1e-9a4d-4c2e-8b1f-0a1b2c3d4e5f", True),
        ("3F2B8C1E-9A4D-4C2E-8B1F-0A1B2C3D4E5F", True),
        ("3f2b8c1e9a4d4c2e8b1f0a1b2c3d4e5f", False),
        ("{3f2b8c1e-9a4d-4c2e-8b1f-0a1b2c3d4e5f}", False),
        ("3f2b8c1e-9a4d-4c2e-8b1f-0a1b2c3d4e5g", False),
    ],
)
def test_a_stream_id_is_a_canonical_uuid_in_either_case(value: str, ok: bool) -> None:
    assert matches(ids.STREAM_ID, value) is ok


def test_event_id_with_colon_is_read_but_not_proposable_until_reviewed_live() -> None:
    live_shaped = "abc123:1791484740"
    assert matches(ids.EVENT_ID_READ, live_shaped)
    assert not matches(ids.EVENT_ID, live_shaped)
    assert ids.EVENT_ID_READ not in ids.SCHEMA_PATTERNS.values()


@pytest.mark.parametrize("value", ["abc123", "A", "a_b-c", "x" * 128])
def test_event_ids_of_the_reviewed_pattern_are_read_and_proposable(value: str) -> None:
    assert matches(ids.EVENT_ID, value)
    assert matches(ids.EVENT_ID_READ, value)


@pytest.mark.parametrize("value", ["-abc", "_abc", "x" * 129, "a b", "a/b", ":abc"])
def test_malformed_event_ids_are_neither_read_nor_proposed(value: str) -> None:
    assert not matches(ids.EVENT_ID, value)
    assert not matches(ids.EVENT_ID_READ, value)


def test_splitting_a_malformed_channel_id_raises_without_repeating_it() -> None:
    with pytest.raises(ValueError, match="not a channel ID") as caught:
        ids.master_of_channel("19012341234")
    assert "19012341234" not in str(caught.value)


def test_every_schema_pattern_is_anchored_and_compiles() -> None:
    for name, pattern in ids.SCHEMA_PATTERNS.items():
        assert pattern.startswith("^") and pattern.endswith("$"), name
        re.compile(pattern)
