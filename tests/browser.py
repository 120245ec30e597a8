"""Headless Debian Chromium driven by Playwright's Python package (a pytest plugin module).

Playwright launches the system browser (``executable_path=/usr/bin/chromium``); its
own browser download (``playwright install``) is never used. One browser per test
session (per xdist worker); each test gets a fresh context and page, whose network
requests, script errors and dialogs are recorded for assertions (:class:`Tab`).

Screenshots go to a temporary folder; with ``RAGPROOF_SCREENSHOTS=docs/img`` the
review tests also write the documentation's screenshots there.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
)
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--disable-default-apps",
    # Any host name but 127.0.0.1 resolves to nothing: a page that tried the network fails.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
NO_CHROMIUM = "Debian's chromium is not installed (apt-get install chromium); CI installs it"

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


@dataclass
class Tab:
    """One page of a fresh browser context, with what it requested, threw and opened."""

    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def js(self, expression: str) -> Any:
        return self.page.evaluate(expression)

    def screenshot(self, path: Path) -> bytes:
        path.parent.mkdir(parents=True, exist_ok=True)
        data: bytes = self.page.screenshot(path=str(path), full_page=False)
        return data


@dataclass
class _Session:
    browser: Browser
    loop: asyncio.AbstractEventLoop | None


@pytest.fixture(scope="session")
def _chromium_session() -> Iterator[_Session]:
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        # Playwright's sync API leaves its event loop marked as running on this thread
        # between calls. Parked between browser tests, or every later test of this process
        # that runs an event loop (asyncio.run, pytest-asyncio in pytester) would fail with
        # "cannot be called from a running event loop".
        session = _Session(browser, asyncio.events._get_running_loop())
        asyncio.events._set_running_loop(None)
        try:
            yield session
        finally:
            asyncio.events._set_running_loop(session.loop)
            browser.close()


@pytest.fixture
def chromium(_chromium_session: _Session) -> Iterator[Browser]:
    """The session's Chromium, its event loop marked running only during the test."""
    asyncio.events._set_running_loop(_chromium_session.loop)
    try:
        yield _chromium_session.browser
    finally:
        asyncio.events._set_running_loop(None)


@pytest.fixture
def tab(chromium: Browser) -> Iterator[Tab]:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    found = Tab(page)
    page.on("request", lambda r: found.requests.append(r.url))
    page.on("pageerror", lambda e: found.errors.append(str(e)))
    page.on("console", lambda m: found.console.append(f"{m.type}: {m.text}"))

    def on_dialog(dialog: Any) -> None:
        found.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield found
    finally:
        context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where a test's screenshots go: a temporary folder."""
    return tmp_path / "screenshots"


def docs_screenshot(name: str, tab: Tab, shots: Path) -> bytes:
    """Take ``name`` into ``shots``, and into ``$RAGPROOF_SCREENSHOTS`` when it is set."""
    data = tab.screenshot(shots / name)
    target = os.environ.get("RAGPROOF_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        (Path(target) / name).write_bytes(data)
    return data
