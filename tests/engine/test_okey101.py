"""okey101 beyond its scenarios (tests/scenarios/okey101-*.json): the 22/21 deal, the options
§7 allows and refuses, a void hand played again by the match, and random play that always
ends."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import pytest

from games import engine
from games.engine import Hand, Match, deal
from games.engine.bots import play_turn
from games.engine.selfplay import play_random_turn

SEED = "ab" * 32


def test_the_deal_gives_22_to_the_starter_21_to_the_others_and_leaves_a_pile_of_20() -> None:
    hand = Hand.from_seed("okey101", SEED)
    assert [len(r) for r in hand.racks] == [22, 21, 21, 21]
    assert len(hand.pile) == 20
    # The same shuffle as every variant: the first 15 tiles of okey51's deal start the rack.
    assert list(deal(SEED, 4, (22, 21)).racks[0][:15]) == list(deal(SEED).racks[0])
    assert hand.opening_bar() == 101 and hand.pairs_needed() == 5


@pytest.mark.parametrize(
    "options",
    [
        {"hands": 2},
        {"add_limit": 4},
        {"give_back_penalty": 100},
        {"wrap_13_1": True},
        {"from_hand_below_bar": "yes"},
        {"bar": 51},
    ],
)
def test_options_outside_the_rules_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(engine.OptionsError):
        engine.check_table("okey101", options, 4)


def test_the_defaults_and_the_players() -> None:
    assert engine.default_options("okey101") == {
        "doubling": False,
        "partners": False,
        "hands": 1,
        "add_limit": 2,
        "give_back_penalty": 0,
        "from_hand_below_bar": True,
        "assisted": False,
        "timer": 30,
    }
    for players in (2, 3):
        with pytest.raises(engine.OptionsError):
            engine.check_table("okey101", None, players)
    assert engine.check_table("okey101", {"hands": 11, "add_limit": 0}, 4)["hands"] == 11


def test_12_13_1_is_never_a_run_in_okey101() -> None:
    racks = [
        [engine.parse_tile(t) for t in r]
        for r in (["R12", "R13", "R1", "K5"], ["K1"], ["K2"], ["K3"])
    ]
    hand = Hand.new("okey101", racks, [engine.parse_tile("Y1")], engine.parse_tile("B4"))
    result = hand.play(0, {"do": "open", "melds": [["R12", "R13", "R1"]]})
    assert not result.ok and result.error == "invalid_meld"


def void_hand(match: Match) -> Hand:
    """The match's next hand, played to a void ending: four pairs openings."""
    racks = [
        ["R1", "R1", "R2", "R2", "R3", "R3", "R4", "R4", "R5", "R5", "K13", "K12"],
        ["K1", "K1", "K2", "K2", "K3", "K3", "K4", "K4", "K6", "K6", "Y13"],
        ["Y1", "Y1", "Y2", "Y2", "Y3", "Y3", "Y4", "Y4", "Y6", "Y6", "R13"],
        ["B1", "B1", "B2", "B2", "B3", "B3", "B6", "B6", "B7", "B7", "R12"],
    ]
    number = match.dealt + 1
    starter = match.starter(number)
    ordered = [[engine.parse_tile(t) for t in r] for r in racks]
    hand = Hand.new(
        "okey101",
        ordered,
        [engine.parse_tile(t) for t in ("R7", "K7", "Y7", "R8")],
        engine.parse_tile("B4"),
        match.options,
        starter=starter,
        scores=match.scores,
        number=number,
    )
    match.current, match.dealt = hand, number
    for k in range(4):
        seat = (starter + k) % 4
        rack = [engine.format_tile(t) for t in hand.racks[seat]]
        if k:
            assert hand.play(seat, {"do": "draw"}).ok
        pairs = [[rack[i], rack[i + 1]] for i in range(0, 10, 2)]
        assert hand.play(seat, {"do": "open", "pairs": pairs}).ok
        if k < 3:
            assert hand.play(seat, {"do": "discard", "tile": rack[10]}).ok
    return hand


def test_a_void_hand_counts_for_nothing_and_the_next_keeps_its_starter() -> None:
    match = Match("okey101", {"hands": 1})
    hand = void_hand(match)
    assert hand.result["ending"] == "void" and hand.result["hand_scores"] == [0, 0, 0, 0]
    assert not hand.result["match_over"]
    match.record()
    assert not match.over and match.scores == [0, 0, 0, 0]
    again = match.deal_hand("cd" * 32)
    # The hands dealt are numbered on; the void one does not count toward the one hand.
    assert again.number == 2 and again.starter == 0 and again.voided == 1
    rng = random.Random(5)
    while not again.over:
        play_random_turn(again, rng)
    match.record()
    assert match.over
    assert again.replay().to_state()["voided"] == 1


