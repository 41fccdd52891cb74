"""A redaction corpus: every stream URL form a Pearl (or a page about one) can carry, and free
text with secrets in it. All hosts, keys and passwords are invented (`.example` hosts, RFC 5737
and 3849 addresses).

`STREAM_URLS`: URL -> exactly what `shared.epiphan.redact.redact_url` must make of it. Stream schemes
(``rtmp``, ``rtmps``, ``srt``, ``rtsp``, ``rist``, ``udp``...) lose their path (where keys ride),
every query value except the protocol's own options, and any fragment; every scheme loses its
user info and the values of secret-named query parameters (any case, percent-encoded names too).

`SECRET_TEXTS`: (text, the secrets that must vanish, words that must stay) for
`shared.epiphan.redact.redact_text`. `BENIGN_TEXTS`: text that must come out unchanged.
"""

from __future__ import annotations

R = "[redacted]"

RTMP: dict[str, str] = {
    "rtmp://live.example.net/app/live_sk_7c9f2e41a0b3": f"rtmp://live.example.net/{R}",
    "rtmp://live.example.net/app": f"rtmp://live.example.net/{R}",
    "rtmp://live.example.net:1935/live2/abcd-efgh-ijkl-mnop-qrst": f"rtmp://live.example.net:1935/{R}",
    "rtmp://publisher:pw-9137@live.example.net/app/key1": f"rtmp://live.example.net/{R}",
    "rtmp://live.example.net/app?user=bob&pass=pw123": f"rtmp://live.example.net/{R}?user={R}&pass={R}",
    "rtmp://live.example.net/app/stream?secureToken=t0k3n42": f"rtmp://live.example.net/{R}?secureToken={R}",
    "rtmp://LIVE.Example.NET/App/KeyCase77": f"rtmp://live.example.net/{R}",
    "RTMP://LIVE.EXAMPLE.NET/APP/UPPERKEY": f"rtmp://live.example.net/{R}",
    "rtmp://live.example.net/app/frag-key#frag-secret": f"rtmp://live.example.net/{R}#{R}",
    "rtmp://live.example.net/#hash-key": f"rtmp://live.example.net/#{R}",
    "rtmp://live.example.net/app?bare-key-value": f"rtmp://live.example.net/{R}?{R}",
    "rtmp://live.example.net/": "rtmp://live.example.net/",
    "rtmp://live.example.net": "rtmp://live.example.net",
    "rtmp://192.0.2.11/live/ip-host-key": f"rtmp://192.0.2.11/{R}",
    "rtmp://[2001:db8::10]:1935/live/v6-host-key": f"rtmp://[2001:db8::10]:1935/{R}",
    "rtmpt://live.example.net:80/app/tunnel-key": f"rtmpt://live.example.net:80/{R}",
    "rtmpe://live.example.net/app/enc-key": f"rtmpe://live.example.net/{R}",
    "rtmpte://live.example.net/app/te-key": f"rtmpte://live.example.net/{R}",
    "rtmp://live.example.net/app/live_123456789_AbCdEfGhIjKlMnOpQrSt": f"rtmp://live.example.net/{R}",
    "rtmp://entry.example.net/EntryPoint/stream_1@98765": f"rtmp://entry.example.net/{R}",
}
RTMPS: dict[str, str] = {
    "rtmps://courtcast:Sup3rSecret@ingest.example.com:443/live": f"rtmps://ingest.example.com:443/{R}",
    "rtmps://live-api-s.example.com:443/rtmp/FB-1234567890-0-AbCdEfGh": f"rtmps://live-api-s.example.com:443/{R}",
    "rtmps://a.rtmps.example.com/live2/x-y-z?backup=1": f"rtmps://a.rtmps.example.com/{R}?backup=1",
    "rtmps://ingest.example.com/app/k%2Fslash%3Dkey": f"rtmps://ingest.example.com/{R}",
}
SRT: dict[str, str] = {
    "srt://ingest.example.com:9000?streamid=lib-main&passphrase=Lib-Stream-Passphrase-91": (
        f"srt://ingest.example.com:9000?streamid={R}&passphrase={R}"
    ),
    "srt://ingest.example.com:9000?streamid=#!::r=live/key1,m=publish": f"srt://ingest.example.com:9000?streamid={R}",
    "srt://ingest.example.com:9000?streamid=%23%21%3A%3Ar%3Dlive%2Fkey2": f"srt://ingest.example.com:9000?streamid={R}",
    "srt://ingest.example.com:9000?mode=caller&latency=200&streamid=abc": (
        f"srt://ingest.example.com:9000?mode=caller&latency=200&streamid={R}"
    ),
    "srt://ingest.example.com:9000?passphrase=abcdefghij&pbkeylen=16": (
        f"srt://ingest.example.com:9000?passphrase={R}&pbkeylen=16"
    ),
    "srt://:9000?mode=listener": "srt://:9000?mode=listener",
    "srt://?streamid=no-host-key": f"srt://?streamid={R}",
    "srt://203.0.113.5:9000?streamid=publish:stream1": f"srt://203.0.113.5:9000?streamid={R}",
    "srt://ingest.example.com:9000/live?streamid=path-and-id": f"srt://ingest.example.com:9000/{R}?streamid={R}",
    "srt://ingest.example.com:9000?StreamID=CaseKey": f"srt://ingest.example.com:9000?StreamID={R}",
    "srt://ingest.example.com:9000?streamid=semi1;passphrase=semi2secret": (
        f"srt://ingest.example.com:9000?streamid={R};passphrase={R}"
    ),
    "srt://ingest.example.com:9000?latency=120&s%74reamid=pct-name": (
        f"srt://ingest.example.com:9000?latency=120&s%74reamid={R}"
    ),
    "srt://ingest.example.com:9000?r=live-resource&u=publisher9": f"srt://ingest.example.com:9000?r={R}&u={R}",
}
RTSP: dict[str, str] = {
    "rtsp://admin:12345@192.0.2.21:554/Streaming/Channels/101": f"rtsp://192.0.2.21:554/{R}",
    "rtsp://camera.example.com/stream1": f"rtsp://camera.example.com/{R}",
    "rtsps://viewer:pw-rtsps@camera.example.com:322/live?token=t0k3n": f"rtsps://camera.example.com:322/{R}?token={R}",
    "rtsp://onlyuser@camera.example.com/": "rtsp://camera.example.com/",
    "rtsp://admin:p%40ss-enc@camera.example.com/s": f"rtsp://camera.example.com/{R}",
    "rtsp://admin:p@ss-at@camera.example.com/s": f"rtsp://camera.example.com/{R}",
}
OTHER_STREAMS: dict[str, str] = {
    "rist://ingest.example.com:5000?secret=rist-psk-1&aes-type=128": f"rist://ingest.example.com:5000?secret={R}&aes-type=128",
    "rist://rist-user:rist-pw@ingest.example.com:5000": "rist://ingest.example.com:5000",
    "udp://239.1.1.1:5004": "udp://239.1.1.1:5004",
    "rtp://239.1.1.1:5004?ttl=16&pkt_size=1316": "rtp://239.1.1.1:5004?ttl=16&pkt_size=1316",
}
HTTP: dict[str, str] = {
    "https://bob:pw-http@cdn.example.net/live?key=abc&x=1": f"https://cdn.example.net/live?key={R}&x=1",
    "https://a.upload.example.com/http_upload_hls?cid=abcd-efgh-ijkl-mnop-qrst&copy=0&file=index.m3u8": (
        f"https://a.upload.example.com/http_upload_hls?cid={R}&copy=0&file=index.m3u8"
    ),
    "https://api.example.com/v1/streams?api_key=k123&format=json": f"https://api.example.com/v1/streams?api_key={R}&format=json",
    "https://cdn.example.net/x?token=tok-1": f"https://cdn.example.net/x?token={R}",
    "https://cdn.example.net/x?auth=auth-1": f"https://cdn.example.net/x?auth={R}",
    "https://cdn.example.net/x?sig=sig-1&expires=1790000000": f"https://cdn.example.net/x?sig={R}&expires=1790000000",
    "https://cdn.example.net/x?secret=secret-1": f"https://cdn.example.net/x?secret={R}",
    "https://cdn.example.net/x?password=password-1": f"https://cdn.example.net/x?password={R}",
    "https://cdn.example.net/x?pwd=pwd-1": f"https://cdn.example.net/x?pwd={R}",
    "https://cdn.example.net/x?access_token=at-1": f"https://cdn.example.net/x?access_token={R}",
    "https://cdn.example.net/x?signature=signature-1": f"https://cdn.example.net/x?signature={R}",
    "https://cdn.example.net/x?apikey=apikey-1&api-key=apikey-2&x-api-key=apikey-3": (
        f"https://cdn.example.net/x?apikey={R}&api-key={R}&x-api-key={R}"
    ),
    "https://cdn.example.net/x?X-Amz-Signature=amz-sig&X-Amz-Credential=AKIDEXAMPLE%2F20260916": (
        f"https://cdn.example.net/x?X-Amz-Signature={R}&X-Amz-Credential={R}"
    ),
    "https://cdn.example.net/x?%6Bey=pct-key-1": f"https://cdn.example.net/x?%6Bey={R}",
    "https://cdn.example.net/x?stream%5Fkey=pct-key-2": f"https://cdn.example.net/x?stream%5Fkey={R}",
    "https://cdn.example.net/x?Stream+Key=plus-key": f"https://cdn.example.net/x?Stream+Key={R}",
    "https://cdn.example.net/x?streamid=http-streamid": f"https://cdn.example.net/x?streamid={R}",
    "https://cdn.example.net/x?session_id=sess-1": f"https://cdn.example.net/x?session_id={R}",
    "https://cdn.example.net/x?client_secret=cs-1&client_id=fleet": f"https://cdn.example.net/x?client_secret={R}&client_id=fleet",
    "https://cdn.example.net/cb#access_token=frag-token&state=xyz": f"https://cdn.example.net/cb#access_token={R}&state=xyz",
    "https://cdn.example.net/x?next=rtmp%3A%2F%2Flive.example.net%2Fapp%2Fnested-key": f"https://cdn.example.net/x?next={R}",
    "https://user-only@cdn.example.net/x": "https://cdn.example.net/x",
    "http://admin:admin-pw@192.0.2.31/admin/": "http://192.0.2.31/admin/",
    "https://ingest.example.com/live/sk-ant-api03-abcdefghijklmn/index.m3u8": f"https://ingest.example.com/live/{R}/index.m3u8",
    "https://cdn.example.net/api/token/path-token-1": f"https://cdn.example.net/api/token/{R}",
    "wss://relay.example.net/socket?token=ws-token": f"wss://relay.example.net/socket?token={R}",
    "ftp://ftp-user:ftp-pw@files.example.net/uploads/rec.mp4": "ftp://files.example.net/uploads/rec.mp4",
}
BENIGN_URLS: dict[str, str] = {
    url: url
    for url in (
        "https://www.epiphan.com/userguides/pearl-2/Content/UserGuides/Streaming/streaming.htm",
        "https://www.epiphan.com/userguides/pearl-2/Content/Home-Pearl_2.htm#Top",
        "https://kb.example.com/articles/rtmp-streaming",
        "https://go.epiphan.cloud/mcp",
        "https://cdn.example.net/x?lang=en&page=2",
        "https://cdn.example.net/x?key=",
        "https://cdn.example.net/x?keyword=pearl&monkey=1",
    )
}

