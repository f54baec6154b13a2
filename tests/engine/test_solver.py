"""The hand solver: hand-made racks for every function, then hypothesis against the reference.

Racks are written in RULES.md notation. ``OKEY`` is the hand's okey identity: tiles written as
the okey are wild; ``F`` plays as the okey's identity. ``reference`` (beside this file) is a
slow brute-force solver written from RULES.md alone; it is checked on the hand-made racks too.

Engine bugs the reference found are kept as tests with their minimal racks (the ``*_bug``
tests): arrange with two runs sharing a number, surplus wilds beside 4-sets in the leftover, and
three sets of one number in an opening.

The property tests run a fixed sequence of 400 examples each (``derandomize``) so that the
suite is stable; set ``OKEY_FUZZ=1`` to explore 2,000 new examples each on every run.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import solver
from games.engine.errors import MeldError
from games.engine.melds import PAIR, Meld, read_meld, read_pair
from games.engine.tiles import deal, format_tile, okey_of, parse_tile
from tests.engine import racks as rk
from tests.engine import reference as ref

FUZZ = bool(os.environ.get("OKEY_FUZZ"))


def T(text: str) -> list[int]:
    """Tiles from notation separated by spaces."""
    return [parse_tile(t) for t in text.split()]


def names(tiles: Sequence[int]) -> list[str]:
    return [format_tile(t) for t in tiles]


def table(okey: str, wrap: bool, *melds: str) -> list[Meld]:
    out = []
    for k, text in enumerate(melds):
        tokens = text.split()
        m = (
            read_pair(tokens, parse_tile(okey))
            if len(tokens) == 2
            else read_meld(tokens, parse_tile(okey), wrap)
        )
        m.id = k
        out.append(m)
    return out


# A 14-tile winning hand of runs and sets (okey Y3 is absent: no wilds).
WIN14 = "R1 R2 R3 B5 K5 Y5 K7 K8 K9 K10 R11 B11 K11 Y11"


# ---------------------------------------------------------------------------------------------
# (a) groups_into_melds
# ---------------------------------------------------------------------------------------------
GROUPS = [
    # (tiles, okey, wrap, expected)
    (WIN14, "Y3", True, True),
    ("R1 R2 R4 B5 K5 Y5 K7 K8 K9 K10 R11 B11 K11 Y11", "Y3", True, False),
    ("R1 R2 R3", "Y3", True, True),
    ("R1 R2", "Y3", True, False),
    ("R1 B1 K1 Y1", "Y3", True, True),
    ("R1 B1 K1 Y1 R1", "Y3", True, False),  # a set has each colour once
    ("R1 R1 R1", "Y3", True, False),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13", "Y3", True, True),  # a run of 13
    # Wrap: 12-13-1 and 11-12-13-1 only with wrap_13_1; 13-1-2 never.
    ("R12 R13 R1", "Y3", True, True),
    ("R12 R13 R1", "Y3", False, False),
    ("R11 R12 R13 R1", "Y3", True, True),
    ("R13 R1 R2", "Y3", True, False),
    ("R13 R1 R2", "Y3", False, False),
    ("R12 R13 R1 R2 R3", "Y3", True, False),  # one R1 cannot end 12-13-1 and start 1-2-3
    ("R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", "Y3", True, True),  # 2..13 then 1
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", "Y3", True, True),  # 1..11, 12-13-1
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", "Y3", False, False),
    # One wild okey (Y3 is the okey: Y3 is wild).
    ("R1 Y3 R3", "Y3", True, True),
    ("R1 R2 Y3", "Y3", True, True),
    ("R5 B5 Y3", "Y3", True, True),
    ("R5 Y3", "Y3", True, False),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 Y3", "Y3", True, True),  # 13-run + wild
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 Y3", "Y3", False, True),
    ("R12 Y3 R1", "Y3", True, True),  # 12-(13)-1
    ("R12 Y3 R1", "Y3", False, False),
    ("Y3 R1 R2", "Y3", False, True),  # the wild as R3 (or as a high 13? never: 13-1-2)
    ("R13 Y3 R2", "Y3", True, False),  # the wild cannot be the 1 of 13-1-2
    ("R13 R1 Y3", "Y3", True, True),  # ... but can be the 12 of 12-13-1
    ("R13 R1 Y3", "Y3", False, False),
    # Two wild okeys.
    ("R7 Y3 Y3", "Y3", True, True),
    ("Y3 Y3", "Y3", True, False),  # every meld needs a tile that is not wild
    ("R1 B1 K1 Y1 Y3 Y3", "Y3", True, True),  # R1 B1 K1 and Y1 with two wilds as Y1-Y2-Y3
    ("R5 B5 K5 Y5 R9 B9 K9 Y9 R12 B12 K12 Y12 Y3 Y3", "Y3", True, True),
    ("R5 B5 K5 Y5 Y3 Y3", "Y3", True, True),
    ("R1 R3 R5 Y3 Y3", "Y3", True, True),
    ("R1 R4 Y3 Y3", "Y3", True, True),  # R1 R2 R3 R4: two wilds in one run
    ("R1 R5 Y3 Y3", "Y3", True, False),
    ("R1 K1 Y3 Y3", "Y3", True, True),  # a set of four with two wilds
    # Fakes play as the okey's identity (okey R6: F is an ordinary R6; R6 is wild).
    ("R4 R5 F", "R6", True, True),
    ("F R7 R8", "R6", True, True),
    ("F B6 K6", "R6", True, True),
    ("F F R7", "R6", True, False),  # two R6 in one run
    ("R4 F R9", "R6", True, False),  # a fake is not wild
    ("R4 R6 R9", "R6", True, False),
    ("R4 R6 R5", "R6", True, True),  # the wild R6 stands for anything
    ("F R6 R7", "R6", True, True),
]


@pytest.mark.parametrize(("text", "okey", "wrap", "expected"), GROUPS)
def test_groups_into_melds(text: str, okey: str, wrap: bool, expected: bool) -> None:
    assert solver.groups_into_melds(T(text), parse_tile(okey), wrap) is expected
    assert ref.groups(text.split(), okey, wrap) is expected


# ---------------------------------------------------------------------------------------------
# (a) can_finish: 15 tiles, throw one
# ---------------------------------------------------------------------------------------------
FINISH = [
    (WIN14 + " B13", "Y3", True, True),
    (WIN14 + " Y3", "Y3", True, True),  # throw the wild okey
    ("R1 R2 R4 B5 K5 Y5 K7 K8 K9 K10 R11 B11 K11 Y11 B13", "Y3", True, False),
    ("R1 R2 R4 B5 K5 Y5 K7 K8 K9 K10 R11 B11 K11 Y11 Y3", "Y3", True, True),  # wild as R3
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1 B9", "Y3", True, True),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1 B9", "Y3", False, False),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1 R5", "Y3", False, True),  # throw R1
    ("B12 B13 B1 R4 R5 R6 K8 K9 K10 K11 Y2 B2 K2 R2 R9", "Y3", True, True),
    ("B12 B13 B1 R4 R5 R6 K8 K9 K10 K11 Y2 B2 K2 R2 R9", "Y3", False, False),
    # Two wilds, a throw.
    ("R1 Y3 R3 B5 K5 Y5 K7 K8 Y3 K10 R11 B11 K11 Y11 B13", "Y3", True, True),
    ("R1 Y3 R4 B5 K5 Y5 K7 K8 Y3 K10 R11 B11 K11 Y13 B13", "Y3", True, False),
    # Fakes (okey R6).
    ("R4 R5 F B6 K6 Y6 R9 R10 R11 R12 K1 K2 K3 K4 B1", "R6", True, True),
    ("R4 R5 F F B6 K6 R10 R11 R12 K1 K2 K3 K4 B1 B9", "R6", True, False),
]


@pytest.mark.parametrize(("text", "okey", "wrap", "expected"), FINISH)
def test_can_finish(text: str, okey: str, wrap: bool, expected: bool) -> None:
    assert len(text.split()) == 15
    assert solver.can_finish(T(text), parse_tile(okey), wrap) is expected
    assert ref.can_finish(text.split(), okey, wrap) is expected


# ---------------------------------------------------------------------------------------------
# arrange: a grouping as melds
# ---------------------------------------------------------------------------------------------
def check_arrangement(melds: list[Meld], tiles: Sequence[int], okey: int, wrap: bool) -> None:
    """Every meld is a valid run or set (read back through read_meld) and together they use
    exactly the tiles given."""
    used: Counter[int] = Counter()
    for m in melds:
        assert m.kind in ("run", "set")
        assert any(not w for w in m.wild), m.tokens()
        again = read_meld(m.tokens(), okey, wrap)
        assert again.kind == m.kind
        assert sorted(again.tiles) == sorted(m.tiles)
        used.update(m.tiles)
    assert used == Counter(tiles)


@pytest.mark.parametrize(
    ("text", "okey", "wrap"), [(t, o, w) for t, o, w, e in GROUPS if e and len(t.split()) >= 3]
)
def test_arrange_valid(text: str, okey: str, wrap: bool) -> None:
    tiles = T(text)
    melds = solver.arrange(tiles, parse_tile(okey), wrap)
    assert melds is not None
    check_arrangement(melds, tiles, parse_tile(okey), wrap)


@pytest.mark.parametrize(("text", "okey", "wrap"), [(t, o, w) for t, o, w, e in GROUPS if not e])
def test_arrange_none(text: str, okey: str, wrap: bool) -> None:
    assert solver.arrange(T(text), parse_tile(okey), wrap) is None


@pytest.mark.parametrize(
    ("text", "okey"), [("Y1 Y1 Y2 Y3 Y3 Y11", "Y11"), ("R3 R3 R4 R5 R5 K4", "K4")]
)
def test_arrange_shared_number_bug(text: str, okey: str) -> None:
    assert ref.groups(text.split(), okey, True)
    melds = solver.arrange(T(text), parse_tile(okey), True)
    assert melds is not None
    check_arrangement(melds, T(text), parse_tile(okey), True)


# ---------------------------------------------------------------------------------------------
# (b) pairs, (c)-(d) finish kinds
# ---------------------------------------------------------------------------------------------
PAIRS = [
    # (tiles, okey, pair_count)
    ("R5 R5 B5 B5", "Y3", 2),
    ("R5 B5", "Y3", 0),
    ("R5 B5 Y3", "Y3", 1),
    ("Y3 Y3", "Y3", 1),
    ("R5 Y3 Y3", "Y3", 1),
    ("R5 B5 Y3 Y3", "Y3", 2),
    ("F F", "R6", 1),  # two fakes are a pair
    ("F R6", "R6", 1),  # the wild pairs with the fake
    ("R5 R5 R5", "Y3", 1),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7", "Y3", 7),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K8", "Y3", 6),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 Y3", "Y3", 7),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 Y3 K7 Y3", "Y3", 7),
]


@pytest.mark.parametrize(("text", "okey", "expected"), PAIRS)
def test_pair_count(text: str, okey: str, expected: int) -> None:
    assert solver.pair_count(T(text), parse_tile(okey)) == expected
    assert ref.pair_count(text.split(), okey) == expected


@pytest.mark.parametrize(
    ("text", "okey", "expected"),
    [
        ("R5 R5", "Y3", 0),
        ("R5 R5 B5", "Y3", 1),
        ("R5 R5 B5 B5", "Y3", 1),
        ("Y3 Y3", "Y3", 0),
        ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7", "Y3", 6),
        ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7 K9", "Y3", 7),
        ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7 K7", "Y3", 7),
    ],
)
def test_most_pairs_keeps_a_tile(text: str, okey: str, expected: int) -> None:
    assert solver.most_pairs(T(text), parse_tile(okey)) == expected
    assert ref.most_pairs(text.split(), okey) == expected


def test_is_seven_pairs() -> None:
    okey = parse_tile("Y3")
    assert solver.is_seven_pairs(T("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7"), okey)
    assert solver.is_seven_pairs(T("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 Y3 K7 Y3"), okey)
    assert not solver.is_seven_pairs(T("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K8"), okey)
    assert not solver.is_seven_pairs(T("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6"), okey)


KINDS = [
    # (14 tiles, okey, pairs_allowed, kind)
    (WIN14, "Y3", True, "normal"),
    (WIN14, "Y3", False, "normal"),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7", "Y3", True, "pairs"),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7", "Y3", False, None),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K8", "Y3", True, None),
    ("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 Y3 K7 Y3", "Y3", True, "pairs"),
    # Colour: all 14 of one colour, grouped.
    ("R1 R2 R3 R4 R1 R2 R3 R4 R6 R7 R8 R10 R11 R12", "Y3", True, "colour"),
    ("R1 R2 R3 R4 R1 R2 R3 R4 R6 R7 R8 R10 R11 R12", "Y3", False, "normal"),
    ("R1 R2 R3 R4 R1 R2 R3 R4 R6 R7 R8 R10 R11 Y3", "Y3", True, "colour"),  # wild: any colour
    ("R1 R2 R3 R4 R5 R1 R2 R3 R4 R6 R7 R8 R10 R11", "Y3", True, None),
    ("R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 R9 R9", "Y3", True, "colour"),  # colour by pairs
    # Okey R6: F is a red 6 (counts as the okey's colour).
    ("R1 R2 R3 R4 R5 F R1 R2 R3 R4 R7 R8 R9 R10", "R6", True, "colour"),
    ("R1 R2 R3 R4 R5 F R1 R2 R3 R4 K7 K8 K9 K10", "R6", True, "normal"),
    # Sequential colour: one colour and every number 1..13.
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R7", "Y3", True, "sequential_colour"),
    ("R1 R2 R3 R4 R5 R5 R6 R7 R8 R9 R10 R11 Y3 Y3", "Y3", True, "sequential_colour"),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R7", "Y3", False, "normal"),
]


@pytest.mark.parametrize(("text", "okey", "pairs_allowed", "kind"), KINDS)
def test_finish_kind(text: str, okey: str, pairs_allowed: bool, kind: str | None) -> None:
    assert len(text.split()) == 14
    assert solver.finish_kind(T(text), parse_tile(okey), True, pairs_allowed) == kind
    assert ref_finish_kind(text.split(), okey, True, pairs_allowed) == kind


def ref_finish_kind(tiles: Sequence[str], okey: str, wrap: bool, pairs_allowed: bool) -> str | None:
    """RULES.md §2: a finish needs runs and sets, or (classic) seven pairs; the best kind wins:
    sequential colour > colour > pairs > normal."""
    melds = ref.groups(tiles, okey, wrap)
    pairs = pairs_allowed and ref.seven_pairs(tiles, okey)
    if not melds and not pairs:
        return None
    if pairs_allowed and ref.one_colour(tiles, okey):
        return "sequential_colour" if ref.every_number(tiles, okey) else "colour"
    return "pairs" if pairs else "normal"


RANK = {"normal": 0, "pairs": 1, "colour": 2, "sequential_colour": 3}


def ref_best_finish(
    rack: Sequence[str], okey: str, wrap: bool, pairs_allowed: bool
) -> tuple[int, bool] | None:
    """(the best kind's rank, whether a wild okey can be thrown for it)."""
    best: tuple[int, bool] | None = None
    for k, t in enumerate(rack):
        kind = ref_finish_kind(list(rack[:k]) + list(rack[k + 1 :]), okey, wrap, pairs_allowed)
        if kind is None:
            continue
        cand = (RANK[kind], t == okey)
        if best is None or cand > best:
            best = cand
    return best


def test_best_finish() -> None:
    okey = parse_tile("Y3")
    assert solver.best_finish(T(WIN14 + " B13"), okey, True, True) == (parse_tile("B13"), "normal")
    # A wild okey thrown is preferred on a tie (it doubles the finish).
    assert solver.best_finish(T(WIN14 + " Y3"), okey, True, True) == (okey, "normal")
    # Throwing K9 leaves seven pairs (classic only).
    rack = T("R1 R1 B2 B2 K3 K3 Y4 Y4 R5 R5 B6 B6 K7 K7 K9")
    assert solver.best_finish(rack, okey, True, True) == (parse_tile("K9"), "pairs")
    assert solver.best_finish(rack, okey, True, False) is None
    # Colour beats normal: throwing the blue tile leaves 14 reds.
    rack = T("R1 R2 R3 R4 R1 R2 R3 R4 R6 R7 R8 R10 R11 R12 B12")
    assert solver.best_finish(rack, okey, True, True) == (parse_tile("B12"), "colour")
    assert solver.best_finish(T(WIN14.replace("R3", "R4") + " B13"), okey, True, True) is None


# ---------------------------------------------------------------------------------------------
# (e) least leftover (Düz)
# ---------------------------------------------------------------------------------------------
LEFTOVER = [
    # (tiles, okey, wrap, least face value left over)
    (WIN14, "Y3", True, 0),
    ("R1 B9 K13", "Y3", True, 23),
    ("R1 R2 R3 B9 K13", "Y3", True, 22),
    ("R1 R2 R3 R4 B9", "Y3", True, 9),
    ("R1 R2 R3 R3 R4 R5", "Y3", True, 0),
    ("R1 R2 R3 R4 R5 R6 R7", "Y3", True, 0),
    ("R12 R13 R1 B5", "Y3", True, 5),
    ("R12 R13 R1 B5", "Y3", False, 31),
    ("R13 R1 R2", "Y3", True, 16),  # 13-1-2 is never a run
    ("R5 B5 K5 R6 R7", "Y3", True, 10),  # the set leaves 6+7, the run 5+5
    ("F B9", "R6", True, 15),  # a fake counts the okey's number
    ("F R7 R8 B9", "R6", True, 9),  # ... or melds as the okey
    ("R1 R2 Y3 B9", "Y3", True, 9),  # the wild makes R1-R2-R3
    ("R1 R3 Y3 B9", "Y3", True, 9),  # the wild fills R2
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 Y3", "Y3", True, 0),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 Y3", "Y3", False, 0),
    ("R1 Y3 Y3 B9", "Y3", True, 1),  # B9 and two wilds beat R1 and two wilds
    ("R5 B5 K5 Y5 R10", "Y3", True, 10),
    # A wild okey that no meld can take counts the okey's number.
    ("R1 B9 K3", "K3", True, 13),
    ("F K1 Y11", "K1", True, 13),  # F (a K1) 1 + the wild 1 + 11
    ("B11 K11 Y7", "B11", True, 29),
    ("K3 K3", "K3", True, 6),
    # Three sets of one number: R B K, R B Y and K Y + the wild.
    ("R5 R5 B5 B5 K5 K5 Y5 Y5 K3", "K3", True, 0),
]


