"""An assisted 101 Okey table in Chromium, three players in three browser contexts: the player
who reaches the bar opens with one tap ("Open: 107"), the next player's rack marks the tile that
fits a meld on the table, throwing it costs the +101 the page then shows, and the third player
sees that discard marked as workable; axe-core finds no serious violation on the three pages
(English and Turkish)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from games import engine
from games.engine.tiles import parse_tile
from games.models import Hand, Table
from tests import ui
from tests.browser.test_accessibility import violations
from tests.live_daphne import DaphneServer, in_thread
from tests.pages.test_assist import dealt_with

# Seat 0 (the starter, okey Y6) opens with R9-R12, K13 B13 Y13 and B5-B8: 107; the rest
# makes no meld.
OPENER = "R9 R10 R11 R12 K13 B13 Y13 B5 B6 B7 B8 K2 R3 K7 B1 Y1 K4 Y9 R6 B11 Y3 K10".split()
# Seat 1 holds R13, which fits the opener's run once it is on the table.
NEXT = "R13 B4 B9 K5 K6 Y2 Y8 Y11 R5 K9 Y4 K1 R2 Y10 K3 B2 R7 K11 B12 Y12 R1".split()


def rigged() -> tuple[Table, list[Any], Hand]:
    """The table, its first hand dealt as above; the players' sockets are their pages'."""
    options = {"assisted": True, "timer": 0}
    return dealt_with("okey101", options, {0: OPENER, 1: NEXT}, 101, sockets=False)


def rack_marks(page: Any) -> dict[str, bool]:
    """Each rack tile's code and whether it is marked as fitting the table."""
    return dict(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('#rack-area .tile')).map(
                 t => [t.dataset.tile, t.classList.contains('feedable')])"""
        )
    )


def test_an_assisted_okey101_table_opens_with_one_tap_and_marks_workable_tiles(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    table, users, hand = in_thread(rigged)
    pages = []
    for seat, language in enumerate(["en", "tr", "en"]):
        page = ui.signed_in_page(chromium, daphne_live_server, users[seat])
        ui.in_language(page, daphne_live_server, language)
        ui.open_table(page, daphne_live_server, table.pk)
        pages.append(page)
    opener, nxt, third = pages
    assert len(ui.rack_tiles(opener)) == 22

    # One tap opens with the rack's best melds.
    offer = opener.locator('#table-live [data-action="open-suggested"]')
    assert offer.inner_text().strip() == "Open: 107"
    assert violations(opener) == []
    offer.click()
    ui.wait_version(opener, 1)
    stored = Hand.objects.get(pk=hand.pk)
    assert stored.engine_hand().view(0)["opened"][0] == "melds"
    assert len(ui.rack_tiles(opener)) == 22 - 11
    assert opener.locator("#table-live .meld-group .tile").count() == 11
    ui.select_tile(opener, "K2")
    ui.click_action(opener, "discard")
    ui.wait_version(nxt, 2)

    # The next player draws; R13 fits the run on the table (and B4, B9 the other one): the
    # rack marks those tiles, as the engine's assist finds them, and no other.
    ui.click_action(nxt, "draw")
    ui.wait_version(nxt, 3)
    marks = rack_marks(nxt)
    view = Hand.objects.get(pk=hand.pk).engine_hand().view(1)
    fitting = {f["tile"] for f in engine.assist(view)["feedable"]}
    assert {"R13", "B4", "B9"} <= fitting
    assert {code for code, marked in marks.items() if marked} == fitting, marks
    assert violations(nxt) == []
    nxt.screenshot(path=str(artifacts / "okey101-assisted-marked-tr.png"))
    # Thrown anyway: the +101 for a workable tile, said in the player's language.
    ui.select_tile(nxt, "R13")
    ui.click_action(nxt, "discard")
    ui.wait_version(third, 4)
    ui.wait_version(nxt, 4)
    assert "işlenebilir" in nxt.locator("#table-live").inner_text().lower()
    after = Hand.objects.get(pk=hand.pk).engine_hand()
    assert after.racks[1].count(parse_tile("R13")) == 0

    # The third player may take that discard, and the spot says it fits a meld.
    spot = third.locator('#table-live .discard-spot.takeable[data-seat="1"]')
    assert "workable" in (spot.get_attribute("class") or "").split()
    assert spot.get_attribute("title")
    assert violations(third) == []
    third.screenshot(path=str(artifacts / "okey101-assisted-workable-desktop.png"))
    for page in pages:
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
