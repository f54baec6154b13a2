"""A tournament round's seating and standings (tournaments/seating.py, standings.py), in
process: the median time to seat a round of a 200-player Swiss (round 1 by rating, then rounds
2 to 7 after random results), and to rank the field, against the floor measured in the same
run (cutting the ordered field into tables of four, with no search). The goal: a 200-player
round seated in 1 s or less.

    .venv/bin/python bench/seating.py [--players 200] [--rounds 7] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments import seating, standings  # noqa: E402


def timed(fn: object, repeat: int) -> float:
    """The median of ``repeat`` calls, in ms."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(1)
    players = [seating.Player(n, rating=rng.uniform(800, 2200)) for n in range(args.players)]
    by_id = {p.id: p for p in players}
    ids = [p.id for p in players]

    floor = timed(lambda: [ids[i : i + 4] for i in range(0, len(ids), 4)], args.repeat)
    print(
        f"{args.players} players, median of {args.repeat}; floor (cut into tables) {floor:.3f} ms"
    )
    first = timed(lambda: seating.first_round(players), args.repeat)
    print(f"round 1 (by rating): {first:.1f} ms")
    played = [seating.first_round(players)]
    results: list[standings.MatchResult] = []
    for number in range(2, args.rounds + 1):
        results += [
            standings.MatchResult(number - 1, t, tuple(float(rng.randint(-200, 200)) for _ in t))
            for t in played[-1].tables
        ]
        byes = Counter(p for r in played for p in r.byes)
        ranked = timed(lambda r=results, b=byes: standings.swiss(ids, r, b), args.repeat)
        order = [line.player for line in standings.swiss(ids, results, byes)]
        seat = timed(lambda o=order: seating.swiss_round(o, by_id, played), args.repeat)
        played.append(seating.swiss_round(order, by_id, played))
        print(
            f"round {number}: standings {ranked:.1f} ms, seating {seat:.1f} ms "
            f"(x{seat / floor:,.0f} the floor)"
        )


if __name__ == "__main__":
    main()