@pytest.mark.parametrize(("text", "okey", "wrap", "expected"), LEFTOVER)
def test_least_leftover(text: str, okey: str, wrap: bool, expected: int) -> None:
    assert ref.least_leftover(text.split(), okey, wrap) == expected
    assert solver.least_leftover(T(text), parse_tile(okey), wrap) == expected


@pytest.mark.parametrize(
    ("text", "okey", "expected"),
    [
        (WIN14, "Y3", 0),
        ("R1 B9 K13", "Y3", 3),
        ("R1 R2 R3 B9 K13", "Y3", 2),
        ("R1 B9 Y3", "Y3", 3),  # the wild cannot meld: it is left too
        ("R1 R3 Y3 B9", "Y3", 1),
        ("R5 B5 K5 R6 R7", "Y3", 2),
        ("R13 R1 R2", "Y3", 3),
    ],
)
def test_least_leftover_count(text: str, okey: str, expected: int) -> None:
    """``count=True``: the fewest tiles left outside melds."""
    assert ref.least_leftover(text.split(), okey, True, count=True) == expected
    assert solver.least_leftover(T(text), parse_tile(okey), True, count=True) == expected


@pytest.mark.parametrize(
    ("text", "okey", "count", "expected"),
    [
        ("R5 B5 K5 Y5 K3 R9", "K3", False, 12),  # R9 and the wild K3: 9 + 3
        ("R5 B5 K5 Y5 K3 R9", "K3", True, 2),
        # 14 tiles, as Düz scores a loser: 1+1+8+11+2+9+12+10+13 = 67 and the wild 3.
        ("R5 B5 K5 Y5 K3 R1 R1 R8 R11 B2 B9 B12 K10 K13", "K3", False, 70),
        ("R5 B5 K5 Y5 K3 R1 R1 R8 R11 B2 B9 B12 K10 K13", "K3", True, 10),
        # A set of three takes one wild, not two: B9 K9 + two wilds, Y9 left (engine: 0).
        ("B9 K9 Y9 R11 R11", "R11", False, 9),
    ],
)
def test_least_leftover_four_set_wild_bug(text: str, okey: str, count: bool, expected: int) -> None:
    assert ref.least_leftover(text.split(), okey, False, count=count) == expected
    assert solver.least_leftover(T(text), parse_tile(okey), False, count=count) == expected


