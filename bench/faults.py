"""Faults survived: a server process killed, Redis stopped, PostgreSQL restarted, mid-hand, with
players and spectators connected over real sockets (a script, not a test; not in CI).

    .venv/bin/python bench/faults.py                    # 6 tables, the three faults
    .venv/bin/python bench/faults.py --tables 4 --play 10

Everything runs on private servers that the script starts and removes itself, never the
shared ones (5432, 6379): a PostgreSQL cluster made with ``initdb`` in a temporary directory
(as the ``postgres`` user when run as root) listening on 127.0.0.1:5433 (its socket in /tmp),
and a Redis on 6380 without persistence (``--save ''``). The script refuses to start if either
port is taken. On them it runs the production set-up of ``manage.py serve``: two daphne
processes (``serve.daphne_command``: the same options) on ``DATABASE_URL``/``REDIS_URL``/
``CACHE_URL`` pointing at the private servers, and a ``run_clock`` worker that plays the bots.

Each table (the four variants in turn) has two players (seats 0 and 1, one socket each, on
the two processes) and two bots, and an anonymous spectator. Clients are asyncio
``websockets`` connections with the players' session cookies: they read ``#table-live``'s
data attributes and the rack from the frames and, on their turn, draw and discard (after a
short think); after a hand they press "ready" (seat 0 asks for a rematch after a match). A
client whose socket drops connects again (0.2 to 1 s apart) as the page's ws extension does,
and a refused move is tried again a second later, as a player would.

A move is *acknowledged* when the mover's socket brings a board of the same hand at a later
version; *refused* when a ``#move-error`` answers its ``client_move_id``; *unanswered* when
neither comes within ``--answer`` seconds (a hang); *lost* when acknowledged but no ``Move``
row has its id. The faults, one after the other, with ``--play`` seconds of play before each:

a. one daphne process SIGKILLed, started again on its port after 3 s;
b. Redis stopped (SHUTDOWN NOSAVE: its groups are gone with it) for 10 s, then started again;
c. PostgreSQL stopped (``pg_ctl stop -m fast``) for ``--pg-down`` seconds, then started again.

After each the figures: how long until every client was connected again, how long until every
client's board had caught up with the database's version of its table's hand (time to
resync), the moves sent while the fault lasted and what became of them, and the audit:
``audit.verify_hand`` on every hand (in one REPEATABLE READ snapshot, so play goes on
meanwhile), tile conservation of every stored hand (racks, pile, discards, melds and the
indicator are the 106 tiles), and every acknowledged move in the ``Move`` table. The servers'
logged errors are counted (a traceback a fault causes is expected; what matters is that the
site recovers).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PG_PORT = 5433
REDIS_PORT = 6380
SHARED_PORTS = {5432, 6379}  # the machine's own servers: never touched
VARIANTS = ["classic", "duz", "okey51", "gobek17"]

LIVE = re.compile(r'<div id="table-live"[^>]*>')
ATTR = re.compile(r'data-(version|turn|seat|phase|hand|legal|status)="([^"]*)"')
RACK_TILE = re.compile(r'class="tile([^"]*)" data-tile="([^"]+)"')
ERROR = re.compile(
    r'<p id="move-error"[^>]*data-error="([^"]*)"(?:[^>]*data-move-id="([^"]*)")?[^>]*>([^<]*)<'
)
SERVER_ERROR = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|Exception inside")


def say(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def port_taken(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def wait_port(
    port: int, seconds: float = 60, process: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + seconds
    while not port_taken(port):
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process for port {port} exited ({process.returncode})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listens on {port} after {seconds} s")
        time.sleep(0.1)


# ----------------------------------------------------------------------------- private servers
class PrivatePostgres:
    """A PostgreSQL cluster of this script's own, in a temporary directory, on ``port``."""

    def __init__(self, port: int = PG_PORT) -> None:
        assert port not in SHARED_PORTS
        self.port = port
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise SystemExit("no /usr/lib/postgresql/*/bin/initdb: install PostgreSQL")
        self.bin = Path(found[-1]).parent
        self.dir = Path(tempfile.mkdtemp(prefix="okey-private-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"

    def _as_postgres(self, *args: str) -> list[str]:
        # PostgreSQL refuses to run as root.
        return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else list(args)

    def _run(self, *args: str) -> None:
        subprocess.run(self._as_postgres(*args), check=True, capture_output=True, cwd="/tmp")

    def init(self) -> None:
        if port_taken(self.port):
            raise SystemExit(f"port {self.port} is taken: this script needs it for its own server")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust")
        self.start()

    def start(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            f"-p {self.port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200",
            "-l",
            str(self.log),
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateRedis:
    """A Redis of this script's own on ``port``, without persistence."""

    def __init__(self, port: int = REDIS_PORT) -> None:
        assert port not in SHARED_PORTS
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="okey-private-redis-"))
        self.pidfile = self.dir / "redis.pid"

    def start(self) -> None:
        if port_taken(self.port):
            raise SystemExit(f"port {self.port} is taken: this script needs it for its own Redis")
        subprocess.run(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "yes",
                "--dir",
                str(self.dir),
                "--pidfile",
                str(self.pidfile),
                "--logfile",
                str(self.dir / "redis.log"),
            ],
            check=True,
        )
        wait_port(self.port, 20)

    def stop(self) -> None:
        """SHUTDOWN NOSAVE: Redis and everything it held (the layer's groups) are gone."""
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port)
        with contextlib.suppress(redis.exceptions.ConnectionError):
            client.shutdown(nosave=True)
        deadline = time.monotonic() + 10
        while port_taken(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# ----------------------------------------------------------------------------- the site
def site_environment(
    database_url: str, redis_url: str, cache_url: str, **extra: str
) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("CLOCK_IN_SERVER", "DJANGO_ALLOW_ASYNC_UNSAFE", "DB_POOL"):
        env.pop(key, None)
    env.update(
        DJANGO_SETTINGS_MODULE="okeysite.settings",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CACHE_URL=cache_url,
        SECRET_KEY=os.environ.get("SECRET_KEY") or "bench-faults-not-secret",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DEBUG="false",
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        BOT_DELAY_SECONDS="0.3",
        CLOCK_INTERVAL_SECONDS="0.2",
        NEXT_HAND_PAUSE_SECONDS="2",
        AWAY_GRACE_SECONDS="600",
    )
    env.update(extra)
    return env


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ["DB_POOL"] = "false"  # this process: plain connections
    import django

    django.setup()


class Site:
    """K daphne processes (``manage.py serve``'s command line) and a run_clock worker."""

    def __init__(self, env: dict[str, str], processes: int, logs: Path) -> None:
        self.env, self.logs = env, logs
        self.ports = [free_port() for _ in range(processes)]
        self.daphnes: list[subprocess.Popen[bytes] | None] = [None] * processes
        self.clock: subprocess.Popen[bytes] | None = None
        self.starts = [0] * processes

    def migrate(self) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
        )

    def _spawn(self, command: list[str], name: str) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("ab") as log:
            return subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )

    def start_daphne(self, i: int) -> None:
        from games.management.commands.serve import daphne_command

        command = daphne_command("127.0.0.1", self.ports[i], "okeysite.asgi:application")
        self.starts[i] += 1
        process = self._spawn(command, f"daphne-{i}")
        self.daphnes[i] = process
        wait_port(self.ports[i], 60, process)

    def start(self) -> None:
        for i in range(len(self.ports)):
            self.start_daphne(i)
        self.clock = self._spawn([sys.executable, "manage.py", "run_clock"], "clock")

    def kill(self, i: int) -> None:
        process = self.daphnes[i]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        from games.management.commands.serve import stop_children

        stop_children([p for p in [*self.daphnes, self.clock] if p is not None])

    def errors(self) -> list[str]:
        out = []
        for path in sorted(self.logs.glob("*.log")):
            for line in path.read_text(errors="replace").splitlines():
                if SERVER_ERROR.search(line):
                    out.append(f"{path.stem}: {line.strip()}")
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_session(user: Any) -> str:
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    # The backend that loads a session's user (the first only limits log-ins).
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return str(store.session_key)


