"""Whether the model's URL is on this machine or a private network (`shared.web.model_host`):
literal addresses as they are, names by every address a resolver gives (a fake one here,
passed in; ``localhost`` through the system's)."""

from __future__ import annotations

import pytest

from shared.web.model_host import local_address, model_host, system_resolver

NAMES = {
    "gpu.campus.test": ["10.20.0.5"],
    "both.campus.test": ["10.20.0.5", "198.51.100.9"],
    "model.example.com": ["198.51.100.9"],
    "v6.campus.test": ["fd12:3456::7"],
}


def fake(host: str) -> list[str]:
    return NAMES.get(host, [])


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:11434", True),
        ("http://[::1]:8080", True),
        ("http://10.1.2.3:8000/v1", True),
        ("http://172.20.0.9:4000", True),
        ("http://192.168.1.20:8080", True),
        ("http://[fd00::1]:8000", True),
        ("http://[::ffff:10.0.0.1]:8000", True),
        ("http://172.32.0.1:8000", False),  # just past 172.16/12
        ("http://203.0.113.7:11434", False),  # a public (documentation) address
        ("http://100.64.0.1:8000", False),  # shared address space: not this site's
        ("http://gpu.campus.test:8000", True),
        ("http://v6.campus.test:8000", True),
        ("http://model.example.com", False),  # a name that resolves to a public address
        ("http://both.campus.test:8000", False),  # one public address is enough to refuse
        ("http://nowhere.campus.test:8000", False),  # does not resolve
        (None, False),  # no base URL: Anthropic's API
    ],
)
def test_a_model_url_is_local_only_when_every_address_it_names_is(url, local):
    found = model_host(url, fake)
    assert found.local is local, found


def test_no_base_url_means_anthropics_api_and_localhost_resolves_to_loopback():
    assert model_host(None, fake).host == "api.anthropic.com"
    found = model_host("http://localhost:11434", system_resolver)
    assert found.local and found.addresses and all(local_address(a) for a in found.addresses)
    assert not local_address("not an address")