STREAM_URLS: dict[str, str] = {**RTMP, **RTMPS, **SRT, **RTSP, **OTHER_STREAMS, **HTTP, **BENIGN_URLS}
"""Every URL form, with exactly what redaction must make of it."""

STREAM_URL_SECRETS: tuple[str, ...] = (
    "live_sk_7c9f2e41a0b3",
    "pw-9137",
    "Sup3rSecret",
    "lib-main",
    "Lib-Stream-Passphrase-91",
    "key1",
    "abcd-efgh-ijkl-mnop-qrst",
    "12345",
    "pw-rtsps",
    "t0k3n",
    "rist-psk-1",
    "frag-token",
    "nested-key",
    "pct-name",
)
"""Secrets from the table above that must appear in no output."""


SECRET_TEXTS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Login failed: password=hunter2", ("hunter2",), ("Login failed", "password=")),
    ("stream key: live_9f8e7d6c5b…", ("live_9f8e7d6c5b",), ("stream key:",)),
    ("Stream Key: live_abc123 (YouTube)", ("live_abc123",), ("Stream Key:", "(YouTube)")),
    ("token: 6f1a2b3c4d5e rejected", ("6f1a2b3c4d5e",), ("token:", "rejected")),
    ("api_key=AKX9-22-ZZ&region=eu", ("AKX9-22-ZZ",), ("api_key=", "region=eu")),
    ("x-api-key: 0a1b2c3d4e", ("0a1b2c3d4e",), ("x-api-key:",)),
    ("X-Api-Key:0a1b2c3d4f", ("0a1b2c3d4f",), ("X-Api-Key:",)),
    ("pwd=s3cr3t!", ("s3cr3t",), ("pwd=",)),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", ("dXNlcjpwYXNzd29yZA",), ("Authorization: Basic",)),
    (
        "relay sent Basic YWRtaW46aHVudGVyMg== and failed",
        ("YWRtaW46aHVudGVyMg",),
        ("relay sent", "and failed"),
    ),
    ("Authorization: Bearer abcdefgh12345678", ("abcdefgh12345678",), ("Authorization: Bearer",)),
    (
        "model key sk-ant-api03-AbCdEf123456-XyZ in the log",
        ("AbCdEf123456", "sk-ant-api03"),
        ("model key", "in the log"),
    ),
    (
        "| Room | Stream key | Host |\n|---|---|---|\n| SCI 101 | live_sk_table1 | live.example.net |",
        ("live_sk_table1",),
        ("SCI 101", "live.example.net", "Stream key"),
    ),
    (
        "| Setting | Value |\n|---|---|\n| Stream key | vertical-key-77 |\n| Bitrate | 4000 |",
        ("vertical-key-77",),
        ("Bitrate", "4000"),
    ),
    ("stream%20key=pct-space-key", ("pct-space-key",), ("stream%20key=",)),
    ("stream+key=plus-space-key", ("plus-space-key",), ("stream+key=",)),
    ('stream_key = "with space"', ("with space",), ("stream_key",)),
    ("stream_key='single quoted key'", ("single quoted key",), ("stream_key",)),
    ("password=[redacted]hunter2", ("hunter2",), ("password=",)),
    ("[redacted]glued-after-mask", ("glued-after-mask",), ()),
    ('{"password": "json-pw-1", "user": "ops"}', ("json-pw-1",), ('"user": "ops"',)),
    ("Passphrase: Lib-Stream-Passphrase-91", ("Lib-Stream-Passphrase-91",), ("Passphrase:",)),
    ("secret=abc123secret", ("abc123secret",), ("secret=",)),
    ("client_secret: cs-abc-123", ("cs-abc-123",), ("client_secret:",)),
    ("access_token=ya29.a0AfH6SMBx", ("ya29.a0AfH6SMBx",), ("access_token=",)),
    (
        "stream-key=dash-key-1 streamkey=joined-key-2 StreamKey: camel-key-3",
        ("dash-key-1", "joined-key-2", "camel-key-3"),
        (),
    ),
    ("key: live_sk_1234abcd", ("live_sk_1234abcd",), ("key:",)),
    (
        "Publisher rtmp failed: rtmp://live.example.net/app/live_sk_7c9f2e41a0b3d58e6f1a2b3c: connection refused",
        ("live_sk_7c9f2e41a0b3d58e6f1a2b3c",),
        ("live.example.net", "connection refused"),
    ),
    (
        "publishing to srt://ingest.example.com:9000?streamid=lib-main&passphrase=x failed",
        ("lib-main", "passphrase=x"),
        ("ingest.example.com:9000", "failed"),
    ),
    (
        "camera rtsp://admin:12345@cam.example.com/ch1 offline",
        ("12345", "admin"),
        ("cam.example.com", "offline"),
    ),
    ("srt caller streamid=lib-main latency=120", ("lib-main",), ("latency=120",)),
    ("auth_token=at-777 user=ops", ("at-777",), ("user=ops",)),
    ("sig=abcdef0123 signature: fedcba3210", ("abcdef0123", "fedcba3210"), ()),
    ("password:hunter3 PASSWORD = hunter4 pass=hunter5", ("hunter3", "hunter4", "hunter5"), ()),
    (
        "github ghp_abcdefghijklmnopqrstuvwxyz0123456789 slack xoxb-123456789012-abcdefghij",
        ("ghp_abcdefghijklmnop", "xoxb-123456789012"),
        ("github", "slack"),
    ),
    (
        "aws AKIAIOSFODNN7EXAMPLE stripe sk_live_abcdefgh12345678",
        ("AKIAIOSFODNN7EXAMPLE", "sk_live_abcdefgh"),
        ("aws",),
    ),
    ("YouTube key abcd-1234-efgh-5678-ijkl pasted", ("abcd-1234-efgh-5678-ijkl",), ("YouTube key", "pasted")),
    (
        "Twitch live_123456789_AbCdEfGhIjKlMnOpQrSt ok",
        ("live_123456789_AbCdEfGhIjKlMnOpQrSt",),
        ("Twitch", "ok"),
    ),
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\nnext",
        ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",),
        ("next",),
    ),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXZhbHVl end",
        ("eyJzdWIiOiIxMjM0In0",),
        ("jwt", "end"),
    ),
    ("sessionid=sess-abc-1 ok", ("sess-abc-1",), ("ok",)),
    (
        "see https://cdn.example.net/x?token=url-token-1&lang=en",
        ("url-token-1",),
        ("lang=en", "cdn.example.net"),
    ),
    ("retry with stream_key=live_q1w2e3, bitrate=4000", ("live_q1w2e3",), ("bitrate=4000",)),
    ("Private key: pk-555-666", ("pk-555-666",), ()),
)
"""Free text (Epiphan error messages, log lines, notices, answers): (text, must vanish, must stay)."""

