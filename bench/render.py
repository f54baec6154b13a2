"""The table page's and the lobby's server render time (a benchmark, not a test).

    .venv/bin/python bench/render.py                      # temporary SQLite file, duz and okey51
    .venv/bin/python bench/render.py --requests 500       # more samples
    .venv/bin/python bench/render.py --debug              # with DEBUG on, as `make run` serves
    .venv/bin/python bench/render.py --profile            # also cProfile the pages, top costs
    .venv/bin/python bench/render.py --keep-connections   # what a connection per request costs
    .venv/bin/python bench/render.py --lobby-tables 0     # the table page only
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey .venv/bin/python bench/render.py

What it measures, in this process, for a seated player at a table mid-hand (the player's turn,
after a fixed number of moves from a fixed seed, so that runs compare):

- **page**: ``GET /tables/<id>/`` through ``django.test.Client``: the whole request through the
  middleware (session, user, locale), ``reads.table_context``, the chat panel and the
  template;
- **live fragment**: what a table socket renders on every change,
  ``reads.table_context`` + ``frames.live`` (``#table-live``);
- **socket frame**: what the seated player's table socket renders after every move
  (``TableConsumer._render``: the fragments for this seat, ``#table-live`` and
  ``#rack-area``, and what it needs to decide whether the rack changed, from a fresh read of
  the table); a fragment
  cache, if any, is emptied before each call so that every call renders;
- and, to see where the time goes: **context**, ``reads.table_context`` alone; **state**,
  ``reads.table_state`` alone (the read a socket shares between the viewers of a table);
  **context from state**, ``table_context`` given that state (one more viewer's share, no
  query); **one tile**, a template of one ``{% tile %}`` rendered once (the script prints how
  many tiles the page has); **yardstick**, a fixed template independent of the code measured
  (40 tiles drawn by the template language alone), for the machine's speed, which drifts:
  compare runs by it; **connect**, opening the database connection, which every request does
  (``CONN_MAX_AGE = 0``; with the pool, taking a connection from it);
- **the lobby** (``--lobby-tables``, 49 unless 0): ``GET /`` for a signed-in player, with that
  many tables listed (``crowded_lobby``: about half of them playing, the others open, with
  options and bots; the two tables above are among them); **lobby context**,
  ``reads.lobby_context`` alone; **lobby fragment**, what the lobby socket renders on
  every change (the context + ``games/lobby_tables.html``).

The script runs on older commits too (``git worktree``), to compare them in one sitting.

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
import inspect
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

# The machine's speed, which drifts (docs/PERFORMANCE.md): a fixed template, independent of the
# code measured, drawing 40 tiles in the template language alone (a `with`, colour `if`s and a
# `blocktranslate` each).
YARDSTICK = """{% load i18n %}{% for tile in tiles %}\
{% with c=tile|slice:":1" n=tile|slice:"1:3" %}\
{% if c == "R" %}{% translate "red" context "tile colour" as cw %}\
{% elif c == "Y" %}{% translate "yellow" context "tile colour" as cw %}\
{% elif c == "B" %}{% translate "blue" context "tile colour" as cw %}\
{% else %}{% translate "black" context "tile colour" as cw %}{% endif %}\
{% blocktranslate asvar label with colour=cw number=n trimmed %}{{ colour }} {{ number }}\
{% endblocktranslate %}<span class="tile tile-{{ c }}" data-tile="{{ tile }}" role="img" \
aria-label="{{ label }}" title="{{ label }}"><span class="tile-num">{{ n }}</span></span>\
{% endwith %}{% endfor %}"""
YARDSTICK_TILES = [f"{c}{n}" for c in "RYBK" for n in range(1, 11)]
GOAL_MS = 10.0  # the goal for the table page's median (docs/PERFORMANCE.md)
LOBBY_GOAL_MS = 15.0  # the goal for the lobby's median
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

    from games import actions
    from games.engine.bots import choose_moves
    from games.models import Hand

    user = get_user_model().objects.create_user(f"bench-{variant}", password="x")
    seed = hashlib.sha256(f"{SEED}-{variant}".encode()).hexdigest()  # 64 hex digits
    match = actions.play_now(user, variant, seed=seed)
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
        by = user if hand.turn == 0 else actions.BOT
        for move in choose_moves(view, "strong", rng):
            try:
                actions.play(hand, hand.turn, move, by=by, level="strong")
            except actions.GameError:
                continue
            played += 1
            break
        else:
            raise RuntimeError("the bot found no legal move")


def crowded_lobby(tables: int) -> Any:
    """A lobby listing ``tables`` tables (with those made before), and its viewer (a signed-in
    player at one of them):
    about half of them playing a match (a player and three bots, of each variant in turn),
    the others open and waiting (their creator, a bot, and options that the lobby words:
    partners, hands, a give-back penalty, no timer, auto-start), the viewer's own private
    (with its invite link). Some players have a display name."""
    from django.contrib.auth import get_user_model

    from accounts.models import Profile
    from games import actions, engine
    from games.models import Table

    users = get_user_model().objects
    variants = engine.VARIANTS
    already = Table.objects.count()  # the tables measured before (public, being played)
    options = {
        "classic": [{"scoring": "plus_minus"}, {"start_score": 15}],
        "duz": [{"assisted": True}, {"timer": 0}],
        "okey51": [{"partners": True, "hands": 3}, {"doubling": False}],
        "gobek17": [{"give_back_penalty": 500, "partners": True}, {"hands": 2}],
    }
    for i in range(max(0, tables - 1 - already)):
        user = users.create_user(f"lobby-{i}", password="x")
        if i % 3 == 0:
            Profile.objects.create(user=user, display_name=f"Player {i}")
        variant = variants[i % len(variants)]
        if i % 2 == 0:
            seed = hashlib.sha256(f"{SEED}-lobby-{i}".encode()).hexdigest()
            actions.play_now(user, variant, seed=seed)
            continue
        table = actions.open_table(
            variant=variant,
            user=user,
            name=f"Table {i}",
            options=options[variant][(i // 4) % 2],
            players=3 if variant == "classic" and i % 8 == 1 else 4,
            auto_start=i % 3 == 1,
        )
        actions.add_bot(table, 1, "greedy", by=user)
    viewer = users.create_user("bench-lobby", password="x")
    actions.open_table(variant="duz", user=viewer, name="Mine", is_private=True)
    return viewer


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
    from django.template import engines
    from django.template.loader import render_to_string
    from django.test import Client
    from django.utils import translation

    from games import reads
    from games.live import table_socket

    try:
        from games import frames
    except ImportError:
        frames = None

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
            context = reads.table_context(table_id, user)
            if frames is not None:
                frames.live(context)
            else:  # an older commit: the fragment was a partial of the page's template
                render_to_string("games/table.html#live", context)

    consumer = table_socket.TableConsumer()
    consumer.table_id, consumer.position, consumer.invite = table_id, 0, None
    consumer.language, consumer.scope = "en", {"user": user}

    # Older commits' _render took no arguments (to run this script on them, for comparison).
    arguments = [None] * len(inspect.signature(consumer._render).parameters)

    def frame() -> None:
        cache = getattr(table_socket, "_RENDERED", None)
        if cache is not None:
            cache.clear()  # every call renders, as after a move
        _live, rack, _key = consumer._render(*arguments)  # no state given (read now), no cache
        if rack is not None and not isinstance(rack, str):
            rack.html()  # the rack renders when first sent: time it as part of the frame

    def context() -> None:
        with translation.override("en"):
            reads.table_context(table_id, user)

    def state() -> None:
        reads.table_state(table_id)

    def from_state() -> None:
        with translation.override("en"):
            reads.table_context(table_id, user, state=shared)

    tile_template = engines["django"].from_string(
        "{% load tiles %}{% tile tile okey selectable=True %}"
    )

    def tile() -> None:
        with translation.override("en"):
            tile_template.render({"tile": "R5", "okey": "B7"})

    yardstick_template = engines["django"].from_string(YARDSTICK)

    def yardstick() -> None:
        with translation.override("en"):
            yardstick_template.render({"tiles": YARDSTICK_TILES})

    def connect() -> None:
        connection.close()
        connection.ensure_connection()

    timed = {
        "page": page,
        "live fragment": live,
        "socket frame": frame,
        "context": context,
        "state": state,
        "context from state": from_state,
        "one tile": tile,
        "yardstick": yardstick,
        "connect": connect,
    }
    if hasattr(reads, "table_state"):
        shared = reads.table_state(table_id)
    else:  # an older commit
        del timed["state"], timed["context from state"]
    return timed


def lobby_subjects(viewer: Any) -> dict[str, Callable[[], Any]]:
    """The lobby's things timed, for ``viewer`` (signed in)."""
    from django.template.loader import render_to_string
    from django.test import Client
    from django.utils import translation

    from games import reads

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(viewer)

    def page() -> str:
        response = client.get("/")
        if response.status_code != 200:
            raise RuntimeError(f"GET / answered {response.status_code}")
        return response.content.decode()

    def context() -> None:
        with translation.override("en"):
            reads.lobby_context(viewer)

    def fragment() -> None:
        with translation.override("en"):
            render_to_string("games/lobby_tables.html", reads.lobby_context(viewer))

    return {"lobby page": page, "lobby context": context, "lobby fragment": fragment}


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
        "--lobby-tables", type=int, default=49, help="tables in the lobby (49; 0: no lobby)"
    )
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
        print(f"\ngoal: table page median <= {GOAL_MS:.0f} ms: {'met' if met else 'MISSED'}")
        if args.lobby_tables > 0:
            print()
            print("| lobby | what | median | p95 | max | queries |")
            print("|---|---|---:|---:|---:|---:|")
            viewer = crowded_lobby(args.lobby_tables)
            fns = lobby_subjects(viewer)
            listed = fns["lobby page"]().count('class="lobby-table ')
            sql = {what: queries_of(fn) for what, fn in fns.items()}
            measured = interleaved(fns, args.warmup, args.requests)
            lobby_median = statistics.median(measured["lobby page"])
            for what, times in measured.items():
                figures = " | ".join(
                    ms(x) for x in (statistics.median(times), percentile(times, 95), max(times))
                )
                print(f"| {listed} tables | {what} | {figures} | {len(sql[what])} |")
                if args.queries and what == "lobby page":
                    print("\n".join(f"    {q}" for q in sql[what]))
            if args.profile:
                print(f"\n## cProfile of {args.requests} lobby requests\n")
                print(profile(fns["lobby page"], args.requests, 30))
            met = lobby_median <= LOBBY_GOAL_MS
            print(f"\ngoal: lobby median <= {LOBBY_GOAL_MS:.0f} ms: {'met' if met else 'MISSED'}")
        return 0
    finally:
        teardown(tmp)


if __name__ == "__main__":
    sys.exit(main())