# ---------------------------------------------------------------------------------------------
# (f) best opening
# ---------------------------------------------------------------------------------------------
def check_opening(opening: solver.Opening, rack: Sequence[int], okey: int, wrap: bool) -> None:
    """The melds are valid, disjoint, in the rack, leave a tile, and add up to the total."""
    used: Counter[str] = Counter()
    total = 0
    for tokens in opening.melds:
        try:
            m = read_meld(list(tokens), okey, wrap)
        except MeldError as exc:  # pragma: no cover - the assertion says which
            raise AssertionError(f"invalid meld {tokens}: {exc}") from exc
        total += m.value(okey)
        used.update(tok.split(":")[0] for tok in tokens)
    have = Counter(names(rack))
    assert not used - have, f"melds use tiles not in the rack: {used - have}"
    assert sum(used.values()) < len(rack), "no tile kept to discard"
    assert sum(used.values()) == opening.tiles_used
    assert total == opening.total


OPENINGS = [
    # (tiles, okey, wrap, best total)
    ("R10 R11 R12 R13 B1", "Y3", True, 46),
    ("R10 R11 R12 R13", "Y3", True, 36),  # one tile must stay: 11-12-13
    ("R10 R11 R12", "Y3", True, 0),
    ("R11 R12 Y3 B1", "Y3", True, 36),  # the wild as R13 counts 13
    ("R12 R13 R1 B2", "Y3", True, 26),  # a high 1 counts 1
    ("R12 R13 R1 B2", "Y3", False, 0),
    ("R13 R1 R2 B5", "Y3", True, 0),
    ("R13 B13 K13 Y13 R1", "Y3", True, 52),
    ("R13 B13 K13 Y3 R1", "Y3", True, 52),  # the wild as Y13
    ("R13 B13 Y3 Y3 R1", "Y3", True, 52),
    ("R1 B1 K1 R2 R3 K9", "Y3", True, 6),  # the run or the set, not both
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 B4", "Y3", True, 91),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", "Y3", True, 91),
    ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1 B1", "Y3", True, 92),
    ("F R7 R8 B1", "R6", True, 21),  # a fake plays as R6
    ("F B6 K6 R6 B1", "R6", True, 24),  # F B6 K6 + the wild as Y6
    # Okey 51 bar examples: 51 reached; 50 not.
    ("K1 K2 K3 R11 B11 K11 Y11 R9", "B6", True, 50),
    ("K1 K2 K3 R11 B11 K11 Y11 R9 R10 R8", "B6", True, 71),  # all ten melds: one must stay
    ("K1 K2 K3 R11 B11 K11 Y11 R9 R10 R8 B2", "B6", True, 77),
]


