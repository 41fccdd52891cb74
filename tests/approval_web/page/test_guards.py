"""Pure request checks: Host, where a POST came from, form tokens and session IDs."""

from __future__ import annotations

import itertools

import pytest

from services.approval_web.page import guards
from shared.errors import Code
from shared.web.guards import APPROVAL_NAMES, ASK_NAMES, loopback_redirect

OWN = "http://127.0.0.1:8767"


@pytest.mark.parametrize(
    ("host", "approval", "ask"),
    [
        ("127.0.0.1:8767", True, False),
        ("[::1]:8767", True, False),
        ("localhost:8767", False, True),
        ("LOCALHOST:8767", False, True),
        ("127.0.0.1", False, False),
        ("localhost", False, False),
        ("127.0.0.1:8768", False, False),
        ("localhost:8768", False, False),
        ("evil.example:8767", False, False),
        ("127.0.0.1.evil.example:8767", False, False),
        ("[::ffff:127.0.0.1]:8767", False, False),
        ("", False, False),
        (None, False, False),
    ],
)
def test_the_host_must_name_the_page_on_its_own_port_and_the_two_pages_share_no_name(
    host: str | None, approval: bool, ask: bool
) -> None:
    assert guards.host_ok(host, 8767, APPROVAL_NAMES) is approval
    assert guards.host_ok(host, 8767, ASK_NAMES) is ask


@pytest.mark.parametrize(
    ("method", "host", "names", "to"),
    [
        ("GET", "localhost:8767", APPROVAL_NAMES, "http://127.0.0.1:8767/"),
        ("HEAD", "LOCALHOST:8767", APPROVAL_NAMES, "http://127.0.0.1:8767/"),
        ("GET", "127.0.0.1:8766", ASK_NAMES, "http://localhost:8766/"),
        ("GET", "[::1]:8766", ASK_NAMES, "http://localhost:8766/"),
        ("POST", "localhost:8767", APPROVAL_NAMES, None),  # an action is refused, never sent on
        ("GET", "127.0.0.1:8767", APPROVAL_NAMES, None),  # its own name
        ("GET", "localhost:8768", APPROVAL_NAMES, None),  # another port: bad_host
        ("GET", "evil.example:8767", APPROVAL_NAMES, None),
        ("GET", None, APPROVAL_NAMES, None),
    ],
)
def test_a_get_naming_the_other_pages_loopback_name_is_sent_to_this_pages_own(
    method: str, host: str | None, names: tuple[str, ...], to: str | None
) -> None:
    port = int(to.rsplit(":", 1)[1].rstrip("/")) if to else 8767
    assert loopback_redirect(method, host, port, names) == to


FETCH_SITE = [None, "same-origin", "same-site", "cross-site", "none", "SAME-ORIGIN"]
ORIGINS = [None, OWN, "http://localhost:8767", "http://127.0.0.1:8768", "https://evil.example", "null"]


@pytest.mark.parametrize(("fetch_site", "origin"), list(itertools.product(FETCH_SITE, ORIGINS)))
def test_only_a_post_that_every_header_says_came_from_the_page_passes(
    fetch_site: str | None, origin: str | None
) -> None:
    headers = {k: v for k, v in (("Sec-Fetch-Site", fetch_site), ("Origin", origin)) if v is not None}
    if fetch_site is None:
        passes = origin == OWN
    else:  # a browser's own word; Origin: null is what no-referrer makes Chromium send
        passes = fetch_site.lower() == "same-origin" and origin in (None, OWN, "null")
    expected = None if passes else Code.CROSS_SITE
    assert guards.post_origin_problem(headers, "127.0.0.1:8767") == expected


def test_a_form_token_is_bound_to_its_action_session_proposal_and_approval() -> None:
    key = guards.new_key()
    token = guards.form_token(key, "approve", "s-1", "p-1", "a-1")
    assert guards.token_ok(key, token, "approve", "s-1", "p-1", "a-1")
    assert not guards.token_ok(key, token, "deny", "s-1", "p-1", "a-1")
    assert not guards.token_ok(key, token, "approve", "s-2", "p-1", "a-1")
    assert not guards.token_ok(key, token, "approve", "s-1", "p-2", "a-1")
    assert not guards.token_ok(key, token, "approve", "s-1", "p-1", "a-2")
    assert not guards.token_ok(guards.new_key(), token, "approve", "s-1", "p-1", "a-1")
    assert not guards.token_ok(key, None, "approve", "s-1", "p-1", "a-1")
    assert not guards.token_ok(key, token[:-1], "approve", "s-1", "p-1", "a-1")
    # The separator keeps fields apart: ("p-1", "a-1") is not ("p-1\x00a", "-1").
    assert not guards.token_ok(key, token, "approve", "s-1", "p-1\x00a", "-1")


def test_the_store_never_sees_the_cookie_and_another_run_cannot_read_it() -> None:
    key, token = guards.new_key(), guards.new_session_token()
    stored = guards.session_id(key, token)
    assert token not in stored and stored.startswith("s-") and len(stored) == 34
    assert guards.session_id(key, token) == stored
    assert guards.session_id(guards.new_key(), token) != stored