def test_random_play_always_ends_and_keeps_22_tile_racks_whole() -> None:
    for k in range(30):
        rng = random.Random(k)
        hand = Hand.from_seed("okey101", f"{k:064x}")
        for _ in range(400):
            if hand.over:
                break
            play_random_turn(hand, rng)
            # Tiles are neither made nor lost: racks, pile, discards and table hold the 105.
            held = sum(map(len, hand.racks)) + len(hand.pile) + sum(map(len, hand.discards))
            assert held + sum(len(m.tiles) for m in hand.table) == 105
        assert hand.over, k
        assert hand.replay().to_state()["result"] == hand.result


EX6 = "R1 R2 R3 R4 R5 K1 K2 K3 K4 K5 Y1 Y2 Y3 Y4 R6 K6 Y6 B6 R8 K8 Y8 Y13"


@pytest.mark.parametrize("below_bar", [True, False])
def test_assist_offers_an_opening_below_the_bar_only_when_it_leaves_one_tile(
    below_bar: bool,
) -> None:
    racks = [[engine.parse_tile(t) for t in EX6.split()], [0], [1], [2]]
    hand = Hand.new(
        "okey101",
        racks,
        [engine.parse_tile("K13")],
        engine.parse_tile("B4"),
        {"from_hand_below_bar": below_bar},
    )
    offered = engine.assist(hand.view(0))["opening"]
    if not below_bar:
        assert offered is None
        return
    assert offered is not None and offered["kind"] == "melds" and offered["total"] == 88
    assert hand.play(0, offered["move"]).ok
    assert hand.play(0, {"do": "discard", "tile": "Y13"}).ok
    assert hand.result["doublings"] == ["from_hand"]


def checked_play(hand: Hand, seat: int, label: str) -> Callable[[dict[str, Any]], bool]:
    """Plays a move for ``seat``; a penalised discard fails the test when a free one existed."""
    rules = engine.variants.rules_for("okey101")

    def play(move: dict[str, Any]) -> bool:
        rack, table = list(hand.racks[seat]), list(hand.table)
        result = hand.play(seat, move)
        if result.ok and move["do"] == "discard" and len(rack) > 1:
            thrown = engine.parse_tile(move["tile"])
            if rules.discard_penalties(table, hand.okey, hand.wrap, thrown):
                free = [
                    t for t in rack if not rules.discard_penalties(table, hand.okey, hand.wrap, t)
                ]
                assert not free, (label, move, free)
        return result.ok

    return play


@pytest.mark.slow
@pytest.mark.parametrize(("level", "hands"), [("greedy", 8), ("strong", 2)])
def test_the_bots_never_make_a_penalised_throw_while_another_tile_is_free(
    level: str, hands: int
) -> None:
    opened_some = 0
    for k in range(hands):
        rng = random.Random(k)
        hand = Hand.from_seed("okey101", f"{k + 101:064x}", {"timer": 0})
        while not hand.over:
            seat = hand.turn
            play = checked_play(hand, seat, f"{level} {k}")
            play_turn(functools.partial(hand.view, seat), play, level, rng)
        opened_some += sum(1 for o in hand.opened if o)
    assert opened_some  # the bots do open


def test_after_an_opening_below_the_bar_the_only_legal_move_is_the_finishing_discard() -> None:
    racks = [[engine.parse_tile(t) for t in EX6.split()], [0], [1], [2]]
    hand = Hand.new("okey101", racks, [engine.parse_tile("K13")], engine.parse_tile("B4"))
    offered = engine.assist(hand.view(0))["opening"]
    assert hand.play(0, offered["move"]).ok
    view = hand.view(0)
    assert view["must_finish"] and not hand.view(1)["must_finish"]
    assert engine.legal_actions(view) == ["discard"]


def test_an_okey101_hand_exports_as_a_seeded_scenario_that_replays_it() -> None:
    from games.engine.export import scenario_of
    from games.engine.scenario import check

    rng = random.Random(9)
    hand = Hand.from_seed("okey101", "ef" * 32, {"partners": True})
    while not hand.over:
        play_random_turn(hand, rng)
    scenario = scenario_of(hand, "exported")
    _result, diffs = check(scenario)
    assert diffs == []


