from shared.epiphan.redact import REDACTED, names_secret, redact, redact_text, redact_url, url_host


def test_secret_field_names_are_recognised_in_snake_and_camel_case():
    for name in (
        "key",
        "stream_key",
        "streamKey",
        "StreamKey",
        "token",
        "access_token",
        "password",
        "passphrase",
        "apiKey",
        "Authorization",
        "secret",
        "client_secret",
    ):
        assert names_secret(name), name


def test_ordinary_field_names_are_not_secrets():
    for name in (
        "Name",
        "Id",
        "GroupName",
        "signal",
        "source_no_signal",
        "keyframe_interval",
        "title",
        "author",
        "passthrough",
        "StateTime",
        "IPAddress",
        "keywords",
    ):
        assert not names_secret(name), name


def test_a_stream_key_under_any_secret_name_is_redacted_deeply():
    data = {
        "stream_endpoints": [
            {"id": "u1", "name": "YouTube", "key": "live_sk_123", "nested": {"streamKey": "x"}}
        ]
    }
    out = redact(data)
    assert out["stream_endpoints"][0]["key"] == REDACTED
    assert out["stream_endpoints"][0]["nested"]["streamKey"] == REDACTED
    assert out["stream_endpoints"][0]["name"] == "YouTube"


def test_a_publisher_setting_titled_as_a_secret_has_its_value_redacted():
    setting = {"id": "stream_key", "type": {"name": "string"}, "title": "Stream key", "value": "abc-secret"}
    plain = {"id": "bitrate", "type": {"name": "int"}, "title": "Bitrate", "value": 4000}
    assert redact([setting, plain]) == [dict(setting, value=REDACTED), plain]


def test_user_info_and_secret_query_parameters_leave_a_url():
    assert (
        redact_url("https://bob:pw@cdn.example.net/live?key=abc&x=1")
        == "https://cdn.example.net/live?key=[redacted]&x=1"
    )


def test_a_stream_url_loses_its_path_where_keys_ride():
    assert redact_url("rtmp://live.example.net/app/live_sk_123") == f"rtmp://live.example.net/{REDACTED}"
    assert url_host("rtmp://u:p@live.example.net:1935/app/key") == "live.example.net:1935"


def test_bearer_tokens_and_jwts_in_free_text_are_redacted():
    text = "auth failed for Bearer abcdefgh12345678 and eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl"
    out = redact_text(text)
    assert "abcdefgh12345678" not in out and "eyJzdWIiOiIx" not in out


def test_booleans_and_nulls_under_secret_names_stay_visible():
    assert redact({"has_key": True, "key": None}) == {"has_key": True, "key": None}


def test_a_room_named_like_a_url_without_secrets_is_kept():
    assert redact({"Name": "Room 401"}) == {"Name": "Room 401"}