# ----------------------------------------------------------------------------- the clients
@dataclass
class Client:
    """One socket: a player's (``cookie``, plays its seat) or a spectator's."""

    name: str
    table: int
    port: int
    cookie: str | None = None
    plays: bool = False
    state: dict[str, str] = field(default_factory=dict)
    rack: list[tuple[str, bool]] = field(default_factory=list)
    top: dict[int, int] = field(default_factory=dict)  # the highest version seen, per hand
    pending: dict[str, Any] | None = None
    said_ready: int | None = None
    tries: Counter[tuple[int, int]] = field(default_factory=Counter)
    ws: Any = None
    connected: bool = False
    want_open: bool = True  # False while a soak keeps it closed
    opened: int = 0
    closed_at: float = 0.0
    task: asyncio.Task[None] | None = None


@dataclass
class Move:
    id: str
    client: str
    hand: int
    version: int
    sent_at: float
    outcome: str = ""  # acknowledged, refused:<code>, dropped (socket closed first), unanswered
    answered_at: float = 0.0
    text: str = ""


class Clients:
    """Every client of a run, and what they count."""

    def __init__(self, think: float = 0.4, answer: float = 30.0) -> None:
        self.clients: list[Client] = []
        self.moves: dict[str, Move] = {}
        self.playing = True
        self.stopping = False
        self.think = think
        self.answer = answer
        self.sequence = 0
        self.reconnects = 0
        self.connect_failures = 0
        self.disconnects = 0  # sockets the server or the network closed
        self.refusal_texts: dict[str, str] = {}

    def add(self, client: Client) -> None:
        self.clients.append(client)
        client.task = asyncio.create_task(self.run(client))

    # -- the socket
    async def run(self, client: Client) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        while not self.stopping:
            if not client.want_open:
                await asyncio.sleep(0.1)
                continue
            headers = {"Cookie": f"sessionid={client.cookie}"} if client.cookie else {}
            try:
                client.ws = await connect(
                    f"ws://127.0.0.1:{client.port}/ws/tables/{client.table}/",
                    origin=f"http://127.0.0.1:{client.port}",  # type: ignore[arg-type]
                    additional_headers=headers,
                    compression=None,
                    ping_interval=None,
                    open_timeout=10,
                    max_size=None,
                    proxy=None,
                )
            except Exception:
                self.connect_failures += 1
                await asyncio.sleep(random.uniform(0.2, 1.0))
                continue
            client.opened += 1
            if client.opened > 1:
                self.reconnects += 1
            client.connected = True
            try:
                async for message in client.ws:
                    await self.received(client, str(message))
            except ConnectionClosed:
                pass
            except Exception as exc:  # a bug in this script: say it, keep the client going
                say(f"{client.name}: {type(exc).__name__}: {exc}")
            client.connected = False
            client.closed_at = time.monotonic()
            if client.want_open and not self.stopping:
                self.disconnects += 1
            if client.pending is not None:
                self.settle(client, "dropped")
            if not self.stopping and client.want_open:
                await asyncio.sleep(random.uniform(0.2, 1.0))

    async def close(self, client: Client, abrupt: bool = False) -> None:
        """Close the socket (the client stays closed until ``want_open`` again)."""
        client.want_open = False
        ws = client.ws
        if ws is None or not client.connected:
            return
        if abrupt:  # no close frame: the connection just goes, as a lost network does
            ws.transport.abort()
        else:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 5)

    async def stop(self) -> None:
        self.stopping = True
        for client in self.clients:
            if client.ws is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.ws.close(), 5)
        for client in self.clients:
            if client.task is not None:
                client.task.cancel()
                with contextlib.suppress(BaseException):
                    await client.task

    # -- frames
    def settle(self, client: Client, outcome: str, text: str = "") -> None:
        move = self.moves.get(client.pending["id"]) if client.pending else None
        client.pending = None
        if move is not None and not move.outcome:
            move.outcome, move.answered_at, move.text = outcome, time.monotonic(), text

    async def received(self, client: Client, frame: str) -> None:
        error = ERROR.search(frame)
        if error:
            code, move_id, text = error.group(1), error.group(2), error.group(3).strip()
            self.refusal_texts.setdefault(code, text)
            if client.pending is not None and move_id == client.pending["id"]:
                self.settle(client, f"refused:{code}", text)
                if self.playing:  # a player tries again a moment later
                    asyncio.get_running_loop().call_later(
                        1.0, lambda: asyncio.ensure_future(self.act(client))
                    )
        live = LIVE.search(frame)
        if live is None:
            return
        state = dict(ATTR.findall(live.group(0)))
        rack_at = frame.find('id="rack-area"')
        if rack_at >= 0:
            client.rack = [(t, "tile-wild" in cls) for cls, t in RACK_TILE.findall(frame, rack_at)]
        if state.get("hand", "").isdigit() and state.get("version", "").isdigit():
            hand, version = int(state["hand"]), int(state["version"])
            client.top[hand] = max(client.top.get(hand, -1), version)
            p = client.pending
            if p is not None and (hand != p["hand"] or version > p["version"]):
                self.settle(client, "acknowledged" if hand == p["hand"] else "dropped")
        client.state = state
        asyncio.ensure_future(self.act(client))  # its think time must not hold the frames up

    async def act(self, client: Client) -> None:
        """A player's turn: draw, then discard the last tile; "ready" after a hand."""
        s = client.state
        if not (client.plays and self.playing and client.connected) or client.pending:
            return
        if not s.get("hand", "").isdigit() or not s.get("version", "").isdigit():
            return
        hand, version = int(s["hand"]), int(s["version"])
        if s.get("phase") == "over":
            if client.said_ready != hand:
                client.said_ready = hand
                kind = "rematch" if s.get("status") == "finished" else "ready"
                if kind == "ready" or s.get("seat") == "0":
                    await self._send(client, {"type": kind})
            return
        if s.get("turn") != s.get("seat") or client.tries[(hand, version)] >= 20:
            return
        legal = s.get("legal", "").split()
        if s.get("phase") == "draw":
            kind = "draw" if "draw" in legal else "take" if "take" in legal else None
            if kind is None:
                return
            move: dict[str, Any] = {"do": kind}
        elif s.get("phase") == "discard" and "discard" in legal and client.rack:
            tiles = [t for t, wild in client.rack if not wild] or [t for t, _ in client.rack]
            move = {"do": "discard", "tile": tiles[-1]}
        else:
            return
        client.tries[(hand, version)] += 1
        self.sequence += 1
        move_id = f"fault-{self.sequence}"
        client.pending = {"id": move_id, "hand": hand, "version": version}
        await asyncio.sleep(self.think * random.uniform(0.5, 1.5))
        if client.pending is None or client.pending["id"] != move_id or not client.connected:
            client.pending = (
                None if client.pending and client.pending["id"] == move_id else client.pending
            )
            return
        self.moves[move_id] = Move(move_id, client.name, hand, version, time.monotonic())
        payload = {
            "type": "move",
            "hand": hand,
            "move": move,
            "expected_version": version,
            "client_move_id": move_id,
        }
        if not await self._send(client, payload):
            self.settle(client, "dropped")

    async def _send(self, client: Client, payload: dict[str, Any]) -> bool:
        try:
            await client.ws.send(json.dumps(payload))
            return True
        except Exception:
            return False

    async def watchdog(self) -> None:
        """A move with no answer in ``answer`` seconds is a hang: counted, then the client
        asks for the table again (as a player reloading the page)."""
        while not self.stopping:
            await asyncio.sleep(1)
            now = time.monotonic()
            for client in self.clients:
                p = client.pending
                move = self.moves.get(p["id"]) if p else None
                if move is not None and now - move.sent_at > self.answer:
                    self.settle(client, "unanswered")
                    await self._send(client, {"type": "refresh"})

    def connected(self) -> bool:
        return all(c.connected for c in self.clients if c.want_open)


