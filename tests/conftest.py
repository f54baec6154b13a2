"""Fixtures shared by the whole suite, and the report header that says what it ran against."""

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _redact_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def pytest_report_header(config: pytest.Config) -> list[str]:
    from django.conf import settings
    from django.db import connection

    db = settings.DATABASES["default"]
    where = db.get("NAME", "")
    if db.get("HOST"):
        where = f"{db['HOST']}:{db.get('PORT') or 'default port'}/{where}"
    layer = settings.CHANNEL_LAYERS["default"]
    hosts = layer.get("CONFIG", {}).get("hosts", [])
    layer_where = ", ".join(_redact_url(str(h)) for h in hosts) if hosts else "this process"
    return [
        f"database: {connection.vendor} ({db['ENGINE']}, {where}; tests use a test database)",
        f"channel layer: {layer['BACKEND']} ({layer_where})",
    ]


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


@pytest.fixture
def chromium_page(live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A Playwright page in Debian's Chromium, for tests against ``live_server``.

    Without /usr/bin/chromium the test skips loudly, except under CI=true, where it fails.
    """
    if not CHROMIUM.exists():
        message = (
            f"{CHROMIUM} is missing: browser tests cannot run. "
            "Install it with `apt-get install chromium` (make test does this as root)."
        )
        if _ci():
            pytest.fail(f"CI=true and {message}")
        warnings.warn(f"SKIPPING BROWSER TEST: {message}", stacklevel=1)
        pytest.skip(f"SKIPPING BROWSER TEST: {message}")

    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread, and Django refuses
    # ORM calls from a thread with a running loop; allow them only while the browser runs,
    # so that async code elsewhere in the suite is still checked.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            yield page
        finally:
            browser.close()