@pytest.mark.parametrize(("text", "okey", "wrap", "expected"), OPENINGS)
def test_best_opening(text: str, okey: str, wrap: bool, expected: int) -> None:
    assert ref.best_opening(text.split(), okey, wrap) == expected
    found = solver.best_opening(T(text), parse_tile(okey), wrap)
    assert found.total == expected
    check_opening(found, T(text), parse_tile(okey), wrap)


def test_opening_bar() -> None:
    okey = parse_tile("B6")
    fifty = solver.best_opening(T("K1 K2 K3 R11 B11 K11 Y11 R9"), okey, True)
    assert not fifty.reaches(51) and fifty.reaches(50)
    assert solver.best_opening(T("K1 K2 K3 R11 B11 K11 Y11 R9 R10 R8"), okey, True).reaches(71)
    assert not solver.best_opening(T("K1 K2 K3 R11 B11 K11 Y11 R9 R10 R8"), okey, True).reaches(72)


@pytest.mark.parametrize(
    ("text", "wrap", "expected"),
    [
        # Eight 12s, one wild, one tile to keep: R B K, R B Y, K Y + wild = 108 (engine: 98).
        ("R12 R12 B12 B12 K12 K12 Y12 Y12 Y9 B1", True, 108),
        ("R5 R5 B5 B5 K5 K5 Y5 Y5 Y9 B1", True, 45),  # engine: 40
        # Found by the property test against the reference: 108 + B1 B2 B3 (engine: 111).
        ("B12 B3 Y1 R12 K12 B5 B12 Y9 Y12 K8 B2 Y12 B1 K12 R12", False, 114),
    ],
)
def test_best_opening_three_sets_of_one_number_bug(text: str, wrap: bool, expected: int) -> None:
    assert ref.best_opening(text.split(), "Y9", wrap) == expected
    assert solver.best_opening(T(text), parse_tile("Y9"), wrap).total == expected


