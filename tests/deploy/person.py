"""Plays the person at the browser in sign-in tests: opens the authorize URL, picks a team on
the lab's page (submitting its form over HTTP), and follows the redirect back."""

from __future__ import annotations

import asyncio
import re
from urllib.parse import urljoin

import httpx2


async def pick_team(authorize_url: str, team: str) -> str:
    """Follow `authorize_url` to the lab's team page, submit it with `team` (``""`` cancels)
    and return the redirect URL the browser is sent back to (not fetched)."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as browser:
        to_page = await browser.get(authorize_url)
        assert to_page.status_code == 302, to_page.text
        page_url = urljoin(authorize_url, to_page.headers["location"])
        page = await browser.get(page_url)
        assert page.status_code == 200, page.text
        request_id = re.search(r'name="request" value="([^"]+)"', page.text)
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        assert request_id and action, page.text
        back = await browser.post(
            urljoin(page_url, action.group(1)), data={"request": request_id.group(1), "team": team}
        )
    assert back.status_code == 302, back.text
    return back.headers["location"]


async def come_back(redirect_url: str) -> int:
    """The browser loading the redirect URL (the loopback listener); its HTTP status."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=20) as browser:
        return (await browser.get(redirect_url)).status_code


class Person:
    """The person at the browser during `shared.epiphan.signin.oauth_sign_in`: shown the address, they
    pick `team` on the lab's page; the browser then comes back to the loopback listener, or
    (paste mode) they paste the address it was sent to."""

    def __init__(self, team: str) -> None:
        self.team = team
        self.redirect: str | None = None
        self.status: int | None = None
        self._done: asyncio.Task[None] | None = None
        self._paste_mode = False

    async def show(self, url: str) -> None:
        self._done = asyncio.create_task(self._act(url))

    async def _act(self, url: str) -> None:
        self.redirect = await pick_team(url, self.team)
        if not self._paste_mode:
            self.status = await come_back(self.redirect)

    def pasting(self) -> Person:
        self._paste_mode = True
        return self

    async def paste(self) -> str:
        assert self._done is not None, "paste before the address was shown"
        await self._done
        assert self.redirect is not None
        return self.redirect

    async def done(self) -> None:
        """Wait until the browser part is over (so no task outlives the test)."""
        if self._done is not None:
            await self._done