# ----------------------------------------------------------------------------- the database side
def current_hands() -> dict[int, tuple[int, int]]:
    """Each table's latest hand: table -> (hand id, version)."""
    from django.db import connection

    from games.models import Hand

    out: dict[int, tuple[int, int]] = {}
    rows = Hand.objects.order_by("id").values_list("match__table_id", "id", "version")
    for table, hand, version in rows:
        out[table] = (hand, version)
    connection.close()
    return out


def tiles_conserved(state: dict[str, Any]) -> bool:
    from games import engine
    from games.engine.tiles import physical_tiles

    return engine.Hand.from_state(state).every_tile() == Counter(physical_tiles())


def audit(acknowledged: set[str]) -> dict[str, Any]:
    """verify_hand on every hand, tile conservation, acknowledged moves in the log: all in one
    REPEATABLE READ snapshot (play goes on meanwhile)."""
    from django.db import connection, transaction

    from games.audit import verify_hand
    from games.models import Hand
    from games.models import Move as MoveRow

    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            hands = list(Hand.objects.select_related("match__table__variant").order_by("id"))
            problems = {h.pk: verify_hand(h) for h in hands}
            bad_tiles = [h.pk for h in hands if not tiles_conserved(h.state)]
            logged = set(
                MoveRow.objects.filter(client_move_id__in=acknowledged).values_list(
                    "client_move_id", flat=True
                )
            )
            moves = MoveRow.objects.count()
            finished = sum(1 for h in hands if h.status == Hand.Status.FINISHED)
    finally:
        connection.close()
    return {
        "hands": len(hands),
        "finished": finished,
        "moves": moves,
        "verify_failed": {k: v for k, v in problems.items() if v},
        "tiles_not_conserved": bad_tiles,
        "lost": sorted(acknowledged - logged),
    }


