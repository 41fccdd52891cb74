"""Where the model's requests go: the host of the model's base URL, and whether every address it
names is on this machine or a private network (`FLEETWATCH_MODEL_LOCAL_ONLY`, doctor's "model
host" line). Pure but for the resolver, which is passed in (default: the system's).

A literal IP is judged as it is; a name is resolved and judged by every address it resolves
to (a name with one public address is not local; a name that does not resolve is not local).
Local: loopback (``127.0.0.0/8``, ``::1``), the private networks of RFC 1918 (``10/8``,
``172.16/12``, ``192.168/16``), IPv6 unique local addresses (``fc00::/7``) and link-local
addresses (``169.254/16``, ``fe80::/10``); an IPv4-mapped IPv6 address is judged as its IPv4
address. The check holds at the moment it runs: a name whose answer changes later (DNS
rebinding) is not followed, so a local-only site names its model server by IP address or by a
name its own DNS answers.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from shared.errors import Code, FleetwatchError

ANTHROPIC_API: Final = "https://api.anthropic.com"
"""Where the SDK sends requests when no base URL is set."""
LOCAL_NETWORKS: Final = tuple(
    ipaddress.ip_network(n)
    for n in (
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",
        "::1/128",
        "fc00::/7",
        "fe80::/10",
    )
)

Resolver = Callable[[str], Sequence[str]]
"""A host name → the addresses it resolves to (empty: it does not resolve)."""


def system_resolver(host: str) -> list[str]:
    """Every address the system's resolver gives `host` (empty when it gives none)."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]).split("%")[0] for info in found})


def ip_of(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP `address` names (an IPv4-mapped IPv6 address as its IPv4 one), or None when it is
    no IP literal."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def local_address(address: str) -> bool:
    """True when `address` (an IP literal) is loopback, private or link-local (see the module)."""
    ip = ip_of(address)
    return ip is not None and any(ip.version == net.version and ip in net for net in LOCAL_NETWORKS)


@dataclass(frozen=True)
class ModelHost:
    """The model's host (``api.anthropic.com`` when no base URL is set), the addresses it was
    judged by, and whether all of them are local (`local_address`)."""

    host: str
    addresses: tuple[str, ...]
    local: bool


def model_host(base_url: str | None, resolve: Resolver = system_resolver) -> ModelHost:
    """Judge the host of `base_url` (None: Anthropic's API) as the module docstring says."""
    host = urlsplit(base_url or ANTHROPIC_API).hostname or ""
    try:
        ipaddress.ip_address(host)
        addresses: tuple[str, ...] = (host,)
    except ValueError:
        addresses = tuple(resolve(host)) if host else ()
    return ModelHost(host, addresses, bool(addresses) and all(local_address(a) for a in addresses))


def require_local(base_url: str | None, resolve: Resolver = system_resolver) -> ModelHost:
    """The model's host when it is local (`model_host`).

    Raises:
        FleetwatchError: ``model_not_local``, naming the host and the addresses it gave.
    """
    found = model_host(base_url, resolve)
    if not found.local:
        raise FleetwatchError(
            Code.MODEL_NOT_LOCAL,
            f"FLEETWATCH_MODEL_LOCAL_ONLY is on and the model's host {found.host} "
            f"({', '.join(found.addresses) or 'does not resolve'}) is not on this machine or a private network",
        )
    return found