# ---------------------------------------------------------------------------------------------
# (g) workable tiles
# ---------------------------------------------------------------------------------------------
def test_fits_table_runs_and_sets() -> None:
    melds = table("Y3", False, "R3 R4 R5", "B7 K7 Y7", "R9 B9 K9 Y9")
    fits = {format_tile(i) for i in range(52) if solver.fits_table(i, melds, False)}
    assert fits == {"R2", "R6", "R7"}
    assert solver.fits_table(None, melds, False)  # a wild fits the run or the 3-set
    assert not solver.fits_table(None, table("Y3", False, "R9 B9 K9 Y9"), False)


def test_fits_table_wrap() -> None:
    on = table("Y3", True, "R11 R12 R13")
    off = table("Y3", False, "R11 R12 R13")
    assert solver.fits_table(parse_tile("R1"), on, True)
    assert not solver.fits_table(parse_tile("R1"), off, False)
    assert solver.fits_table(parse_tile("R10"), off, False)
    # Nothing follows a high 1; 13-1-2 never.
    after = table("Y3", True, "R12 R13 R1")
    assert not solver.fits_table(parse_tile("R2"), after, True)
    assert solver.fits_table(parse_tile("R11"), after, True)
    low = table("Y3", True, "R1 R2 R3")
    assert not solver.fits_table(parse_tile("R13"), low, True)