BENIGN_TEXTS: tuple[str, ...] = (
    "See https://www.epiphan.com/userguides/pearl-2/Content/UserGuides/Streaming/streaming.htm for setup.",
    "Stream 0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5 is live",
    "Stream 0F6D2C4E-1A3B-4C5D-8E9F-A0B1C2D3E4F5 is live",
    "task-antenna",
    "keyboard and monkey in Room 401",
    "LIB 401 Reading Room",
    "Class at 13:25, ends 14:15 (2026-09-16T13:25:00Z)",
    "Keyframe interval: 2 s",
    "Key frame interval 2",
    "Firmware 4.24.6 is behind 4.24.6",
    "Basic Recording preset",
    "the bearer of bad news",
    "401 Unauthorized: token expired",
    "Tokens used: 1200",
    "Keys: 3",
    "Password-protected rooms need a person",
    "The stream key is stored in Epiphan, never here",
    "Authentication OK",
    "Secret Garden Studio",
    "Note: key frames every 2 s",
    "ratio 16:9, CPU 94 %, 83 C",
    "Lecture Hall | Camera 2",
    "| Room | Host |\n|---|---|\n| SCI 101 | live.example.net |",
    "Cámara 2 — Aula Magna, clase en 25 min",
    "desk-ant-13 and tasks",
    "[redacted]",
    "password=[redacted]",
)
"""Text that must come out of redaction unchanged."""


