"""Bot strength and speed on duplicate deals.

Each deal is played four times with the seats rotated, so every level sits in every seat on
the same tiles and luck cancels. Prints, per variant and match-up, the hero's win share and mean
hand score with 95% confidence intervals, and the median and p99 time of one decision.

    python bench/bots.py [--deals N] [--variants classic,duz,okey51,gobek17]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.engine import Hand, deal  # noqa: E402
from games.engine.bots import choose_moves  # noqa: E402

MATCHUPS = [("greedy", "random"), ("strong", "greedy")]


def play_hand(variant: str, seed: str, levels: list[str], times: list[float]) -> Hand:
    rng = random.Random(seed)
    hand = Hand.from_deal(variant, deal(seed))
    while not hand.over:
        seat = hand.turn
        view = hand.view(seat)
        start = time.perf_counter()
        moves = choose_moves(view, levels[seat], rng)
        times.append(time.perf_counter() - start)
        for move in moves:
            if hand.play(seat, move).ok:
                break
        else:
            raise RuntimeError("no legal move")
    return hand


def interval(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval."""
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return mean, float("nan")
    return mean, 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))


def run(variant: str, hero: str, field: str, deals: int) -> dict[str, object]:
    wins: list[float] = []
    hero_scores: list[float] = []
    field_scores: list[float] = []
    finished = 0
    times: list[float] = []
    for d in range(deals):
        seed = f"{random.Random(f'{variant}-{d}').getrandbits(256):064x}"
        for hero_seat in range(4):
            levels = [field] * 4
            levels[hero_seat] = hero
            hand = play_hand(variant, seed, levels, times)
            finisher = hand.result.get("finisher")
            finished += finisher is not None
            wins.append(1.0 if finisher == hero_seat else 0.0)
            scores = hand.result["hand_scores"]
            hero_scores.append(scores[hero_seat])
            field_scores.append(statistics.fmean(s for i, s in enumerate(scores) if i != hero_seat))
    times.sort()
    return {
        "variant": variant,
        "hero": hero,
        "field": field,
        "hands": len(wins),
        "finished": finished,
        "win": interval(wins),
        "hero_score": interval(hero_scores),
        "field_score": interval(field_scores),
        "median_ms": statistics.median(times) * 1000,
        "p99_ms": times[int(len(times) * 0.99)] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--variants", default="classic,duz,okey51,gobek17")
    args = parser.parse_args()
    print(f"duplicate deals: {args.deals} per match-up and variant, 4 rotations each")
    print("win share: hero's share of all hands (a fair share is 25%); scores: mean per hand")
    print("(classic: change to the running score, higher is better; others: penalty points)")
    header = "variant  hero vs field      hands  win share        hero score        field score"
    print(header + "       decision ms (median / p99)")
    for variant in args.variants.split(","):
        for hero, field in MATCHUPS:
            r = run(variant, hero, field, args.deals)
            w, wh = r["win"]  # type: ignore[misc]
            hs, hh = r["hero_score"]  # type: ignore[misc]
            fs, fh = r["field_score"]  # type: ignore[misc]
            print(
                f"{variant:8} {hero:6} vs {field:6}  {r['hands']:5}  "
                f"{100 * w:5.1f}% ± {100 * wh:4.1f}   {hs:8.1f} ± {hh:6.1f}   "
                f"{fs:8.1f} ± {fh:6.1f}   {r['median_ms']:6.2f} / {r['p99_ms']:7.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