async def caught_up(clients: Clients, limit: float) -> float | None:
    """Seconds until every open client has seen its table's hand at the version the database
    held when this began (or a later hand); None if not within ``limit``."""
    began = time.monotonic()
    target = await asyncio.to_thread(current_hands)
    while time.monotonic() - began < limit:
        behind = 0
        for c in clients.clients:
            if not c.want_open or c.table not in target:
                continue
            hand, version = target[c.table]
            later = any(h > hand for h in c.top)
            if not later and c.top.get(hand, -1) < version:
                behind += 1
        if not behind:
            return time.monotonic() - began
        await asyncio.sleep(0.1)
    return None


def behind_now(clients: Clients, target: dict[int, tuple[int, int]]) -> list[str]:
    out = []
    for c in clients.clients:
        if c.want_open and c.table in target:
            hand, version = target[c.table]
            if not any(h > hand for h in c.top) and c.top.get(hand, -1) < version:
                out.append(f"{c.name} at {c.top.get(hand)} of {version} (hand {hand})")
    return out


# ----------------------------------------------------------------------------- the run
def prepare(tables: int, ports: list[int]) -> list[Client]:
    """Tables of the four variants in turn: two players (one socket each, on two processes),
    two bots, an anonymous spectator; a match started at each."""
    from django.contrib.auth import get_user_model

    from games import actions, policy
    from games.catalog import ensure_variants

    ensure_variants()
    users = get_user_model()
    clients = []
    for t in range(tables):
        variant = VARIANTS[t % len(VARIANTS)]
        table = actions.create_table(variant=variant, created_by=None, name=f"faults {t}")
        for position in (0, 1):
            user = users.objects.create_user(f"faults-{t}-{position}", password=None)
            actions.sit(table, user, position)
            port = ports[(t + position) % len(ports)]
            name = f"t{table.pk}s{position}"
            clients.append(Client(name, table.pk, port, make_session(user), plays=True))
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=policy.SYSTEM)
        clients.append(Client(f"t{table.pk}w", table.pk, ports[t % len(ports)]))
        actions.start_match(table, by=policy.SYSTEM)
    return clients