# --- Secret shapes a Pearl or Edge uses (issue 26) ------------------------------------------------
# Each case: (a JSON-like value as a read result could hold it, the planted secrets that must reach
# no output, words that must stay). The forms are the ones "Facts from a live-verified peer" names.


def _setting(ident: str, title: str, value: object, kind: str = "string") -> dict[str, object]:
    return {"id": ident, "type": {"name": kind}, "title": title, "value": value}


def _publisher(*settings: dict[str, object]) -> dict[str, object]:
    return {
        "id": "pub-1",
        "type": "rtmp",
        "status": {"state": "started", "description": "Streaming"},
        "settings": list(settings),
    }


_URL_SETTING = _setting("url", "URL", "rtmp://live.example.net/app")

SETTINGS_BY_ID: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        _publisher(
            _URL_SETTING,
            _setting("stream", "Stream", "Kq7RmPub1"),
            _setting("username", "Username", "pubUserQ8"),
            _setting("password", "Password", "PwZ9xx44", "password"),
        ),
        ("Kq7RmPub1", "PwZ9xx44"),
        ("pub-1", "Streaming", "live.example.net", "pubUserQ8"),
    ),
    (_publisher(_URL_SETTING, _setting("stream", "", "Kq7Rm2")), ("Kq7Rm2",), ("started",)),
    (_publisher(_URL_SETTING, _setting("stream_name", "", "Sn4Key88")), ("Sn4Key88",), ()),
    (_publisher(_URL_SETTING, _setting("streamName", "", "Sn5Key89")), ("Sn5Key89",), ()),
    (_publisher(_setting("username", "", "uQ7"), _setting("stream", "", "Xk3a")), ("Xk3a",), ("uQ7",)),
    (_publisher(_setting("password", "", "pZ1q"), _setting("stream", "", "Xk4b")), ("Xk4b", "pZ1q"), ()),
    (_publisher(_setting("publisher.rtmp.key", "", "Rk5c7t")), ("Rk5c7t",), ()),
    (
        _publisher(_setting("rtmp.stream", "", "Rk6d8u"), _setting("rtmp.url", "", "rtmp://a.example.net/x")),
        ("Rk6d8u",),
        (),
    ),
    (_publisher(_setting("streamId", "", "Sid7e9v")), ("Sid7e9v",), ()),
    (_publisher(_setting("StreamID", "", "Sid8f0w")), ("Sid8f0w",), ()),
    (_publisher(_setting("passphrase", "", "PassPh9g1x")), ("PassPh9g1x",), ()),
    (_publisher(_setting("srt_passphrase", "", "PassPh0h2y")), ("PassPh0h2y",), ()),
    (_publisher(_setting("user", "", "usr3i"), _setting("pass", "", "pss4j")), ("pss4j",), ("usr3i",)),
)
"""Publisher settings lists whose ``id`` names the secret (``stream`` beside a URL, user or password)."""

