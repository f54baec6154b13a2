"""Bot strength and speed on duplicate deals.

Each deal is played four times with the seats rotated, so the hero sits in every seat on the
same tiles and luck cancels. Prints, per variant and pairing, the hero's win share and mean hand
score with 95% confidence intervals (the field's mean score beside it), and the median and p99
time of one of the hero's decisions.

    python bench/bots.py [--deals N] [--variants classic,duz,okey51,gobek17,okey101]
                         [--pairings expert-greedy,expert-strong] [--budget-ms 80]
                         [--processes N] [--selfplay N] [--solo N [--levels ...]]
                         [--try NAME=VALUE ...]

Pairings are ``hero-field``: the hero in one seat, three of the field in the others. The
default is every pairing of ``PAIRINGS``. With ``--processes`` above 1 the deals are shared
among worker processes; the decision times are then measured with the workers side by side
(on a machine with fewer free cores than workers, they include the wait for a core).
``--selfplay N`` instead times N hands per variant with four experts at the table
(``--selfplay-level greedy``: four greedy bots), one process, at full speed (no pause between
moves): seconds per hand, median and slowest, and hands per second.
``--solo N`` measures speed to a finish alone: on N deals per variant each level plays seat 0
against three seats that draw and throw the tile they drew (they never finish, and their
discards are the pile's tiles, free to take), and it prints how many hands each level finished
and within how many of its turns. Far less noisy than a win share: the deals are the same for
every level, and no rival's luck enters.
``--try NAME=VALUE ...`` plays every pairing twice on the same deals, once with the expert as it
is and once with its settings changed (a constant of ``games.engine.expert`` or
``games.engine.belief``, or ``OPEN_DISCARDS.field``), and prints both win shares and their paired
difference with its 95% interval: the same deals make the difference far less noisy than two
separate runs. The expert's wall-clock cap is lifted for both, so a loaded machine cannot change
its moves (its work is then bounded by its counted budget alone). ``--try SEE_RACKS=1`` is a
probe, not a setting: the hero's sampled worlds hold the other seats' real racks and only the
pile order is guessed, so the difference is what a perfect reading of the rivals is worth to
the expert's search.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import random
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, cast
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.engine import Hand, belief, expert  # noqa: E402
from games.engine.bots import choose_moves, moves_in_order, play_turn  # noqa: E402
from games.engine.expert import DEFAULT_BUDGET_MS  # noqa: E402

Move = dict[str, Any]
PAIRINGS = ["greedy-random", "strong-greedy", "expert-greedy", "expert-strong"]

Settings = tuple[tuple[str, float], ...]

# --try SEE_RACKS=1: the hero's worlds hold the real racks (a probe; see the docstring).
SEE_RACKS = "SEE_RACKS"
_see_racks = [False]


@contextlib.contextmanager
def expert_settings(settings: Settings) -> Iterator[None]:
    """The expert's constants changed for the duration (``--try``), put back afterwards."""
    saved: list[tuple[object, str, object]] = []
    seeing = _see_racks[0]
    try:
        for name, value in settings:
            if name == SEE_RACKS:
                _see_racks[0] = bool(value)
                continue
            if name.startswith("OPEN_DISCARDS."):
                saved.append((expert, "OPEN_DISCARDS", expert.OPEN_DISCARDS))
                expert.OPEN_DISCARDS = dataclasses.replace(
                    expert.OPEN_DISCARDS, **{name.split(".", 1)[1]: value}
                )
                continue
            module = expert if hasattr(expert, name) else belief
            if not hasattr(module, name):
                raise SystemExit(f"--try: no setting {name!r} in the expert or its belief")
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, type(getattr(module, name))(value))
        yield
    finally:
        _see_racks[0] = seeing
        for owner, attribute, old in reversed(saved):
            setattr(owner, attribute, old)


@contextlib.contextmanager
def seeing_racks(hand: Hand) -> Iterator[None]:
    """The expert's sampled worlds hold the other seats' real racks in ``hand``; only the pile
    is shuffled (``--try SEE_RACKS=1``)."""

    def sample(self: belief.Belief, rng: random.Random) -> belief.World:
        return racks_seen(hand, self.others, rng)

    with mock.patch.object(belief.Belief, "sample", sample):
        yield


def racks_seen(hand: Hand, seats: Iterable[int], rng: random.Random) -> belief.World:
    """A world with the real racks of ``seats`` and the real pile in a new order."""
    pile = list(hand.pile)
    rng.shuffle(pile)
    return belief.World({s: list(hand.racks[s]) for s in seats}, pile)


def parse_settings(pairs: list[str]) -> Settings:
    out = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--try wants NAME=VALUE, not {pair!r}")
        out.append((name, float(value)))
    return tuple(out)


