"""Debian's Chromium for the end-to-end tests: where it is, how it is launched, where
screenshots go. Playwright's own browser download is never used (``playwright install`` is not
run); ``scripts/setup --system`` installs Debian's ``chromium``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""The flags that keep Chromium off the network it has no access to here."""

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
"""Screenshots and measurements (gitignored)."""

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (scripts/setup --system); in CI this fails instead",
)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Debian's Chromium, launched headless for one test and closed after it."""
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            yield chromium
        finally:
            await chromium.close()