def test_fits_table_full_run_and_pairs() -> None:
    full = table("Y3", True, "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13")
    assert not any(solver.fits_table(i, full, True) for i in range(52))
    assert not solver.fits_table(None, full, True)
    pairs = table("Y3", True, "R5 R5")
    assert pairs[0].kind == PAIR
    assert not any(solver.fits_table(i, pairs, True) for i in range(52))


def test_swaps_table() -> None:
    okey = "Y3"
    run = table(okey, True, "R3 Y3 R5")  # the wild is R4
    assert solver.swaps_table(parse_tile("R4"), run)
    assert not solver.swaps_table(parse_tile("R6"), run)
    open_set = table(okey, True, "B7 K7 Y3")  # the wild is R7 or Y7, not yet fixed
    assert solver.swaps_table(parse_tile("R7"), open_set)
    assert solver.swaps_table(parse_tile("Y7"), open_set)
    assert not solver.swaps_table(parse_tile("B7"), open_set)
    fixed = table(okey, True, "R7 B7 K7 Y3")  # the wild can only be Y7
    assert solver.swaps_table(parse_tile("Y7"), fixed)
    assert not solver.swaps_table(parse_tile("R7"), fixed)
    assert not solver.swaps_table(parse_tile("R4"), table(okey, True, "R3 R4 R5"))


