"""``bench/bots.py --try``: the expert's settings are changed for a run and put back after it."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest

from games.engine import Hand, belief, expert
from games.engine.belief import Belief

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bots.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_bots", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_settings_apply_inside_and_are_put_back_after() -> None:
    bench = load_bench()
    feed, threw, loose = expert.FEED, belief.THREW, expert.OPEN_DISCARDS.loose
    worlds = expert.WORLDS
    settings = bench.parse_settings(["FEED=2.5", "THREW=0.5", "OPEN_DISCARDS.loose=7", "WORLDS=3"])
    with bench.expert_settings(settings):
        assert expert.FEED == 2.5 and belief.THREW == 0.5
        assert expert.OPEN_DISCARDS.loose == 7.0
        assert expert.WORLDS == 3 and isinstance(expert.WORLDS, int)
    assert (expert.FEED, belief.THREW, expert.OPEN_DISCARDS.loose) == (feed, threw, loose)
    assert expert.WORLDS == worlds


def test_an_unknown_setting_or_a_bad_pair_stops_the_run() -> None:
    bench = load_bench()
    feed = expert.FEED
    with pytest.raises(SystemExit, match="no setting 'NOPE'"):
        with bench.expert_settings(bench.parse_settings(["FEED=9", "NOPE=1"])):
            pass
    with pytest.raises(SystemExit, match="NAME=VALUE"):
        bench.parse_settings(["FEED"])
    assert expert.FEED == feed  # what was set before the unknown name is put back


def test_the_paired_difference_is_over_the_same_hands() -> None:
    bench = load_bench()
    diff, half = bench.paired([0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0])
    assert diff == 0.25 and half > 0
    assert bench.paired([2.0, 4.0], [2.0, 4.0]) == (0.0, 0.0)


def test_see_racks_gives_the_expert_worlds_with_the_real_racks() -> None:
    bench = load_bench()
    hand = Hand.from_seed("classic", "0" * 64)
    view = hand.view(hand.turn)
    others = [s for s in range(4) if s != hand.turn]
    with bench.expert_settings(bench.parse_settings(["SEE_RACKS=1"])):
        assert bench._see_racks[0]
        with bench.seeing_racks(hand):
            world = Belief(view).sample(random.Random(1))
        assert world.racks == {s: hand.racks[s] for s in others}
        assert sorted(world.pile) == sorted(hand.pile)
    assert not bench._see_racks[0]
    # Outside the probe the worlds are guesses again.
    guess = Belief(view).sample(random.Random(1))
    assert guess.racks != {s: hand.racks[s] for s in others}
