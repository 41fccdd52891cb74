"""Checks of a capture folder (``fleetwatch capture``): what it must never hold.

`capture_leaks` greps every file for credentialed URLs, IP and MAC addresses, anything
Fleetwatch's redaction would still find (a token, a key, a password...), a value that is not a
placeholder under a secret-named field, bearer-token-shaped strings, and each given secret (the
lab's tokens, stream keys, passphrases, serial numbers and IP addresses of the scenario).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from services.lab.scenario import Scenario
from shared.epiphan.capture_redact import holds_no_secret
from shared.epiphan.model_data import mask_addresses, withholds_field
from shared.epiphan.redact import names_secret

CREDENTIALED_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s/\"'<>@]+@", re.IGNORECASE)
TOKEN_LIKE = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
"""The lab's bearer tokens are ``secrets.token_urlsafe(32)``: 43 URL-safe characters."""
PLACEHOLDER = re.compile(r"redacted-(?:secret|serial|mac|host)-[0-9]+|ip-[0-9]+\.example")


def scenario_secrets(scenario: Scenario) -> set[str]:
    """Every stream key, URL credential and passphrase, serial number and IP address a scenario
    holds (both teams)."""
    found: set[str] = set()
    for team in (scenario.teams.normal, scenario.teams.sandbox):
        for endpoint in team.stream_endpoints:
            found.update(v for v in (endpoint.key,) if v)
            found.update(re.findall(r"(?:passphrase|streamid)=([^&]+)", endpoint.url))
            found.update(re.findall(r"://[^/@]*:([^@/]+)@", endpoint.url))
        for _, device in team.devices():
            found.update((device.serial, device.ip))
            for channel in device.channels:
                found.update(
                    v for p in channel.publishers for v in (p.key, p.password, p.streamid, p.passphrase) if v
                )
    return {s for s in found if len(s) >= 4}


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield "(map)", str(k)
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def capture_leaks(folder: Path, secrets: Iterable[str] = ()) -> list[str]:
    """Each thing the capture in `folder` must not hold, as ``file: what`` (empty: none)."""
    problems = []
    wanted = sorted(set(secrets))
    for path in sorted(folder.rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(folder)
        problems += [f"{where}: a secret of the scenario ({s[:4]}…)" for s in wanted if s in text]
        problems += [f"{where}: a credentialed URL" for _ in CREDENTIALED_URL.finditer(text)]
        problems += [f"{where}: a token-shaped string" for _ in TOKEN_LIKE.finditer(text)]
        for key, value in _strings(json.loads(text)):
            if mask_addresses(value) != value:
                problems.append(f"{where}: an IP or MAC address in {key!r}")
            if not holds_no_secret(value):
                problems.append(f"{where}: something redaction would still hide in {key!r}")
            if (names_secret(key) or withholds_field(key)) and not PLACEHOLDER.fullmatch(value):
                problems.append(f"{where}: {key!r} holds a value that is not a placeholder")
    return problems
