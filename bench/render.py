"""The table page's server render time (a benchmark, not a test).

    .venv/bin/python bench/render.py                      # temporary SQLite file, duz and okey51
    .venv/bin/python bench/render.py --requests 500       # more samples
    .venv/bin/python bench/render.py --debug              # with DEBUG on, as `make run` serves
    .venv/bin/python bench/render.py --profile            # also cProfile the page, top costs
    .venv/bin/python bench/render.py --keep-connections   # what a connection per request costs
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey .venv/bin/python bench/render.py

What it measures, in this process, for a seated player at a table mid-hand (the player's turn,
after a fixed number of moves from a fixed seed, so that runs compare):

- **page**: ``GET /tables/<id>/`` through ``django.test.Client``: the whole request through the
  middleware (session, user, locale), ``selectors.table_context`` and the template;
- **live fragment**: what a table socket renders on every change,
  ``selectors.table_context`` + ``render_to_string("games/table.html#live", ...)``;
- **socket frame**: what the seated player's table socket renders after every move
  (``TableConsumer._render``: the fragments for this seat, ``#live`` and ``#rack``, and what
  it needs to decide whether the rack changed); a fragment cache, if any, is emptied before
  each call so that every call renders;
- and, to see where the time goes: **context**, ``selectors.table_context`` alone; **one
  tile**, ``games/_tile.html`` rendered once (the page draws every tile with it: the script
  prints how many tiles the page has); **connect**, opening the database connection, which every
  request does (``CONN_MAX_AGE = 0``).

Each is timed with ``time.perf_counter`` over ``--requests`` calls after ``--warmup`` calls,
taking turns (one call of each, then the next round), so that they share the machine's noise;
the script prints the median, p95 and max in ms and the SQL queries of one call
(``CaptureQueriesContext``, outside the timed calls).

The database is throwaway: a temporary SQLite file (migrated here, deleted at the end), or, when
``DATABASE_URL`` names PostgreSQL, a new database ``bench_render_<pid>`` on that server,
created and dropped by Django's test-database machinery (the named database is not touched).
DEBUG is off unless ``--debug`` (DEBUG keeps a log of every query, which costs time). The site
runs with ``CONN_MAX_AGE = 0`` (a new database connection per request, docs/ARCHITECTURE.md);
``--keep-connections`` keeps one open instead, to show what that costs.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL_MS = 25.0  # median of the page (issue goal)
SEED = "bench-render"


def code_version() -> str:
    """The commit measured (``-dirty``: with uncommitted changes)."""
    git = ["git", "describe", "--always", "--dirty"]
    done = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


# ----------------------------------------------------------------------------- set-up
def configure(debug: bool, tmp: Path) -> str:
    """Point Django at a throwaway database (a SQLite file in ``tmp`` unless DATABASE_URL
    names PostgreSQL) and set it up. Returns what it is, for the report."""
    url = os.environ.get("DATABASE_URL", "")
    postgres = url.startswith(("postgres", "pgsql"))
    if not postgres:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'db.sqlite3'}"
    os.environ["DEBUG"] = "true" if debug else "false"
    os.environ.setdefault("SECRET_KEY", "bench-render-not-secret")
    os.environ["SECURE_SSL_REDIRECT"] = "false"  # the test client speaks plain HTTP
    os.environ["CLOCK_IN_SERVER"] = "false"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "okeysite.settings"

    import django
    from django.conf import settings

    # WhiteNoise warns that STATIC_ROOT is missing (collectstatic never ran): pages still render.
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    django.setup()
    if not postgres:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        return "SQLite (temporary file)"
    from django.db import connection

    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = f"bench_render_{os.getpid()}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    return f"PostgreSQL ({settings.DATABASES['default']['NAME']})"


def teardown(tmp: Path) -> None:
    """Drop the PostgreSQL database made by ``configure``; delete the temporary folder."""
    try:
        from django.db import connection

        name = connection.settings_dict["NAME"]
        if connection.vendor == "postgresql" and str(name).startswith("bench_render_"):
            connection.creation.destroy_test_db(name, verbosity=0, keepdb=False)
        connection.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def mid_hand(variant: str, moves: int) -> tuple[Any, int]:
    """A "Play now" table of ``variant`` (the player on seat 0, three strong bots) after about
    ``moves`` moves, stopped on the player's turn with a full rack (discard phase). Every seat
    plays the strong bot's choice, from a fixed seed."""
    from django.contrib.auth import get_user_model

    from games import services
    from games.engine.bots import choose_moves
    from games.models import Hand

    user = get_user_model().objects.create_user(f"bench-{variant}", password="x")
    seed = hashlib.sha256(f"{SEED}-{variant}".encode()).hexdigest()  # 64 hex digits
    match = services.play_now(user, variant, seed=seed)
    hand = match.hands.get()
    rng = random.Random(SEED)
    played = 0
    while True:
        hand = Hand.objects.get(pk=hand.pk)
        if hand.status != Hand.Status.PLAYING:
            raise RuntimeError(f"the {variant} hand ended after {played} moves: ask for fewer")
        view = hand.view_for(hand.turn)
        if played >= moves and hand.turn == 0 and view["phase"] != "draw":
            return user, match.table_id
        by = user if hand.turn == 0 else services.BOT
        for move in choose_moves(view, "strong", rng):
            try:
                services.play(hand, hand.turn, move, by=by, level="strong")
            except services.GameError:
                continue
            played += 1
            break
        else:
            raise RuntimeError("the bot found no legal move")


