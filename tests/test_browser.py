"""The home page in a real Chromium: htmx, its WebSocket extension and SortableJS load."""

from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Recorded before any page script runs: the ws extension announces each connection attempt.
RECORD_WS_EVENTS = """
window.__okeyWsEvents = [];
document.addEventListener("htmx:wsConnecting", () => window.__okeyWsEvents.push("connecting"));
"""


def test_it_loads_htmx_and_the_ws_extension(chromium_page: Any, live_server: Any) -> None:
    page = chromium_page
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.add_init_script(RECORD_WS_EVENTS)

    response = page.goto(f"{live_server.url}/")

    assert response is not None and response.ok
    page.wait_for_function("() => typeof window.htmx !== 'undefined'", timeout=10_000)
    assert page.evaluate("() => htmx.version").startswith("2.")
    # The lobby section has ws-connect: the extension is loaded when it starts connecting.
    page.wait_for_function("() => window.__okeyWsEvents.length > 0", timeout=10_000)
    assert page.evaluate("() => typeof window.Sortable") == "function"
    assert not [line for line in failed if "/static/" in line], failed