def outcomes(moves: list[Move]) -> Counter[str]:
    return Counter(m.outcome or "in flight" for m in moves)


async def fault_run(
    args: argparse.Namespace, pg: PrivatePostgres, redis: PrivateRedis, site: Site
) -> dict[str, Any]:
    run = Clients(think=args.think, answer=args.answer)
    for client in await asyncio.to_thread(prepare, args.tables, site.ports):
        run.add(client)
    watchdog = asyncio.create_task(run.watchdog())
    report: dict[str, Any] = {"faults": []}

    async def wait_connected(limit: float) -> float | None:
        began = time.monotonic()
        while time.monotonic() - began < limit:
            if run.connected():
                return time.monotonic() - began
            await asyncio.sleep(0.05)
        return None

    await wait_connected(60)
    say(f"{len(run.clients)} sockets open; playing {args.play} s")
    await asyncio.sleep(args.play)

    async def after(name: str, recovered_at: float, during: list[Move]) -> dict[str, Any]:
        connected = await wait_connected(60)
        resync = await caught_up(run, 60)
        target = await asyncio.to_thread(current_hands)
        await asyncio.sleep(args.play)  # play goes on
        moves_after = [m for m in run.moves.values() if m.sent_at > recovered_at]
        acked = {m.id for m in run.moves.values() if m.outcome == "acknowledged"}
        checked = await asyncio.to_thread(audit, acked)
        entry = {
            "fault": name,
            "reconnected_s": None if connected is None else connected,
            "resync_s": resync,
            "behind": [] if resync is not None else behind_now(run, target),
            "during": dict(outcomes(during)),
            "after": dict(outcomes(moves_after)),
            "audit": checked,
            "errors_logged": len(site.errors()),
        }
        ok = (
            connected is not None
            and resync is not None
            and not checked["verify_failed"]
            and not checked["tiles_not_conserved"]
            and not checked["lost"]
            and outcomes(moves_after)["acknowledged"] > 0
            and not outcomes(during)["unanswered"]
            and not outcomes(moves_after)["unanswered"]
        )
        answer_times = [m.answered_at - m.sent_at for m in during if m.answered_at]
        entry["slowest_answer_during_s"] = max(answer_times) if answer_times else None
        entry["survived"] = ok
        report["faults"].append(entry)
        say(f"{name}: {'survived' if ok else 'NOT survived'} {entry}")
        return entry

    # a. a daphne process killed and started again on its port
    say("a. SIGKILL daphne 0, start it again after 3 s")
    began = time.monotonic()
    site.kill(0)
    await asyncio.sleep(3)
    await asyncio.to_thread(site.start_daphne, 0)
    restarted = time.monotonic()
    during = [m for m in run.moves.values() if began <= m.sent_at <= restarted]
    await after("daphne killed", restarted, during)

    # b. Redis stopped for 10 s and started again (empty)
    say("b. stop Redis for 10 s")
    began = time.monotonic()
    await asyncio.to_thread(redis.stop)
    await asyncio.sleep(10)
    await asyncio.to_thread(redis.start)
    restarted = time.monotonic()
    during = [m for m in run.moves.values() if began <= m.sent_at <= restarted]
    await after("redis stopped", restarted, during)

    # c. PostgreSQL stopped mid-hand and started again
    say(f"c. stop PostgreSQL for {args.pg_down} s")
    began = time.monotonic()
    await asyncio.to_thread(pg.stop)
    await asyncio.sleep(args.pg_down)
    await asyncio.to_thread(pg.start)
    restarted = time.monotonic()
    during = [m for m in run.moves.values() if began <= m.sent_at <= restarted]
    entry = await after("postgresql restarted", restarted, during)
    refused_during = [m for m in during if m.outcome.startswith("refused:")]
    entry["refusals_during"] = dict(Counter(m.outcome for m in refused_during))
    entry["refusal_texts"] = sorted({m.text for m in refused_during})

    run.playing = False
    await asyncio.sleep(2)
    await run.stop()
    watchdog.cancel()
    report["moves"] = dict(outcomes(list(run.moves.values())))
    report["sent"] = len(run.moves)
    report["reconnects"] = run.reconnects
    report["disconnects"] = run.disconnects
    report["sockets"] = len(run.clients)
    report["refusal_texts"] = run.refusal_texts
    return report


