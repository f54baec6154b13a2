"""People's paths through the site, walked in Chromium as people walk them: click what a
person clicks, never reload unless the step says so, one browser context per person, against
a real daphne (the sockets really connect; the server's clock plays the bots).

Each journey ends with a turn played through the page: the proof that the page is the seat's
(a move refused as "not your seat" would leave the version where it was)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from games import actions
from games.catalog import ensure_variants
from games.models import Seat, Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": ui.DESKTOP, "phone": ui.PHONE}


def demo_table(variant: str = "classic") -> Table:
    """A table as the demo loader keeps one: three easy bots and a free seat, starting by
    itself once someone sits down."""

    def make() -> Table:
        ensure_variants()
        table = actions.create_table(
            variant=variant, created_by=None, name=f"Demo {variant}", auto_start=True
        )
        for position in range(1, table.players):
            actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
        return table

    return in_thread(make)  # type: ignore[no-any-return]


def play_one_turn(page: Any, *others: Any, timeout: float = 30.0) -> None:
    """Wait for the viewer's turn and play it to its discard (draw, discard) through the
    page; the ``others`` (the other people's pages) play their turns meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        phase = ui.state(page)["phase"]
        if ui.simple_turn(page) and phase == "discard":
            return
        for other in others:
            ui.simple_turn(other)
        page.wait_for_timeout(50)
    raise AssertionError(f"no turn of the viewer's came: {ui.state(page)}, {ui.frames(page)}")


def wait_watching(page: Any, count: int) -> None:
    page.wait_for_function(
        "n => (document.querySelector('#watchers').dataset.watching || '0') === String(n)",
        arg=count,
        timeout=15_000,
    )


def wait_seated(page: Any, position: int) -> None:
    """The page is the seat's: ``data-seat`` says so, its rack is on screen and the seat
    shows its player as here (the socket is the seat's, not a spectator's)."""
    page.wait_for_function(
        "p => document.querySelector('#table-live').dataset.seat === String(p)",
        arg=position,
        timeout=15_000,
    )
    page.locator(f'.player.is-me[data-seat="{position}"] .badge.here').wait_for(timeout=15_000)


def sit_here(page: Any) -> None:
    page.locator('[data-action="sit"]').first.click()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_person_sits_at_a_demo_table_from_its_page_and_plays_at_once(
    daphne_live_server: DaphneServer, chromium: Any, size: str
) -> None:
    table = demo_table()
    player = in_thread(make_user, f"sitter-{size}")
    page = ui.signed_in_page(chromium, daphne_live_server, player, VIEWPORTS[size])
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["seat"] == ""
    sit_here(page)
    wait_seated(page, 0)
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    wait_watching(page, 0)
    play_one_turn(page)
    assert ui.error_text(page) == ""
    assert Seat.objects.get(table=table, position=0).away is False
    assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_a_friend_follows_an_invite_link_sits_and_plays(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    host, friend = in_thread(make_user, "host"), in_thread(make_user, "friend")

    def make() -> Table:
        ensure_variants()
        table = actions.open_table(
            variant="classic", user=host, is_private=True, auto_start=True, name="Friends"
        )
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=host)
        return table

    table = in_thread(make)
    host_page = ui.signed_in_page(chromium, daphne_live_server, host)
    ui.open_table(host_page, daphne_live_server, table.pk)
    friend_page = ui.signed_in_page(chromium, daphne_live_server, friend)
    friend_page.add_init_script(
        "document.addEventListener('htmx:wsOpen', () => { window.__okeySocketOpen = true; });"
    )
    friend_page.goto(f"{daphne_live_server.url}/tables/{table.pk}/?invite={table.invite_token}")
    ui.wait_for_socket(friend_page)
    sit_here(friend_page)
    wait_seated(friend_page, 1)
    # Both play; each sees the other's moves without a reload.
    play_one_turn(host_page, friend_page)
    seen = ui.version(host_page)
    ui.wait_version(friend_page, seen)
    play_one_turn(friend_page, host_page)
    ui.wait_version(host_page, ui.version(friend_page))
    for page in (host_page, friend_page):
        assert ui.error_text(page) == ""
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_a_spectator_takes_a_free_seat_plays_and_standing_up_makes_them_a_spectator_again(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    host, guest = in_thread(make_user, "host2"), in_thread(make_user, "watcher")

    def make() -> Table:
        ensure_variants()
        table = actions.open_table(variant="classic", user=host, name="Open to all")
        actions.add_bot(table, 2, "greedy", by=host)
        actions.add_bot(table, 3, "greedy", by=host)
        return table

    table = in_thread(make)
    host_page = ui.signed_in_page(chromium, daphne_live_server, host)
    ui.open_table(host_page, daphne_live_server, table.pk)
    page = ui.signed_in_page(chromium, daphne_live_server, guest)
    ui.open_table(page, daphne_live_server, table.pk)
    wait_watching(host_page, 1)

    sit_here(page)
    wait_seated(page, 1)
    # Counted as a player now, not as one watching; the host sees them here.
    host_page.locator('.player[data-seat="1"] .badge.here').wait_for(timeout=15_000)
    wait_watching(host_page, 0)
    page.locator('[data-action="stand"]').click()
    page.wait_for_function(
        "() => document.querySelector('#table-live').dataset.seat === ''", timeout=15_000
    )
    wait_watching(host_page, 1)

    sit_here(page)
    wait_seated(page, 1)
    host_page.locator('[data-action="start"]').click()
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    play_one_turn(page, host_page)
    assert ui.error_text(page) == ""
    assert page.okey_errors == [] and host_page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
