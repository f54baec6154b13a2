"""okey101's openings at 22 tiles: the solver's best melds opening (12-13-1 never a run) and its
most pairs agree with the brute force of tests/engine/reference.py on racks dealt as okey101
deals them, with zero, one or two wild okeys (Hypothesis); on the largest racks the brute force
is slow, so those are fewer (their speed is bench/engine.py's business)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import solver
from games.engine.tiles import deal, format_tile, parse_tile
from tests.engine import racks as rk
from tests.engine import reference as ref

Rack = tuple[list[str], str]


@st.composite
def racks_101(draw: st.DrawFn, low: int, high: int) -> Rack:
    """``low`` to ``high`` tiles of a seat's okey101 deal, with 0, 1 or 2 wild okeys."""
    seed = draw(st.binary(min_size=32, max_size=32)).hex()
    d = deal(seed, 4, (22, 21))
    seat = draw(st.integers(0, 3))
    okey = rk.okey_for(format_tile(d.indicator))
    rack = [format_tile(t) for t in d.racks[seat]]
    rest = [format_tile(t) for k, r in enumerate(d.racks) if k != seat for t in r]
    rest += [format_tile(t) for t in d.pile]
    wilds = draw(st.sampled_from([0, 1, 2]))
    rack = rk.set_wilds(rack, rest, okey, wilds, random.Random(seed))
    size = min(draw(st.integers(low, high)), len(rack))
    kept = random.Random(seed).sample(range(len(rack)), size)
    wild_at = [i for i, t in enumerate(rack) if t == okey]
    chosen = sorted(set(kept[: size - len(wild_at)]) | set(wild_at))[:size]
    return [rack[i] for i in chosen], okey


def check(rack: list[str], okey: str) -> None:
    codes = [parse_tile(t) for t in rack]
    found = solver.best_opening(codes, parse_tile(okey), False)
    assert found.total == ref.best_opening(rack, okey, False), (rack, okey, found)
    # The melds found are real: disjoint tiles of the rack, each a run or a set, one tile kept.
    used = [t.split(":")[0] for meld in found.melds for t in meld]
    assert len(used) < len(rack)
    left = list(rack)
    for t in used:
        left.remove(t)
    assert solver.pair_count(codes, parse_tile(okey)) == ref.pair_count(rack, okey)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(racks_101(12, 17))
def test_openings_of_smaller_101_racks_match_the_brute_force(case: Rack) -> None:
    check(*case)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(racks_101(21, 22))
def test_openings_of_whole_101_racks_match_the_brute_force(case: Rack) -> None:
    check(*case)
