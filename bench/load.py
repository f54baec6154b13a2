"""Many tables played at once over real sockets, on PostgreSQL and Redis (a benchmark, not a test).

    SECRET_KEY=x .venv/bin/python bench/load.py                           # 100 tables, 5 min
    SECRET_KEY=x .venv/bin/python bench/load.py --tables 10 --duration 20 --idle 5   # smoke run
    SECRET_KEY=x .venv/bin/python bench/load.py --processes 2 --think 1 --json load.json

The set-up is the one ``manage.py serve`` runs, in a throwaway environment: a new PostgreSQL
database ``bench_load_<pid>`` (created and migrated here, dropped at the end; the server is the
one ``DATABASE_URL`` names, else ``postgres://postgres@127.0.0.1:5432``; no other database is
touched) and the Redis channel layer on a database of its own (``--redis-db``, 9, flushed at
the start and the end). The script creates ``--tables`` tables of ``--variant`` (classic) with a
60 s move timer and four bench users on each (through ``games.actions``: ``create_table``,
``sit``, ``start_match`` by ``policy.SYSTEM``), a session row per user (so that each socket is
signed in by its ``sessionid`` cookie), and starts ``--processes`` daphne processes serving
``bench/bare_asgi.py`` (the site's own application plus a bare socket and ``/bench/stats``)
with DEBUG off. No clock worker runs (``--clock`` starts one): the clients press "ready" at the
end of a hand, and when every human is ready ``actions.ready`` deals the next hand at once;
after the last hand of a match seat 0 sends "rematch".

One client per seat (asyncio, the ``websockets`` package, all in this process) opens
``/ws/tables/<id>/`` with the cookie and an ``Origin`` header; seat i goes to process i % K. It
reads ``#table-live``'s ``data-version``, ``data-turn``, ``data-seat``, ``data-phase``,
``data-hand``, ``data-legal`` and the rack's ``data-tile``s from the frames and, on its turn,
draws from the pile and discards a tile of its rack, at once ("full speed") or after a think
time (uniform between 0.5 and 1.5 times ``--think`` seconds, so the tables move out of step). The
run, and what it measures:

1. **connect**: every socket opened at once (at most ``--connect-concurrency`` handshakes at a
   time), from the first open to the last socket's first frame; and per socket, from its open
   to its first frame. Then the server settles (no frame for 2 s).
2. **idle** for ``--idle`` s, nobody moving: the daphne processes' CPU (utime + stime from
   ``/proc/<pid>/stat``, summed, as % of one core), their RSS, and SQL queries/s (the count
   ``/bench/stats`` reports); beside them the CPU of this process (the clients), of the
   PostgreSQL backends connected to the bench database, and of the whole machine (busy % of
   all cores, from ``/proc/stat``: anything else running shows there). **Memory per socket**:
   (RSS with the sockets open - RSS before, after one warm-up socket per process) / sockets;
   it includes what the sockets' frames leave in the process's caches (rendered fragments),
   so it overstates with few sockets.
3. **load** for ``--duration`` s of play, the same figures, plus
   - where the servers' time goes: calls, mean time and share of the phase of
     ``actions.submit``, of the publish after commit, of ``TableConsumer._render`` (and of
     ``reads.table_state``), and how many threads ran them
     (``/bench/stats``'s ``timings``);
   - **move round trip**: from the mover's send to the mover's socket receiving a frame of the
     hand at the move's new version (or later);
   - **push latency**: for every move, from its ``Move`` row's ``created_at`` (set by
     ``auto_now_add`` as the row is written, just before the commit: the publish follows the
     commit) to each *other* seat's socket receiving a frame at that version or a later one.
     Same machine, same clock (``time.time``). A frame can skip versions (the socket renders
     what the database holds when its turn comes): such versions count as pushed with the
     later frame and are counted as "coalesced". And the same pushes **from the commit**, as
     the goal measures them ("commit until every other seat's frame"): from the moment the
     committing process handed the move's message over after its commit
     (``/bench/published``), as the floor is timed from its publish. The ratio to the floor
     is of this one (both then time what follows the commit); the first includes the
     commit itself, whose disk flush the floor does not pay, and its ratio is printed too;
   - moves/s (``Move`` rows written during the phase), errors (refused moves by code, sockets
     closed by the server, **missing frames**: a move's version not seen by another seat of the
     table within 10 s, split into late ones, which still count in the push latency, and
     never seen ones, after the frames stop coming at the end), and **lost moves**: moves
     whose round trip the client saw but that have no ``Move`` row, plus every hand replayed by
     ``audit.verify_hand``.
4. **bare floor**: the table sockets close and as many bare sockets open
   (``/ws/bare/<id>/``, same cookies, same spread), and this process publishes to the
   ``bare-<id>`` groups through Redis (``channel_layer.group_send``) a message whose html has
   the median size of a table socket's frame, round robin over the tables, at the moves/s seen
   under load, for ``--floor-duration`` s (by default as long as the play: the floor's p99
   is then estimated from as many messages as the push's, and over as long a stretch of the
   machine's own hiccups; 30 s gave a p99 that moved by a third from run to run). Its
   latency, from the publish to each socket's receipt, is what the transport costs with no
   database and no template; the report gives our push latency over it (median and p99).

At full speed the clients are a closed loop: each table always has a move in flight, so the
servers are saturated and the latencies are mostly their queue (about tables / moves/s); the
figures to read there are moves/s and what a move costs. With ``--think`` below saturation the
latencies are those of a served move.

Everything runs on this machine, the clients too: their CPU is printed (when they saturate a
core, the latencies include their own queueing). Nothing is left behind: the servers are
stopped, the sockets closed, the database dropped and the Redis database flushed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

APP = "bench.bare_asgi:application"
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"
MOVE_TIMER = 60  # the longest the variants allow: no timeout fires at full speed
MISSING_AFTER = 10.0  # s: a version not seen by then is a missing frame
SETTLE_QUIET = 2.0  # s without a frame: the server has settled after the connects

LIVE = re.compile(r'<div id="table-live"[^>]*>')
ATTR = re.compile(r'data-(version|turn|seat|phase|hand|legal|status)="([^"]*)"')
RACK_TILE = re.compile(r'class="tile([^"]*)" data-tile="([^"]+)"')
ERROR = re.compile(r'id="move-error"[^>]*data-error="([^"]*)"(?:[^>]*data-move-id="([^"]*)")?')
BARE_SEQ = re.compile(r'data-bare="(\d+)"')


def code_version() -> str:
    """The commit measured (``git rev-parse --short HEAD``; "+ changes" when the tree is dirty)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head or 'unknown'}{' + uncommitted changes' if dirty else ''}"