SETTINGS_BY_TITLE: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    (_publisher(_URL_SETTING, _setting("s1", "Stream", "Tt1Key5")), ("Tt1Key5",), ("URL",)),
    (_publisher(_URL_SETTING, _setting("s2", "Stream name", "Tt2Key6")), ("Tt2Key6",), ()),
    (_publisher(_setting("s3", "Stream key", "Tt3Key7")), ("Tt3Key7",), ()),
    (_publisher(_setting("s4", "Stream ID", "Tt4Key8")), ("Tt4Key8",), ()),
    (_publisher(_setting("s5", "SRT passphrase", "Tt5Key9")), ("Tt5Key9",), ()),
    (_publisher(_setting("s6", "Passphrase", "Tt6Key0")), ("Tt6Key0",), ()),
    (_publisher(_setting("s7", "Password", "Tt7Ke1")), ("Tt7Ke1",), ()),
    (_publisher(_setting("s8", "Secret", "Tt8Ke2")), ("Tt8Ke2",), ()),
    (_publisher(_setting("s9", "Access", "Tt9Ke3", "password")), ("Tt9Ke3",), ("Access",)),
    (
        _publisher(
            _setting("s10", "Server", "rtmp://b.example.net/app"), _setting("s11", "Stream", "Tt0Ke4")
        ),
        ("Tt0Ke4",),
        (),
    ),
    (
        _publisher(_setting("s12", "User name", "Tu1Nm5"), _setting("s13", "Password", "Tu2Pw6")),
        ("Tu2Pw6",),
        ("Tu1Nm5",),
    ),
    ({"label": "Stream", "value": "Tl3Ky7", "url": "rtmp://c.example.net/app"}, ("Tl3Ky7",), ()),
)
"""Publisher settings whose secret is named only in ``title`` (or ``label``, or the type ``password``)."""

