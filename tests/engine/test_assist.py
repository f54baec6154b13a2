"""assist(view): the help of assisted tables, from one seat's view, judged by the engine."""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import Hand, assist, deal, format_tile, parse_tile, read_meld
from games.engine import layout as rack_layout
from games.engine.assist import best_groups
from games.engine.selfplay import candidate_moves
from games.engine.variants import rules_for

FUZZ = bool(os.environ.get("OKEY_FUZZ"))
INDICATOR = "Y5"  # the okey is Y6
OKEY = "Y6"


def hand_with(
    variant: str,
    racks: dict[int, list[str]],
    options: dict[str, Any] | None = None,
    seed: str | None = None,
) -> Hand:
    """A 4-seat hand, seat 0 starting (15 tiles, 22 in okey101), the given racks as written and
    the other seats and the pile filled from the rest of the box (deterministically); the okey
    is Y6."""
    first, others = rules_for(variant).rack_sizes
    box = Counter({format_tile(t): 2 for t in range(53)})
    box[INDICATOR] -= 1
    for rack in racks.values():
        box.subtract(rack)
    assert min(box.values()) >= 0, "more copies than exist"
    rest = sorted(box.elements())
    random.Random(7).shuffle(rest)
    full = []
    for seat in range(4):
        rack = racks.get(seat)
        if rack is None:
            size = first if seat == 0 else others
            rack, rest = rest[:size], rest[size:]
        full.append([parse_tile(t) for t in rack])
    pile = [parse_tile(t) for t in rest]
    return Hand.new(variant, full, pile, parse_tile(INDICATOR), options, seed=seed)


OPENER = "R9 R10 R11 R12 K13 B13 Y13 B5 B6 B7 Y1 K2 R3 K7 B1".split()
OPENER_MELDS = [["R9", "R10", "R11", "R12"], ["K13", "B13", "Y13"], ["B5", "B6", "B7"]]  # 99


def test_it_sorts_the_rack_into_its_best_melds_leftovers_last() -> None:
    hand = hand_with("okey51", {0: OPENER})
    rack = hand.view(0)["rack"]
    layout = assist(hand.view(0))["layout"]
    assert rack_layout.check(layout, rack) == layout  # exactly the rack's tiles, 32 slots
    groups = rack_layout.groups(layout)
    assert sorted(map(sorted, groups[:3])) == sorted(map(sorted, OPENER_MELDS))
    assert Counter(t for g in groups[3:] for t in g) == Counter("Y1 K2 R3 K7 B1".split())
    # The melds come first, each whole (a gap or a row's end would split it), and each is one.
    for group in groups[:3]:
        read_meld(group, parse_tile(OKEY), True)


def test_a_rack_that_all_groups_leaves_nothing_over() -> None:
    rack = "R1 R2 R3 R4 B5 B6 B7 K9 K10 K11 Y4 B4 K4 Y6".split()  # Y6 (wild) joins a run
    groups, leftover = best_groups([parse_tile(t) for t in rack], parse_tile(OKEY), True)
    assert leftover == []
    assert Counter(format_tile(t) for g in groups for t in g) == Counter(rack)
    for g in groups:
        read_meld([format_tile(t) for t in g], parse_tile(OKEY), True)


def test_leftovers_are_sorted_with_the_wild_okey_last() -> None:
    rack = [parse_tile(t) for t in "Y6 K1 B3 R7 Y12 K5".split()]  # no two tiles go together
    groups, leftover = best_groups(rack, parse_tile(OKEY), True)
    assert groups == []
    assert [format_tile(t) for t in leftover] == "R7 B3 K1 K5 Y12 Y6".split()
    layout = assist(hand_with("okey51", {0: [format_tile(t) for t in rack]}).view(0))["layout"]
    assert layout[:6] == "R7 B3 K1 K5 Y12 Y6".split() and layout[6:] == [None] * 26


