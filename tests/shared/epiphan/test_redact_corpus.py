"""Redaction held to its corpus (`tests.corpus.redaction`): every stream URL form, free text with
secrets in it, benign text, and idempotence (redacting twice gives the text of once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from shared.epiphan.fleet import parse_devices, parse_events, parse_recorder_status, parse_system_status
from shared.epiphan.redact import (
    REDACTED,
    redact,
    redact_parsed,
    redact_text,
    redact_text_fully,
    redact_url,
    url_host,
)
from tests.corpus.redaction import (
    BENIGN_TEXTS,
    BENIGN_URLS,
    SECRET_TEXTS,
    STREAM_URL_SECRETS,
    STREAM_URLS,
)


def test_the_url_corpus_holds_at_least_fifty_forms_and_its_benign_part():
    assert len(STREAM_URLS) >= 50 and len(BENIGN_URLS) >= 5


@pytest.mark.parametrize(("url", "expected"), sorted(STREAM_URLS.items()))
def test_every_stream_url_form_loses_exactly_its_secret_parts(url, expected):
    assert redact_url(url) == expected


@pytest.mark.parametrize(("url", "expected"), sorted(STREAM_URLS.items()))
def test_a_stream_url_inside_free_text_is_redacted_the_same_way(url, expected):
    assert redact_text(f"Publisher failed ({url} ) at 13:00") == f"Publisher failed ({expected} ) at 13:00"


@pytest.mark.parametrize("url", sorted(STREAM_URLS))
def test_a_redacted_url_keeps_its_host_and_redacting_it_again_changes_nothing(url):
    once = redact_url(url)
    assert redact_url(once) == once
    assert url_host(once) == url_host(url)


def test_no_secret_of_the_url_corpus_survives_anywhere():
    out = "\n".join(redact_url(url) for url in STREAM_URLS)
    assert [s for s in STREAM_URL_SECRETS if s in out] == []


def test_the_srt_streamid_where_ingests_carry_the_key_is_redacted_with_the_passphrase():
    url = "srt://ingest.example.com:9000?streamid=lib-main&passphrase=x"
    assert redact_url(url) == f"srt://ingest.example.com:9000?streamid={REDACTED}&passphrase={REDACTED}"
    setting = {"id": "streamid", "type": {"name": "string"}, "title": "Stream ID", "value": "lib-main"}
    assert redact(setting)["value"] == REDACTED
    assert redact({"srt": {"streamid": "lib-main"}}) == {"srt": {"streamid": REDACTED}}


def test_the_free_text_corpus_is_large_enough():
    assert len(SECRET_TEXTS) >= 40 and len(BENIGN_TEXTS) >= 25


@pytest.mark.parametrize(("text", "secrets", "kept"), SECRET_TEXTS)
def test_secrets_in_free_text_vanish_and_the_words_around_them_stay(text, secrets, kept):
    out = redact_text(text)
    assert [s for s in secrets if s in out] == [], out
    assert [k for k in kept if k not in out] == [], out
    assert REDACTED in out


@pytest.mark.parametrize("text", BENIGN_TEXTS)
def test_benign_text_comes_out_unchanged(text):
    assert redact_text(text) == text


@pytest.mark.parametrize("text", [t for t, _, _ in SECRET_TEXTS] + list(BENIGN_TEXTS) + list(STREAM_URLS))
def test_redacting_the_corpus_twice_gives_the_text_of_once(text):
    once = redact_text(text)
    assert redact_text(once) == once


def test_a_value_glued_after_a_mask_does_not_survive():
    assert redact_text("password=[redacted]hunter2") == f"password={REDACTED}"
    assert redact_text(f"rtmp://live.example.net/{REDACTED}abc") == f"rtmp://live.example.net/{REDACTED}"
    assert redact_text(f"Bearer {REDACTED}abcdef") == f"Bearer {REDACTED}"


def test_a_markdown_table_loses_the_values_of_its_stream_key_column_only():
    table = "| Room | Stream key |\n|---|---|\n| SCI 101 | live_sk_1 |\n| LAW 102 |  |\n\nAfter | live_sk_2"
    assert redact_text(table) == (
        f"| Room | Stream key |\n|---|---|\n| SCI 101 | {REDACTED} |\n| LAW 102 |  |\n\nAfter | live_sk_2"
    )


_PIECES = st.sampled_from(
    [
        "password",
        "Stream key",
        "stream%20key",
        "token",
        "x-api-key",
        "streamid",
        "key",
        "Basic",
        "Bearer",
        "sk-ant-",
        "api03",
        "=",
        ":",
        " = ",
        ": ",
        '"',
        "'",
        " ",
        "\n",
        "|",
        "|---|",
        "&",
        ",",
        ";",
        "#",
        "?",
        "/",
        "@",
        "%",
        "[redacted]",
        "[",
        "]",
        "rtmp://",
        "srt://",
        "https://",
        "live.example.net",
        "192.0.2.1",
        ":9000",
        "hunter2",
        "dXNlcjpwYXNz",
        "eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl",
        "abcd-efgh-ijkl-mnop-qrst",
        "live_sk_",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "Room 401",
        "é",
    ]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=24).map("".join))
@example("eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJleyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl")
@example("-----BEGIN PRIVATE KEY----------END PRIVATE KEY-----password")
@example("Basic [redacted]a[redacted]")
@example("passwordpassword=sk-ant-0https://@")
@example("u:p@rtmp://")
@example("Basic rtmp://:9000rtmp://.")
def test_redaction_is_idempotent_on_any_mix_of_secret_shapes(text):
    once = redact_text(text)
    assert redact_text(once) == once
    url = redact_url(text)
    assert redact_url(url) == url


@given(st.text(max_size=60))
def test_redaction_is_idempotent_on_any_text(text):
    once = redact_text(text)
    assert redact_text(once) == once


SECRET_ALPHABET = st.sampled_from(
    list("aAkKiIsSzZbBeErRcCyYjJ0129 :=%-_.[]|/\"'\n\t@#?&;,")
    + ["AKIA", "ASIA", "AIza", "Bearer ", "Basic ", "key=", "token: ", "rtmp://", "sk-ant-", "eyJ", REDACTED]
)


@given(st.lists(SECRET_ALPHABET, max_size=40).map("".join) | st.text(max_size=80))
@example("AKIAABCDEFGHIJKLMNOP")
@example("AIzaSyA1234567890123456789012345678901")
@example("Bearer abcdefgh12345678")
def test_the_quick_look_never_skips_text_the_full_pattern_would_change(text):
    assert redact_text(text) == redact_text_fully(text)


@pytest.mark.parametrize("text", [t for t, _, _ in SECRET_TEXTS] + list(BENIGN_TEXTS) + sorted(STREAM_URLS))
def test_the_quick_look_agrees_with_the_full_pattern_on_the_corpus(text):
    assert redact_text(text) == redact_text_fully(text)


def hostile_device(text):
    """A device list whose every kept field carries `text` (and a secret-named key beside)."""
    return {
        "team_id": text,
        "devices": [
            {
                "Id": "19012340101",
                "Name": text,
                "Model": text,
                "GroupId": text,
                "GroupName": text,
                "Firmware": text,
                "Status": "online",
                "StreamKey": text,
                "IPAddress": "192.0.2.7",
                "Channels": [
                    {
                        "channel_id": "1",
                        "name": text,
                        "recording_status": {"state": "recording", "timestamp": "1790000000"},
                        "Publishers": [{"id": text, "type": "rtmp", "status": {"state": text}}],
                        "Warnings": [
                            {"id": "channel_no_signal", "label": text, "data": {"key": text, "x": text}}
                        ],
                    }
                ],
                "Warnings": [{"id": text, "label": text, "message": text, "data": {"channel_name": text}}],
            }
        ],
    }


@pytest.mark.parametrize("text", [t for t, _, _ in SECRET_TEXTS] + sorted(STREAM_URLS) + list(BENIGN_TEXTS))
def test_parsing_a_device_list_then_redacting_what_was_kept_equals_redacting_it_whole_first(text):
    data = hostile_device(text)
    assert redact_parsed(parse_devices(data)) == parse_devices(redact(data))


CAMPUS_CALLS = Path(__file__).resolve().parents[2] / "fixtures" / "captures" / "campus" / "calls"
PER_DEVICE_READS = (
    ("002-get_recorder_status_for_devices.json", parse_recorder_status),
    ("003-get_system_status_for_devices.json", parse_system_status),
    ("006-get_current_or_next_cms_events_for_devices.json", parse_events),
)
FREE_TEXT = frozenset({"title", "cms", "status", "name", "label", "message", "state"})


def with_text(value: Any, text: str) -> Any:
    """`value` with every string under a free-text key replaced by `text`."""
    if isinstance(value, dict):
        return {
            k: text if k in FREE_TEXT and isinstance(v, str) else with_text(v, text) for k, v in value.items()
        }
    if isinstance(value, list):
        return [with_text(item, text) for item in value]
    return value


@pytest.mark.parametrize(("calls", "parser"), PER_DEVICE_READS, ids=lambda x: getattr(x, "__name__", x))
@pytest.mark.parametrize("text", [t for t, _, _ in SECRET_TEXTS] + sorted(STREAM_URLS) + list(BENIGN_TEXTS))
def test_a_per_device_read_parsed_then_redacted_equals_one_redacted_whole_first(calls, parser, text):
    """The read client parses each per-device result first and redacts what was kept (issue 34)."""
    data = with_text(json.loads((CAMPUS_CALLS / calls).read_text()), text)
    parsed = {key: redact_parsed(value) for key, value in parser(data).items()}
    assert parsed == parser(redact(data))
