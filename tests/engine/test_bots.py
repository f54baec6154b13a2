"""Bots: every level plays legal hands in every variant, from its seat's view alone."""

import ast
import random
from pathlib import Path

import pytest

from games.engine import VARIANTS as ENGINE_VARIANTS
from games.engine import Hand, deal, parse_tile
from games.engine.bots import LEVELS, choose_moves, play_turn
from games.engine.tiles import format_tile

VARIANTS = list(ENGINE_VARIANTS)
BOTS = Path(__file__).resolve().parents[2] / "games" / "engine" / "bots.py"


def seed(n: int) -> str:
    return f"{random.Random(n).getrandbits(256):064x}"


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("level", LEVELS)
def test_it_plays_whole_hands(variant: str, level: str) -> None:
    for n in range(2):
        hand = Hand.from_seed(variant, seed(n))
        rng = random.Random(n)
        while not hand.over:
            s = hand.turn
            play_turn(
                lambda s=s, h=hand: h.view(s),
                lambda m, s=s, h=hand: h.play(s, m).ok,
                level,
                rng,
                # The expert's search is cut short: this is about legal play, not its strength.
                budget_ms=5,
            )
        assert hand.result["hand_scores"] is not None


def test_it_sees_only_the_view() -> None:
    # The bots module never touches a Hand: it is given a view (a dict) and nothing else.
    tree = ast.parse(BOTS.read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert "Hand" not in imported
    # Two hands that differ only in what seat 0 cannot see get the same decisions.
    a = Hand.from_deal("okey51", deal(seed(1)))
    racks = [list(r) for r in a.racks]
    others = racks[1] + racks[2] + racks[3] + list(a.pile)
    random.Random(3).shuffle(others)
    b = Hand.new(
        "okey51",
        [racks[0], others[:14], others[14:28], others[28:42]],
        others[42:],
        a.indicator,
    )
    assert a.view(0) == b.view(0)
    for level in ("greedy", "strong"):
        assert choose_moves(a.view(0), level, random.Random(0)) == choose_moves(
            b.view(0), level, random.Random(0)
        )


def _hand(variant: str, racks: list[str], pile: str, indicator: str) -> Hand:
    return Hand.new(
        variant,
        [[parse_tile(t) for t in r.split()] for r in racks],
        [parse_tile(t) for t in pile.split()],
        parse_tile(indicator),
    )


OPENER = "R10 R11 R12 B10 K10 Y10 K1 Y3 B5 R7 K9 Y12 B2 Y7 K5"
RACK = "R1 R2 R3 B4 B5 B6 K7 K8 K9 Y9 Y10 Y11 Y13 K13"
RACK2 = "B11 B12 B13 K1 K2 K3 R5 R6 R7 Y4 Y5 Y6 B1 B8"
RACK3 = "R8 R9 K11 K12 Y1 Y2 B3 B7 B9 R4 K4 Y8 K6 R13"


def test_greedy_opens_as_soon_as_it_can_and_never_throws_a_penalty() -> None:
    hand = _hand("okey51", [OPENER, RACK, RACK2, RACK3], "Y2 B3", "Y5")
    moves = choose_moves(hand.view(0), "greedy", random.Random(0))
    assert moves[0]["do"] == "open"
    assert hand.play(0, moves[0]).ok  # R10-R12 and the 10s: 33 + 40 = 73
    discards = [m for m in choose_moves(hand.view(0), "greedy") if m["do"] == "discard"]
    first = parse_tile(discards[0]["tile"])
    # R9 or R13 would feed the run, a 10 of the missing colour... none of those first.
    assert format_tile(first) not in ("R9", "R13")


def test_greedy_takes_a_discard_only_when_it_can_use_it() -> None:
    hand = _hand("okey51", [OPENER, RACK, RACK2, RACK3], "Y2 B3", "Y5")
    hand.play(0, {"do": "discard", "tile": "K1"})  # seat 1 cannot open with K1
    assert choose_moves(hand.view(1), "greedy")[0]["do"] == "draw"
    hand2 = _hand("okey51", [OPENER, RACK, RACK2, RACK3], "Y2 B3", "Y5")
    hand2.play(0, {"do": "discard", "tile": "Y12"})  # Y9-Y13 with the 9s... opens 51+
    first = choose_moves(hand2.view(1), "greedy")[0]
    assert first["do"] in ("take", "draw")


def test_greedy_finishes_a_closed_hand_when_it_can() -> None:
    racks = [
        "R1 R2 R3 R4 B4 B5 B6 K7 K8 K9 Y9 Y10 Y11 Y12 K1",
        "R5 R6 R7 B7 B8 B9 K1 K2 K3 Y1 Y2 Y3 R12 K12",
        "R8 R9 R10 B10 B11 B12 K4 K5 K6 Y4 Y5 Y6 R13 B1",
        "R4 K10 K11 Y7 Y8 B2 B3 R11 Y12 K12 R12 B1 Y1 K4",
    ]
    hand = _hand("classic", racks, "K5 R3", "B8")
    first = choose_moves(hand.view(0), "greedy")[0]
    assert first["do"] == "finish"
    assert hand.play(0, first).ok


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["okey51", "gobek17", "okey101"])
def test_the_lazy_order_is_the_ranked_order(variant: str) -> None:
    """play_turn takes greedy and strong moves lazily (the discards ranked only when reached):
    the same moves in the same order as choose_moves."""
    from games.engine.heuristics import Ranker
    from games.engine.selfplay import candidate_moves

    compared = 0
    for n in range(3):
        hand = Hand.from_seed(variant, seed(n + 40))
        rng = random.Random(n)
        while not hand.over and compared < 120:
            view = hand.view(hand.turn)
            moves = candidate_moves(view)
            for strong in (False, True):
                ranker = Ranker(view, strong)
                assert list(ranker.lazily(moves)) == ranker.ranked(moves)
            compared += 1
            turn(hand, rng)
    assert compared


def turn(hand: Hand, rng: random.Random) -> None:
    """The seat on turn's whole turn, greedy."""
    seat = hand.turn
    play_turn(lambda: hand.view(seat), lambda m: hand.play(seat, m).ok, "greedy", rng)
