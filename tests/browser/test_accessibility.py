"""axe-core (an npm dev dependency, ``node_modules/axe-core``) finds no critical or serious
violation on the pages a player reads: the landing page, the lobby, the table mid-hand, the
end of a match, a hand's replay and a profile, in English and in Turkish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from games.catalog import ensure_variants
from games.models import Hand
from tests import ui
from tests.browser.test_table_layout import mid_hand
from tests.live_daphne import DaphneServer, in_thread
from tests.play import played_out

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"

RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter(v => v.impact === "critical" || v.impact === "serious")
    .map(v => `${v.impact} ${v.id}: ` +
      v.nodes.slice(0, 3).map(n => n.target.join(" ") + " " + n.failureSummary).join(", "));
}"""


def violations(page: Any) -> list[str]:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make test does)")
    # Evaluated over the DevTools protocol: the site's CSP allows no injected <script>.
    page.evaluate(AXE.read_text())
    return list(page.evaluate(RUN_AXE))


@pytest.mark.parametrize("language", ["en", "tr"])
def test_the_landing_page_and_the_lobby(
    daphne_live_server: DaphneServer, chromium: Any, language: str
) -> None:
    in_thread(ensure_variants)
    visitor = chromium.new_context().new_page()
    ui.in_language(visitor, daphne_live_server, language)
    visitor.goto(f"{daphne_live_server.url}/")
    visitor.locator("#lobby-status.connected").wait_for()
    assert violations(visitor) == []
    _table, user, _seat = mid_hand("duz", 61)
    player = ui.signed_in_page(chromium, daphne_live_server, user)
    ui.in_language(player, daphne_live_server, language)
    player.goto(f"{daphne_live_server.url}/")
    player.locator("#lobby-status.connected").wait_for()
    assert violations(player) == []
    player.goto(f"{daphne_live_server.url}/players/{user.get_username()}/")
    assert violations(player) == []


@pytest.mark.parametrize("language", ["en", "tr"])
def test_the_table_mid_hand_with_melds(
    daphne_live_server: DaphneServer, chromium: Any, language: str
) -> None:
    table, user, _seat = mid_hand("okey51", 48, melds=4)
    page = ui.signed_in_page(chromium, daphne_live_server, user)
    ui.in_language(page, daphne_live_server, language)
    ui.open_table(page, daphne_live_server, table.pk)
    assert violations(page) == []


@pytest.mark.parametrize("language", ["en", "tr"])
def test_the_end_of_a_match_and_its_replay(
    daphne_live_server: DaphneServer, chromium: Any, language: str
) -> None:
    table, users, match = in_thread(lambda: played_out("okey51", {"hands": 1}, 5))
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    ui.in_language(page, daphne_live_server, language)
    ui.open_table(page, daphne_live_server, table.pk)
    page.locator("[data-hand-over]").wait_for()
    assert violations(page) == []
    hand = in_thread(lambda: Hand.objects.filter(match=match).order_by("number").first())
    page.goto(f"{daphne_live_server.url}/hands/{hand.pk}/")
    assert violations(page) == []


def test_a_screen_reader_hears_the_rack_as_groups_and_the_others_moves_as_they_come(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """The rack is a named group of two named rows; another player's move is put in a live
    region outside the frames (#announce), which a frame never replaces; the player's own
    move is not read back to them."""
    from games import actions
    from tests.play import seed_of, user_table

    def make() -> Any:
        ensure_variants()
        table, users = user_table("duz", {"timer": 0})
        actions.start_match(table, by=actions.SYSTEM, seed=seed_of(16))
        return table, users

    table, users = in_thread(make)
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    ui.open_table(page, daphne_live_server, table.pk)
    rack = page.locator("#rack-area .rack")
    assert rack.get_attribute("role") == "group" and rack.get_attribute("aria-label")
    rows = page.locator('#rack-area .rack-row[role="group"]')
    assert rows.count() == 2 and rows.nth(1).get_attribute("aria-label") == "Row 2 of your rack"
    announce = page.locator("#announce")
    assert announce.get_attribute("aria-live") == "polite"
    assert page.evaluate("() => !document.querySelector('#announce').closest('#table-live')")
    assert ui.simple_turn(page)  # the player's own discard: not announced
    ui.wait_version(page, 1)
    assert announce.inner_text() == ""
    other = ui.signed_in_page(chromium, daphne_live_server, users[1])
    ui.open_table(other, daphne_live_server, table.pk)
    assert ui.simple_turn(other)  # seat 1 draws
    page.wait_for_function(
        "() => document.querySelector('#announce').textContent.includes('drew')", timeout=10_000
    )
    assert announce.inner_text() == page.locator("#table-live .event-log li").first.inner_text()
    assert violations(page) == []
