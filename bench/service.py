"""A move through the service, ``games.actions.play``: time and SQL queries per move.

    .venv/bin/python bench/service.py                          # temporary SQLite file
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/service.py --moves 600          # the production stack
    ... bench/service.py --profile                             # also cProfile the moves

What it measures, in this process: four signed-up players at a ``classic`` table (every seat
a human, so the policy checks a player's move, as in live play); each move is the greedy
bot's choice for the seat on turn, chosen outside the timed call; the timed call is
``actions.play(hand, seat, move, by=user, expected_version=..., client_move_id=...)`` as the
table socket makes it: the transaction, the locked read, the engine, the Move row, the
snapshot, the COMMIT and the publishing to the table's group after commit. A hand that ends
is followed by the next (``deal_next_hand(force=True)``, not timed); a match that ends by a
new one.

Two ways of publishing are compared in the same run, taking turns move by move, so that
they share the machine's noise: **kept loop** (``games.actions.broadcast``, what the site does) and
**new loop per message** (``async_to_sync(layer.group_send)`` from this thread, what a
thread without a kept loop would do). With the in-memory layer (no ``REDIS_URL``) both are
``async_to_sync``.

The database is throwaway, as in ``bench/render.py`` (a temporary SQLite file, or a new
PostgreSQL database ``bench_render_<pid>`` dropped at the end). Prints the median, p95 and
max in ms, and the queries of one move.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.render import (  # noqa: E402
    code_version,
    configure,
    percentile,
    profile,
    queries_of,
    teardown,
)


class Table:
    """A classic table with four players, a match and the hand being played."""

    def __init__(self, seed: str) -> None:
        from django.contrib.auth import get_user_model

        from games import actions
        from games.models import Hand

        users = [
            get_user_model().objects.create_user(f"bench-move-{i}", password="x") for i in range(4)
        ]
        self.users = users
        table = actions.create_table(variant="classic", created_by=users[0], move_timer=60)
        for i, user in enumerate(users):
            actions.sit(table, user, i)
        self.table = table
        self.rng = random.Random(seed)
        self.hand: Hand = actions.start_match(table, by=actions.SYSTEM).hands.get()
        self.number = 0

    def next_move(self) -> tuple[int, dict[str, Any], dict[str, Any]]:
        """The seat on turn, its move, and the keywords the socket would pass."""
        from games import actions
        from games.engine.bots import choose_moves
        from games.models import Hand, Match

        hand = Hand.objects.get(pk=self.hand.pk)
        if hand.status != Hand.Status.PLAYING:
            match = hand.match
            if match.status == Match.Status.PLAYING:
                hand = actions.deal_next_hand(match, force=True)
            else:
                hand = actions.rematch(self.table, by=self.users[0]).hands.get()
        self.hand = hand
        view = hand.view_for(hand.turn)
        move = choose_moves(view, "greedy", self.rng)[0]
        self.number += 1
        options = {
            "by": self.users[hand.turn],
            "expected_version": hand.version,
            "client_move_id": f"bench-{self.number}",
        }
        return hand.turn, move, options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=400, help="timed moves of each kind")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="cProfile 200 moves")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        database = configure(False, tmp)
        try:
            run(args, database)
        finally:
            teardown(tmp)


def run(args: argparse.Namespace, database: str) -> None:
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from games import actions
    from games.actions import broadcast

    layer = get_channel_layer()

    def new_loop_per_message(group: str, message: dict[str, Any]) -> None:
        async_to_sync(layer.group_send)(group, message)

    kept_loop = broadcast.send
    ways = {"kept loop": kept_loop, "new loop per message": new_loop_per_message}
    table = Table("bench-service")

    def one(send: Any) -> float:
        seat, move, options = table.next_move()
        broadcast.send = send  # type: ignore[assignment]
        try:
            start = time.perf_counter()
            actions.play(table.hand.pk, seat, move, **options)
            return (time.perf_counter() - start) * 1000
        finally:
            broadcast.send = kept_loop  # type: ignore[assignment]

    times: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(args.warmup + args.moves):
        for name, send in ways.items():
            took = one(send)
            if round_ >= args.warmup:
                times[name].append(took)
    broadcast.flush()

    seat, move, options = table.next_move()
    queries = queries_of(lambda: actions.play(table.hand.pk, seat, move, **options))

    print(f"actions.play, classic, {args.moves} moves each way, code {code_version()}")
    print(f"database: {database}; channel layer: {type(layer).__name__}")
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}")
    print()
    print(f"{'publishing':<24}{'median':>9}{'p95':>9}{'max':>9}   ms per move")
    for name, xs in times.items():
        print(f"{name:<24}{statistics.median(xs):>9.2f}{percentile(xs, 95):>9.2f}{max(xs):>9.2f}")
    base = statistics.median(times["new loop per message"])
    print(f"ratio kept / new loop: {statistics.median(times['kept loop']) / base:.2f}")
    print()
    print(f"queries in one move ({move['do']}): {len(queries)}")
    for sql in queries:
        print("   ", sql[:150])
    if args.profile:

        def moves() -> None:
            seat, move, options = table.next_move()
            actions.play(table.hand.pk, seat, move, **options)

        print(profile(moves, 200, 25))


if __name__ == "__main__":
    main()
