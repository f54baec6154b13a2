"""The expert bot: it plays from its seat's view alone, replays the same given its seed, plays
legal hands in every variant, and knows a few things a good player knows."""

import ast
import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from games.engine import Hand, commitment, parse_tile
from games.engine import expert as expert_module
from games.engine.belief import Belief
from games.engine.bots import choose_moves, play_turn
from games.engine.expert import expert_moves

VARIANTS = ["classic", "duz", "okey51", "gobek17", "okey101"]
ENGINE = Path(__file__).resolve().parents[2] / "games" / "engine"


def seed(n: int) -> str:
    return f"{random.Random(n).getrandbits(256):064x}"


def hand_of(variant: str, racks: list[str], pile: str, indicator: str) -> Hand:
    return Hand.new(
        variant,
        [[parse_tile(t) for t in r.split()] for r in racks],
        [parse_tile(t) for t in pile.split()],
        parse_tile(indicator),
    )


def played(variant: str, n: int, turns: int) -> Hand:
    """A hand some turns in, the seats playing greedy."""
    hand = Hand.from_seed(variant, seed(n))
    rng = random.Random(n)
    for _ in range(turns):
        if hand.over:
            break
        s = hand.turn
        play_turn(lambda s=s: hand.view(s), lambda m, s=s: hand.play(s, m).ok, "greedy", rng)
    return hand


def hidden_changed(hand: Hand, rng: random.Random) -> Hand:
    """The same hand with everything the seat on turn cannot see changed: the other racks and
    the pile dealt again from their tiles (counts kept), and another seed."""
    state = copy.deepcopy(hand.to_state())
    me = hand.turn
    others = [s for s in range(hand.players) if s != me]
    pool = [t for s in others for t in state["racks"][s]] + list(state["pile"])
    rng.shuffle(pool)
    for s in others:
        k = len(state["racks"][s])
        state["racks"][s], pool = pool[:k], pool[k:]
    state["pile"] = pool
    state["seed"] = f"{rng.getrandbits(256):064x}"
    state["commitment"] = commitment(state["seed"])
    state["initial"] = {"racks": [], "pile": []}
    return Hand.from_state(state)


