"""The lobby's "Play now", walked in Chromium by two people who do not know each other: each
presses it in the lobby, both land at the same table, the waiting panel shows them both and
counts down, bots take the two seats still empty once the wait is over, and the two play, each
seeing the other's moves. No reload anywhere; the server's clock seats the bots (its wait is
3 s here: tests/live_daphne.py)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from games.catalog import ensure_variants
from games.models import Match, Seat, Table
from tests import ui
from tests.browser.test_journeys import VIEWPORTS, play_one_turn, wait_seated
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

SOCKET_OPEN = "document.addEventListener('htmx:wsOpen', () => { window.__okeySocketOpen = true; });"


def in_the_lobby(chromium: Any, server: DaphneServer, user: Any, size: str) -> Any:
    page = ui.signed_in_page(chromium, server, user, VIEWPORTS[size])
    page.add_init_script(SOCKET_OPEN)
    page.goto(f"{server.url}/")
    page.locator("#lobby-status.connected").wait_for(timeout=15_000)
    return page


def press_play_now(page: Any, variant: str) -> None:
    with page.expect_navigation(url="**/tables/*/"):
        page.locator(f'[data-action="play-now"][data-variant="{variant}"]').click()
    ui.wait_for_socket(page)


def occupants_once(page: Any, want: list[str], timeout: float = 15) -> list[str]:
    """The seats' occupants once they read ``want`` (or as they stand after ``timeout``):
    the seat controls are fetched again after every change, and a read between a frame's
    swap and that fetch finds none."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """want => JSON.stringify([...document.querySelectorAll(
                 '#seat-controls .seat .occupant')].map(o => o.innerText.trim()))
               === JSON.stringify(want)""",
            arg=want,
            timeout=timeout * 1000,
        )
    return occupants(page)


def occupants(page: Any) -> list[str]:
    return [
        text.strip() for text in page.locator("#seat-controls .seat .occupant").all_inner_texts()
    ]


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_two_strangers_press_play_now_meet_at_one_table_and_play_with_two_bots(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str
) -> None:
    server = daphne_live_server
    in_thread(ensure_variants)  # a transactional test before this one flushed them
    ayse, can = in_thread(make_user, f"ayse-{size}"), in_thread(make_user, f"can-{size}")
    first = in_the_lobby(chromium, server, ayse, size)
    second = in_the_lobby(chromium, server, can, size)

    # The clock is held while the panel is looked at, so that the bots cannot come first on a
    # slow machine; the wait itself runs meanwhile.
    server.pause_clock()
    try:
        press_play_now(first, "classic")
        first.locator("[data-quick]").wait_for(timeout=15_000)
        want = [f"{ayse.username} (you)", "empty", "empty", "empty"]
        assert occupants_once(first, want) == want
        # From now on, the panel on the first page must never go blank (a frame redraws the
        # table, and its seat controls are fetched again: the old stay until then).
        first.evaluate(
            """() => new MutationObserver(() => {
                const slot = document.querySelector('#seat-controls-slot');
                if (slot && !slot.hasChildNodes()) window.__blankPanel = true;
            }).observe(document.body, {childList: true, subtree: true})"""
        )
        press_play_now(second, "classic")
        assert second.url == first.url
        table = Table.objects.get(seats__user=ayse)
        assert table.quick and Seat.objects.get(table=table, user=can).position == 1

        # Both see both, the first without a reload (the table's socket tells their page).
        for page, me, other in ((first, ayse, can), (second, can, ayse)):
            panel = page.locator("[data-quick]")
            panel.locator("h2", has_text="Waiting for players: 2 of 4 seated").wait_for(
                timeout=15_000
            )
            want = (
                [f"{me.username} (you)", other.username]
                if me == ayse
                else [other.username, f"{me.username} (you)"]
            ) + ["empty", "empty"]
            assert occupants_once(page, want) == want
            label = panel.locator("[data-quick-wait]").inner_text().strip()
            assert re.fullmatch(r"\d+ s", label), label
            page.locator('[data-action="start-with-bots"]').wait_for(timeout=15_000)
            assert page.locator('[data-action="add-bot"], [data-action="start"]').count() == 0
        assert first.evaluate("() => window.__blankPanel") is None, "the panel went blank"
        second.screenshot(path=str(artifacts / f"quick-wait-{size}.png"))
        # The second is down at the chat while they wait (on a phone it is under the rack).
        second.locator('#chat input[name="text"]').scroll_into_view_if_needed()
        # The page counts the seconds down by itself.
        second.wait_for_function(
            "() => document.querySelector('[data-quick-wait]').textContent.trim() === '0 s'",
            timeout=10_000,
        )
    finally:
        server.resume_clock()

    # The wait is over: two bots sit down and the match starts; each page is its seat's, and
    # shows the felt from its top (the second was scrolled down to the chat).
    for page in (first, second):
        page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
        assert page.locator("[data-quick]").count() == 0
        page.wait_for_function("() => document.querySelector('main').scrollTop === 0")
        assert page.locator(".table-status").bounding_box()["y"] >= 0
    wait_seated(first, 0)
    wait_seated(second, 1)
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    assert list(table.seats.order_by("position").values_list("bot_level", flat=True)) == [
        "",
        "",
        "strong",
        "strong",
    ]
    match = Match.objects.get(table=table)
    assert table.fill_at is not None and match.started_at >= table.fill_at
    for page in (first, second):
        for position in (2, 3):
            name = page.locator(f'.player[data-seat="{position}"] .player-name').inner_text()
            assert name.strip() == f"Bot {position + 1} (strong)"

    # Both play; each move shows on the other's screen.
    for _ in range(3):
        play_one_turn(first, second)
        ui.wait_version(second, ui.version(first))
        play_one_turn(second, first)
        ui.wait_version(first, ui.version(second))
    for page in (first, second):
        assert ui.error_text(page) == ""
        assert page.okey_errors == []
    assert not server.errors(), server.output_of_this_test()