def test_workable_tiles() -> None:
    okey = "Y3"
    melds = table(okey, False, "R3 Y3 R5", "R7 B7 K7 Y3", "K11 K12 K13")
    no_swap = {format_tile(i) for i in solver.workable_tiles(melds, False, False)}
    assert no_swap == {"R2", "R6", "K10"}
    with_swap = {format_tile(i) for i in solver.workable_tiles(melds, False, True)}
    assert with_swap == {"R2", "R6", "K10", "R4", "Y7"}
    assert solver.workable_tiles([], True, True) == set()


# ---------------------------------------------------------------------------------------------
# Property tests against the reference
# ---------------------------------------------------------------------------------------------
PROPERTY = settings(
    max_examples=2000 if FUZZ else 400,
    deadline=None,
    derandomize=not FUZZ,
    suppress_health_check=[HealthCheck.too_slow],
)

Rack = tuple[list[str], str, bool]  # (tiles, okey, wrap)


@st.composite
def dealt_racks(draw: st.DrawFn, seat: int | None = None) -> Rack:
    """A rack from a real deal (random seed), its wild count sometimes forced to 0, 1 or 2."""
    seed = draw(st.binary(min_size=32, max_size=32)).hex()
    who = draw(st.integers(0, 3)) if seat is None else seat
    wrap = draw(st.booleans())
    d = deal(seed, 4)
    indicator = format_tile(d.indicator)
    okey = rk.okey_for(indicator)
    rack = names(d.racks[who])
    wilds = draw(st.sampled_from([None, 0, 1, 2]))
    if wilds is not None:
        rest = [format_tile(t) for k, r in enumerate(d.racks) if k != who for t in r]
        rest += names(d.pile)
        rack = rk.set_wilds(rack, rest, okey, wilds, random.Random(seed))
    return rack, okey, wrap


@st.composite
def near_racks(draw: st.DrawFn) -> Rack:
    """15 tiles: a winning 14 plus one, with one or two tiles replaced (0-2 wilds)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    wrap = draw(st.booleans())
    wilds = draw(st.sampled_from([0, 1, 2]))
    replace = draw(st.sampled_from([1, 2]))
    rack, indicator = rk.near_finished(rng, wilds, wrap, replace)
    return rack, rk.okey_for(indicator), wrap


@st.composite
def winning_racks(draw: st.DrawFn) -> Rack:
    """15 tiles: a winning 14 (0-2 wilds) plus any tile left in the box."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    wrap = draw(st.booleans())
    rack, indicator = rk.winning_rack(rng, draw(st.sampled_from([0, 1, 2])), wrap)
    box = rk.box_without(indicator, rack)
    rack.append(box[rng.randrange(len(box))])
    rng.shuffle(rack)
    return rack, rk.okey_for(indicator), wrap


fifteen = st.one_of(dealt_racks(seat=0), near_racks(), winning_racks())


@pytest.mark.slow
@PROPERTY
@given(fifteen)
def test_can_finish_matches_reference(case: Rack) -> None:
    rack, okey, wrap = case
    assert len(rack) == 15
    assert solver.can_finish(T(" ".join(rack)), parse_tile(okey), wrap) == ref.can_finish(
        rack, okey, wrap
    ), (rack, okey, wrap)


@pytest.mark.slow
@PROPERTY
@given(fifteen, st.integers(0, 14))
def test_groups_match_reference(case: Rack, drop: int) -> None:
    rack, okey, wrap = case
    tiles14 = rack[:drop] + rack[drop + 1 :]
    expected = ref.groups(tiles14, okey, wrap)
    codes = T(" ".join(tiles14))
    assert solver.groups_into_melds(codes, parse_tile(okey), wrap) == expected, (tiles14, okey)


@pytest.mark.slow
@PROPERTY
@given(fifteen, st.integers(0, 14))
def test_arrange_matches_reference(case: Rack, drop: int) -> None:
    rack, okey, wrap = case
    tiles14 = rack[:drop] + rack[drop + 1 :]
    codes = T(" ".join(tiles14))
    melds = solver.arrange(codes, parse_tile(okey), wrap)
    assert (melds is not None) == ref.groups(tiles14, okey, wrap), (tiles14, okey)
    if melds is not None:
        check_arrangement(melds, codes, parse_tile(okey), wrap)


@pytest.mark.slow
@PROPERTY
@given(st.one_of(dealt_racks(), near_racks()))
def test_least_leftover_matches_reference(case: Rack) -> None:
    rack, okey, wrap = case
    codes = T(" ".join(rack))
    got = solver.least_leftover(codes, parse_tile(okey), wrap)
    assert got == ref.least_leftover(rack, okey, wrap), (rack, okey, wrap)
    tiles_left = solver.least_leftover(codes, parse_tile(okey), wrap, count=True)
    assert tiles_left == ref.least_leftover(rack, okey, wrap, count=True), (rack, okey, wrap)