def test_its_modules_never_see_a_hand() -> None:
    for name in ("expert.py", "belief.py"):
        tree = ast.parse((ENGINE / name).read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        assert "Hand" not in imported and "games.engine.hand" not in imported, name
        assert not any(
            isinstance(node, ast.ImportFrom)
            and node.module in ("hand", ".hand", "games.engine.hand")
            for node in ast.walk(tree)
        )


@pytest.mark.parametrize("variant", VARIANTS)
def test_it_decides_from_the_view_alone(variant: str) -> None:
    for n, turns in ((1, 5), (2, 10), (3, 14)):
        hand = played(variant, n, turns)
        if hand.over:
            continue
        for phase in range(2):
            if phase and not hand.over:
                # Also decide after the draw, with a full rack.
                assert hand.play(hand.turn, {"do": "draw"}).ok
            if hand.over:
                break
            me = hand.turn
            view = hand.view(me)
            other = hidden_changed(hand, random.Random(n))
            other_view = other.view(me)
            assert other.racks != hand.racks or other.pile != hand.pile
            # Only the commitment to the (other) seed differs in what the seat sees.
            assert {k: v for k, v in other_view.items() if k != "commitment"} == {
                k: v for k, v in view.items() if k != "commitment"
            }
            # It is handed plain data (a JSON round trip of the view), never a Hand.
            plain: dict[str, Any] = json.loads(json.dumps(view))
            first = expert_moves(plain, random.Random(7), budget_ms=None)
            assert first == expert_moves(other_view, random.Random(7), budget_ms=None)


@pytest.mark.parametrize("variant", VARIANTS)
def test_it_is_deterministic_given_its_seed(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The wall-clock cap is the one limit that depends on the machine (a test run sharing two
    # cores with a browser and servers can reach it); the budget counted in solver calls is
    # what makes the moves repeatable, so the cap is set out of the way here.
    monkeypatch.setattr(expert_module, "WALL_CAP", 1000.0)
    hand = played(variant, 4, 9)
    view = hand.view(hand.turn)
    if not view["has_tile"]:
        assert hand.play(hand.turn, {"do": "draw"}).ok
        view = hand.view(hand.turn)
    again = [expert_moves(view, random.Random(11), budget_ms=None) for _ in range(2)]
    assert again[0] == again[1]
    # choose_moves with a seeded generator: the same too, at the default budget.
    a = choose_moves(view, "expert", random.Random(5))
    b = choose_moves(view, "expert", random.Random(5))
    assert a == b


@pytest.mark.parametrize("variant", VARIANTS)
def test_its_moves_are_legal_in_whole_hands(variant: str) -> None:
    # Expert against the other levels, in a different seat in each variant: the first move it
    # ranks is accepted (the engine is the judge) nearly always, and the hand is played to its
    # end (test_bots plays whole hands of four experts too).
    refused = tried = 0
    n = VARIANTS.index(variant)
    hand = Hand.from_seed(variant, seed(10 + n))
    levels = ["greedy", "strong", "random"]
    levels.insert(n, "expert")
    rng = random.Random(n)
    while not hand.over:
        s = hand.turn
        moves = choose_moves(hand.view(s), levels[s], rng, budget_ms=5)
        for k, move in enumerate(moves):
            if hand.play(s, move).ok:
                if levels[s] == "expert":
                    tried += 1
                    refused += k > 0
                break
        else:
            raise AssertionError("no legal move")
    assert hand.result["hand_scores"] is not None
    assert tried and refused <= tried // 4


def test_the_belief_deals_worlds_that_match_the_view() -> None:
    for variant in VARIANTS:
        hand = played(variant, 5, 11)
        view = hand.view(hand.turn)
        belief = Belief(view)
        world = belief.sample(random.Random(1))
        assert len(world.pile) == view["pile_size"]
        for s, rack in world.racks.items():
            assert len(rack) == view["rack_counts"][s]
        # Every tile once: the world and what the seat sees make up the whole set.
        seen = [parse_tile(t) for t in view["rack"]] + [parse_tile(view["indicator"])]
        seen += [parse_tile(t) for pile in view["discards"] for t in pile]
        seen += [t for m in view["table"] for t in m["state"]["tiles"]]
        everything = seen + world.pile + [t for r in world.racks.values() for t in r]
        assert len(everything) == 106
        assert all(everything.count(t) == 2 for t in range(53))


# ------------------------------------------------------------------ what a good player knows
MELDS = "B1 B2 B3 K4 K5 K6 Y1 Y2 Y3 Y4 K10 K11 K12"


def test_it_takes_a_discard_that_finishes() -> None:
    # Seat 1 holds 13 tiles in melds and a loose K1; Y12 extends its Y9-Y11.
    racks = [
        "Y12 R7 R8 B9 B10 K2 K3 Y6 Y7 R11 B12 K13 Y13 R9 B11",
        "R1 R2 R3 R4 B4 B5 B6 K7 K8 K9 Y9 Y10 Y11 K1",
        "R5 R6 B7 B8 K11 Y5 Y8 R10 B13 K12 Y12 R12 B2 K5",
        "R13 B1 B3 K6 Y1 Y2 Y3 K10 R2 B5 K8 Y4 R7 B10",
    ]
    for variant in ("classic", "duz"):
        hand = hand_of(variant, racks, "K2 K3 Y6 Y7", "R8")
        assert hand.play(0, {"do": "discard", "tile": "Y12"}).ok
        moves = expert_moves(hand.view(1), random.Random(0))
        assert moves[0] == {"do": "take"}
        assert hand.play(1, moves[0]).ok
        moves = expert_moves(hand.view(1), random.Random(0))
        assert moves[0]["do"] == "finish"
        assert hand.play(1, moves[0]).ok and hand.result["finisher"] == 1


def test_it_does_not_hand_the_next_seat_what_it_visibly_collects() -> None:
    # Seat 1 takes R10 and then R11 from seat 0; seat 0 then holds 13 tiles in melds, a loose
    # R12 and a loose B7. R12 would complete the R10-R11-R12 seat 1 showed; B7 is safe.
    racks = [
        MELDS + " R10 R11",
        "R1 R2 B5 B6 K1 K2 Y6 Y7 Y8 R3 B9 K13 Y13 R4",
        "R5 R6 B8 B10 K3 K7 Y5 Y9 R8 B11 K8 Y10 R9 B12",
        "R13 B13 K9 Y11 Y12 R7 B4 K1 Y3 R6 B3 K2 Y5 R1",
    ]
    pile = "K3 K7 R12 Y6 B1 B7 Y2 K4 Y11 B2"
    hand = hand_of("classic", racks, pile, "K9")
    script = [
        (0, {"do": "discard", "tile": "R10"}),
        (1, {"do": "take"}),
        (1, {"do": "discard", "tile": "K13"}),
        (2, {"do": "draw"}),
        (2, {"do": "discard", "tile": "K3"}),
        (3, {"do": "draw"}),
        (3, {"do": "discard", "tile": "K7"}),
        (0, {"do": "draw"}),  # R12
        (0, {"do": "discard", "tile": "R11"}),
        (1, {"do": "take"}),
        (1, {"do": "discard", "tile": "Y13"}),
        (2, {"do": "draw"}),
        (2, {"do": "discard", "tile": "Y6"}),
        (3, {"do": "draw"}),
        (3, {"do": "discard", "tile": "B1"}),
        (0, {"do": "draw"}),  # B7
    ]
    for s, move in script:
        assert hand.play(s, move).ok, (s, move)
    view = hand.view(0)
    assert view["took"][1] == ["R10", "R11"]
    assert sorted(view["rack"]) == sorted((MELDS + " R12 B7").split())
    for n in range(3):
        first = expert_moves(view, random.Random(n))[0]
        assert first == {"do": "discard", "tile": "B7"}


def test_it_goes_for_the_okey_finish() -> None:
    # Indicator R5: R6 is wild. Throwing B4 finishes (R6 joins a meld); throwing R6 is the
    # okey finish, worth twice as much.
    racks = [
        "B1 B2 B3 B4 K4 K5 K6 Y1 Y2 Y3 Y4 K10 K11 K12 R6",
        "R1 R2 R3 R4 B5 B6 B7 K7 K8 K9 Y9 Y10 Y11 K1",
        "R7 R8 B8 B9 K1 K2 Y5 Y6 R9 B10 K13 Y12 R10 B11",
        "R11 R12 B12 B13 K3 Y7 Y8 R13 K8 Y13 R2 B1 K2 Y5",
    ]
    hand = hand_of("classic", racks, "K3 K7 Y6", "R5")
    first = expert_moves(hand.view(0), random.Random(0))[0]
    assert first == {"do": "finish", "tile": "R6"}
    assert hand.play(0, first).ok
    assert hand.result["kind"] == "okey"


def test_it_shows_the_indicator_first() -> None:
    racks = [
        "B1 B2 B3 K4 K5 K6 Y1 Y2 Y3 Y4 K10 K11 K12 R5 R9",
        "R1 R2 R3 R4 B5 B6 B7 K7 K8 K9 Y9 Y10 Y11 K1",
        "R7 R8 B8 B9 K1 K2 Y5 Y6 R9 B10 K13 Y12 R10 B11",
        "R11 R12 B12 B13 K3 Y7 Y8 R13 K8 Y13 R2 B1 K2 Y5",
    ]
    hand = hand_of("classic", racks, "K3 K7 Y6", "R5")
    assert expert_moves(hand.view(0), random.Random(0))[0] == {"do": "show_indicator"}
    # duz has no indicator show.
    duz = hand_of("duz", racks, "K3 K7 Y6", "R5")
    assert expert_moves(duz.view(0), random.Random(0))[0]["do"] != "show_indicator"


def test_it_goes_for_a_colour_finish_when_the_finish_pays_for_it() -> None:
    # Indicator K5: K6 is wild. Twelve black tiles with the wild: exchanging R7, Y7 and B2 for
    # black tiles makes a colour finish, three exchanges, as near as the normal finish that keeps
    # the 7s set and throws a black K8. Under countdown scoring a colour finish costs the others
    # 8 points where a normal one costs 2: it throws a tile of another colour. Under plus/minus
    # the colour finish pays no more, and it keeps to runs and sets.
    racks = [
        "K10 K13 K12 K8 K1 K8 K7 K7 K2 K11 K6 K13 B2 R7 Y7",
        "F B11 R3 R5 Y6 K5 Y2 R13 B10 R11 K2 R13 Y13 R6",
        "B7 Y3 F Y4 R3 Y4 B1 B8 B12 B11 B4 K9 R9 Y8",
        "Y12 Y7 K4 B8 R11 Y9 B7 K11 Y13 R12 R4 Y11 R6 R4",
    ]
    pile = "B9 K3 Y10 K9 R10 Y5 K1 B10 K3 R12 Y6 B6 B4 B3 Y1 R8 B5 Y2 B12 Y12 Y9 B2"
    for n in range(3):
        hand = hand_of("classic", racks, pile, "K5")
        first = expert_moves(hand.view(0), random.Random(n))[0]
        assert first["do"] == "discard" and first["tile"] in ("R7", "Y7", "B2"), first
        plus_minus = Hand.new(
            "classic",
            [[parse_tile(t) for t in r.split()] for r in racks],
            [parse_tile(t) for t in pile.split()],
            parse_tile("K5"),
            {"scoring": "plus_minus"},
        )
        first = expert_moves(plus_minus.view(0), random.Random(n))[0]
        assert first == {"do": "discard", "tile": "K8"}
