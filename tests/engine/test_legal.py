"""legal_actions: a move kind the engine accepts is always listed, and listed simple kinds work."""

from __future__ import annotations

import random

import pytest

from games import engine
from games.engine.bots import choose_moves
from games.engine.legal import legal_actions
from games.engine.selfplay import candidate_moves

VARIANTS = ["classic", "duz", "okey51", "gobek17", "okey101"]
SIMPLE = {"draw", "take", "discard", "give_back", "show_indicator"}


def seed(n: int) -> str:
    return f"{random.Random(n).getrandbits(256):064x}"


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", range(3))
def test_it_lists_every_kind_the_engine_accepts(variant: str, n: int) -> None:
    s = seed(100 * n + VARIANTS.index(variant))
    hand = engine.Hand.from_seed(variant, s, {})
    rng = random.Random(n)
    for _ in range(400):
        if hand.over:
            break
        for seat in range(hand.players):
            view = hand.view(seat)
            listed = set(legal_actions(view))
            tried = candidate_moves(view) + [{"do": "show_indicator"}]
            accepted = set()
            for move in tried:
                trial = engine.Hand.from_state(hand.to_state())
                if trial.play(seat, move).ok:
                    accepted.add(move["do"])
            assert accepted <= listed, (variant, seat, accepted - listed)
            # Kinds that need no tile choice beyond the rack: listed means some move works.
            for kind in listed & SIMPLE - {"show_indicator"}:
                assert kind in accepted, (variant, seat, kind)
        seat = hand.turn
        moves = candidate_moves(hand.view(seat))
        rng.shuffle(moves)
        for move in moves:
            if hand.play(seat, move).ok:
                break
        else:
            raise AssertionError("no legal move")
    assert legal_actions(hand.view(0)) == [] or not hand.over


def test_it_lists_nothing_once_the_hand_is_over() -> None:
    s = seed(7)
    hand = engine.Hand.from_deal("duz", engine.deal(s), {}, seed=s)
    from games.engine.selfplay import play_random_turn

    rng = random.Random(1)
    while not hand.over:
        play_random_turn(hand, rng)
    assert all(legal_actions(hand.view(seat)) == [] for seat in range(4))


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_the_variant_with_an_indicator_show_offers_it(variant: str) -> None:
    """Deals until a seat holds the indicator: it may show it in classic alone."""
    for n in range(200):
        s = seed(9000 + n)
        hand = engine.Hand.from_seed(variant, s, {})
        holders = [seat for seat in range(hand.players) if hand.indicator in hand.racks[seat]]
        if holders:
            break
    else:
        raise AssertionError("no deal put the indicator in a rack")
    assert engine.has_indicator_show(variant) == (variant == "classic")
    offered = "show_indicator" in legal_actions(hand.view(holders[0]))
    assert offered == engine.has_indicator_show(variant)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["okey51", "gobek17", "okey101"])
def test_meld_targets_are_exactly_the_adds_and_swaps_the_engine_accepts(variant: str) -> None:
    """Through whole random hands, at every turn with a tile in hand: a rack tile is listed
    for a meld exactly when the engine takes it there (an add refused for the turn's add_limit
    aside), and no target is listed for a kind legal_actions does not list."""
    checked = {"add": 0, "swap": 0}
    for n in range(3):
        hand = engine.Hand.from_seed(variant, seed(300 + n), {})
        rng = random.Random(n)
        for _ in range(300):
            if hand.over:
                break
            seat = hand.turn
            view = hand.view(seat)
            legal = set(legal_actions(view))
            targets = engine.meld_targets(view)
            for kind in ("add", "swap"):
                if kind not in legal:
                    assert targets[kind] == {}, (variant, kind)
                    continue
                for meld in view["table"]:
                    for code in dict.fromkeys(view["rack"]):
                        trial = engine.Hand.from_state(hand.to_state())
                        result = trial.play(seat, {"do": kind, "tile": code, "meld": meld["id"]})
                        listed = code in targets[kind].get(meld["id"], [])
                        if result.error == "add_limit":
                            continue
                        assert result.ok == listed, (variant, kind, code, meld, result.error)
                        checked[kind] += listed
            for move in choose_moves(view, "greedy", rng):  # bots that open and lay
                if hand.play(seat, move).ok:
                    break
            else:
                raise AssertionError("no legal move")
    assert checked["add"] > 0, checked


def test_weigh_says_what_each_group_is_worth_and_the_total_against_the_bar() -> None:
    hand = engine.Hand.from_seed("okey101", seed(11), {})
    view = dict(hand.view(hand.turn))
    view["okey"] = "Y7"  # no tile below is the wild okey
    groups = [
        ["R10", "R11", "R12", "R13"],
        ["Y13", "K13", "B13"],
        ["R5", "R6", "R8"],
        ["K2", "K2"],
        ["B1"],
        ["K3", "B4"],
    ]
    weighed = engine.weigh(view, groups)
    assert [(g["kind"], g["valid"], g["points"], g["why"]) for g in weighed["groups"]] == [
        ("meld", True, 46, None),
        ("meld", True, 39, None),
        ("meld", False, 0, "not_consecutive"),
        ("pair", True, 0, None),
        (None, False, 0, "meld_too_short"),
        ("pair", False, 0, "not_a_pair"),
    ]
    assert (weighed["total"], weighed["pairs"]) == (85, 1)
    assert (weighed["bar"], weighed["pairs_needed"]) == (101, 5)
    closed = engine.weigh(engine.Hand.from_seed("classic", seed(11), {}).view(0), groups[:1])
    assert closed["bar"] is None and closed["total"] == 46


@pytest.mark.parametrize("variant", ["okey51", "okey101"])
def test_weighed_totals_are_the_totals_the_engine_opens_with(variant: str) -> None:
    """The best opening of many dealt racks, weighed, is the total the open event says."""
    from games.engine import solver
    from games.engine.variants import rules_for

    opened = 0
    for n in range(40):
        hand = engine.Hand.from_seed(variant, seed(500 + n), {})
        seat = hand.turn
        view = hand.view(seat)
        rack = [engine.parse_tile(t) for t in view["rack"]]
        wrap = rules_for(variant).wrap({})
        best = solver.best_opening(rack, engine.parse_tile(view["okey"]), wrap)
        melds = [list(m) for m in best.melds]
        if not melds:
            continue
        weighed = engine.weigh(view, melds)
        assert all(g["valid"] for g in weighed["groups"])
        result = hand.play(seat, {"do": "open", "melds": melds})
        if result.ok:
            opened += 1
            assert result.events[0]["total"] == weighed["total"]
        else:
            assert result.error == "below_opening_bar" and weighed["total"] < weighed["bar"]
    assert opened > 0