def rigged(racks: list[str], pile: str, indicator: str = "B4") -> Hand:
    """An okey101 hand with these racks (seat 0 starts) and pile, top first."""
    return Hand.new(
        "okey101",
        [[engine.parse_tile(t) for t in r.split()] for r in racks],
        [engine.parse_tile(t) for t in pile.split()],
        engine.parse_tile(indicator),
    )


def penalties(result: Any) -> list[tuple[int, str]]:
    assert result.ok, result.error
    return [(e["seat"], e["reason"]) for e in result.events if e["type"] == "penalty"]


OPENER = "R10 R11 R12 R13 K10 K11 K12 K13 Y9 Y10 B5"  # okey B5: 122 with B5 as Y11
OPENING = {
    "do": "open",
    "melds": [
        ["R10", "R11", "R12", "R13"],
        ["K10", "K11", "K12", "K13"],
        ["Y9", "Y10", "B5:Y11"],
    ],
}


def test_a_last_tile_swapped_for_a_table_okey_finishes_as_an_okey_finish_without_penalty() -> None:
    hand = rigged([OPENER + " Y11 R9 Y3", "R1 R3", "K2 K4", "R5 R7"], "Y1 Y2 K3 K9")
    play = checked_play(hand, 0, "swap finish")
    assert play(OPENING) and play({"do": "discard", "tile": "Y3"})
    for seat in (1, 2, 3):
        assert hand.play(seat, {"do": "draw"}).ok
        assert hand.play(seat, {"do": "discard", "tile": hand.view(seat)["rack"][0]}).ok
    assert play({"do": "draw"})  # K9
    assert play({"do": "add", "meld": 1, "tile": "K9"})
    assert play({"do": "add", "meld": 0, "tile": "R9"})
    assert hand.view(0)["rack"] == ["Y11"]
    # The one tile left swaps for the okey (the count stays one); throwing the okey finishes.
    assert penalties(hand.play(0, {"do": "swap", "meld": 2, "tile": "Y11"})) == []
    assert penalties(hand.play(0, {"do": "discard", "tile": "B5"})) == []
    assert hand.result["ending"] == "finish" and hand.result["doublings"] == ["okey"]
    assert hand.result["hand_scores"] == [-202, 404, 404, 404]


def test_what_a_discard_costs_an_okey_a_swap_only_tile_and_a_set_s_missing_colours() -> None:
    hand = rigged(
        [OPENER + " Y11 R9 Y3", "R1 R3 B5 K9 Y8", "K2 K4 Y9", "R5 R7"],
        "Y1 Y2 K3 R8 K6 K7 K8 B9",
    )
    assert hand.play(0, OPENING).ok and hand.play(0, {"do": "discard", "tile": "Y3"}).ok
    # A wild okey thrown is okey_thrown, never also workable (it would fit every run).
    assert hand.play(1, {"do": "draw"}).ok
    assert penalties(hand.play(1, {"do": "discard", "tile": "B5"})) == [(1, "okey_thrown")]
    # Y9 is already on the table: it could swap nothing and extends no run: free.
    assert hand.play(2, {"do": "draw"}).ok
    assert penalties(hand.play(2, {"do": "discard", "tile": "Y9"})) == []
    assert hand.play(3, {"do": "draw"}).ok
    assert penalties(hand.play(3, {"do": "discard", "tile": "R5"})) == []
    # Y11 could only swap out the table's okey: not workable (unlike okey51).
    assert hand.play(0, {"do": "draw"}).ok
    assert penalties(hand.play(0, {"do": "discard", "tile": "Y11"})) == []
    # K9 goes before K10-K13, whoever owns it, opened or not: workable.
    assert hand.play(1, {"do": "draw"}).ok
    assert penalties(hand.play(1, {"do": "discard", "tile": "K9"})) == [(1, "workable")]


def test_a_set_whose_okey_has_not_settled_takes_either_missing_colour() -> None:
    for missing in ("R9", "K9"):
        hand = rigged(
            ["R10 R11 R12 R13 K10 K11 K12 K13 Y9 B9 B5 Y2 R1", f"{missing} Y7", "K2 K4", "R5 R7"],
            "Y1 Y3 K3",
        )
        # The same runs, and a set Y9 B9 okey whose okey may be R9 or K9.
        opening = {"do": "open", "melds": [*OPENING["melds"][:2], ["Y9", "B9", "B5:R9"]]}
        assert hand.play(0, opening).ok and hand.play(0, {"do": "discard", "tile": "Y2"}).ok
        assert hand.play(1, {"do": "draw"}).ok
        assert penalties(hand.play(1, {"do": "discard", "tile": missing})) == [(1, "workable")]
