"""What the browser tests of tests/http share: Debian's Chromium, driven by Playwright (which never downloads a
browser of its own), with no screen and no calls home."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Flags for a machine with no screen and a closed network (no sandbox as root, no calls home).
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def chromium() -> str:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: `make test` installs Debian's chromium"
    return CHROMIUM


@pytest.fixture
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()
