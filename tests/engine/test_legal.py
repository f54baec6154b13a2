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