@pytest.mark.parametrize("variant", ["okey51", "gobek17"])
def test_it_suggests_the_best_opening_and_the_engine_takes_it(variant: str) -> None:
    hand = hand_with(variant, {0: OPENER})
    suggested = assist(hand.view(0))["opening"]
    assert suggested["kind"] == "melds" and suggested["total"] == 99
    assert sorted(map(sorted, suggested["groups"])) == sorted(map(sorted, OPENER_MELDS))
    result = hand.play(0, suggested["move"])
    assert result.ok, result.message
    assert result.events[0]["type"] == "open" and result.events[0]["total"] == 99
    assert assist(hand.view(0))["opening"] is None  # opened: nothing more to suggest


SECOND = "K4 K5 K6 Y8 R8 B8 K10 K11 K12 R2 Y3 B5 Y11 R6".split()  # melds worth 72


@pytest.mark.parametrize(
    ("variant", "options", "after"),
    [
        ("okey51", {"doubling": True}, None),  # must beat 99
        ("okey51", {"doubling": False}, 72),  # the bar stays 51
        ("gobek17", {}, None),  # openings always raise
    ],
)
def test_the_bar_follows_the_variant(variant: str, options: dict[str, Any], after: Any) -> None:
    hand = hand_with(variant, {0: OPENER, 1: SECOND}, options)
    assert assist(hand.view(1))["opening"]["total"] == 72  # before anyone opened: 51
    assert hand.play(0, {"do": "open", "melds": OPENER_MELDS}).ok
    suggested = assist(hand.view(1))["opening"]
    assert (suggested and suggested["total"]) == after
    assert hand.view(1)["opening_bar"] == (100 if after is None else 51)


PAIRS = "R1 R1 B2 B2 K3 K3 Y4 Y4 R9 B11 K7 Y13 R5 B6 K12".split()


def test_pairs_openings_need_four_pairs_in_gobek17_and_five_in_okey51() -> None:
    gobek = assist(hand_with("gobek17", {0: PAIRS}).view(0))["opening"]
    assert gobek["kind"] == "pairs" and gobek["pairs"] == 4
    assert assist(hand_with("okey51", {0: PAIRS}).view(0))["opening"] is None
    with_wild = [OKEY if t == "K12" else t for t in PAIRS]  # the wild okey makes a fifth pair
    hand = hand_with("okey51", {0: with_wild})
    suggested = assist(hand.view(0))["opening"]
    assert suggested["kind"] == "pairs" and suggested["pairs"] == 5
    result = hand.play(0, suggested["move"])
    assert result.ok and result.events[0]["with"] == "pairs" and result.events[0]["pairs"] == 5


def test_closed_variants_get_a_sorted_rack_but_no_table_help() -> None:
    hand = hand_with("duz", {0: OPENER})
    help_ = assist(hand.view(0))
    assert help_["opening"] is None and help_["feedable"] == []
    assert rack_layout.check(help_["layout"], hand.view(0)["rack"])


# An opening with the wild okey standing for R12, so that R12 can swap it out in okey51.
WILD_OPENER = "R10 R11 Y6 R13 K13 B13 Y13 B9 B10 B11 B12 K2 R3 K7 B1".split()
WILD_MELDS = [["R10", "R11", "Y6:R12", "R13"], ["K13", "B13", "Y13"], ["B9", "B10", "B11"]]
FEEDER = "R9 R12 R13 B8 K5 K6 Y2 Y9 Y11 R5 K9 B4 Y3 K1".split()


@pytest.mark.parametrize("variant", ["okey51", "gobek17"])
def test_it_marks_tiles_that_fit_the_table_with_their_melds(variant: str) -> None:
    hand = hand_with(variant, {0: WILD_OPENER, 1: FEEDER}, {"wrap_13_1": True})
    assert assist(hand.view(1))["feedable"] == []  # nothing on the table yet
    assert hand.play(0, {"do": "open", "melds": WILD_MELDS}).ok  # ids 0, 1, 2
    feedable = {f["tile"]: (f["add"], f["swap"]) for f in assist(hand.view(1))["feedable"]}
    expected = {"R9": ([0], []), "R13": ([1], []), "B8": ([2], [])}
    if variant == "okey51":
        expected["R12"] = ([], [0])  # no swap in gobek17
    assert feedable == expected
    # The opener's own wild okey is never marked, though it fits everywhere.
    assert OKEY not in {f["tile"] for f in assist(hand.view(0))["feedable"]}