# ----------------------------------------------------------------------------- measuring
def percentile(xs: list[float], p: int) -> float:
    """The p-th percentile (linear between the closest ranks)."""
    return statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def ms(x: float) -> str:
    return f"{x:.2f}" if x < 1 else f"{x:.1f}"


def interleaved(fns: dict[str, Callable[[], Any]], warmup: int, n: int) -> dict[str, list[float]]:
    """The times in ms of each of ``fns``, called in turn ``n`` times after ``warmup`` untimed
    rounds: taking turns, the things compared share whatever else the machine is doing."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for round_ in range(warmup + n):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            if round_ >= warmup:
                times[name].append((time.perf_counter() - start) * 1000)
    return times


def queries_of(fn: Callable[[], Any]) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        fn()
    return [q["sql"] for q in ctx.captured_queries]


def profile(fn: Callable[[], Any], n: int, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def subjects(user: Any, table_id: int) -> dict[str, Callable[[], Any]]:
    """The things timed, as calls without arguments."""
    from django.db import connection
    from django.template.loader import render_to_string
    from django.test import Client
    from django.utils import translation

    from games import selectors, table_socket

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = f"/tables/{table_id}/"

    def page() -> str:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"GET {url} answered {response.status_code}")
        return response.content.decode()

    def live() -> None:
        with translation.override("en"):
            context = selectors.table_context(table_id, user)
            render_to_string("games/table.html#live", context)

    consumer = table_socket.TableConsumer()
    consumer.table_id, consumer.position, consumer.invite = table_id, 0, None
    consumer.language, consumer.scope = "en", {"user": user}

    def frame() -> None:
        cache = getattr(table_socket, "_RENDERED", None)
        if cache is not None:
            cache.clear()  # every call renders, as after a move
        consumer._render()

    def context() -> None:
        with translation.override("en"):
            selectors.table_context(table_id, user)

    def tile() -> None:
        with translation.override("en"):
            render_to_string("games/_tile.html", {"tile": "R5", "okey": "B7", "selectable": True})

    def connect() -> None:
        connection.close()
        connection.ensure_connection()

    return {
        "page": page,
        "live fragment": live,
        "socket frame": frame,
        "context": context,
        "one tile": tile,
        "connect": connect,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="timed calls of each (200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls first (20)")
    parser.add_argument("--variants", default="duz,okey51", help="comma-separated (duz,okey51)")
    parser.add_argument("--moves", type=int, default=40, help="moves played before (40)")
    parser.add_argument("--debug", action="store_true", help="DEBUG on, as `make run`")
    parser.add_argument("--profile", action="store_true", help="cProfile the page requests")
    parser.add_argument("--queries", action="store_true", help="print every query of a page")
    parser.add_argument(
        "--keep-connections", action="store_true", help="CONN_MAX_AGE=None instead of 0"
    )
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="okey-bench-render-"))
    try:
        database = configure(args.debug, tmp)
        if args.keep_connections:
            from django.db import connection

            connection.settings_dict["CONN_MAX_AGE"] = None
        debug = "on" if args.debug else "off"
        age = "None" if args.keep_connections else "0"
        print(f"# {database}; DEBUG {debug}; CONN_MAX_AGE {age}")
        load = "/".join(f"{x:.1f}" for x in os.getloadavg())
        machine = f"{os.cpu_count()} CPUs, {platform.machine()}, Linux {platform.release()}"
        print(f"# {machine}, load {load}; Python {platform.python_version()}")
        print(f"# code at {code_version()}")
        print(f"# {args.requests} timed calls after {args.warmup}, times in ms")
        print()
        print("| variant | what | median | p95 | max | queries |")
        print("|---|---|---:|---:|---:|---:|")
        medians = []
        for variant in args.variants.split(","):
            user, table_id = mid_hand(variant, args.moves)
            fns = subjects(user, table_id)
            sql = {what: queries_of(fn) for what, fn in fns.items()}
            measured = interleaved(fns, args.warmup, args.requests)
            for what, times in measured.items():
                median = statistics.median(times)
                if what == "page":
                    medians.append(median)
                figures = " | ".join(ms(x) for x in (median, percentile(times, 95), max(times)))
                print(f"| `{variant}` | {what} | {figures} | {len(sql[what])} |")
                if args.queries and what == "page":
                    print("\n".join(f"    {q}" for q in sql[what]))
            tiles = subjects(user, table_id)["page"]().count('class="tile ')
            print(f"| `{variant}` | tiles on the page | {tiles} | | | |")
            if args.profile:
                page = subjects(user, table_id)["page"]
                print(f"\n## cProfile of {args.requests} page requests, {variant}\n")
                print(profile(page, args.requests, 30))
        met = all(m <= GOAL_MS for m in medians)
        print(f"\ngoal: page median <= {GOAL_MS:.0f} ms: {'met' if met else 'MISSED'}")
        return 0
    finally:
        teardown(tmp)


if __name__ == "__main__":
    sys.exit(main())