PUBLISHER_FIELDS: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    ({"url": "rtmp://live.example.net/app", "stream": "Pf1Key9"}, ("Pf1Key9",), ("live.example.net",)),
    ({"url": "rtmp://live.example.net/app", "stream_name": "Pf2Key0"}, ("Pf2Key0",), ()),
    ({"Url": "rtmp://live.example.net/app", "StreamName": "Pf3Key1"}, ("Pf3Key1",), ()),
    ({"username": "pfUser2", "password": "pfPw3", "stream": "Pf4Key4"}, ("Pf4Key4", "pfPw3"), ("pfUser2",)),
    ({"rtmp": {"url": "rtmp://live.example.net/app", "stream": "Pf5Key5", "user": "pfU6"}}, ("Pf5Key5",), ()),
    ({"server": "rtmp://live.example.net/app", "stream": "Pf6Key6"}, ("Pf6Key6",), ()),
)
"""Publisher fields as a plain map: ``stream``/``stream_name`` beside a URL, user or password."""

SRT_SHAPES: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    ({"passphrase": "SrtPass1Zq"}, ("SrtPass1Zq",), ()),
    ({"StreamID": "#!::r=live/Sk2Srt,m=publish"}, ("Sk2Srt",), ()),
    ({"streamId": "publish:Sk3Srt"}, ("Sk3Srt",), ()),
    ({"srt": {"stream_id": "Sk4Srt9"}}, ("Sk4Srt9",), ()),
    (
        {"StreamID": "0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5", "Name": "Library (SRT)"},
        (),
        ("0f6d2c4e-1a3b-4c5d-8e9f-a0b1c2d3e4f5", "Library (SRT)"),
    ),
    ("srt://ingest.example.com:9000?streamid=Sk5Srt&passphrase=SrtPass6Zq", ("Sk5Srt", "SrtPass6Zq"), ()),
    ("SRT caller, streamid: Sk7Srt, latency 120", ("Sk7Srt",), ("latency 120",)),
    ("passphrase SrtPass8Zq rejected", ("SrtPass8Zq",), ("rejected",)),
)
"""SRT: passphrases, stream IDs that are not an endpoint's own UUID (that one stays)."""