@pytest.mark.slow
@PROPERTY
@given(st.one_of(dealt_racks(), near_racks()))
def test_best_opening_matches_reference(case: Rack) -> None:
    rack, okey, wrap = case
    codes = T(" ".join(rack))
    found = solver.best_opening(codes, parse_tile(okey), wrap)
    assert found.total == ref.best_opening(rack, okey, wrap), (rack, okey, wrap, found)
    check_opening(found, codes, parse_tile(okey), wrap)


@pytest.mark.slow
@PROPERTY
@given(st.one_of(dealt_racks(), near_racks()))
def test_pairs_match_reference(case: Rack) -> None:
    rack, okey, _wrap = case
    codes = T(" ".join(rack))
    assert solver.pair_count(codes, parse_tile(okey)) == ref.pair_count(rack, okey)
    assert solver.most_pairs(codes, parse_tile(okey)) == ref.most_pairs(rack, okey)


@st.composite
def closed_racks(draw: st.DrawFn) -> Rack:
    """15 tiles likely to finish in some kind: winning, near-pairs or (mostly) one colour."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    shape = draw(st.sampled_from(["win", "pairs", "colour"]))
    if shape == "win":
        return draw(winning_racks())
    indicator = rk.name(rng.randrange(4), rng.randint(1, 13))
    okey = rk.okey_for(indicator)
    box = rk.box_without(indicator, [])
    if shape == "pairs":
        singles = sorted(set(t for t in box if t != okey))
        rack = [t for t in rng.sample(singles, 7) for _ in (0, 1)]
        k = rng.randrange(14)
        rack[k] = rng.choice([okey, rng.choice(singles)])
        rack.append(rng.choice(singles))
    else:
        colour = rng.choice("RBKY")
        pool = [t for t in box if t[0] == colour or t == "F" or t == okey]
        rack = rng.sample(pool, 15)
        if rng.random() < 0.5:
            rack[0] = rng.choice([t for t in box if t[0] != colour and t != okey])
    # Never more copies than exist.
    if any(n > 2 for n in Counter(rack).values()) or Counter(rack)[indicator] > 1:
        return draw(winning_racks())
    rng.shuffle(rack)
    return rack, okey, draw(st.booleans())


@pytest.mark.slow
@PROPERTY
@given(closed_racks(), st.booleans())
def test_best_finish_matches_reference(case: Rack, pairs_allowed: bool) -> None:
    rack, okey, wrap = case
    codes = T(" ".join(rack))
    got = solver.best_finish(codes, parse_tile(okey), wrap, pairs_allowed)
    expected = ref_best_finish(rack, okey, wrap, pairs_allowed)
    if expected is None:
        assert got is None, (rack, okey, got)
        return
    assert got is not None, (rack, okey, expected)
    thrown, kind = got
    assert (RANK[kind], thrown == parse_tile(okey)) == expected, (rack, okey, got)
    rest = list(rack)
    rest.remove(format_tile(thrown))
    assert ref_finish_kind(rest, okey, wrap, pairs_allowed) == kind
    assert solver.finish_kind(T(" ".join(rest)), parse_tile(okey), wrap, pairs_allowed) == kind


def test_the_memos_are_bounded_and_a_full_one_starting_again_changes_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server process meets ever more colour vectors: each per-colour memo keeps at most
    ``MEMO_LIMIT`` entries (a full one starts again), and the answers are the same."""
    rng = random.Random(7)
    racks = []
    for _ in range(150):
        dealt = deal(f"{rng.getrandbits(256):064x}")
        racks.append((dealt.racks[0], okey_of(dealt.indicator), rng.random() < 0.5))

    def answers() -> list[tuple[int, int, bool]]:
        return [
            (
                solver.least_leftover(rack, okey, wrap),
                solver.least_leftover(rack, okey, wrap, count=True),
                solver.can_finish(rack, okey, wrap),
            )
            for rack, okey, wrap in racks
        ]

    expected = answers()
    monkeypatch.setattr(solver, "MEMO_LIMIT", 40)
    solver._runs_min_memo.clear()
    solver._dead_memo.clear()
    for fn in (
        solver.colour_min,
        solver.colour_min_less_one,
        solver.colour_dead,
        solver._colour_leaf,
    ):
        fn.cache_clear()
    assert answers() == expected
    assert 0 < len(solver._runs_min_memo) <= 40
    assert 0 < len(solver._dead_memo) <= 40
    for fn in (
        solver.colour_min,
        solver.colour_min_less_one,
        solver.colour_dead,
        solver._colour_leaf,
        solver._open_runs,
        solver._colour_runs,
    ):
        assert fn.cache_info().maxsize is not None, fn.__name__
