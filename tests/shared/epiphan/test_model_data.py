"""What the model may see: secrets redacted, IP addresses, serial numbers, MAC addresses and host
names withheld, and the lists the documents show held to the code."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.epiphan.model_data import (
    NEVER_SENT,
    SENT_TO_MODEL,
    WITHHELD,
    WithheldValues,
    for_model,
    mask_addresses,
    text_for_model,
    withholds_field,
)
from shared.epiphan.redact import REDACTED
from shared.text.catalogue import translate

DEVICE = {
    "Id": "19012340101",
    "Name": "SCI 101 Lecture Hall",
    "Model": "Pearl-2",
    "GroupName": "Science Hall",
    "Firmware": "4.24.6",
    "Status": "online",
    "StateTime": "2026-09-16T20:36Z",
    "IPAddress": "192.0.2.11",
    "SerialNumber": "P2E0045121",
    "Channels": [
        {
            "channel_id": "1",
            "name": "Lecture",
            "Publishers": [
                {
                    "id": "p1",
                    "type": "srt",
                    "settings": [
                        {
                            "id": "url",
                            "title": "URL",
                            "value": "srt://ingest.example.com:9000?streamid=lib-main&passphrase=pp-91",
                        },
                        {"id": "stream_key", "title": "Stream key", "value": "live_sk_abc123"},
                    ],
                }
            ],
        }
    ],
    "Warnings": [
        {"id": "disk_space_error", "message": "P2E0045121 at 192.0.2.11: only 4% free", "data": None}
    ],
}


def test_ip_and_serial_fields_are_dropped_and_everything_else_stays():
    shown = for_model({"devices": [DEVICE]})
    (device,) = shown["devices"]
    assert "IPAddress" not in device and "SerialNumber" not in device
    kept = {k: v for k, v in DEVICE.items() if k not in ("IPAddress", "SerialNumber", "Channels", "Warnings")}
    assert {k: device[k] for k in kept} == kept
    assert device["Channels"][0]["name"] == "Lecture"


def test_a_serial_number_or_ip_repeated_in_a_message_of_the_same_result_is_withheld():
    (warning,) = for_model(DEVICE)["Warnings"]
    assert warning["message"] == f"{WITHHELD} at {WITHHELD}: only 4% free"


def test_a_serial_number_read_once_is_withheld_where_a_later_result_or_question_repeats_it():
    seen = WithheldValues()
    for_model({"devices": [DEVICE]}, seen)
    later = {
        "devices": [{"device_id": "19012340101", "name": "Pearl P2E0045121", "note": "P2E00451210 auto"}]
    }
    assert for_model(later, seen)["devices"][0] == {
        "device_id": "19012340101",
        "name": f"Pearl {WITHHELD}",
        "note": "P2E00451210 auto",
    }
    assert text_for_model("is P2E0045121 online?", seen) == f"is {WITHHELD} online?"
    assert for_model(later)["devices"][0]["name"] == "Pearl P2E0045121"


def test_short_or_wordlike_values_of_withheld_fields_are_not_masked_elsewhere():
    seen = WithheldValues()
    for_model({"ip": "auto", "sn": "A1", "mac_vendor": "Epiphan Systems 2", "Name": "auto A1"}, seen)
    assert for_model({"Name": "auto A1, Epiphan Systems 2 unit"}, seen) == {
        "Name": f"auto A1, {WITHHELD} unit"
    }


def test_stream_secrets_are_redacted_on_the_way_to_the_model():
    settings_ = for_model(DEVICE)["Channels"][0]["Publishers"][0]["settings"]
    assert settings_[0]["value"] == f"srt://ingest.example.com:9000?streamid={REDACTED}&passphrase={REDACTED}"
    assert settings_[1]["value"] == REDACTED


@pytest.mark.parametrize(
    "name",
    [
        "IPAddress",
        "ipAddress",
        "ip_address",
        "ip",
        "IP",
        "deviceIP",
        "IPv4",
        "IPv6Address",
        "ipv6",
        "LocalIPs",
        "address",
        "MACAddress",
        "mac_address",
        "SerialNumber",
        "serial_number",
        "serial",
        "SN",
        "serialNo",
        "DeviceSerial",
        "hostname",
        "HostName",
        "Gateway",
        "Netmask",
        "DNS",
    ],
)
def test_fields_naming_an_address_a_serial_number_or_a_host_name_are_withheld(name):
    assert withholds_field(name)


ORDINARY_NAMES = sorted(
    (set(DEVICE) - {"IPAddress", "SerialNumber"})
    | {"GroupId", "description", "Description", "snippet", "url", "type", "resolution", "Publishers"}
    | {"settings", "machine", "tips", "skip", "uptime_since", "recipient", "channel_id", "cms"}
)


@pytest.mark.parametrize("name", ORDINARY_NAMES)
def test_ordinary_field_names_are_kept(name):
    assert not withholds_field(name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("camera at 10.20.1.11 is dark", f"camera at {WITHHELD} is dark"),
        ("rtsp://192.0.2.21:554/x", f"rtsp://{WITHHELD}:554/x"),
        ("link-local fe80::1ff:fe23:4567:890a%eth0 up", f"link-local {WITHHELD} up"),
        ("host [2001:db8::10]:1935", f"host [{WITHHELD}]:1935"),
        ("mapped ::ffff:192.0.2.1.", f"mapped {WITHHELD}."),
        ("mac 00:1a:2b:3c:4d:5e and 00-1A-2B-3C-4D-5F", f"mac {WITHHELD} and {WITHHELD}"),
        ("Class at 13:25:00, ends 14:15", "Class at 13:25:00, ends 14:15"),
        ("2026-09-16T13:25:00Z", "2026-09-16T13:25:00Z"),
        ("Firmware 4.24.6, build 1.2.3.4.5", "Firmware 4.24.6, build 1.2.3.4.5"),
        ("Stream 0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5", "Stream 0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5"),
        ("Room 401, ratio 16:9, std::string", "Room 401, ratio 16:9, std::string"),
        ("999.1.1.1 is no address", "999.1.1.1 is no address"),
    ],
)
def test_addresses_in_text_are_withheld_and_times_versions_and_ids_stay(text, expected):
    assert mask_addresses(text) == expected


def test_the_question_loses_secrets_and_addresses_but_keeps_its_words():
    question = "Why does SCI 101 (10.20.1.11) fail with password=hunter2 at 13:25?"
    assert (
        text_for_model(question) == f"Why does SCI 101 ({WITHHELD}) fail with password={REDACTED} at 13:25?"
    )


def test_keys_of_a_map_lose_their_addresses_too():
    assert for_model({"192.0.2.11": {"Name": "x"}}) == {WITHHELD: {"Name": "x"}}


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["Name", "IPAddress", "key", "serial", "message", "x"]), inner, max_size=4
            )
        ),
        max_leaves=12,
    )
)
def test_filtering_for_the_model_twice_gives_what_once_gives(value):
    once = for_model(value)
    assert for_model(once) == once


def _example_names(item_text: str) -> list[str]:
    inside = re.findall(r"\(([^)]*)\)", item_text)
    return [name for group in inside for name in group.split(", ") if re.fullmatch(r"[A-Za-z_]+", name)]


def test_every_field_name_the_never_sent_list_gives_as_an_example_is_withheld():
    named = [name for item in NEVER_SENT[:3] for name in _example_names(item)]
    assert len(named) >= 10
    assert [n for n in named if not withholds_field(n)] == []
    assert [_example_names(i) for i in NEVER_SENT[:3]] == [
        _example_names(translate("es", i)) for i in NEVER_SENT[:3]
    ]


def test_every_list_entry_has_both_languages_and_no_entry_repeats():
    for items in (SENT_TO_MODEL, NEVER_SENT):
        spanish = [translate("es", i) for i in items]
        assert all(i and s and i != s for i, s in zip(items, spanish, strict=True))
        assert len(set(items)) == len(items) and len(set(spanish)) == len(items)
