"""Where a page may listen: who holds a port it wants (named by uid, a covering wildcard
included), and when it may run without [::1] (only when nobody on the machine can listen there)."""

from __future__ import annotations

import errno
import os

import pytest

from shared.web.local_http import holder, may_skip_ipv6
from shared.web.loopback_peer import listener_uid
from tests.other_uid import other_user, squatting


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to listen as another user (CI runs as root)")
@pytest.mark.parametrize(
    ("held", "asked"), [("::1", "::1"), ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1")]
)
def test_the_holder_of_a_port_a_page_wants_is_named_by_its_uid(held: str, asked: str) -> None:
    with squatting(held) as port:
        assert listener_uid(asked, port) == other_user().pw_uid
        assert f"uid {other_user().pw_uid}" in holder(asked, port)
    assert listener_uid(asked, port) is None


@pytest.mark.parametrize(
    ("error", "kernel_has_ipv6", "skip"),
    [
        (errno.EADDRNOTAVAIL, True, True),  # no ::1 on this machine: nobody can listen there
        (errno.EAFNOSUPPORT, False, True),  # no IPv6 in the kernel at all
        (errno.EAFNOSUPPORT, True, False),  # only this process is kept from IPv6 (a sandbox)
        (errno.EADDRINUSE, True, False),  # someone holds it
        (errno.EACCES, True, False),
        (None, True, False),
    ],
)
def test_a_page_runs_without_ipv6_only_when_nobody_can_listen_on_it(
    error: int | None, kernel_has_ipv6: bool, skip: bool
) -> None:
    assert may_skip_ipv6(error, kernel_has_ipv6) is skip
