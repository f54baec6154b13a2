"""A connection a player can trust: within 3 s of the table socket dropping (the server
stopped, or a connection that goes silent without closing) the page says "Connection lost,
reconnecting…" in the reader's language, turns the moves off and keeps the countdowns
running; when the server answers again the page takes the table as it is and the notice goes.
``[data-connection]`` says ``live`` or ``lost`` (static/js/table.js, "the connection")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from games import actions
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import seed_of, user_table

LOST = {"en": "Connection lost, reconnecting…", "tr": "Bağlantı koptu, yeniden bağlanılıyor…"}

# Stamps the page's own clock when the notice changes: how long the page took to see it.
NOTICE_CLOCK = """
window.__okeyNotice = [];
document.addEventListener("DOMContentLoaded", () => {
  const notice = document.getElementById("connection");
  if (!notice) return;
  new MutationObserver(() => window.__okeyNotice.push([notice.dataset.connection, Date.now()]))
    .observe(notice, { attributes: true, attributeFilter: ["data-connection"] });
});
"""


def okey101_with_a_timer() -> tuple[Any, list[Any]]:
    def make() -> tuple[Any, list[Any]]:
        table, users = user_table("okey101", {"timer": 60})
        actions.start_match(table, by=actions.SYSTEM, seed=seed_of(41))
        return table, users

    return in_thread(make)  # type: ignore[no-any-return]


def at_table(
    chromium: Any, server: DaphneServer, user: Any, table: Any, size: str, lang: str
) -> Any:
    page = ui.signed_in_page(chromium, server, user, ui.PHONE if size == "phone" else ui.DESKTOP)
    ui.in_language(page, server, lang)
    page.add_init_script(NOTICE_CLOCK)
    ui.open_table(page, server, table.pk)
    return page


def connection(page: Any) -> str:
    return str(page.locator("[data-connection]").get_attribute("data-connection"))


def seconds_left(page: Any) -> int:
    label = page.locator(".countdown-label").first.inner_text()
    return int("".join(ch for ch in label if ch.isdigit()))


def move_buttons_enabled(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(
            "#table-live button[data-action]:not([disabled])", "bs => bs.map(b => b.dataset.action)"
        )
    )


def test_a_stopped_server_is_shown_at_once_and_the_table_comes_back_with_it(
    own_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    table, users = okey101_with_a_timer()
    desktop = at_table(chromium, own_server, users[0], table, "desktop", "en")
    phone = at_table(chromium, own_server, users[1], table, "phone", "tr")
    pages = {"en": desktop, "tr": phone}
    for page in pages.values():
        assert connection(page) == "live"
        assert page.locator("#connection").inner_text() == ""
    assert "discard" in move_buttons_enabled(desktop)  # seat 0 starts: its moves are on

    assert own_server.process is not None
    own_server.process.terminate()
    stopped = time.monotonic()
    for lang, page in pages.items():
        page.locator('[data-connection="lost"]').wait_for(timeout=10_000)
        assert page.locator("#connection").inner_text().strip() == LOST[lang]
    assert move_buttons_enabled(desktop) == []
    # The moves are off: the move's key does nothing, a tile dropped on the discard spot is
    # refused on the page.
    ui.select(desktop, [0])
    desktop.keyboard.press("x")
    assert ui.error_text(desktop) == ""
    ui.rack_at_rest(desktop)
    desktop.locator("#rack-area .slot").nth(0).locator(".tile").drag_to(
        desktop.locator('[data-drop="discard"]')
    )
    assert ui.error_text(desktop) == "You are offline: the move was not sent."
    # The countdown keeps running from the server's deadline.
    before = seconds_left(desktop)
    desktop.wait_for_timeout(2_100)
    assert seconds_left(desktop) < before
    desktop.screenshot(path=str(artifacts / "connection-lost-desktop.png"))
    phone.screenshot(path=str(artifacts / "connection-lost-phone-tr.png"))
    own_server.process.wait(timeout=15)

    # Back after ten seconds, at the same address: the pages reconnect by themselves.
    time.sleep(max(0.0, 10 - (time.monotonic() - stopped)))
    own_server.log_path = own_server.log_path.with_name("daphne-2.log")
    own_server.start(own_server.database_name)
    for page in pages.values():
        page.locator('[data-connection="live"]').wait_for(state="attached", timeout=30_000)
        assert page.locator("#connection").inner_text() == ""
    assert "discard" in move_buttons_enabled(desktop)
    assert in_thread(lambda: table.matches.get().hands.get().version) == 0  # nothing was sent
    assert ui.simple_turn(desktop)  # the hand goes on
    ui.wait_version(phone, 1)
    phone.screenshot(path=str(artifacts / "connection-back-phone-tr.png"))
    for page in pages.values():
        assert page.okey_errors == [], page.okey_errors
        page.context.close()


def test_a_connection_that_goes_silent_is_seen_within_three_seconds(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """The socket stays open but nothing passes either way (a network that dropped without a
    word): the page's heartbeat finds it, and when the way is clear again a new socket brings
    the table back."""
    table, users = okey101_with_a_timer()
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    page.add_init_script(NOTICE_CLOCK)
    silent = {"on": False}

    def relay(ws: Any) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda message: None if silent["on"] else server.send(message))
        server.on_message(lambda message: None if silent["on"] else ws.send(message))

    page.route_web_socket("**/ws/tables/**", relay)
    ui.open_table(page, daphne_live_server, table.pk)
    assert connection(page) == "live"

    silent["on"] = True
    went_silent = page.evaluate("() => Date.now()")
    page.locator('[data-connection="lost"]').wait_for(timeout=10_000)
    seen = page.evaluate("() => window.__okeyNotice.find(n => n[0] === 'lost')[1]")
    assert seen - went_silent <= 3_000, seen - went_silent
    assert move_buttons_enabled(page) == []

    silent["on"] = False
    page.locator('[data-connection="live"]').wait_for(state="attached", timeout=30_000)
    assert "discard" in move_buttons_enabled(page)
    assert ui.simple_turn(page)
    assert page.okey_errors == [], page.okey_errors
