"""The two-row stand: a stored arrangement survives every change of the rack."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import layout

TILES = [f"{c}{n}" for c in "RYBK" for n in range(1, 14)] + ["F"]


def test_it_deals_into_the_first_row_then_the_second() -> None:
    rack = TILES[:20]
    lay = layout.default_layout(rack)
    assert len(lay) == layout.SLOTS
    assert lay[:16] == rack[:16] and lay[16:20] == rack[16:] and lay[20:] == [None] * 12


def test_it_keeps_placed_tiles_and_puts_new_ones_in_free_slots() -> None:
    lay: list[str | None] = [None] * layout.SLOTS
    lay[3], lay[4], lay[20] = "R5", "R6", "K1"
    fitted = layout.reconcile(lay, ["K1", "R6", "B2"])  # R5 left, B2 came
    assert fitted[4] == "R6" and fitted[20] == "K1" and fitted[3] is None
    assert fitted[0] == "B2"
    assert Counter(c for c in fitted if c) == Counter(["K1", "R6", "B2"])


def test_it_keeps_one_of_two_copies_when_one_leaves() -> None:
    lay = layout.default_layout(["R5", "R5", "B1"])
    fitted = layout.reconcile(lay, ["R5", "B1"])
    assert fitted[:3] == ["R5", None, "B1"]


@given(st.lists(st.sampled_from(TILES), max_size=22), st.lists(st.sampled_from(TILES), max_size=22))
def test_it_always_holds_exactly_the_rack(before: list[str], now: list[str]) -> None:
    lay = layout.default_layout(before)
    random.Random(len(before)).shuffle(lay)
    fitted = layout.reconcile(lay, now)
    assert Counter(c for c in fitted if c) == Counter(now)
    assert layout.check(fitted, now) == fitted


def test_it_refuses_a_layout_that_is_not_the_rack() -> None:
    rack = ["R1", "R2"]
    good = layout.default_layout(rack)
    with pytest.raises(ValueError):
        layout.check(good[:-1], rack)
    with pytest.raises(ValueError):
        layout.check(["R3"] + good[1:], rack)
    with pytest.raises(ValueError):
        layout.check([1] + good[1:], rack)


def test_it_reads_groups_split_by_gaps_and_rows() -> None:
    lay: list[str | None] = [None] * layout.SLOTS
    lay[0:3] = ["R1", "R2", "R3"]
    lay[4:6] = ["K5", "K5"]
    lay[14:16] = ["B9", "B10"]
    lay[16:17] = ["B11"]  # a new row starts a new group
    assert layout.groups(lay) == [["R1", "R2", "R3"], ["K5", "K5"], ["B9", "B10"], ["B11"]]
    assert layout.groups(lay, leave_out="K5") == [
        ["R1", "R2", "R3"],
        ["K5"],
        ["B9", "B10"],
        ["B11"],
    ]
    picked = layout.selected_groups(lay, ["R2", "R3", "B10", "B11"])
    assert picked == [["R2", "R3"], ["B10"], ["B11"]]


# The rack's sort buttons -----------------------------------------------------------------------
N = None
SORT_RACK = ["B7", "R3", "R1", "R6", "K13", "R2", "B7", "F", "Y5"]  # okey R6: wild


def test_it_sorts_by_runs_colour_by_colour_with_the_wild_okey_last() -> None:
    # The fake plays as the okey (R6): it stands where R6 would, alone (R4 and R5 are missing).
    lay = layout.sorted_layout(SORT_RACK, "R6", "runs")
    assert lay[:14] == ["R1", "R2", "R3", N, "F", N, "Y5", N, "B7", "B7", N, "K13", N, "R6"]
    assert lay[14:] == [N] * 18


def test_it_sorts_by_sets_number_by_number() -> None:
    lay = layout.sorted_layout(SORT_RACK, "R6", "sets")
    assert lay[:16] == ["R1", N, "R2", N, "R3", N, "Y5", N, "F", N, "B7", "B7", N, "K13", N, "R6"]
    assert lay[16:] == [N] * 16


def test_a_fake_okey_sorts_where_the_tile_it_plays_as_belongs() -> None:
    assert layout.sorted_layout(["R7", "F", "R5", "B6"], "R6", "runs")[:5] == [
        "R5",
        "F",
        "R7",
        N,
        "B6",
    ]


def test_it_arranges_pairs_first_and_the_rest_side_by_side() -> None:
    rack = ["B7", "B7", "B7", "R1", "R2", "K1", "Y4", "Y4"]  # K1 is the wild okey
    assert layout.sorted_layout(rack, "K1", "pairs")[:11] == [
        "Y4",
        "Y4",
        N,
        "B7",
        "B7",
        N,
        "R1",
        "R2",
        "B7",
        N,
        "K1",
    ]
    assert layout.sorted_layout(rack, "K1", "runs")[:6] == ["R1", "R2", N, "Y4", "Y4", N]


def test_a_group_that_would_pass_the_first_row_starts_the_second() -> None:
    runs = [f"R{n}" for n in range(1, 8)] + [f"Y{n}" for n in range(1, 8)] + ["B1", "B2", "B3"]
    lay = layout.sorted_layout(list(reversed(runs)), "K9", "runs")
    assert lay[:16] == runs[:7] + [N] + runs[7:14] + [N]
    assert lay[16:19] == ["B1", "B2", "B3"] and lay[19:] == [N] * 13


def test_without_room_for_the_gaps_the_tiles_stand_in_order() -> None:
    rack = [f"{c}{n}" for c in "KBY" for n in (1, 3, 5, 7, 9, 11)]  # 18 groups of one
    lay = layout.sorted_layout(rack, "R1", "runs")
    order = [f"{c}{n}" for c in "YBK" for n in (1, 3, 5, 7, 9, 11)]
    assert lay == order + [N] * 14


@given(
    st.lists(st.sampled_from(TILES), max_size=22),
    st.sampled_from(TILES[:-1]),
    st.sampled_from(layout.SORTS),
)
def test_a_sorted_rack_holds_exactly_the_rack_with_the_wilds_last(
    rack: list[str], okey: str, by: str
) -> None:
    lay = layout.sorted_layout(rack, okey, by)
    assert layout.check(lay, rack) == lay
    placed = [c for c in lay if c is not None]
    wild = [c == okey for c in placed]
    assert wild == sorted(wild)


def test_the_tiles_in_chosen_slots_are_those_tiles_even_when_another_copy_stands_before() -> None:
    lay: list[str | None] = [None] * layout.SLOTS
    lay[0:5] = ["R9", "R10", "R11", "R12", "R13"]
    lay[6:10] = ["Y13", "K13", "B13", "R13"]  # the second R13, in a set
    lay[16:19] = ["B9", "B10", "B11"]
    slots = [6, 7, 8, 9, 16, 17, 18]
    assert layout.groups_at(lay, slots) == [["Y13", "K13", "B13", "R13"], ["B9", "B10", "B11"]]
    # By name, the first R13 on the rack would be taken: the set broken, the run cut.
    assert layout.selected_groups(lay, ["Y13", "K13", "B13", "R13"]) != [
        ["Y13", "K13", "B13", "R13"]
    ]
    for bad in ([5], [6, 6], [99], [-1]):
        with pytest.raises(ValueError):
            layout.groups_at(lay, bad)