INGEST_PATHS: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    ("https://whip.example.net/whip/Ab12", ("Ab12",), ("whip.example.net",)),
    ("https://whip.example.net/whip/endpoint/Cd34", ("Cd34",), ()),
    ("https://whep.example.net/v1/whep/Ef56xy", ("Ef56xy",), ()),
    ("https://ingest.example.net/ingest/Gh78", ("Gh78",), ()),
    ("https://cdn.example.net/live/Ij90", ("Ij90",), ()),
    ("https://cdn.example.net/publish/Kl12/Mn34", ("Kl12", "Mn34"), ()),
    ("https://cdn.example.net/upload/Op56", ("Op56",), ()),
    ("https://cdn.example.net/WHIP/Qr78", ("Qr78",), ()),
    (
        "https://cdn.example.net/a1b2c3d4e5f60718293a4b5c6d7e8f90/webRTC/publish",
        ("a1b2c3d4e5f60718293a4b5c6d7e8f90",),
        (),
    ),
    ("https://cdn.example.net/rtc/v1/whip/?app=live&stream=St90", ("St90",), ()),
    ({"WhipUrl": "https://whip.example.net/whip/Uv12"}, ("Uv12",), ()),
    (_publisher(_setting("url", "URL", "https://whip.example.net/whip/Wx34", "string")), ("Wx34",), ()),
)
"""HTTPS ingest paths (WHIP, WHEP, ingest, live, publish, upload): the key is a path segment, short or long."""

