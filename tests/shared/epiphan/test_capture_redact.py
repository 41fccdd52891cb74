"""The capture's stable placeholders (`shared.epiphan.capture_redact`) on the redaction corpus
(`tests.corpus.redaction`): nothing the product would redact survives, the same value gets the
same placeholder, hosts stay hosts, and ``--rename`` replaces names and IDs consistently."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.epiphan.capture_redact import CaptureRedactor, Renamer, holds_no_secret, verified
from shared.epiphan.mcp_session import RawToolResult
from shared.epiphan.model_data import mask_addresses
from shared.epiphan.read_client import read_result
from shared.epiphan.redact import redact_url, url_host
from tests.corpus.redaction import BENIGN_TEXTS, SECRET_TEXTS, STREAM_URL_SECRETS, STREAM_URLS


@pytest.mark.parametrize("url", sorted(STREAM_URLS))
def test_every_stream_url_form_loses_its_secrets_and_keeps_its_host(url):
    out = CaptureRedactor().text(url)
    assert [s for s in STREAM_URL_SECRETS if s in out] == []
    assert holds_no_secret(out) and mask_addresses(out) == out
    if redact_url(url) == url and mask_addresses(url) == url:
        assert out == url
    elif host := url_host(redact_url(url)):  # a host stays a host (an address: a placeholder one)
        kept = url_host(out)
        assert kept is not None and (kept == host or mask_addresses(host) != host)


@pytest.mark.parametrize(("text", "gone", "kept"), SECRET_TEXTS)
def test_secrets_in_free_text_vanish_and_the_words_around_them_stay(text, gone, kept):
    out = CaptureRedactor().text(text)
    assert [s for s in gone if s in out] == [] and [w for w in kept if w not in out] == []
    assert holds_no_secret(out)


@pytest.mark.parametrize("text", BENIGN_TEXTS)
def test_text_without_a_secret_or_an_address_is_kept_as_it_is(text):
    assert CaptureRedactor().text(text) == text


def test_the_same_value_has_the_same_placeholder_and_another_value_another():
    redactor = CaptureRedactor()
    first = redactor({"key": "live_sk_1", "settings": [{"id": "stream_key", "value": "live_sk_1"}]})
    second = redactor({"stream_key": "live_sk_1", "other": {"key": "live_sk_2"}})
    assert first["key"] == first["settings"][0]["value"] == second["stream_key"] == "redacted-secret-1"
    assert second["other"]["key"] == "redacted-secret-2" and redactor.counts == {"secret": 2}


def test_an_address_or_serial_read_in_one_answer_is_hidden_in_every_later_one():
    redactor = CaptureRedactor()
    device = redactor(
        {"IPAddress": "192.0.2.10", "SerialNumber": "P2E0000001", "MACAddress": "00:1a:2b:3c:4d:5e"}
    )
    later = redactor({"message": "P2E0000001 at 192.0.2.10 (00:1a:2b:3c:4d:5e) via 2001:db8::7"})
    assert device == {
        "IPAddress": "ip-1.example",
        "SerialNumber": "redacted-serial-1",
        "MACAddress": "redacted-mac-1",
    }
    assert later["message"] == "redacted-serial-1 at ip-1.example (redacted-mac-1) via ip-2.example"
    assert url_host(redactor.text("rtmp://192.0.2.10/app/key")) == "ip-1.example"


def test_null_empty_and_boolean_secret_fields_stay_as_they_are():
    assert CaptureRedactor()({"key": None, "password": "", "token": True}) == {
        "key": None,
        "password": "",
        "token": True,
    }


@given(
    st.text(max_size=80), st.sampled_from(sorted(STREAM_URLS)), st.sampled_from([s[0] for s in SECRET_TEXTS])
)
def test_no_text_keeps_anything_fleetwatch_would_redact(noise, url, secret):
    out = CaptureRedactor().text(f"{noise} {url} {secret} {noise}")
    assert holds_no_secret(out)
    assert [s for s in STREAM_URL_SECRETS if s in out and s not in noise] == []


def test_rename_replaces_names_and_ids_as_values_words_and_keys_consistently():
    renamer = Renamer()
    renamer.learn(
        names=[("SCI 101 Lecture Hall", "room"), ("Science Hall", "group"), ("Physics 101", "event")],
        ids=[
            ("19012340101", "master"),
            ("lib7f3a2c:1791484740", "event"),
            ("5b1f0c2e-8d3a-4c71-9e0b-2f6a7d4c1e90", "uuid"),
        ],
    )
    out = renamer(
        {
            "devices": {"19012340101": {"Name": "SCI 101 Lecture Hall", "GroupName": "Science Hall"}},
            "targets": ["19012340101-1"],
            "event": {"id": "lib7f3a2c:1791484740", "title": "Physics 101"},
            "team_id": "5b1f0c2e-8d3a-4c71-9e0b-2f6a7d4c1e90",
            "message": "Camera 2 of SCI 101 Lecture Hall has no signal",
        }
    )
    assert out == {
        "devices": {"19000000001": {"Name": "Room 001", "GroupName": "Group 001"}},
        "targets": ["19000000001-1"],
        "event": {"id": "event0001:1791484740", "title": "Event 001"},
        "team_id": "00000000-0000-4000-8000-000000000001",
        "message": "Camera 2 of Room 001 has no signal",
    }


def test_a_capture_is_checked_independently_and_never_less_redacted_than_the_product_s_view():
    kept = {
        "key": "redacted-secret-1",
        "IPAddress": "ip-1.example",
        "url": "rtmp://live.example.net/redacted-secret-2",
        "note": "a plain name",
    }
    assert verified(kept) == kept
    weak = {
        "key": "live_sk_plain",
        "SerialNumber": "P2E0000001",
        "url": "rtmp://user:pw@live.example.net/app/key",
        "note": "at 192.0.2.5",
    }
    assert verified(weak) == {
        "key": "[redacted]",
        "SerialNumber": "[redacted]",
        "url": "rtmp://live.example.net/[redacted]",
        "note": "at [withheld]",
    }


def test_the_read_client_takes_no_redaction_but_the_capture_s():
    raw = RawToolResult("get_device_info", False, {"key": "live_sk_plain"}, "")
    assert read_result(raw) == {"key": "[redacted]"}
    assert read_result(raw, stable=CaptureRedactor()) == {"key": "redacted-secret-1"}
    with pytest.raises(TypeError):
        read_result(raw, stable=lambda data: data)  # a plain function is refused at run time