@pytest.mark.parametrize(
    ("thrown", "melds", "with_rack"),
    [("K7", [], True), ("K2", [], False), ("B12", [2], False)],
)
def test_it_says_whether_the_previous_discard_works(
    thrown: str, melds: list[int], with_rack: bool
) -> None:
    hand = hand_with("okey51", {0: WILD_OPENER, 1: FEEDER})
    assert assist(hand.view(1))["workable_discard"] is None  # no discard yet
    assert hand.play(0, {"do": "open", "melds": WILD_MELDS}).ok
    result = hand.play(0, {"do": "discard", "tile": thrown})
    assert result.ok
    got = assist(hand.view(1))["workable_discard"]
    assert got == {
        "tile": thrown,
        "seat": 0,
        "melds": melds,
        "with_rack": with_rack,
        "workable": bool(melds) or with_rack,
    }
    # The engine agrees: a discard that fits a table meld is the punished discard.
    punished = any(e.get("reason") == "punished_discard" for e in result.events)
    assert punished == bool(melds)


# ---------------------------------------------------------------------------------------------
# Property: whatever a random hand looks like, the engine accepts what the help suggests
# ---------------------------------------------------------------------------------------------
def check_against_engine(hand: Hand, seat: int) -> None:
    view = hand.view(seat)
    help_ = assist(view)
    assert rack_layout.check(help_["layout"], view["rack"]) == help_["layout"]
    on_turn = hand.turn == seat and view["has_tile"] and not view["must_draw"]
    suggested = help_["opening"]
    state = {**hand.to_state(), "log": []}  # copies for trials; the log plays no part
    if suggested is not None and on_turn:
        trial = Hand.from_state(state)
        result = trial.play(seat, suggested["move"])
        assert result.ok, (view["rack"], suggested, result.error, result.message)
        event = result.events[0]
        if suggested["kind"] == "melds":
            assert event["total"] == suggested["total"] >= view["opening_bar"]
        else:
            assert event["pairs"] == suggested["pairs"] >= view["pairs_needed"]
    if on_turn and view["opened"][seat] == "melds" and len(view["rack"]) > 1:
        # Exactly the (tile, meld) feeds and swaps the engine accepts are marked.
        marked = {(f["tile"], m, "add") for f in help_["feedable"] for m in f["add"]}
        marked |= {(f["tile"], m, "swap") for f in help_["feedable"] for m in f["swap"]}
        accepted = set()
        trial = Hand.from_state(state)
        for tile in set(view["rack"]) - {view["okey"]}:
            for meld in view["table"]:
                for do in ("add", "swap"):
                    # A refused move changes nothing, so only an accepted one needs a new copy.
                    if trial.play(seat, {"do": do, "meld": meld["id"], "tile": tile}).ok:
                        accepted.add((tile, meld["id"], do))
                        trial = Hand.from_state(state)
        assert marked == accepted


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=not FUZZ,
)
@given(
    st.sampled_from(["okey51", "gobek17"]),
    st.integers(0, 2**32),
    st.booleans(),
)
@pytest.mark.slow
def test_suggestions_are_moves_the_engine_accepts(variant: str, seed: int, flag: bool) -> None:
    rng = random.Random(seed)
    hex_seed = f"{rng.getrandbits(256):064x}"
    options = {"doubling": flag} if variant == "okey51" else {"wrap_13_1": flag}
    hand = Hand.from_deal(variant, deal(hex_seed), options, seed=hex_seed)
    # Move by move (not turn by turn), so the seat on turn is checked after its draw too.
    for _ in range(120):
        if hand.over:
            break
        check_against_engine(hand, hand.turn)
        check_against_engine(hand, (hand.turn + 2) % hand.players)
        moves = candidate_moves(hand.view(hand.turn))
        plays = [m for m in moves if m["do"] not in ("discard", "give_back")]
        rng.shuffle(moves)
        rng.shuffle(plays)
        for move in (plays + moves) if rng.random() < 0.7 else moves:
            if hand.play(hand.turn, move).ok:
                break
