"""101 Okey from "Practice with bots" on a phone (390×844): the player opens with melds worth
101, adds a tile to a meld on the table, and plays the hand to its end by taps and
drags, while the server's clock plays the three bots.

Practice deals a fresh secret seed, so the test plays what a person would: it reads its own
seat's view (the stored hand, as the page shows it) and makes the moves a player who is trying
to open would make. A rack far from the bar at the first turn is a hand the player leaves for a
new practice table (as a person may); the opening keeps back one tile of a meld of four or more
when the rest still reaches the bar, so that an add follows the opening.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from games import engine
from games.catalog import ensure_variants
from games.engine import solver
from games.engine.bots import moves_in_order
from games.engine.selfplay import candidate_moves
from games.engine.tiles import parse_tile
from games.models import Hand, Move, Table
from tests import ui
from tests.live_daphne import DaphneServer
from tests.users import make_user

SEAT = 0
# A first rack whose best melds are worth this much opens within the hand nine times in ten
# (engine self-play of this policy against greedy bots); three racks in ten reach it.
NEAR_THE_BAR = 90
HANDS = 8  # hands at most: the first near the bar, the others as dealt (all eight miss < 1e-4)
TRIES = 40  # practice tables at most (the chance that none is near the bar is below 1e-6)


def stored_hand(table: Table) -> Hand:
    return Hand.objects.filter(match__table=table).order_by("-pk").first()  # type: ignore[return-value]


def seat_view(page: Any, table: Table) -> tuple[engine.Hand, dict[str, Any]]:
    """The engine's hand and this seat's view at the version the page shows."""
    shown = ui.version(page)
    hand = stored_hand(table)
    assert hand.version == shown, (hand.version, shown)
    eng = hand.engine_hand()
    return eng, eng.view(SEAT)


def wait_for_my_turn(page: Any) -> bool:
    """Wait until the seat is to move (True) or the hand is over (False)."""
    page.wait_for_function(
        """s => { const d = document.querySelector('#table-live').dataset;
                  return d.phase === 'over' || d.turn === String(s); }""",
        arg=SEAT,
        timeout=60_000,
    )
    return ui.state(page)["phase"] != "over"


def opening_with_one_held_back(eng: engine.Hand) -> tuple[list[list[str]], str] | None:
    """Melds worth the bar with one real tile of a meld of four or more kept back, and that
    tile, when the engine then accepts adding it to that meld; else None."""
    view = eng.view(SEAT)
    rack = [parse_tile(t) for t in view["rack"]]
    best = solver.best_opening(rack, parse_tile(view["okey"]), False)
    if not best.reaches(view["opening_bar"]):
        return None
    for i, meld in enumerate(best.melds):
        if len(meld) < 4:
            continue
        for j, held in enumerate(meld):
            if ":" in held:
                continue  # a wild okey stands for a tile: keep real tiles back
            melds = [list(m) for m in best.melds]
            melds[i] = [t for k, t in enumerate(meld) if k != j]
            trial = eng.copy()
            if not trial.play(SEAT, {"do": "open", "melds": melds}).ok:
                continue
            adds = candidate_moves(trial.view(SEAT))
            if any(m["do"] == "add" and m["tile"] == held for m in adds):
                return melds, held
    return None


def playable(move: dict[str, Any]) -> bool:
    """Moves this test plays by taps: not a finish (its groups are another test's) and not a
    pair laid onto a pairs row."""
    return move["do"] != "finish" and move.get("onto") is None


def next_move(eng: engine.Hand, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    for move in moves_in_order(view, "greedy", rng, None):
        if playable(move) and eng.copy().play(SEAT, move).ok:
            return move
    raise AssertionError(f"no move to play at {view['rack']}")


def play(page: Any, move: dict[str, Any], shots: Path) -> None:
    """The move by taps and drags; the table after the player's first opening and first add
    is saved as a screenshot (``okey101-practice-open-phone.png`` ...)."""
    before = ui.version(page)
    ui.play_move(page, move)
    try:
        ui.wait_version(page, before + 1)
    except Exception as exc:
        raise AssertionError(
            f"{move} did not land: {ui.error_text(page)!r}, frames {ui.frames(page)}"
        ) from exc
    shot = shots / f"okey101-practice-{move['do']}-phone.png"
    if move["do"] in ("open", "add") and not shot.exists():
        page.evaluate("window.scrollTo(0, 0)")  # the drags scrolled the rack to the middle
        page.screenshot(path=str(shot))


def test_a_player_opens_and_adds_in_an_okey101_practice_on_a_phone(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    ensure_variants()
    player = make_user("practice-101")
    page = ui.signed_in_page(chromium, daphne_live_server, player, ui.PHONE)
    rng = random.Random(101)
    for _ in range(TRIES):
        ui.practice(page, daphne_live_server, "okey101")
        assert ui.state(page)["seat"] == str(SEAT)
        table = Table.objects.get(seats__user=player, status=Table.Status.PLAYING)
        assert wait_for_my_turn(page)
        if ui.state(page)["phase"] == "draw":
            before = ui.version(page)
            ui.click_action(page, "draw")
            ui.wait_version(page, before + 1)
        eng, view = seat_view(page, table)
        assert len(ui.rack_tiles(page)) == 22  # both rows of the stand on a phone
        rack = [parse_tile(t) for t in view["rack"]]
        if solver.best_opening(rack, parse_tile(view["okey"]), False).total >= NEAR_THE_BAR:
            break
        # Far from the bar: leave (confirmed: a bot takes the seat, the match ends) for a new
        # deal.
        page.once("dialog", lambda dialog: dialog.accept())
        page.locator('#table-live [data-action="leave"]').first.click()
        page.wait_for_url(f"{daphne_live_server.url}/")
    else:
        raise AssertionError(f"no practice rack near the bar in {TRIES} deals")

    for old in artifacts.glob("okey101-practice-*-phone.png"):
        old.unlink()
    page.screenshot(path=str(artifacts / "okey101-practice-start-phone.png"))
    for _hand in range(HANDS):
        # One hand: open (keeping a tile back to add when the melds allow), then play on.
        while wait_for_my_turn(page):
            eng, view = seat_view(page, table)
            if view["has_tile"] and view["opened"][SEAT] is None:
                plan = opening_with_one_held_back(eng)
                if plan is not None:
                    melds, held = plan
                    play(page, {"do": "open", "melds": melds}, artifacts)
                    eng, view = seat_view(page, table)
                    add = next(
                        m for m in candidate_moves(view) if m["do"] == "add" and m["tile"] == held
                    )
                    play(page, add, artifacts)
                    continue
            play(page, next_move(eng, view, rng), artifacts)
        page.locator("[data-hand-over]").wait_for()
        hand = stored_hand(table)
        mine = [
            m.action["do"]
            for m in Move.objects.filter(hand=hand, seat=SEAT, user=player).order_by("number")
        ]
        opened_and_added = "open" in mine and "add" in mine[mine.index("open") :]
        if opened_and_added:
            break
        # Not this time: the next hand of the match (the bots are ready), or a new match.
        ready = page.locator('[data-hand-over] [data-action="ready"]')
        if ready.count():
            ready.click()
        else:
            page.locator('[data-hand-over] [data-action="rematch"]').click()
        page.wait_for_function(
            "() => document.querySelector('#table-live').dataset.phase !== 'over'",
            timeout=15_000,
        )
    else:
        raise AssertionError(f"no opening and add in {HANDS} hands")
    page.screenshot(path=str(artifacts / "okey101-practice-hand-over-phone.png"))

    # The hand ended (a finish or a dry wall) and the page says so; the player's opening and add
    # are in the stored log, as moves of theirs.
    assert hand.status == Hand.Status.FINISHED
    assert Counter(mine)["open"] == 1
    assert page.locator("[data-hand-over] .scoreboard").is_visible()
    assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