WEBHOOKS: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Alerts go to https://hooks.slack.com/services/T0AB12CD/B0EF34GH/Xy9Zq8Wv7Ut6Sr5 now",
        ("Xy9Zq8Wv7Ut6Sr5", "B0EF34GH"),
        ("Alerts go to", "now"),
    ),
    ("https://hooks.slack.com/triggers/T0AB12CD/1234567/ab12cd34ef", ("ab12cd34ef",), ()),
    (
        "webhook https://discord.com/api/webhooks/112233445566778899/Tk9-abc_DEF",
        ("Tk9-abc_DEF", "112233445566778899"),
        ("webhook",),
    ),
    ("https://discordapp.com/api/webhooks/998877/Dz1y", ("Dz1y",), ()),
    (
        "https://contoso.webhook.office.com/webhookb2/1f0e2d3c@2a3b4c5d/IncomingWebhook/9c8d7e6f5a4b/3c4d5e6f",
        ("9c8d7e6f5a4b", "1f0e2d3c@2a3b4c5d", "3c4d5e6f"),
        (),
    ),
    (
        "https://prod-12.westus.logic.azure.com:443/workflows/wf7a8b/triggers/manual/paths/invoke?api-version=2016-06-01&sig=Sg7Hh8Jj9",
        ("Sg7Hh8Jj9", "wf7a8b"),
        (),
    ),
    ({"notify": {"slack": "https://hooks.slack.example/services/T1/B2/Wh3Key4"}}, ("Wh3Key4",), ()),
    ({"hook": "https://alerts.example.net/hooks/Hk5Key6"}, ("Hk5Key6",), ()),
)
"""Slack, Discord and Teams webhook addresses (the address is the credential), in text and in fields."""

ESCAPED_URLS: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    ('{"url": "rtmp:\\/\\/live.example.net\\/app\\/Es1Key7"}', ("Es1Key7",), ("live.example.net",)),
    ('{"url":"https:\\/\\/usr:Es2Pw8@cdn.example.net\\/x"}', ("Es2Pw8", "usr"), ()),
    ('{"u":"https:\\/\\/cdn.example.net\\/x?token=Es3Tk9&lang=en"}', ("Es3Tk9",), ("lang=en",)),
    ('{"u":"srt:\\/\\/ingest.example.com:9000?streamid=Es4Id0"}', ("Es4Id0",), ()),
    ('{"u":"https:\\/\\/whip.example.net\\/whip\\/Es5Ab1"}', ("Es5Ab1",), ()),
    ('{"u":"https:\\/\\/hooks.slack.com\\/services\\/T1\\/B2\\/Es6Hk2"}', ("Es6Hk2",), ()),
    ({"message": 'sent {"url":"rtmps:\\/\\/ingest.example.com\\/live\\/Es7Ky3"}'}, ("Es7Ky3",), ("sent",)),
    (
        '[{"id":"stream","value":"Es8Ky4"},{"id":"url","value":"rtmp://live.example.net/app"}]',
        ("Es8Ky4",),
        (),
    ),
)
"""JSON written as text, URLs escaped with ``\\/`` (and a publisher's settings as JSON text)."""

MASKED_VALUES: tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...] = (
    ({"hint": "****abcd1234"}, ("abcd1234",), ()),
    ("stored as ****Ms2Ky5 in Epiphan", ("Ms2Ky5",), ("stored as", "in Epiphan")),
    ({"value": "••••Ms3Ky6"}, ("Ms3Ky6",), ()),
    ({"last": "xxxx-xxxx-xxxx-Ms4K"}, ("Ms4K",), ()),
    ("key ending ***Ms5Ky7", ("Ms5Ky7",), ("key ending",)),
    ({"Description": "Key: ********Ms6Ky8"}, ("Ms6Ky8",), ()),
)
"""Values a mask was typed in front of: the visible tail is part of the secret."""

SECRET_SHAPES: dict[str, tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...]] = {
    "settings by id": SETTINGS_BY_ID,
    "settings by title": SETTINGS_BY_TITLE,
    "publisher fields": PUBLISHER_FIELDS,
    "srt": SRT_SHAPES,
    "https ingest paths": INGEST_PATHS,
    "webhooks": WEBHOOKS,
    "escaped urls": ESCAPED_URLS,
    "masked values": MASKED_VALUES,
}
"""Every secret shape of issue 26 by form: (value, secrets that must vanish, words that must stay)."""