def play_hand(
    variant: str, seed: str, levels: list[str], hero: int, times: list[float], budget_ms: float
) -> Hand:
    rng = random.Random(seed)
    hand = Hand.from_seed(variant, seed)
    while not hand.over:
        seat = hand.turn
        view = hand.view(seat)
        start = time.perf_counter()
        if seat == hero and levels[seat] == "expert" and _see_racks[0]:
            with seeing_racks(hand):
                moves = choose_moves(view, levels[seat], rng, budget_ms)
        elif seat == hero:
            moves = choose_moves(view, levels[seat], rng, budget_ms)
        else:  # the same moves, taken lazily as the site's clock takes them
            moves = moves_in_order(view, levels[seat], rng, budget_ms)
        if seat == hero:
            times.append(time.perf_counter() - start)
        play_first(hand, seat, moves)
    return hand


def play_first(hand: Hand, seat: int, moves: Iterable[Move]) -> None:
    """The first of the bot's moves, best first, that the engine accepts."""
    for move in moves:
        if hand.play(seat, move).ok:
            return
    raise RuntimeError("no legal move")


def interval(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval."""
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return mean, float("nan")
    return mean, 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))


def deal_seed(variant: str, d: int) -> str:
    return f"{random.Random(f'{variant}-{d}').getrandbits(256):064x}"


def play_deal(
    task: tuple[str, str, str, int, float, Settings | None],
) -> tuple[list[tuple[float, float, float, bool]], list[float]]:
    """One deal, four rotations: (won, hero score, field score, finished) per hand, and the
    hero's decision times. With settings (``--try``, possibly none changed) the expert's
    wall-clock cap is lifted and the settings applied."""
    variant, hero, field, d, budget_ms, settings = task
    seed = deal_seed(variant, d)
    out = []
    times: list[float] = []
    for hero_seat in range(4):
        levels = [field] * 4
        levels[hero_seat] = hero
        if settings is None:
            hand = play_hand(variant, seed, levels, hero_seat, times, budget_ms)
        else:
            with expert_settings((("WALL_CAP", 1e9), *settings)):
                hand = play_hand(variant, seed, levels, hero_seat, times, budget_ms)
        finisher = hand.result.get("finisher")
        scores = hand.result["hand_scores"]
        field_score = statistics.fmean(s for i, s in enumerate(scores) if i != hero_seat)
        out.append(
            (
                1.0 if finisher == hero_seat else 0.0,
                float(scores[hero_seat]),
                field_score,
                finisher is not None,
            )
        )
    return out, times


def run(
    variant: str,
    hero: str,
    field: str,
    deals: int,
    budget_ms: float,
    pool: ProcessPoolExecutor,
    settings: Settings | None = None,
) -> dict[str, object]:
    tasks = [(variant, hero, field, d, budget_ms, settings) for d in range(deals)]
    rows: list[tuple[float, float, float, bool]] = []
    times: list[float] = []
    for got, t in pool.map(play_deal, tasks):
        rows += got
        times += t
    times.sort()
    return {
        "wins": [r[0] for r in rows],
        "scores": [r[1] for r in rows],
        "hands": len(rows),
        "finished": sum(1 for r in rows if r[3]),
        "win": interval([r[0] for r in rows]),
        "hero_score": interval([r[1] for r in rows]),
        "field_score": interval([r[2] for r in rows]),
        "median_ms": statistics.median(times) * 1000,
        "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))] * 1000,
    }


def selfplay(variants: list[str], hands: int, budget_ms: float, level: str = "expert") -> None:
    print(f"four {level} bots at full speed, budget {budget_ms:g} ms a decision: seconds per hand")
    for variant in variants:
        took = []
        for d in range(hands):
            start = time.perf_counter()
            play_hand(variant, deal_seed(variant, 1000 + d), [level] * 4, -1, [], budget_ms)
            took.append(time.perf_counter() - start)
        took.sort()
        print(
            f"{variant:8} {hands} hands: median {statistics.median(took):5.3f} s, "
            f"slowest {took[-1]:5.2f} s, {hands / sum(took):6.1f} hands/s",
            flush=True,
        )


def solo_hand(variant: str, seed: str, level: str, budget_ms: float) -> int | None:
    """The turns seat 0 takes to finish alone (None: the pile ran out first)."""
    rng = random.Random(seed)
    hand = Hand.from_seed(variant, seed)
    turns = 0
    while not hand.over:
        seat = hand.turn
        view = hand.view(seat)
        if seat != 0:
            # A seat that only passes the pile's tiles along: draw, throw what was drawn.
            move = {"do": "discard", "tile": view["rack"][-1]} if view["has_tile"] else None
            if not hand.play(seat, move or {"do": "draw"}).ok:
                raise RuntimeError("the passing seat could not move")
            continue
        if not view["has_tile"]:
            turns += 1
        play_turn(
            lambda: hand.view(0), lambda m: hand.play(0, m).ok, level, rng, budget_ms=budget_ms
        )
    return turns if hand.result.get("finisher") == 0 else None


def solo(variants: list[str], levels: list[str], deals: int, budget_ms: float) -> None:
    print(f"alone against three passing seats, {deals} deals a variant: hands finished")
    print("variant  level    finished  within 8 turns  within 10  median turns (finished)")
    for variant in variants:
        for level in levels:
            got = [
                solo_hand(variant, deal_seed(variant, d), level, budget_ms) for d in range(deals)
            ]
            done = sorted(t for t in got if t is not None)
            median = statistics.median(done) if done else float("nan")
            print(
                f"{variant:8} {level:7} {len(done):5} {sum(1 for t in done if t <= 8):12} "
                f"{sum(1 for t in done if t <= 10):12}   {median:6.1f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--variants", default="classic,duz,okey51,gobek17")
    parser.add_argument("--pairings", default=",".join(PAIRINGS), help="hero-field, ...")
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--selfplay", type=int, default=0, help="hands of four bots to time")
    parser.add_argument("--selfplay-level", default="expert", help="the four bots' level")
    parser.add_argument("--solo", type=int, default=0, help="deals to play alone, each level")
    parser.add_argument("--levels", default="greedy,strong,expert", help="levels for --solo")
    parser.add_argument(
        "--try", dest="trial", nargs="+", metavar="NAME=VALUE", help="expert settings to compare"
    )
    args = parser.parse_args()
    if args.solo:
        solo(args.variants.split(","), args.levels.split(","), args.solo, args.budget_ms)
        return
    if args.selfplay:
        selfplay(args.variants.split(","), args.selfplay, args.budget_ms, args.selfplay_level)
        return
    pairings = [tuple(p.split("-")) for p in args.pairings.split(",")]
    if args.trial:
        compare(args, pairings, parse_settings(args.trial))
        return
    print(f"duplicate deals: {args.deals} per pairing and variant, 4 rotations each")
    print(f"expert budget {args.budget_ms:g} ms a decision; {args.processes} process(es)")
    print("win share: hero's share of all hands (a fair share is 25%); scores: mean per hand")
    print("(classic: change to the running score, higher is better; others: penalty points)")
    header = (
        "variant  hero vs field      hands  fin  win share        hero score        field score"
    )
    print(header + "       hero decision ms (median / p99)")
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        for variant in args.variants.split(","):
            for hero, field in pairings:
                r = run(variant, hero, field, args.deals, args.budget_ms, pool)
                w, wh = cast(tuple[float, float], r["win"])
                hs, hh = cast(tuple[float, float], r["hero_score"])
                fs, fh = cast(tuple[float, float], r["field_score"])
                print(
                    f"{variant:8} {hero:6} vs {field:6}  {r['hands']:5} {r['finished']:4}  "
                    f"{100 * w:5.1f}% ± {100 * wh:4.1f}   {hs:8.1f} ± {hh:6.1f}   "
                    f"{fs:8.1f} ± {fh:6.1f}   {r['median_ms']:6.2f} / {r['p99_ms']:7.2f}",
                    flush=True,
                )


def compare(args: argparse.Namespace, pairings: list[tuple[str, ...]], settings: Settings) -> None:
    """Each pairing with the expert as it is and with ``settings``, on the same deals."""
    with expert_settings(settings):
        pass  # an unknown name stops here, before any hand is played
    changed = " ".join(f"{n}={v:g}" for n, v in settings)
    print(f"duplicate deals: {args.deals} per pairing and variant, 4 rotations each")
    print(f"the expert as it is against the expert with {changed} (no wall-clock cap)")
    print(
        "variant  hero vs field      hands  as it is   changed   paired difference"
        "         hero's mean score: as it is, changed, paired difference"
    )
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        for variant in args.variants.split(","):
            for hero, field in pairings:
                base = run(variant, hero, field, args.deals, args.budget_ms, pool, ())
                trial = run(variant, hero, field, args.deals, args.budget_ms, pool, settings)
                a = cast(list[float], base["wins"])
                b = cast(list[float], trial["wins"])
                diff, half = paired(a, b)
                sa = cast(list[float], base["scores"])
                sb = cast(list[float], trial["scores"])
                sdiff, shalf = paired(sa, sb)
                print(
                    f"{variant:8} {hero:6} vs {field:6}  {len(a):5}  "
                    f"{100 * statistics.fmean(a):5.1f}%    {100 * statistics.fmean(b):5.1f}%   "
                    f"{100 * diff:+5.1f} ± {100 * half:4.1f} points   "
                    f"{statistics.fmean(sa):8.2f} {statistics.fmean(sb):8.2f}  "
                    f"{sdiff:+.2f} ± {shalf:.2f}",
                    flush=True,
                )


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """The mean of b - a over the same hands, and the half-width of its 95% interval."""
    return interval([y - x for x, y in zip(a, b, strict=True)])


if __name__ == "__main__":
    main()