def percentile(xs: list[float], p: float) -> float:
    """The p-th percentile (linear between the closest ranks); nan for no samples."""
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    ordered = sorted(xs)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(xs: list[float]) -> dict[str, float]:
    """n, p50, p95, p99 and max, in ms (``xs`` in seconds)."""
    ms = [x * 1000 for x in xs]
    return {
        "n": len(ms),
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "max": max(ms) if ms else float("nan"),
    }


# ----------------------------------------------------------------------------- the environment
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def database_urls() -> tuple[str, str, str]:
    """(the maintenance database's URL, the bench database's URL, its name)."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres", "pgsql")):
        url = DEFAULT_SERVER
    parts = urlsplit(url)
    name = f"bench_load_{os.getpid()}"
    admin = urlunsplit(("postgresql", parts.netloc, "/postgres", "", ""))
    bench = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    return admin, bench, name


def create_database(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin: str, name: str) -> None:
    import psycopg

    assert name.startswith("bench_load_")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# The Redis channel layers --layer compares: the site's, and channels_redis's pub/sub one.
LAYERS = {
    "site": "okeysite.channel_layers.RedisChannelLayer",
    "pubsub": "channels_redis.pubsub.RedisPubSubChannelLayer",
}


def environment(bench_url: str, redis_url: str, layer: str) -> dict[str, str]:
    """The servers' environment (this process uses it too, without the connection pool)."""
    env = dict(os.environ)
    for key in ("CLOCK_IN_SERVER", "CACHE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(key, None)
    env.update(
        DJANGO_SETTINGS_MODULE="okeysite.settings",
        DATABASE_URL=bench_url,
        REDIS_URL=redis_url,
        SECRET_KEY=os.environ.get("SECRET_KEY") or "bench-load-not-secret",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DEBUG="false",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        CHANNEL_LAYER_BACKEND=LAYERS[layer],
    )
    return env


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ["DB_POOL"] = "false"  # this process: plain connections, closed before the drop
    import django

    django.setup()


def flush_redis(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        client.flushdb()
    finally:
        client.close()


@dataclass
class Seat:
    """One client: a seat of a table, and what its socket has seen."""

    table: int
    position: int
    process: int
    cookie: str
    # The board as the last frame showed it, and the rack's tiles (from the last rack fragment).
    state: dict[str, str] = field(default_factory=dict)
    rack: list[tuple[str, bool]] = field(default_factory=list)  # (tile, is the wild okey)
    # The move sent and not yet seen back: (hand, version sent at, move id, send time).
    pending: tuple[int, int, str, float] | None = None
    tried: set[str] = field(default_factory=set)  # moves (kinds, tiles) sent at this version
    # First time each (hand, version) was seen on this socket (a skipped version takes the
    # time of the frame that skipped it); the highest version seen per hand.
    seen: dict[tuple[int, int], float] = field(default_factory=dict)
    top: dict[int, int] = field(default_factory=dict)
    coalesced: int = 0
    said_ready: int | None = None  # the hand "ready" (or "rematch") was sent after
    ws: Any = None
    opened_at: float = 0.0
    first_frame_at: float = 0.0
    first_frame: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False
    task: asyncio.Task[None] | None = None


def prepare(tables: int, variant: str) -> tuple[list[Seat], list[int]]:
    """Tables with four bench users seated, a match started, a session per user."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )

    from games import actions, policy

    store = import_module(settings.SESSION_ENGINE).SessionStore
    users = get_user_model()
    seats: list[Seat] = []
    table_ids: list[int] = []
    for t in range(tables):
        table = actions.create_table(
            variant=variant, created_by=None, name=f"bench {t}", move_timer=MOVE_TIMER
        )
        table_ids.append(table.pk)
        for position in range(4):
            user = users.objects.create_user(f"bench-{t}-{position}", password=None)
            actions.sit(table, user, position)
            session = store()
            session[SESSION_KEY] = str(user.pk)
            # The backend that loads a session's user (the first only limits log-ins).
            session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            seats.append(Seat(table.pk, position, 0, session.session_key or ""))
        actions.start_match(table, by=policy.SYSTEM)
    return seats, table_ids


# ----------------------------------------------------------------------------- the servers
class Servers:
    """K daphne processes (and, with ``--clock``, a run_clock worker) on free ports."""

    def __init__(
        self, env: dict[str, str], count: int, clock: bool, logs: Path, database: tuple[str, str]
    ) -> None:
        self.env, self.count, self.clock, self.logs = env, count, clock, logs
        self.database = database  # (the maintenance database's URL, the bench database)
        self.ports: list[int] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self.worker: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        for i in range(self.count):
            port = free_port()
            command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), APP]
            self.processes.append(self._spawn(command, self.logs / f"daphne-{i}.log"))
            self.ports.append(port)
        if self.clock:
            command = [sys.executable, "manage.py", "run_clock"]
            self.worker = self._spawn(command, self.logs / "clock.log")
        deadline = time.monotonic() + 60
        for port, process in zip(self.ports, self.processes, strict=True):
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"daphne did not start:\n{self.output()}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.1)

    def _spawn(self, command: list[str], log_path: Path) -> subprocess.Popen[bytes]:
        with log_path.open("wb") as log:
            return subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> None:
        from games.management.commands.serve import stop_children

        stop_children([*self.processes, *([self.worker] if self.worker else [])])

    def output(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')}"
            for path in sorted(self.logs.glob("*.log"))
        )

    def errors(self) -> list[str]:
        bad = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|Exception inside")
        return [line for line in self.output().splitlines() if bad.search(line)]


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def stats(port: int, what: str = "stats") -> dict[str, Any]:
    """``GET /bench/stats`` (or ``/bench/<what>``) of one daphne process."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /bench/%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" % what.encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    return dict(json.loads(data.split(b"\r\n\r\n", 1)[1]))


@dataclass
class Sample:
    at: float
    cpu: list[float]  # s, per process
    rss_kb: list[int]
    queries: list[int]
    client_cpu: float
    timings: list[dict[str, dict[str, float]]]  # per process, name -> calls, seconds, threads
    postgres: dict[int, float]  # CPU s of the bench database's backends, by pid
    machine: tuple[float, float]  # busy and total jiffies, all cores


def postgres_cpu(admin: str, name: str) -> dict[int, float]:
    """CPU seconds of each PostgreSQL backend connected to the bench database, by pid."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        query = "SELECT pid FROM pg_stat_activity WHERE datname = %s"
        pids = [pid for (pid,) in conn.execute(query, [name])]
    out = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            out[pid] = cpu_seconds(pid)
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of all cores, from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:9]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


async def sample(servers: Servers) -> Sample:
    answers = [await stats(port) for port in servers.ports]
    times = os.times()
    return Sample(
        at=time.monotonic(),
        cpu=[cpu_seconds(p.pid) for p in servers.processes],
        rss_kb=[int(a["rss_kb"]) for a in answers],
        queries=[int(a["queries"]) for a in answers],
        client_cpu=times.user + times.system,
        timings=[a.get("timings", {}) for a in answers],
        postgres=await asyncio.to_thread(postgres_cpu, *servers.database),
        machine=machine_cpu(),
    )


def between(a: Sample, b: Sample) -> dict[str, Any]:
    """CPU (% of one core), SQL queries/s, client CPU, the timed functions over a phase; RSS
    at its end."""
    seconds = b.at - a.at
    timed: dict[str, dict[str, Any]] = {}
    for before, after in zip(a.timings, b.timings, strict=True):
        for name, t in after.items():
            was = before.get(name, {"calls": 0, "seconds": 0.0})
            entry = timed.setdefault(name, {"calls": 0, "seconds": 0.0, "threads": 0})
            entry["calls"] += t["calls"] - was["calls"]
            entry["seconds"] += t["seconds"] - was["seconds"]
            entry["threads"] = max(entry["threads"], t["threads"])
    for entry in timed.values():
        entry["mean_ms"] = 1000 * entry["seconds"] / entry["calls"] if entry["calls"] else 0.0
        # Summed over the processes: % of one process's wall time, on average.
        entry["busy_pct"] = 100 * entry["seconds"] / seconds / len(b.timings)
    return {
        "timed": timed,
        "seconds": seconds,
        "server_cpu_pct": 100 * (sum(b.cpu) - sum(a.cpu)) / seconds,
        "server_cpu_pct_per_process": [
            100 * (y - x) / seconds for x, y in zip(a.cpu, b.cpu, strict=True)
        ],
        "queries_per_s": (sum(b.queries) - sum(a.queries)) / seconds,
        "queries": sum(b.queries) - sum(a.queries),
        "rss_mb": [kb / 1024 for kb in b.rss_kb],
        "client_cpu_pct": 100 * (b.client_cpu - a.client_cpu) / seconds,
        "postgres_cpu_pct": 100
        * sum(cpu - a.postgres.get(pid, 0.0) for pid, cpu in b.postgres.items())
        / seconds,
        "machine_busy_pct": 100
        * (b.machine[0] - a.machine[0])
        / max(1.0, b.machine[1] - a.machine[1]),
    }


async def quiet(servers: Servers, limit: float = 60) -> None:
    """Wait until the servers use less than 5 % of a core over a second (at most ``limit``)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = [cpu_seconds(p.pid) for p in servers.processes]
        await asyncio.sleep(1)
        if sum(cpu_seconds(p.pid) for p in servers.processes) - sum(before) < 0.05:
            return


# ----------------------------------------------------------------------------- the clients
class Run:
    """The clients of one run and what they count."""

    def __init__(self, args: argparse.Namespace, ports: list[int]) -> None:
        self.args = args
        self.ports = ports
        self.playing = False
        self.round_trips: list[float] = []
        self.acknowledged: set[str] = set()  # client move ids whose round trip completed
        self.refusals: Counter[str] = Counter()
        self.closed = 0  # sockets the server closed during the run
        self.connect_failures: Counter[str] = Counter()  # failed handshakes, by error
        self.frame_sizes: list[int] = []  # frames of #table-live alone (what other seats get)
        self.last_frame = time.monotonic()
        self.moves_sent = 0
        self.sequence = 0
        self.gate = asyncio.Semaphore(args.connect_concurrency)
        self.bare = False  # the floor: frames are bare messages, timed by their sequence number
        self.bare_received: dict[int, list[float]] = {}

    def move_id(self) -> str:
        self.sequence += 1
        return f"bench-{self.sequence}"

    # -- sockets
    async def open(self, seat: Seat, path: str, wait_frame: bool) -> None:
        """Connect (retrying a failed handshake), and wait for the first frame if asked."""
        from websockets.asyncio.client import connect

        port = self.ports[seat.process]
        for attempt in range(3):
            async with self.gate:
                if attempt == 0:  # a retry's time counts from the first try
                    seat.opened_at = time.time()
                try:
                    seat.ws = await connect(
                        f"ws://127.0.0.1:{port}{path}",
                        origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                        additional_headers={"Cookie": f"sessionid={seat.cookie}"},
                        compression=None,  # daphne does not negotiate permessage-deflate
                        ping_interval=None,
                        open_timeout=60,
                        max_size=None,
                        proxy=None,
                    )
                except Exception as exc:  # refused, timed out, reset: tried again
                    self.connect_failures[f"{type(exc).__name__}: {exc}"[:100]] += 1
                    if attempt == 2:
                        raise RuntimeError(f"seat {seat.position} of table {seat.table}") from exc
                    continue
                seat.first_frame = asyncio.Event()
                seat.task = asyncio.create_task(self.listen(seat))
                if wait_frame:
                    await seat.first_frame.wait()
                return

    async def close(self, seat: Seat) -> None:
        seat.closing = True
        if seat.ws is not None:
            await seat.ws.close()
        if seat.task is not None:
            with contextlib.suppress(Exception):
                await seat.task

    async def listen(self, seat: Seat) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for message in seat.ws:
                now = time.time()
                self.last_frame = time.monotonic()
                if not seat.first_frame.is_set():
                    seat.first_frame_at = now
                    seat.first_frame.set()
                if self.bare:
                    found = BARE_SEQ.search(str(message))
                    if found:
                        self.bare_received.setdefault(int(found.group(1)), []).append(now)
                    continue
                await self.received(seat, str(message), now)
        except ConnectionClosed:
            pass
        if not seat.closing:
            self.closed += 1
            seat.first_frame.set()

    # -- playing
    async def received(self, seat: Seat, frame: str, now: float) -> None:
        error = ERROR.search(frame)
        if error:
            code, move_id = error.group(1), error.group(2)
            self.refusals[code] += 1
            if seat.pending is not None and move_id == seat.pending[2]:
                seat.pending = None  # act tries something else: what it sent is in tried
        live = LIVE.search(frame)
        if live is None:
            if error and self.playing:
                await self.act(seat)
            return
        state = dict(ATTR.findall(live.group(0)))
        rack_at = frame.find('id="rack-area"')
        if rack_at >= 0:
            seat.rack = [
                (tile, "tile-wild" in cls) for cls, tile in RACK_TILE.findall(frame, rack_at)
            ]
        else:
            self.frame_sizes.append(len(frame))
        if state.get("hand") and state.get("version", "").isdigit():
            hand, version = int(state["hand"]), int(state["version"])
            top = seat.top.get(hand)  # None: the first frame of this hand
            start = 0 if top is None else top + 1
            if version >= start:
                for v in range(start, version + 1):
                    seat.seen[(hand, v)] = now  # seen with this frame, or skipped by it
                seat.coalesced += max(0, version - (top or 0) - 1)
                seat.top[hand] = version
            if (
                seat.state.get("hand") != state["hand"]
                or seat.state.get("version") != state["version"]
            ):
                seat.tried = set()
            if seat.pending is not None:
                p_hand, p_version, move_id, sent_at = seat.pending
                if hand != p_hand or version > p_version:
                    if hand == p_hand:
                        self.round_trips.append(now - sent_at)
                        self.acknowledged.add(move_id)
                    seat.pending = None
        seat.state = state
        if self.playing:
            await self.act(seat)

    async def act(self, seat: Seat) -> None:
        """Send this seat's move if it is its turn (draw, then discard), "ready" after a hand."""
        s = seat.state
        if seat.pending is not None or not s.get("hand"):
            return
        hand = int(s["hand"])
        if s.get("phase") == "over":
            if seat.said_ready == hand:
                return
            if s.get("status") == "finished":
                if seat.position != 0:
                    return
                message: dict[str, Any] = {"type": "rematch"}
            else:
                message = {"type": "ready"}
            seat.said_ready = hand
            await seat.ws.send(json.dumps(message))
            return
        if s.get("turn") != s.get("seat") or not s.get("version", "").isdigit():
            return
        legal = s.get("legal", "").split()
        tried = seat.tried  # sent at this version (and refused, or we would not be here)
        if s.get("phase") == "draw":
            kinds = [k for k in ("draw", "take") if k in legal and k not in tried]
            if not kinds:
                return
            move: dict[str, Any] = {"do": kinds[0]}
        elif s.get("phase") == "discard" and "discard" in legal:
            tiles = [t for t, wild in seat.rack if not wild and t not in tried]
            tiles = tiles or [t for t, _ in seat.rack if t not in tried]
            if not tiles:
                return
            move = {"do": "discard", "tile": tiles[-1]}
        else:
            return
        version, move_id = int(s["version"]), self.move_id()
        seat.pending = (hand, version, move_id, 0.0)
        tried.add(move.get("tile") or move["do"])  # forgotten at the next version
        payload = {
            "type": "move",
            "hand": hand,
            "move": move,
            "expected_version": version,
            "client_move_id": move_id,
        }
        if self.args.think > 0:  # in its own task: this socket's frames are read meanwhile
            # Uniform in [0.5, 1.5] x think: the tables do not move in step.
            delay = self.args.think * random.uniform(0.5, 1.5)
            asyncio.create_task(self.send_move(seat, payload, delay))
        else:
            await self.send_move(seat, payload, 0)

    async def send_move(self, seat: Seat, payload: dict[str, Any], delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        move_id = payload["client_move_id"]
        if seat.pending is None or seat.pending[2] != move_id:
            return  # a new hand came meanwhile
        if not self.playing:
            seat.pending = None
            return
        seat.pending = (payload["hand"], payload["expected_version"], move_id, time.time())
        self.moves_sent += 1
        await seat.ws.send(json.dumps(payload))

    async def settle(self, quiet: float, limit: float) -> None:
        """Wait until no frame arrived for ``quiet`` s (at most ``limit`` s)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if time.monotonic() - self.last_frame >= quiet:
                return
            await asyncio.sleep(0.1)


# ----------------------------------------------------------------------------- the run
async def floor(
    run: Run, seats: list[Seat], table_ids: list[int], rate: float, size: int, seconds: float
) -> dict[str, Any]:
    """Publish to the bare sockets' groups at ``rate`` messages/s, round robin over the tables,
    for ``seconds``; the latency of each delivery, from the publish to the socket's receipt."""
    from channels.layers import channel_layers

    # A layer of its own (the site's set-up published from other event loops), same settings.
    layer = channel_layers.make_backend("default")
    head = '<div id="table-live" class="table-board" hx-swap-oob="true" data-bare="{}">'
    published: dict[int, tuple[float, int]] = {}  # sequence -> (time, table)
    sends = []
    count = max(1, round(rate * seconds))
    start = time.monotonic()
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        table = table_ids[i % len(table_ids)]
        html = head.format(i)
        html += "x" * max(0, size - len(html) - 6) + "</div>"
        published[i] = (time.time(), table)
        message = {"type": "bare.frame", "html": html, "bench_at": published[i][0]}
        sends.append(asyncio.create_task(layer.group_send(f"bare-{table}", message)))
    await asyncio.gather(*sends)
    await run.settle(1.0, MISSING_AFTER)
    per_table = Counter(s.table for s in seats)
    latencies: list[float] = []
    missing = 0
    for i, (at, table) in published.items():
        got = run.bare_received.get(i, [])
        latencies += [t - at for t in got]
        missing += per_table[table] - len(got)
    if hasattr(layer, "close_pools"):
        await layer.close_pools()
    else:  # the pub/sub layer: flush unsubscribes and closes its connections
        await layer.flush()
    return {
        "published": count,
        "rate": rate,
        "size": size,
        "missing": missing,
        "latency": latencies,
    }


async def play(
    args: argparse.Namespace, seats: list[Seat], table_ids: list[int], servers: Servers
) -> tuple[Run, dict[str, Any]]:
    """The phases: warm-up, connect, idle, load, then the bare floor."""
    run = Run(args, servers.ports)
    out: dict[str, Any] = {}
    say = lambda text: print(f"  {text}", file=sys.stderr, flush=True)  # noqa: E731

    # Warm-up: one socket per process (templates compiled, pools filled), then the baseline.
    warm = [Seat(s.table, s.position, i, s.cookie) for i, s in enumerate(seats[: len(run.ports)])]
    for seat in warm:
        await run.open(seat, f"/ws/tables/{seat.table}/", wait_frame=True)
        await run.close(seat)
    await asyncio.sleep(1)
    run.closed = 0
    before = await sample(servers)

    say(f"connecting {len(seats)} sockets")
    started = time.time()
    await asyncio.gather(*(run.open(s, f"/ws/tables/{s.table}/", wait_frame=True) for s in seats))
    out["connect_all_s"] = time.time() - started
    out["connect"] = [s.first_frame_at - s.opened_at for s in seats]
    await run.settle(SETTLE_QUIET, 120)

    say(f"idle for {args.idle} s")
    idle0 = await sample(servers)
    await asyncio.sleep(args.idle)
    idle1 = await sample(servers)
    out["before"] = before
    out["idle"] = between(idle0, idle1)
    out["memory_per_socket_kb"] = (sum(idle1.rss_kb) - sum(before.rss_kb)) / len(seats)

    say(f"playing for {args.duration} s")
    run.playing = True
    load0 = await sample(servers)
    out["load_start"] = time.time()
    sent0 = run.moves_sent
    for seat in seats:
        await run.act(seat)
    await asyncio.sleep(args.duration)
    load1 = await sample(servers)
    out["published"] = {}
    for port in servers.ports:  # each move's commit, from the process that made it
        out["published"].update(await stats(port, "published"))
    out["load_end"] = time.time()
    sent = run.moves_sent - sent0
    run.playing = False
    out["load"] = between(load0, load1)
    await run.settle(2.0, 3 * MISSING_AFTER)  # the last moves' frames
    await asyncio.gather(*(run.close(s) for s in seats))
    await quiet(servers)  # the servers close them (presence rows, table.changed)

    sizes = run.frame_sizes or [10_000]
    rate = max(1.0, sent / (out["load_end"] - out["load_start"]))
    say(f"bare floor: {len(seats)} sockets, {rate:.0f} messages/s for {args.floor_duration} s")
    run.bare = True
    bare = [Seat(s.table, s.position, s.process, s.cookie) for s in seats]
    await asyncio.gather(*(run.open(s, f"/ws/bare/{s.table}/", wait_frame=False) for s in bare))
    floor0 = await sample(servers)
    out["floor"] = await floor(
        run, bare, table_ids, rate, int(statistics.median(sizes)), args.floor_duration
    )
    floor1 = await sample(servers)
    out["floor"].update(between(floor0, floor1))
    await asyncio.gather(*(run.close(s) for s in bare))
    return run, out


def analyse(seats: list[Seat], run: Run, out: dict[str, Any]) -> dict[str, Any]:
    """What the database says after the run: the moves' commit times, lost moves, the replays."""
    from django.db import connection

    from games.audit import verify_hand
    from games.models import Hand, Move

    hand_table = dict(Hand.objects.values_list("id", "match__table_id"))
    by_table: dict[int, list[Seat]] = {}
    for seat in seats:
        by_table.setdefault(seat.table, []).append(seat)
    rows = list(
        Move.objects.values_list(
            "hand_id", "number", "seat", "created_at", "client_move_id", "action"
        )
    )
    push: list[float] = []
    # The same pushes from the move's commit (as the goal measures them), where it is known.
    committed: list[float] = []
    # Each push with what it was: the move's number and kind, the mover's seat and the
    # receiving seat (seat i is served by process i % K), and from its commit, for --json.
    detail: list[tuple[float, int, str, int, int, float | None]] = []
    never = late = 0
    in_window = 0
    for hand, number, position, created, _move_id, action in rows:
        written = created.timestamp()
        in_window += out["load_start"] <= written <= out["load_end"]
        for other in by_table[hand_table[hand]]:
            if other.position == position:
                continue
            seen = other.seen.get((hand, number))
            if seen is None:
                never += 1
                continue
            push.append(seen - written)  # late ones too: the tail is part of the figure
            commit = out["published"].get(f"{hand}:{number}")
            if commit is not None:
                committed.append(seen - commit)
            kind = action.get("do", "") if isinstance(action, dict) else ""
            since_commit = 1000 * (seen - commit) if commit is not None else None
            detail.append(
                (1000 * (seen - written), number, kind, position, other.position, since_commit)
            )
            late += seen - written > MISSING_AFTER
    stored = {move_id for _h, _n, _s, _c, move_id, _a in rows if move_id}
    problems = []
    hands = Hand.objects.select_related("match__table__variant").order_by("id")
    for hand in hands:
        problems += [f"hand {hand.pk}: {p}" for p in verify_hand(hand)]
    result = {
        "moves": len(rows),
        "moves_per_s": in_window / (out["load_end"] - out["load_start"]),
        "push": push,
        "push_committed": committed,
        "push_detail": detail,
        "missing_frames": never + late,
        "missing_never": never,
        "missing_late": late,
        "lost_moves": len(run.acknowledged - stored),
        "hands": len(hand_table),
        "hand_problems": problems,
        "coalesced": sum(s.coalesced for s in seats),
    }
    connection.close()
    return result


# ----------------------------------------------------------------------------- the report
def fmt(x: float) -> str:
    return "-" if x != x else (f"{x:.2f}" if x < 10 else f"{x:.1f}")


def report(args: argparse.Namespace, settings: dict[str, Any], out: dict[str, Any]) -> dict:
    """Print the figures; return them for --json."""
    figures: dict[str, Any] = {
        "settings": settings,
        "connect_all_s": out["connect_all_s"],
        "connect_ms": summary(out["connect"]),
        "round_trip_ms": summary(out["round_trips"]),
        "push_ms": summary(out["push"]),
        "push_from_commit_ms": summary(out["push_committed"]),
        "floor_ms": summary(out["floor"]["latency"]),
    }
    push, bare = figures["push_ms"], figures["floor_ms"]
    from_commit = figures["push_from_commit_ms"]
    # The goal's ratio: push from the commit (as the floor, from the publish) over the floor.
    figures["push_over_floor"] = {
        "p50": from_commit["p50"] / bare["p50"],
        "p99": from_commit["p99"] / bare["p99"],
    }
    # And from the row's write, the commit included (what a player waits, disk and all).
    figures["push_from_write_over_floor"] = {
        "p50": push["p50"] / bare["p50"],
        "p99": push["p99"] / bare["p99"],
    }
    phases = {name: dict(out[name]) for name in ("idle", "load", "floor")}
    for phase in phases.values():
        phase.pop("latency", None)
    figures["phases"] = phases
    figures["memory_per_socket_kb"] = out["memory_per_socket_kb"]
    figures["rss_before_mb"] = [kb / 1024 for kb in out["before"].rss_kb]
    keys = ("moves", "moves_per_s", "missing_frames", "missing_late", "missing_never")
    for key in (*keys, "lost_moves", "hands", "coalesced"):
        figures[key] = out[key]
    figures["hand_problems"] = out["hand_problems"]
    figures["refusals"] = dict(out["refusals"])
    figures["closed_sockets"] = out["closed"]
    figures["connect_failures"] = dict(out["connect_failures"])
    figures["queries_per_move"] = out["load"]["queries"] / max(1, out["moves_in_load"])
    figures["server_errors"] = out["server_errors"]
    figures["push_detail"] = {
        "fields": [
            "ms",
            "move number",
            "move kind",
            "mover's seat",
            "receiving seat",
            "ms from the commit",
        ],
        "pushes": out["push_detail"],
    }

    def row(*cells: Any) -> None:
        print("| " + " | ".join(str(c) for c in cells) + " |")

    row("latency, ms", "p50", "p95", "p99", "max", "n")
    row("---", "---:", "---:", "---:", "---:", "---:")
    for name, s in (
        ("connect: a socket's open to its first frame", figures["connect_ms"]),
        ("move round trip: send to the mover's frame", figures["round_trip_ms"]),
        ("push: move row written (just before commit) to another seat's frame", push),
        ("push: the move's commit (its publish) to another seat's frame", from_commit),
        ("bare floor: group_send to a bare socket's frame", bare),
    ):
        row(name, *(fmt(s[k]) for k in ("p50", "p95", "p99", "max")), s["n"])
    print()
    k = len(out["before"].rss_kb)
    row(f"{k} daphne process{'es' if k > 1 else ''}", "idle", "under load", "bare floor")
    row("---", "---:", "---:", "---:")
    row("server CPU, % of one core", *(fmt(p["server_cpu_pct"]) for p in phases.values()))
    row("SQL queries/s", *(fmt(p["queries_per_s"]) for p in phases.values()))
    row(
        "RSS per process at the end, MB",
        *(" / ".join(f"{mb:.0f}" for mb in p["rss_mb"]) for p in phases.values()),
    )
    row(
        "client CPU (this process), % of one core",
        *(fmt(p["client_cpu_pct"]) for p in phases.values()),
    )
    row(
        "PostgreSQL CPU (the bench database's backends), % of one core",
        *(fmt(p["postgres_cpu_pct"]) for p in phases.values()),
    )
    row(
        f"machine CPU busy, % of all {os.cpu_count()} cores",
        *(fmt(p["machine_busy_pct"]) for p in phases.values()),
    )
    print()
    timed = phases["load"]["timed"]
    if timed:
        row("under load, in the servers", "calls", "mean, ms", "% of a process's time", "threads")
        row("---", "---:", "---:", "---:", "---:")
        for name, what in (
            ("submit", "`actions.submit` (a move, commit and publish included)"),
            ("publish", "the publish after commit, in the committing thread"),
            ("render", "`TableConsumer._render` (one socket's fragments)"),
            ("state", "`reads.table_state` (a table read, shared by its sockets)"),
            ("loop_state", "`loop_reads.table_state` (the same read on the event loop)"),
            ("advance", "`reads.state_after_move` (the state held, brought forward a move)"),
            ("arrived", "a move's message, from its publish to a table socket's handler"),
            ("framed", "a move's message, from its publish to a table socket's frame sent"),
            ("gc0", "the garbage collector, youngest generation (all threads wait)"),
            ("gc1", "the garbage collector, middle generation"),
            ("gc2", "the garbage collector, whole heap"),
            ("bare_arrived", "(bare floor) a message, from its publish to a bare socket's handler"),
        ):
            t = (phases["floor"]["timed"] if name.startswith("bare") else timed).get(name)
            if t:
                row(what, t["calls"], fmt(t["mean_ms"]), fmt(t["busy_pct"]), t["threads"])
        print()
    ratio = figures["push_over_floor"]
    before = " / ".join(f"{mb:.0f}" for mb in figures["rss_before_mb"])
    refusals = ", ".join(f"{code} {n}" for code, n in figures["refusals"].items()) or "none"
    if not args.think:
        cycle = settings["tables"] / max(figures["moves_per_s"], 1e-9)
        print(
            "- full speed is a closed loop (every table always has a move in flight): the "
            f"latencies are mostly the servers' queue, tables / moves/s = {cycle:.2f} s per "
            "move and table; --think measures them below saturation"
        )
    print(f"- connect: all {settings['sockets']} sockets in {out['connect_all_s']:.2f} s")
    print(
        f"- moves/s under load: {figures['moves_per_s']:.1f} ({figures['moves']} moves, "
        f"{figures['hands']} hands); SQL queries per move: {figures['queries_per_move']:.1f}"
    )
    written = figures["push_from_write_over_floor"]
    print(
        f"- push latency (from the commit) over the bare floor: median x{ratio['p50']:.1f}, "
        f"p99 x{ratio['p99']:.1f}; from the row's write, the commit included: median "
        f"x{written['p50']:.1f}, p99 x{written['p99']:.1f} "
        f"(floor: {out['floor']['published']} messages of {out['floor']['size']} bytes at "
        f"{out['floor']['rate']:.1f}/s, {out['floor']['missing']} not delivered)"
    )
    print(
        f"- memory: RSS before the sockets {before} MB; per socket "
        f"{figures['memory_per_socket_kb']:.1f} kB"
    )
    print(
        f"- errors: refusals {refusals}; sockets closed by the server {out['closed']}; "
        f"failed handshakes (retried) {sum(out['connect_failures'].values())}; missing frames "
        f"{figures['missing_frames']} ({out['missing_late']} later than "
        f"{MISSING_AFTER:.0f} s, {out['missing_never']} never); versions seen only through a "
        f"later frame {figures['coalesced']}"
    )
    for error, n in out["connect_failures"].items():
        print(f"    failed handshake x{n}: {error}")
    problems = figures["hand_problems"]
    print(
        f"- lost moves: {figures['lost_moves']} acknowledged moves without a Move row; "
        f"verify_hand: {len(problems)} problem(s) in {figures['hands']} hands"
    )
    for line in problems[:10]:
        print(f"    {line}")
    if out["server_errors"]:
        print(f"- the servers logged {len(out['server_errors'])} error line(s), first ones:")
        for line in out["server_errors"][:10]:
            print(f"    {line}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100, help="tables of 4 players (100)")
    parser.add_argument("--processes", type=int, default=1, help="daphne processes (1)")
    parser.add_argument("--duration", type=float, default=300, help="s of play (300)")
    parser.add_argument("--idle", type=float, default=15, help="s idle, sockets open (15)")
    parser.add_argument(
        "--think", type=float, default=0, help="s before each move, on average (0: at once)"
    )
    parser.add_argument("--variant", default="classic", help="the tables' variant (classic)")
    parser.add_argument(
        "--floor-duration",
        type=float,
        default=None,
        help="s of the bare floor's publishing (as long as --duration)",
    )
    parser.add_argument(
        "--connect-concurrency", type=int, default=50, help="handshakes at a time (50)"
    )
    parser.add_argument("--redis-db", type=int, default=9, help="the Redis database (9)")
    parser.add_argument("--clock", action="store_true", help="also run a run_clock worker")
    parser.add_argument(
        "--layer", choices=sorted(LAYERS), default="site", help="the Redis channel layer (site)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.floor_duration is None:
        args.floor_duration = args.duration

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a socket is a file, twice
    admin, bench_url, name = database_urls()
    redis_url = f"redis://127.0.0.1:6379/{args.redis_db}"
    env = environment(bench_url, redis_url, args.layer)
    logs = Path(tempfile.mkdtemp(prefix="okey-bench-load-"))
    servers = Servers(env, args.processes, args.clock, logs, (admin, name))
    created = False
    try:
        flush_redis(redis_url)
        create_database(admin, name)
        created = True
        setup_django(env)
        from django.core.management import call_command
        from django.db import connection

        print(f"# migrating {name}", file=sys.stderr, flush=True)
        call_command("migrate", verbosity=0)
        print(f"# {args.tables} tables of {args.variant}", file=sys.stderr, flush=True)
        seats, table_ids = prepare(args.tables, args.variant)
        for seat in seats:
            seat.process = seat.position % args.processes
        connection.close()
        servers.start()
        settings = {
            "tables": args.tables,
            "sockets": len(seats),
            "processes": args.processes,
            "duration_s": args.duration,
            "idle_s": args.idle,
            "think_s": args.think,
            "floor_s": args.floor_duration,
            "variant": args.variant,
            "clock_worker": args.clock,
            "commit": code_version(),
            "database": f"PostgreSQL {name} (servers' DB_POOL: {env.get('DB_POOL', 'on')})",
            "layer": f"{LAYERS[args.layer]} on {redis_url}",
            "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python "
            f"{platform.python_version()}",
            "load_before": "/".join(f"{x:.1f}" for x in os.getloadavg()),
        }
        run, out = asyncio.run(play(args, seats, table_ids, servers))
        out.update(analyse(seats, run, out))
        out["round_trips"] = run.round_trips
        out["refusals"] = run.refusals
        out["closed"] = run.closed
        out["connect_failures"] = run.connect_failures
        out["moves_in_load"] = out["moves_per_s"] * (out["load_end"] - out["load_start"])
        out["server_errors"] = servers.errors()
        print()
        for key, value in settings.items():
            print(f"# {key}: {value}")
        print()
        figures = report(args, settings, out)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2, default=str) + "\n")
        return 0
    finally:
        servers.stop()
        if created:
            with contextlib.suppress(Exception):
                from django.db import connection

                connection.close()
            drop_database(admin, name)
        with contextlib.suppress(Exception):
            flush_redis(redis_url)
        with contextlib.suppress(Exception):
            for path in logs.glob("*"):
                path.unlink()
            logs.rmdir()


if __name__ == "__main__":
    sys.exit(main())