def print_report(report: dict[str, Any], command: str) -> None:
    print(f"\nfaults.py: {command}")
    print(
        f"sockets: {report['sockets']} ({report['tables']} tables: "
        "2 players, 2 bots, 1 spectator each)"
    )
    survived = sum(1 for f in report["faults"] if f["survived"])
    print(f"faults survived: {survived} of {len(report['faults'])}")
    for f in report["faults"]:
        a = f["audit"]
        resync = "never (60 s)" if f["resync_s"] is None else f"{f['resync_s']:.2f} s"
        reconnect = "no (60 s)" if f["reconnected_s"] is None else f"{f['reconnected_s']:.2f} s"
        print(f"- {f['fault']}: {'survived' if f['survived'] else 'NOT SURVIVED'}")
        print(f"  every socket open again after: {reconnect}; time to resync: {resync}")
        if f["behind"]:
            print(f"  behind: {len(f['behind'])}: {f['behind'][:5]}")
        print(f"  moves sent during the fault: {sum(f['during'].values())} {f['during']}")
        print(f"  moves sent after it: {sum(f['after'].values())} {f['after']}")
        if "refusals_during" in f:
            print(f"  refusals while down: {f['refusals_during']}, words: {f['refusal_texts']}")
        slow = f["slowest_answer_during_s"]
        print(
            "  slowest answer to a move sent during the fault: "
            + ("-" if slow is None else f"{slow:.2f} s")
        )
        print(
            f"  audit: {a['hands']} hands ({a['finished']} finished), {a['moves']} moves; "
            f"verify_hands failed: {len(a['verify_failed'])}; tiles not conserved: "
            f"{len(a['tiles_not_conserved'])}; acknowledged moves lost: {len(a['lost'])}"
        )
        if a["verify_failed"]:
            print(f"  {a['verify_failed']}")
        print(f"  server log lines with an error so far: {f['errors_logged']}")
    m = report["moves"]
    print(
        f"moves sent: {report['sent']}; acknowledged: {m.get('acknowledged', 0)}; refused: "
        f"{sum(v for k, v in m.items() if k.startswith('refused'))}; dropped with the socket: "
        f"{m.get('dropped', 0)}; unanswered: {m.get('unanswered', 0)}; lost: "
        f"{len(report['faults'][-1]['audit']['lost']) if report['faults'] else 0}"
    )
    print(f"outcomes: {m}")
    print(f"socket closes seen: {report['disconnects']}; reconnects: {report['reconnects']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--play", type=float, default=15, help="seconds of play around each fault")
    parser.add_argument("--think", type=float, default=0.4, help="a player's think time (s)")
    parser.add_argument("--answer", type=float, default=30, help="a move unanswered by then hangs")
    parser.add_argument("--pg-down", type=float, default=8, help="seconds PostgreSQL stays down")
    parser.add_argument("--clean", action="store_true", help="remove the servers' logs at the end")
    args = parser.parse_args()
    command = "bench/faults.py " + " ".join(sys.argv[1:])

    logs = Path(tempfile.mkdtemp(prefix="okey-faults-logs-"))
    pg, redis = PrivatePostgres(), PrivateRedis()
    site = None
    try:
        say(f"private PostgreSQL on {pg.port}, Redis on {redis.port}; logs in {logs}")
        pg.init()
        redis.start()
        pg.create_database("okey_faults")
        env = site_environment(pg.url("okey_faults"), redis.url(0), redis.url(1))
        site = Site(env, 2, logs)
        site.migrate()
        setup_django(env)
        site.start()
        report = asyncio.run(fault_run(args, pg, redis, site))
        report["tables"] = args.tables
        print_report(report, command)
        errors = site.errors()
        kinds = Counter(re.sub(r"\d+", "N", e.split(": ", 1)[-1])[:120] for e in errors)
        print(f"server log lines with an error: {len(errors)}")
        for line, n in kinds.most_common(12):
            print(f"  {n} x {line}")
        survived = all(f["survived"] for f in report["faults"])
    finally:
        if site is not None:
            site.stop()
        redis.remove()
        pg.remove()
        if args.clean:
            shutil.rmtree(logs, ignore_errors=True)
        else:
            print(f"servers' logs: {logs}")
    sys.exit(0 if survived else 1)


if __name__ == "__main__":
    main()
