"""Whole hands played in Chromium through the table page, against a real daphne (the sockets
really connect; the clock runs in the server and plays the bots).

The moves come from the engine: ``tests.ui.scripted_hand`` plays a hand from a fixed seed
with four bots in the engine alone; the browsers then make the same moves with clicks and drags,
and the page's scoreboard and revealed racks are checked against the engine's."""

from __future__ import annotations

import json
import random
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from games import actions, engine
from games.catalog import ensure_variants
from games.engine import layout, solver
from games.engine.assist import arranged
from games.models import Hand, Move, Participant, Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import rack_of_rows, seed_of, user_table
from tests.sockets import cookie_for
from tests.users import make_user


def start(variant: str, seed: str) -> tuple[Table, list[Any], Hand]:
    def make() -> tuple[Table, list[Any], Hand]:
        table, users = user_table(variant, {"timer": 0})
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed)
        return table, users, match.hands.get()

    return in_thread(make)  # type: ignore[no-any-return]


def at_the_table(
    chromium: Any, server: DaphneServer, user: Any, table: Table, motion: bool = False
) -> Any:
    """``user``'s page at ``table``, open and connected (``motion``: see ui.signed_in_page)."""
    page = ui.signed_in_page(chromium, server, user, motion=motion)
    ui.open_table(page, server, table.pk)
    return page


def seated_pages(
    chromium: Any, server: DaphneServer, table: Table, users: list[Any], motion: bool = False
) -> list[Any]:
    return [at_the_table(chromium, server, u, table, motion) for u in users]


def scoreboard(page: Any) -> list[tuple[str, int]]:
    rows = page.locator("[data-hand-over] .scoreboard tbody tr")
    out = []
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        name = cells.nth(0).locator(".scoreboard-name").inner_text().strip()
        out.append((name, int(cells.nth(1).inner_text())))
    return out


def revealed(page: Any, seat: int) -> list[str]:
    tiles = page.locator(f'[data-hand-over] .revealed-rack[data-seat="{seat}"] .tile')
    return [tiles.nth(i).get_attribute("data-tile") for i in range(tiles.count())]


def replay(pages: list[Any], moves: list[tuple[int, dict[str, Any]]], check: engine.Hand) -> None:
    """Every move through the page of the seat that makes it; after each, every page shows the
    new version, and the mover's rack is the engine's."""
    for number, (seat, move) in enumerate(moves, start=1):
        page = pages[seat]
        finish_groups = None
        if move["do"] == "finish":
            finish_groups = finishing_groups(check, seat, move["tile"])
        ui.play_move(page, move, finish_groups)
        for i, p in enumerate(pages):
            try:
                ui.wait_version(p, number)
            except Exception as exc:
                raise AssertionError(
                    f"move {number} {move} by seat {seat}: seat {i} shows {ui.state(p)}, "
                    f"mover's error {ui.error_text(page)!r}, frames {ui.frames(p)}, "
                    f"mover's frames {ui.frames(page)}"
                ) from exc
        assert ui.error_text(page) == "", (number, move)
        assert check.play(seat, move).ok
        if not check.public_view()["over"]:
            mine = [engine.format_tile(t) for t in check.racks[seat]]
            assert Counter(ui.rack_tiles(page)) == Counter(mine), (number, move)


def finishing_groups(eng: engine.Hand, seat: int, tile: str) -> list[list[str]]:
    """How the finisher lays out their rack: the solver's melds of the rest of it."""
    rest = list(eng.racks[seat])
    rest.remove(engine.parse_tile(tile))
    okey = engine.parse_tile(eng.public_view()["okey"])
    melds = solver.arrange(rest, okey, bool(eng.public_view()["options"].get("wrap_13_1", True)))
    assert melds is not None
    return [[engine.format_tile(t) for t in m.tiles] for m in melds]


def check_the_end(pages: list[Any], eng: engine.Hand, users: list[Any]) -> None:
    result = eng.public_view()
    for page in pages:
        page.locator("[data-hand-over]").wait_for(timeout=15_000)
        assert ui.state(page)["phase"] == "over"
        board = scoreboard(page)
        assert [name for name, _ in board] == [u.get_username() for u in users]
        assert [points for _, points in board] == result["result"]["hand_scores"]
        for seat in range(4):
            assert Counter(revealed(page, seat)) == Counter(result["revealed"][seat])


