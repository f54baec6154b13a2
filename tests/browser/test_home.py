"""The home page in a real Chromium, served by daphne: htmx, its WebSocket extension and
SortableJS load, and the lobby socket really opens and swaps its first frame into the page."""

from typing import Any

import pytest

from tests.live_daphne import DaphneServer

pytestmark = pytest.mark.browser

# Recorded before any page script runs: the ws extension announces each connection attempt,
# each open socket, each frame it receives and each close.
RECORD_WS_EVENTS = """
window.__okeyWsEvents = [];
for (const name of ["wsConnecting", "wsOpen", "wsBeforeMessage", "wsClose", "wsError"]) {
  document.addEventListener("htmx:" + name, () => window.__okeyWsEvents.push(name));
}
"""


def test_it_loads_htmx_and_opens_the_lobby_socket(
    daphne_live_server: DaphneServer, chromium_page: Any
) -> None:
    page = chromium_page
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    sockets: list[Any] = []
    page.on("websocket", lambda ws: sockets.append(ws))
    page.add_init_script(RECORD_WS_EVENTS)

    response = page.goto(f"{daphne_live_server.url}/")

    assert response is not None and response.ok
    page.wait_for_function("() => typeof window.htmx !== 'undefined'", timeout=10_000)
    assert page.evaluate("() => htmx.version").startswith("2.")
    assert page.evaluate("() => typeof window.Sortable") == "function"
    # The socket opened (not just attempted), and the lobby's first frame (lobby_status.html)
    # replaced the "Connecting…" placeholder.
    page.wait_for_function("() => window.__okeyWsEvents.includes('wsOpen')", timeout=10_000)
    status = page.locator("#lobby-status.connected")
    status.wait_for(timeout=10_000)
    assert "You are in the lobby as a guest." in status.inner_text()
    events = page.evaluate("() => window.__okeyWsEvents")
    assert "wsClose" not in events and "wsError" not in events, events
    assert [s.url for s in sockets] == [f"{daphne_live_server.ws_url}/ws/lobby/"]
    assert not sockets[0].is_closed()
    assert not [line for line in failed if "/static/" in line], failed
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
