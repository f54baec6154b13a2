"""The home page in a real Chromium, served by daphne: htmx, its WebSocket extension and
SortableJS load, and the lobby socket really opens and swaps its first frame into the page."""

from typing import Any

import pytest

from games.catalog import ensure_variants
from tests.live_daphne import DaphneServer, in_thread

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
    # A visitor who has not signed in is told so, not called a guest.
    assert "You are not signed in" in status.inner_text()
    events = page.evaluate("() => window.__okeyWsEvents")
    assert "wsClose" not in events and "wsError" not in events, events
    assert [s.url for s in sockets] == [f"{daphne_live_server.ws_url}/ws/lobby/"]
    assert not sockets[0].is_closed()
    assert not [line for line in failed if "/static/" in line], failed
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
@pytest.mark.parametrize("language", ["en", "tr"])
def test_a_visitor_lands_sees_what_to_do_first_and_finds_the_rules(
    daphne_live_server: DaphneServer, chromium: Any, size: tuple[int, int], language: str
) -> None:
    """A visitor who has not signed in: the page says what the site is, Play now and Practice
    with bots lie on the first screen, the greeting does not call them a guest, the language
    menu names each language in itself, and the header's Rules link opens the rules."""
    in_thread(ensure_variants)
    width, height = size
    context = chromium.new_context(viewport={"width": width, "height": height})
    context.add_cookies(
        [{"name": "django_language", "value": language, "url": daphne_live_server.url}]
    )
    page = context.new_page()
    page.goto(f"{daphne_live_server.url}/")
    assert page.locator(".intro h1").is_visible()
    for action in ("play-now", "practice"):
        box = page.locator(f'[data-action="{action}"]').first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, f"{action} below the fold"
    page.locator("#lobby-status.connected").wait_for(timeout=10_000)
    status = page.locator("#lobby-status").inner_text()
    assert ("not signed in" if language == "en" else "Giriş yapmadın") in status, status
    names = page.locator('select[name="language"] option').all_inner_texts()
    assert [n.strip() for n in names] == ["English", "Türkçe"]
    page.locator(".site-header").get_by_role(
        "link", name="Rules" if language == "en" else "Kurallar"
    ).click()
    page.wait_for_url(f"{daphne_live_server.url}/rules/")
    context.close()
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