def play_by_clicks(
    server: DaphneServer,
    pages: list[Any],
    hand: Hand,
    eng: engine.Hand,
    moves: list[tuple[int, dict[str, Any]]],
    users: list[Any],
    shots: Path,
) -> None:
    """The script's moves by clicks on the seats' pages, then the end checked on every page
    and in the stored hand; screenshots at the start and the end (``shots``-start.png ...)."""
    pages[0].screenshot(path=f"{shots}-start-desktop.png", full_page=True)
    replay(pages, moves, hand.engine_hand())
    check_the_end(pages, eng, users)
    pages[0].screenshot(path=f"{shots}-hand-over-desktop.png", full_page=True)
    stored = Hand.objects.get(pk=hand.pk)
    assert stored.status == Hand.Status.FINISHED and stored.version == len(moves)
    assert stored.hand_scores == eng.public_view()["result"]["hand_scores"]
    for page in pages:
        assert page.okey_errors == []
    assert not server.errors(), server.output_of_this_test()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_copies_of_a_tile_the_player_clicked_are_the_ones_played(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str
) -> None:
    """Two copies of R13 on the rack: one ends a run the player keeps, the other completes the
    set they open with; two copies of K9: one ends a kept run, the other is added to the opened
    K10-K12; two of Y1: the one thrown by drag stands alone. Each time the copy clicked (or
    dragged) is the one played, and the groups kept stand whole on the rack."""
    kept = ["R9", "R10", "R11", "R12", "R13"]
    melds = [["Y13", "K13", "B13", "R13"], ["B9", "B10", "B11"], ["K10", "K11", "K12"]]
    hand, users, lay = in_thread(
        lambda: rack_of_rows(
            "okey101",
            108,
            [kept, ["K7", "K8", "K9"], melds[0]],
            [["Y1", "Y2", "Y3"], *melds[1:], ["K9"], ["Y1"]],
            options={"timer": 0},
        )
    )
    table = in_thread(lambda: Table.objects.get(matches__hands=hand))
    page = ui.signed_in_page(
        chromium, daphne_live_server, users[0], ui.PHONE if size == "phone" else ui.DESKTOP
    )
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.rack_layout(page) == lay
    opening = [i for i in [*range(10, 14), *range(20, 27)] if lay[i] is not None]
    assert [lay[i] for i in opening] == [t for g in melds for t in g]
    ui.select(page, opening)
    ui.click_action(page, "open")
    ui.wait_version(page, hand.version + 1)
    opened = page.locator('.meld-group[data-owner="0"] .meld')
    shown = [
        opened.nth(i).locator(".tile").evaluate_all("ts => ts.map(t => t.dataset.tile)")
        for i in range(opened.count())
    ]
    assert sorted(map(sorted, shown)) == sorted(map(sorted, melds))
    assert ui.rack_layout(page)[:9] == [*kept, None, "K7", "K8", "K9"]  # both runs whole
    assert page.locator("#move-error").inner_text().strip() == ""
    page.screenshot(path=str(artifacts / f"okey101-opening-with-a-second-copy-{size}.png"))

    # The loose K9 (on the second row) onto the opened K10-K12.
    loose_k9 = lay.index("K9", layout.ROW_SLOTS)
    ui.select(page, [loose_k9])
    run = in_thread(lambda: Hand.objects.get(pk=hand.pk).view_for(0)["table"])
    run_id = next(m["id"] for m in run if m["tiles"][-1] == "K12")
    with ui.melds_open(page):  # on a phone the melds open over the felt first
        ui.click_action(page, "add", meld=run_id)
    ui.wait_version(page, hand.version + 2)
    after = ui.rack_layout(page)
    assert after[6:9] == ["K7", "K8", "K9"] and after[loose_k9] is None
    assert page.locator("#move-error").inner_text().strip() == ""

    # The lone Y1 dragged onto the discard spot: the run Y1-Y3 stays whole.
    lone_y1 = lay.index("Y1", layout.ROW_SLOTS + 4)
    ui.rack_at_rest(page)
    page.locator("#rack-area .slot").nth(lone_y1).locator(".tile").drag_to(
        page.locator('[data-drop="discard"]')
    )
    ui.wait_version(page, hand.version + 3)
    after = ui.rack_layout(page)
    assert after[16:19] == ["Y1", "Y2", "Y3"] and after[lone_y1] is None
    page.screenshot(path=str(artifacts / f"okey101-second-copies-played-{size}.png"))


