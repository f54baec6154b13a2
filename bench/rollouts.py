"""What search with full rollouts would buy, at any cost: a probe, not a bot of the site.

The hero sits in each seat of a duplicate deal in turn (as in ``bots.py``) and plays the strong
bot's moves, except for its throws: for each of the strong bot's ``--throws`` best throws it
plays the hand out to the end in ``--worlds`` worlds and throws the tile that won most often
(ties: the sooner finish). The worlds are sampled from the hero's own view by the expert's
``Belief`` (fair: nothing hidden is read), the other seats play at their real level (a perfect
model of them) and the hero plays on as the strong bot. ``--all-seeing`` instead plays every
throw out once in the real hand, pile order and racks included: how much the hidden tiles decide.
``--see-racks`` keeps the other racks as they really are and shuffles only the pile in each
world: what perfect reading of the rivals' racks would be worth.

On the same hands it plays the expert as it is, and prints both win shares and their paired
difference with its 95% interval, and the probe's median seconds a throw.

    python bench/rollouts.py [--variant classic] [--field greedy] [--deals 25]
                             [--throws 4] [--worlds 5] [--all-seeing | --see-racks]
                             [--processes N]

It is slow by design (seconds a throw): 25 deals take about 20 minutes on two processes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bots import Move, deal_seed, interval, play_first, play_hand, racks_seen  # noqa: E402

from games.engine import Hand, deal  # noqa: E402
from games.engine.belief import Belief, World  # noqa: E402
from games.engine.bots import choose_moves  # noqa: E402


def play_out(hand: Hand, levels: list[str], hero: int) -> float:
    """The hand played to its end: 1 if the hero finished, less a little for each of its turns."""
    turns = 0
    while not hand.over:
        seat = hand.turn
        view = hand.view(seat)
        if seat == hero and not view["has_tile"]:
            turns += 1
        play_first(hand, seat, choose_moves(view, levels[seat], None))
    return (1.0 if hand.result.get("finisher") == hero else 0.0) - 0.001 * turns


def in_world(hand: Hand, world: World) -> Hand:
    """The hand with what the hero cannot see (other racks, pile order) replaced by ``world``."""
    guess = hand.copy()
    for seat, rack in world.racks.items():
        guess.racks[seat] = list(rack)
    guess.pile = list(world.pile)
    return guess


def hero_moves(
    hand: Hand,
    view: dict[str, object],
    levels: list[str],
    args: argparse.Namespace,
    rng: random.Random,
) -> list[Move]:
    hero = hand.turn
    moves = choose_moves(view, "strong", None)
    if not view["has_tile"] or any(m["do"] == "finish" for m in moves):
        return moves
    throws = [m for m in moves if m["do"] == "discard"][: args.throws]
    if len(throws) < 2:
        return moves
    if args.all_seeing:
        starts = [hand]
    elif args.see_racks:
        starts = [in_world(hand, racks_seen(hand, [], rng)) for _ in range(args.worlds)]
    else:
        belief = Belief(view)
        starts = [in_world(hand, belief.sample(rng)) for _ in range(args.worlds)]
    scores = []
    for move in throws:
        total = 0.0
        for start in starts:
            trial = start.copy()
            if trial.play(hero, move).ok:
                total += play_out(trial, levels, hero)
        scores.append(total)
    best = max(range(len(throws)), key=lambda k: scores[k])
    return [throws[best], *moves]


def play_deal(task: tuple[int, argparse.Namespace]) -> tuple[list[float], list[float], list[float]]:
    """One deal, four rotations: the probe's wins, the expert's wins, the probe's decision times."""
    d, args = task
    seed = deal_seed(args.variant, d)
    probe: list[float] = []
    expert: list[float] = []
    times: list[float] = []
    for hero in range(4):
        levels = [args.field] * 4
        levels[hero] = "strong"
        hand = Hand.from_deal(args.variant, deal(seed))
        rng = random.Random(seed)
        worlds = random.Random(f"{seed}-worlds")
        while not hand.over:
            seat = hand.turn
            if seat == hero:
                start = time.perf_counter()
                view = hand.view(hero)
                moves = hero_moves(hand, view, levels, args, worlds)
                if view["has_tile"]:
                    times.append(time.perf_counter() - start)
            else:
                moves = choose_moves(hand.view(seat), levels[seat], rng)
            play_first(hand, seat, moves)
        probe.append(1.0 if hand.result.get("finisher") == hero else 0.0)
        levels[hero] = "expert"
        played = play_hand(args.variant, seed, levels, hero, [], 80.0)
        expert.append(1.0 if played.result.get("finisher") == hero else 0.0)
    return probe, expert, times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--field", default="greedy")
    parser.add_argument("--deals", type=int, default=25)
    parser.add_argument("--throws", type=int, default=4)
    parser.add_argument("--worlds", type=int, default=5)
    parser.add_argument("--all-seeing", action="store_true")
    parser.add_argument("--see-racks", action="store_true")
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    probe: list[float] = []
    expert: list[float] = []
    times: list[float] = []
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        for p, e, t in pool.map(play_deal, [(d, args) for d in range(args.deals)]):
            probe += p
            expert += e
            times += t
    how = "all-seeing" if args.all_seeing else f"{args.worlds} worlds"
    if args.see_racks and not args.all_seeing:
        how += ", the racks seen"
    diff, half = interval([p - e for p, e in zip(probe, expert, strict=True)])
    print(f"{args.variant}, hero against three {args.field}, {len(probe)} hands")
    print(f"rollouts ({args.throws} throws, {how}): {100 * statistics.fmean(probe):.1f}%")
    print(f"expert on the same hands: {100 * statistics.fmean(expert):.1f}%")
    print(f"paired difference: {100 * diff:+.1f} ± {100 * half:.1f} points")
    print(f"probe's throws: median {statistics.median(times):.2f} s, slowest {max(times):.2f} s")


if __name__ == "__main__":
    main()