def test_four_players_play_an_okey51_hand_with_opening_and_feeding(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    seed = seed_of(370)  # a short hand (20 moves) with both kinds: every move costs 4 pages
    table, users, hand = start("okey51", seed)
    eng, moves = ui.scripted_hand("okey51", seed, {"timer": 0})
    kinds = Counter(m["do"] for _, m in moves)
    assert kinds["open"] >= 2 and kinds["add"] >= 2, kinds  # the script opens and feeds
    assert eng.public_view()["result"]["ending"] == "finish"
    pages = seated_pages(chromium, daphne_live_server, table, users)
    play_by_clicks(daphne_live_server, pages, hand, eng, moves, users, artifacts / "okey51")


def test_four_players_play_an_okey101_hand_with_openings_adds_and_swaps(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    """101 Okey by clicks: 22-tile racks on two rows, openings of 101, tiles added to other
    players' melds, okeys swapped out (in a pair row too), a taken discard used at once, and
    the scoreboard as the engine scores it."""
    seed = seed_of(1003)
    table, users, hand = start("okey101", seed)
    eng, moves = ui.scripted_hand("okey101", seed, {"timer": 0})
    kinds = Counter(m["do"] for _, m in moves)
    assert kinds["open"] >= 2 and kinds["add"] >= 1 and kinds["swap"] >= 1, kinds
    assert eng.public_view()["result"]["ending"] == "finish"
    pages = seated_pages(chromium, daphne_live_server, table, users)
    assert len(ui.rack_tiles(pages[0])) == 22 and len(ui.rack_tiles(pages[1])) == 21
    play_by_clicks(daphne_live_server, pages, hand, eng, moves, users, artifacts / "okey101")


def test_a_classic_hand_ends_by_arranging_the_rack_and_dragging_the_last_tile(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    seed = seed_of(44)  # a short hand (7 moves): a draw, a take, discards and the finish
    table, users, hand = start("classic", seed)
    eng, moves = ui.scripted_hand("classic", seed, {"timer": 0})
    assert {m["do"] for _, m in moves} == {"draw", "take", "discard", "finish"}
    last_seat, last = moves[-1]
    assert last["do"] == "finish"
    # With the motion a person sees by default: the tiles slide as they are dragged.
    pages = seated_pages(chromium, daphne_live_server, table, users, motion=True)

    check = hand.engine_hand()
    replay(pages, moves[:-1], check)
    groups = finishing_groups(check, last_seat, last["tile"])
    page = pages[last_seat]
    ui.arrange(page, ui.target_layout(groups, ui.rack_tiles(page)))
    ui.finish_by_drag(page, last["tile"])
    for p in pages:
        ui.wait_version(p, len(moves))

    check_the_end(pages, eng, users)
    # The server finished with the groups as arranged on the rack (no solver needed), and
    # the scoreboard lays the finisher's rack out in those groups.
    finish = Move.objects.get(hand=hand, action__do="finish")
    assert finish.action["groups"] == groups
    shown = page.locator(f'[data-hand-over] .revealed-rack[data-seat="{last_seat}"] [data-group]')
    assert [
        shown.nth(i).locator(".tile").evaluate_all("ts => ts.map(t => t.dataset.tile)")
        for i in range(shown.count())
    ] == groups
    # The finisher is ready for the next hand: every page marks their row, and the hand waits
    # for the others.
    page.locator('[data-hand-over] [data-action="ready"]').click()
    for p in pages:
        row = p.locator("[data-hand-over] .scoreboard tbody tr").nth(last_seat)
        row.locator("[data-ready]").wait_for(timeout=15_000)
        assert p.locator("[data-hand-over] .scoreboard [data-ready]").count() == 1
    assert pages[(last_seat + 1) % 4].locator('[data-action="ready"]').is_enabled()
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


# Düz's table is classic's for the page (a closed hand; the scores differ in the engine), and
# an okey101 practice is played to a hand's end by its own journey (test_okey101_practice.py).
@pytest.mark.parametrize("variant", ["classic", "okey51", "gobek17"])
def test_practice_with_bots_reaches_the_end_of_a_hand(
    daphne_live_server: DaphneServer, chromium: Any, variant: str
) -> None:
    ensure_variants()  # a transactional test before this one flushed them
    player = make_user(f"now-{variant}")
    page = ui.signed_in_page(chromium, daphne_live_server, player)
    ui.practice(page, daphne_live_server, variant)
    assert ui.state(page)["seat"] == "0"

    while not page.locator("[data-hand-over]").count():
        if not ui.simple_turn(page):
            ui.wait_for_turn(page)
    table = Table.objects.get(seats__user=player)
    assert table.variant.key == variant
    assert Hand.objects.filter(match__table=table, status=Hand.Status.FINISHED).exists()
    ready = page.locator('[data-hand-over] [data-action="ready"]')
    if ready.count():  # more hands to come: "ready" deals the next one (the bots are ready)
        ready.click()
        page.wait_for_function(
            "() => document.querySelector('#table-live').dataset.phase !== 'over'",
            timeout=15_000,
        )
        assert Hand.objects.filter(match__table=table).count() == 2
    else:
        page.locator("[data-match-over]").wait_for()
        page.locator('[data-action="rematch"]').click()
        page.wait_for_function(
            "() => document.querySelector('#table-live').dataset.phase !== 'over'",
            timeout=15_000,
        )
        assert table.matches.count() == 2
    assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def stored_layout(hand: Hand, seat: int, want: list[str | None], timeout: float = 15.0) -> None:
    """Wait until the seat's rack arrangement stored for the hand reads ``want``."""
    deadline = time.monotonic() + timeout
    while (got := Participant.objects.get(hand=hand, position=seat).layout) != want:
        assert time.monotonic() < deadline, (got, want)
        time.sleep(0.05)


def test_the_rack_order_survives_a_reload_and_a_second_socket_gets_each_move(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    table, users, hand = start("duz", seed_of(7))
    page = at_the_table(chromium, daphne_live_server, users[0], table)
    # Drag the first tile to the second row, and the last one to the far left.
    before = ui.rack_layout(page)
    first = before.index(next(t for t in before if t))
    ui.drag_tile(page, first, 20)
    last = max(i for i, t in enumerate(ui.rack_layout(page)) if t and i < 16)
    ui.drag_tile(page, last, 0)
    arranged = ui.rack_layout(page)
    assert arranged != before
    stored_layout(hand, 0, arranged)  # the arrangement reached the server

    second = page.context.new_page()  # the same player, a second tab
    ui.watch_errors(second)
    ui.open_table(second, daphne_live_server, table.pk)
    assert ui.rack_layout(second) == arranged

    page.reload()
    ui.wait_for_socket(page)  # keys pressed before the page's script is ready would be lost
    ui.wait_for_rack_frame(page)  # and a tile selected before the rack comes again
    assert ui.rack_layout(page) == arranged

    # Seat 0 starts with 15 tiles: a discard from the keyboard (focus, space, x).
    tile = page.locator("#rack-area .slot").nth(0).locator(".tile")
    code = tile.get_attribute("data-tile")
    tile.focus()
    page.keyboard.press(" ")
    page.keyboard.press("x")
    ui.wait_version(second, 1)
    ui.wait_version(page, 1)
    # Both tabs show the rack as arranged, less the discarded tile, gap kept where it was.
    expected = [None if i == 0 else t for i, t in enumerate(arranged)]
    assert ui.rack_layout(second) == expected
    assert ui.rack_layout(page) == expected
    assert Counter(ui.rack_tiles(page))[code] == Counter(t for t in arranged if t)[code] - 1
    for p in (page, second):
        assert p.okey_errors == []


def test_the_turkish_keys_play_and_c_stands_for_c_cedilla(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """The move keys follow the page's language ("Çek" is Ç, "At" is T), and a key typed
    without its letter's marks counts: a keyboard without ç draws with c."""
    table, users, _ = start("duz", seed_of(7))
    page = ui.signed_in_page(chromium, daphne_live_server, users[1])
    page.context.add_cookies(
        [{"name": "django_language", "value": "tr", "url": daphne_live_server.url}]
    )
    ui.open_table(page, daphne_live_server, table.pk)
    assert page.locator('[data-action="draw"] kbd').inner_text() == "Ç"
    ui.wait_for_rack_frame(page)

    # Seat 0 (15 tiles) discards, from its own page.
    assert ui.simple_turn(at_the_table(chromium, daphne_live_server, users[0], table))
    ui.wait_version(page, 1)
    page.keyboard.press("c")  # draw
    ui.wait_version(page, 2)
    assert len(ui.rack_tiles(page)) == 15
    tile = page.locator("#rack-area .slot .tile").first
    tile.focus()
    page.keyboard.press(" ")
    page.keyboard.press("t")  # "At": discard
    ui.wait_version(page, 3)
    assert len(ui.rack_tiles(page)) == 14
    assert ui.error_text(page) == "" and page.okey_errors == []


def test_another_seats_move_leaves_the_rack_being_arranged_alone(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """Another seat's move redraws the table, not the rack: the rack's drag handlers (SortableJS)
    are the same ones after it, so a tile the player is dragging at that moment is not dropped
    from under the pointer, and a drag right after it lands. A "Fair deal" panel the player has
    opened stays open through it."""
    table, users, hand = start("duz", seed_of(7))
    page = at_the_table(chromium, daphne_live_server, users[1], table, motion=True)
    ui.wait_for_rack_frame(page)  # it makes the rack's handlers again
    page.evaluate(
        "() => { window.rackSortables = Array.from(document.querySelectorAll('#rack-area .slot'))"
        ".map(s => Sortable.get(s)); }"
    )
    assert page.evaluate("() => window.rackSortables.every(Boolean)")
    page.locator(".fair-deal summary").click()

    # Seat 0 (15 tiles) discards, from its own page.
    mover = at_the_table(chromium, daphne_live_server, users[0], table)
    # Tiles slide into place, except for a player who asked for reduced motion (the mover).
    animation = "p => Sortable.get(document.querySelector('#rack-area .slot')).options.animation"
    assert (page.evaluate(animation), mover.evaluate(animation)) == (120, 0)
    assert ui.simple_turn(mover)
    ui.wait_version(page, 1)
    same = page.evaluate(
        "() => Array.from(document.querySelectorAll('#rack-area .slot'))"
        ".every((s, i) => Sortable.get(s) === window.rackSortables[i] && s.isConnected)"
    )
    assert same, "the rack's drag handlers were made again for another seat's move"
    assert page.locator(".fair-deal").get_attribute("open") is not None, "Fair deal closed"
    before = ui.rack_layout(page)
    source = before.index(next(t for t in before if t))
    ui.drag_tile(page, source, 20)
    after = ui.rack_layout(page)
    assert after[20] == before[source] and after[source] is None, (before, after)
    assert page.okey_errors == []


def test_a_tile_in_hand_when_another_seats_move_arrives_stays_in_hand(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """The player has pressed a tile to drag it when another seat's move redraws the table (its
    discard and finish spots with it): the tile stays in hand, and the drag goes on. Making the
    spots' drag handlers again used to drop it: SortableJS ends the drag in progress when any
    of its lists is taken down, and the drag's start then failed ("cannot read cloneNode")."""
    table, users, hand = start("duz", seed_of(7))
    page = at_the_table(chromium, daphne_live_server, users[1], table)
    ui.wait_for_rack_frame(page)
    ui.settled(page)
    ui.rack_at_rest(page)
    page.evaluate("document.querySelector('#rack-area').scrollIntoView({block: 'center'})")
    tile = page.locator("#rack-area .slot .tile").first
    code = tile.get_attribute("data-tile")
    box = tile.bounding_box()
    assert box and code
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()  # the tile is in hand (SortableJS has it), not moved yet
    in_hand = "() => Sortable.dragged ? Sortable.dragged.dataset.tile : null"
    assert page.evaluate(in_hand) == code

    # Seat 0 discards meanwhile, through the site's move address (a click in another page of
    # this browser would end the drag itself, as a click in another window would).
    discard = engine.format_tile(hand.engine_hand().racks[0][0])
    move = {"type": "move", "hand": hand.pk, "move": {"do": "discard", "tile": discard},
            "expected_version": 0, "client_move_id": "meanwhile"}  # fmt: skip
    token = "t" * 32  # a CSRF secret of the test's own, as cookie and header
    request = urllib.request.Request(
        f"{daphne_live_server.url}/tables/{table.pk}/move/",
        urllib.parse.urlencode({"payload": json.dumps(move)}).encode(),
        headers={"Cookie": f"{cookie_for(users[0])}; csrftoken={token}", "X-CSRFToken": token},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200
    ui.wait_version(page, 1)  # the table was drawn again while the tile is in hand
    assert page.evaluate(in_hand) == code, "the table's new frame dropped the tile in hand"
    page.mouse.up()
    page.wait_for_function("() => !Sortable.dragged")
    # Let go, the old spots' handlers go, and a drag now lands as ever.
    before = ui.rack_layout(page)
    source = before.index(next(t for t in before if t))
    ui.drag_tile(page, source, 20)
    assert ui.rack_layout(page)[20] == before[source]
    assert page.okey_errors == []


def test_the_sort_buttons_stand_the_rack_as_the_engine_sorts_it(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    table, users, hand = start("classic", seed_of(9))
    view = hand.engine_hand().view(1)
    page = ui.signed_in_page(chromium, daphne_live_server, users[1])
    ui.open_table(page, daphne_live_server, table.pk)
    for by in layout.SORTS:
        want = layout.sorted_layout(view["rack"], view["okey"], by)
        assert ui.rack_layout(page) != want, by
        page.locator(f'#rack-area [data-sort="{by}"]').click()
        assert ui.wait_layout(page, want) == want, by

    # The last sort is kept as the seat's arrangement: a reload shows it.
    stored_layout(hand, 1, want)
    page.reload()
    ui.wait_for_socket(page)
    assert ui.rack_layout(page) == want
    assert page.okey_errors == []


def test_a_spectator_sees_no_rack(daphne_live_server: DaphneServer, chromium: Any) -> None:
    table, users, hand = start("okey51", seed_of(8))
    player = at_the_table(chromium, daphne_live_server, users[0], table)
    spectator = chromium.new_context().new_page()
    ui.watch_errors(spectator)
    frames: list[str] = []
    spectator.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))),
    )
    ui.open_table(spectator, daphne_live_server, table.pk)
    assert ui.state(spectator)["seat"] == ""
    assert spectator.locator("#rack-area .tile").count() == 0

    ui.simple_turn(player)  # seat 0 discards
    ui.wait_version(spectator, 1)
    assert spectator.locator("#rack-area .tile").count() == 0
    assert spectator.locator(".tile[aria-pressed]").count() == 0
    assert frames and not [f for f in frames if 'class="rack"' in f or "aria-pressed" in f]
    assert spectator.okey_errors == []


def test_the_table_fits_a_phone_and_a_desktop(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    table, users, hand = start("okey51", seed_of(9))
    for name, viewport in (("phone", ui.PHONE), ("desktop", ui.DESKTOP)):
        page = ui.signed_in_page(chromium, daphne_live_server, users[0], viewport)
        ui.open_table(page, daphne_live_server, table.pk)
        page.screenshot(path=str(artifacts / f"table-{name}.png"), full_page=True)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"{name}: the page scrolls sideways ({width}px)"
        boxes = page.locator("#rack-area .tile").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return [r.left, r.right, r.width, r.height]; })"
        )
        assert boxes and all(
            0 <= left and right <= viewport["width"] for left, right, _, _ in boxes
        )
        # A phone keeps both rows of the stand side by side: 16 tiles a row, about 22 × 31 px.
        assert min(w for _, _, w, _ in boxes) >= 20 and min(h for *_, h in boxes) >= 28
        page.context.close()


# Keeps every WebSocket the page opens, and can swallow what the page sends (a message lost
# on a dying connection).
SOCKET_TAP = """
window.__okeySockets = [];
window.__okeySent = [];
window.__okeySwallow = false;
const NativeWebSocket = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new NativeWebSocket(...args);
  window.__okeySockets.push(ws);
  const send = ws.send.bind(ws);
  ws.send = (data) => {
    window.__okeySent.push(String(data));
    if (!window.__okeySwallow) send(data);
  };
  return ws;
};
Object.assign(window.WebSocket, NativeWebSocket);
window.WebSocket.prototype = NativeWebSocket.prototype;
"""


def test_a_discard_with_no_tile_or_several_selected_says_so_and_sends_nothing(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    table, users, hand = start("duz", seed_of(13))
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    page.add_init_script(SOCKET_TAP)
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if "/move/" in r.url else None)
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["phase"] == "discard"  # seat 0 starts with 15 tiles
    ui.click_action(page, "discard")
    assert ui.error_text(page) == "Select one tile first."
    ui.select(page, [0, 1])
    ui.click_action(page, "discard")
    assert ui.error_text(page) == "Select just one tile."
    # The page refused both on the spot: no move left it, over the socket or by a form.
    sent = page.evaluate("() => window.__okeySent")
    assert not [m for m in sent if '"move"' in m], sent
    assert posted == []
    assert Hand.objects.get(pk=hand.pk).version == 0
    assert page.okey_errors == []


def test_a_move_lost_with_the_connection_is_reported_and_never_played_late(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    table, users, hand = start("duz", seed_of(12))
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    page.add_init_script(SOCKET_TAP)
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["phase"] == "discard"  # seat 0 starts with 15 tiles

    # The discard leaves the page but never reaches the server; then the connection drops.
    page.evaluate("() => { window.__okeySwallow = true; }")
    ui.select(page, [0])
    ui.click_action(page, "discard")
    page.evaluate("() => { window.__okeySwallow = false; window.__okeySockets.at(-1).close(); }")
    page.wait_for_function(
        "() => document.querySelector('#move-error').textContent.includes('connection dropped')",
        timeout=10_000,
    )
    # The move was never played, and nothing plays it late: the page, opened again, shows
    # the table as it is, and the player's next move is the hand's first.
    assert Hand.objects.get(pk=hand.pk).version == 0
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["version"] == "0"
    assert ui.simple_turn(page)
    assert Hand.objects.get(pk=hand.pk).version == 1
    assert page.okey_errors == []


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_tile_dropped_on_another_is_inserted_and_a_discard_is_taken_by_tap_or_drag(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str
) -> None:
    """On the stand a tile dropped onto another takes its place and the tiles up to the free
    slot shift along (a move within a group reorders it); the previous player's discard is
    taken with a tap on it, or by dragging it onto the stand, where it then stands."""
    viewport = ui.PHONE if size == "phone" else ui.DESKTOP
    table, users, hand = start("duz", seed_of(14))
    first = in_thread(lambda: hand.view_for(0)["rack"][0])
    in_thread(lambda: actions.play(hand, 0, {"do": "discard", "tile": first}, by=users[0]))
    page = ui.signed_in_page(chromium, daphne_live_server, users[1], viewport)
    ui.open_table(page, daphne_live_server, table.pk)
    before = ui.rack_layout(page)
    assert before[:14] == [t for t in before if t is not None] and before[14:16] == [None, None]

    ui.drop_on(page, 0, 2)  # within the group: the first goes third, the two before it shift
    want = [before[1], before[2], before[0], *before[3:]]
    assert ui.wait_layout(page, want) == want
    ui.drop_on(page, 13, 5)  # the last tile into the sixth place: those from there shift right
    want = [*want[:5], want[13], *want[5:13], *want[14:]]
    assert ui.wait_layout(page, want) == want
    # The stand as arranged is the server's too.
    stored = in_thread(lambda: Participant.objects.get(hand=hand, position=1).layout)
    deadline = time.monotonic() + 5
    while stored != want and time.monotonic() < deadline:
        time.sleep(0.1)
        stored = in_thread(lambda: Participant.objects.get(hand=hand, position=1).layout)
    assert stored == want

    # A tap on the previous player's discard takes it.
    page.locator('.discard-spot.takeable [data-action="take"]').click()
    ui.wait_version(page, 2)
    assert Counter(ui.rack_tiles(page)) == Counter([*before[:14], first])
    page.screenshot(path=str(artifacts / f"duz-discard-taken-by-tap-{size}.png"))
    thrown = ui.rack_layout(page)[0]
    ui.select(page, [0])
    ui.click_action(page, "discard")
    ui.wait_version(page, 3)

    # The next player drags it onto the last slot of the stand's second row.
    nxt = ui.signed_in_page(chromium, daphne_live_server, users[2], viewport)
    ui.open_table(nxt, daphne_live_server, table.pk)
    ui.rack_at_rest(nxt)
    nxt.evaluate("document.querySelector('#rack-area').scrollIntoView({block: 'center'})")
    # A frame that redraws the table while the discard is dragged (the page's own arrival
    # sends one) takes the dragged tile from under the pointer, and the drag is lost: the
    # player drags again, as a person would (docs/ARCHITECTURE.md, "Drags and frames").
    for attempt in range(3):
        ui.settled(nxt)
        spot = nxt.locator(".discard-spot.takeable .take-discard")
        spot.drag_to(nxt.locator("#rack-area .slot").nth(31))
        try:
            ui.wait_version(nxt, 4, timeout=5_000)
            break
        except PlaywrightTimeout:
            assert attempt < 2, "the discard dragged onto the stand was never taken"
    nxt.wait_for_function(
        "t => document.querySelectorAll('#rack-area .slot')[31]"
        " .querySelector(`[data-tile='${t}']`)",
        arg=thrown,
        timeout=5_000,
    )
    nxt.screenshot(path=str(artifacts / f"duz-discard-taken-by-drag-{size}.png"))
    assert page.okey_errors == [] and nxt.okey_errors == []


@pytest.mark.parametrize(("size", "language"), [("desktop", "en"), ("phone", "tr")])
def test_an_opening_arranged_in_one_tap_with_its_total_shown_while_selecting(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str, language: str
) -> None:
    """A 101 rack standing in a jumble: "Arrange runs and sets" lays out its melds at once,
    the total of the tiles selected shows against the bar as they are picked ("55 / 101",
    then "157 / 101", marked reached), each group on the stand is marked valid or not, and the
    opening goes through."""
    melds = [["R9", "R10", "R11", "R12", "R13"], ["Y13", "K13", "B13"]]
    melds += [["B9", "B10", "B11"], ["K10", "K11", "K12"]]
    jumble = ["B10", "R12", "K2", "Y13", "K11", "R9", "B9", "K13", "R11", "Y1", "B11"]
    jumble += ["R10", "K10", "B13", "R13", "K12"]
    assert sorted(jumble) == sorted([*(t for m in melds for t in m), "Y1", "K2"])
    hand, users, lay = in_thread(
        lambda: rack_of_rows("okey101", 108, [jumble[:15]], [jumble[15:]], options={"timer": 0})
    )
    table = in_thread(lambda: Table.objects.get(matches__hands=hand))
    page = ui.signed_in_page(
        chromium, daphne_live_server, users[0], ui.PHONE if size == "phone" else ui.DESKTOP
    )
    ui.in_language(page, daphne_live_server, language)
    ui.open_table(page, daphne_live_server, table.pk)
    arrange = page.locator('#rack-area [data-sort="melds"]')
    assert arrange.inner_text() == ("Perleri diz" if language == "tr" else "Arrange runs and sets")
    arrange.click()
    view = in_thread(lambda: hand.view_for(0))
    want = arranged(view["rack"], view["okey"], False)
    assert ui.wait_layout(page, want) == want
    groups = layout.slot_groups(want)
    opening = [g for g in groups if len(g) >= 3]
    assert len(opening) == 4 and groups[:4] == opening  # the melds first, the rest after

    def worth(slots: list[list[int]]) -> int:
        return int(engine.weigh(view, [[want[i] or "" for i in g] for g in slots])["total"])

    weight = page.locator("#rack-weight")
    ui.select(page, opening[0])
    page.wait_for_function(
        "t => document.querySelector('#rack-weight').textContent === t",
        arg=f"{worth(opening[:1])} / 101",
    )
    assert "reached" not in (weight.get_attribute("class") or "")
    ui.select(page, [i for g in opening[1:] for i in g])
    assert worth(opening) == 157
    page.wait_for_function(
        "() => document.querySelector('#rack-weight').textContent === '157 / 101'"
    )
    assert "reached" in (weight.get_attribute("class") or "")
    # The stand's groups are marked: the four melds valid; Y1 beside K2 is marked as none
    # once one of them is selected (a group nobody works on is left unmarked).
    ok = page.locator("#rack-area .slot.group-ok").count()
    assert ok == sum(len(g) for g in opening)
    assert page.locator("#rack-area .slot.group-bad").count() == 0
    ui.select(page, [groups[4][0]])
    page.wait_for_function(
        "() => document.querySelectorAll('#rack-area .slot.group-bad').length === 2"
    )
    page.locator("#rack-area .slot").nth(groups[4][0]).locator(".tile").click()  # unselect
    page.wait_for_function(
        "() => document.querySelector('#rack-weight').textContent === '157 / 101'"
    )
    page.screenshot(path=str(artifacts / f"okey101-opening-total-{size}-{language}.png"))
    ui.click_action(page, "open")
    ui.wait_version(page, hand.version + 1)
    assert ui.error_text(page) == ""
    assert page.okey_errors == []


def test_after_a_move_made_from_the_keyboard_the_focus_stays_on_the_rack(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """A keyboard player selects a tile with Space and throws it with its key: the rack is
    drawn again without that tile, and the focus is back on the rack (the next tile), not
    lost to the page."""
    table, users, hand = start("duz", seed_of(15))
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    ui.open_table(page, daphne_live_server, table.pk)
    first = page.locator("#rack-area .slot").nth(0).locator(".tile")
    first.focus()
    page.keyboard.press("ArrowRight")  # to the second tile
    page.keyboard.press("Space")
    page.keyboard.press("x")
    ui.wait_version(page, 1)
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.closest('#rack-area .rack')",
        timeout=5_000,
    )
    focused = page.evaluate("() => document.activeElement.dataset.tile")
    assert focused in ui.rack_tiles(page)
    # And after the page's own draw, played by its button with the mouse, too.
    assert page.okey_errors == []


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_finished_practice_match_offers_practice_again(
    daphne_live_server: DaphneServer, chromium: Any, size: str
) -> None:
    """At the end of a practice match the player is offered the same again: "Practice
    again" seats them with bots of the same level at once, where "New game" would have sent
    them to wait for strangers."""
    from tests.play import play_hand

    player = in_thread(lambda: make_user(f"practising-{size}"))

    def finished() -> Table:
        ensure_variants()
        match = actions.play_now(player, "duz", level="greedy", options={"assisted": True})
        play_hand(match.hands.get(), [player, "bot", "bot", "bot"], random.Random(3))
        return Table.objects.get(pk=match.table_id)

    daphne_live_server.pause_clock()  # the server's clock would play the bots meanwhile
    try:
        table = in_thread(finished)
    finally:
        daphne_live_server.resume_clock()
    page = ui.signed_in_page(
        chromium, daphne_live_server, player, ui.PHONE if size == "phone" else ui.DESKTOP
    )
    ui.open_table(page, daphne_live_server, table.pk)
    page.locator("[data-match-over]").wait_for()
    assert page.locator('[data-action="new-game"]').count() == 0
    ui.settled(page)  # a frame may still redraw the screen (a click scrolls to the button)
    again = page.locator('[data-action="practice-again"]')
    assert again.inner_text() == "Practice again"
    with page.expect_navigation(timeout=15_000):
        again.click()
    page.wait_for_url("**/tables/*/", timeout=15_000)
    assert f"/tables/{table.pk}/" not in page.url
    new = in_thread(lambda: Table.objects.exclude(pk=table.pk).get(seats__user=player))
    seats = in_thread(lambda: list(new.seats.order_by("position")))
    assert new.variant.key == "duz" and not new.quick
    assert new.options["assisted"] is True  # the options practised with, kept
    assert [s.bot_level for s in seats[1:]] == ["greedy"] * 3
    assert in_thread(lambda: new.matches.get().status) == "playing"
    assert page.okey_errors == []


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_options_a_player_chooses_in_the_lobby_make_their_table_and_stay_chosen(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str
) -> None:
    """A 101 regular opens the options beside "Practice with bots", chooses three hands and
    partners, and practises; the table is made so, and back in the lobby the same choices
    are offered first."""
    player = in_thread(lambda: make_user(f"regular-{size}"))
    in_thread(ensure_variants)
    page = ui.signed_in_page(
        chromium, daphne_live_server, player, ui.PHONE if size == "phone" else ui.DESKTOP
    )
    page.goto(f"{daphne_live_server.url}/")
    options = page.locator('[data-play-options="okey101"]')
    options.locator("summary").click()
    options.locator('select[name="opt-okey101-hands"]').select_option("3")
    options.locator('select[name="opt-okey101-partners"]').select_option("1")
    options.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"lobby-okey101-options-{size}.png"))
    page.locator('[data-action="practice"][data-variant="okey101"]').click()
    page.wait_for_url("**/tables/*/")
    table = in_thread(lambda: Table.objects.get(seats__user=player))
    assert (table.options["hands"], table.options["partners"]) == (3, True)
    page.goto(f"{daphne_live_server.url}/")
    options = page.locator('[data-play-options="okey101"]')
    assert options.locator('select[name="opt-okey101-hands"]').input_value() == "3"
    assert options.locator('select[name="opt-okey101-partners"]').input_value() == "1"
    assert page.okey_errors == []
