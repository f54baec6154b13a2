"""A move's round trip at one table while another table is flooded (a benchmark, not a test).

    .venv/bin/python bench/flood.py                       # refresh flood: 60 sockets x 100
    .venv/bin/python bench/flood.py --flood refused       # one seat sending refused moves
    .venv/bin/python bench/flood.py --moves 100 --sockets 20 --refreshes 50   # a smoke run

The set-up is the one ``make run`` serves (bench/click.py's: a temporary SQLite file, the
in-memory channel layer, the clock inside one daphne on a free port of 127.0.0.1). Two tables
of two players each, no move timer and no bots. At table A the script plays its two players'
turns over their sockets (draw, then discard: each move sent when the previous one's frame has
come) and times each **round trip**: from the move sent to the mover's socket receiving the
table at the move's new version. It plays ``--moves`` moves quietly (the **baseline**), then
the same number again while table B is flooded, and prints the medians, p95 and max of both
and their ratio:

- ``--flood refresh`` (the default): ``--sockets`` anonymous sockets (one address, as a
  single attacker has) open on table B, each sending a burst of ``--refreshes``
  ``{"type": "refresh"}`` every second while the moves are timed. It also prints how many of
  the sockets the server accepted (the rest were refused: games.limits).
- ``--flood refused``: a player seated at table B sends moves that are refused (out of turn)
  as fast as the socket takes them, ``--refused`` in all, while the moves are timed.
- ``--flood accepted``: the two players seated at table B open ``--sockets`` sockets between
  them (8 by default: under the socket caps) and each sends, as fast as it can, every kind of
  message a socket accepts (sit, back, hide, mute, unmute, arrange, weigh, ping, refresh) and
  some too malformed to parse, in turn, while the moves are timed.
- ``--flood lobby``: ``--sockets`` lobby sockets (300 by default) from one address try to
  connect and stay, while the moves are timed; it prints how many were accepted.

Figures: docs/SECURITY.md ("Floods"). Nothing is left behind: the server is stopped and the
temporary folder deleted.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import multiprocessing
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_click", ROOT / "bench" / "click.py")
assert _spec is not None and _spec.loader is not None
setup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(setup)  # the environment and the server of bench/click.py

VERSION = re.compile(r'id="table-live"[^>]*data-version="(\d+)"')
STATE = re.compile(r'data-(turn|seat|phase|hand)="([^"]*)"')


def prepare(env: dict[str, str]) -> dict[str, Any]:
    """Two tables of two players, each match started; the players' session cookies."""
    import os

    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from games import actions
    from games.catalog import ensure_variants

    call_command("migrate", verbosity=0)
    ensure_variants()
    tables, cookies = [], []
    for name in ("A", "B"):
        table = actions.create_table(
            variant="classic", created_by=None, name=name, players=2, options={}
        )
        table.move_timer = 0
        table.save(update_fields=["move_timer"])
        for position in range(2):
            user = get_user_model().objects.create_user(f"{name}{position}", password="x" * 12)
            actions.sit(table, user, position)
            client = Client()
            client.force_login(user)
            cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
        actions.start_match(table, by=actions.SYSTEM)
        tables.append(table.pk)
    connection.close()
    return {"tables": tables, "cookies": cookies, "cookie_name": settings.SESSION_COOKIE_NAME}


async def connect(port: int, table: int | None, cookie: str | None = None, name: str = "") -> Any:
    """A table's socket (the lobby's, when ``table`` is None), signed in with ``cookie``."""
    from websockets.asyncio.client import connect as ws_connect

    headers = {"Cookie": f"{name}={cookie}"} if cookie else {}
    path = f"/ws/tables/{table}/" if table is not None else "/ws/lobby/"
    return await ws_connect(
        f"ws://127.0.0.1:{port}{path}",
        origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
        additional_headers=headers,
        compression=None,
        ping_interval=None,
        max_size=None,
        proxy=None,
    )


class Player:
    """A seat's socket and the table as its last frame showed it."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.state: dict[str, str] = {}
        self.version = -1
        self.rack: list[str] = []
        self.frames: asyncio.Queue[int] = asyncio.Queue()
        self.task = asyncio.create_task(self.listen())

    async def listen(self) -> None:
        async for message in self.ws:
            found = VERSION.search(message)
            if not found:
                continue
            head = message[: message.index(">", found.start())]
            self.state = dict(STATE.findall(head))
            self.version = int(found.group(1))
            if 'id="rack-area"' in message:  # sent only when the seat's tiles change
                self.rack = re.findall(r'data-tile="([^"]+)"', message.split('id="rack-area"')[-1])
            self.frames.put_nowait(self.version)

    async def until(self, version: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while self.version < version:
            await asyncio.wait_for(self.frames.get(), max(0.01, deadline - time.monotonic()))


async def timed_moves(players: list[Player], count: int) -> list[float]:
    """Play ``count`` moves at table A (whoever is on turn: draw, then discard the first tile
    of the rack), each timed from its send to its frame on the mover's socket."""
    times = []
    for _ in range(count):
        await asyncio.sleep(0)
        mover = next((p for p in players if p.state.get("turn") == p.state.get("seat")), None)
        if mover is None:
            break  # the hand is over
        move: dict[str, Any] = {"do": "draw"}
        if mover.state.get("phase") == "discard":
            move = {"do": "discard", "tile": mover.rack[0]}
        version = mover.version
        started = time.perf_counter()
        await mover.ws.send(
            json.dumps(
                {
                    "type": "move",
                    "hand": int(mover.state["hand"]),
                    "move": move,
                    "expected_version": version,
                }
            )
        )
        await mover.until(version + 1)
        times.append((time.perf_counter() - started) * 1000)
        for p in players:
            await p.until(version + 1)
        if mover.state.get("phase") == "over" or not mover.state.get("turn"):
            break  # the hand ended (the pile ran dry): enough
    return times


async def refresh_flood(port: int, table: int, sockets: int, refreshes: int) -> Any:
    opened = []
    for _ in range(sockets):
        try:
            ws = await connect(port, table, None, "")
            opened.append(ws)
        except Exception:  # refused at the handshake
            continue
    accepted = 0

    async def one(ws: Any) -> None:
        nonlocal accepted
        try:
            first = await asyncio.wait_for(ws.recv(), 5)
            if "too_many_sockets" in first:
                return
            accepted += 1
            while True:  # a burst a second, for as long as the moves are timed
                for _ in range(refreshes):
                    await ws.send('{"type": "refresh"}')
                await asyncio.sleep(1)
        except Exception:  # closed by the server, or by the end of the run
            return

    tasks = [asyncio.create_task(one(ws)) for ws in opened]
    return tasks, opened, lambda: accepted


async def refused_flood(port: int, table: int, cookie: str, name: str, count: int) -> Any:
    ws = await connect(port, table, cookie, name)
    frame = await ws.recv()
    hand = int(dict(STATE.findall(frame)).get("hand") or 0)
    out_of_turn = json.dumps({"type": "move", "hand": hand, "move": {"do": "draw"}})

    async def send() -> None:
        try:
            for _ in range(count):
                await ws.send(out_of_turn)
        except Exception:
            return

    return [asyncio.create_task(send()), asyncio.create_task(drain(ws))], [ws], lambda: 1


class FloodProcess:
    """A flood run in a process of its own (its sending would otherwise take the CPU of the
    loop that times the moves); ``cancel`` ends it."""

    def __init__(self, target: Any, *args: Any) -> None:
        self.count = multiprocessing.Value("L", 0)
        self.process = multiprocessing.Process(target=target, args=(*args, self.count))
        self.process.start()

    def cancel(self) -> None:
        self.process.terminate()
        self.process.join(5)


def _accepted_flood(
    port: int, table: int, cookies: list[str], name: str, sockets: int, count: Any
) -> None:
    """Every socket sends every message a socket accepts, and garbage, as fast as it can."""

    async def one(ws: Any) -> None:
        try:
            frame = await ws.recv()
            hand = int(dict(STATE.findall(frame)).get("hand") or 0)
            tiles = re.findall(r'data-tile="([^"]+)"', frame.split('id="rack-area"')[-1])
            layout = tiles + [None] * (32 - len(tiles))
            kinds = [
                {"type": "sit"},
                {"type": "back"},
                {"type": "hide"},
                {"type": "mute", "user": 1},
                {"type": "unmute", "user": 1},
                {"type": "arrange", "hand": hand, "layout": layout},
                {"type": "weigh", "hand": hand, "layout": layout, "slots": [0, 1, 2]},
                {"type": "ping"},
                {"type": "refresh"},
            ]
            texts = [json.dumps(k) for k in kinds] + ["{not json", "[1, 2]", '{"type": 7}']
            reading = asyncio.create_task(drain(ws))
            while not reading.done():
                for text in texts:
                    await ws.send(text)
                    count.value += 1
                await asyncio.sleep(0)
        except Exception:  # closed by the server
            return

    async def flood() -> None:
        opened = [
            await connect(port, table, cookies[n % len(cookies)], name) for n in range(sockets)
        ]
        await asyncio.gather(*(one(ws) for ws in opened))
        await asyncio.sleep(3600)  # every socket closed: wait to be ended

    asyncio.run(flood())


async def drain(ws: Any) -> None:
    try:
        async for _ in ws:
            pass
    except Exception:
        return


async def lobby_flood(port: int, sockets: int) -> Any:
    """``sockets`` lobby sockets from one address, opened at once and kept."""
    accepted = 0

    async def one() -> Any:
        nonlocal accepted
        try:
            ws = await connect(port, None)
        except Exception:  # refused at the handshake
            return None
        first = await asyncio.wait_for(ws.recv(), 30)
        if "too_many_sockets" not in first:
            accepted += 1
        await drain(ws)
        return ws

    tasks = [asyncio.create_task(one()) for _ in range(sockets)]
    return tasks, [], lambda: accepted


def summary(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return f"median {statistics.median(xs):7.1f} ms, p95 {p95:7.1f} ms, max {xs[-1]:7.1f} ms"


async def run(args: argparse.Namespace, port: int, info: dict[str, Any]) -> None:
    table_a, table_b = info["tables"]
    name = info["cookie_name"]
    players = [Player(await connect(port, table_a, c, name)) for c in info["cookies"][:2]]
    for p in players:
        await p.until(0)
    await asyncio.sleep(0.5)
    baseline = await timed_moves(players, args.moves)
    if args.flood == "refresh":
        tasks, sockets, accepted = await refresh_flood(port, table_b, args.sockets, args.refreshes)
    elif args.flood == "accepted":
        cookies = info["cookies"][2:4]  # table B's two players
        sockets_n = args.sockets or 8
        process = FloodProcess(_accepted_flood, port, table_b, cookies, name, sockets_n)
        tasks, sockets, accepted = [process], [], lambda: process.count.value
    elif args.flood == "lobby":
        tasks, sockets, accepted = await lobby_flood(port, args.sockets or 300)
    else:
        cookie = info["cookies"][3]  # table B's seat 1: not on turn at the start
        tasks, sockets, accepted = await refused_flood(port, table_b, cookie, name, args.refused)
    await asyncio.sleep(0.5)
    flooded = await timed_moves(players, args.moves)
    for task in tasks:
        task.cancel()
    for ws in sockets + [p.ws for p in players]:
        ws.transport.abort()  # the server is stopped next: no closing handshake to wait for
    print(f"# commit: {setup.code_version()}")
    if args.flood == "refresh":
        print(f"# flood: {args.sockets} sockets x {args.refreshes} refreshes a second")
        print(f"# sockets the server accepted: {accepted()} of {args.sockets}")
    elif args.flood == "accepted":
        print(f"# flood: {args.sockets or 8} sockets of table B's players, every message kind")
        print(f"# messages sent before the server closed the sockets: {accepted()}")
    elif args.flood == "lobby":
        print(f"# flood: {args.sockets or 300} lobby sockets from one address")
        print(f"# lobby sockets the server accepted: {accepted()} of {args.sockets or 300}")
    else:
        print(f"# flood: one seat sending {args.refused} refused moves")
    print(f"baseline ({len(baseline)} moves): {summary(baseline)}")
    print(f"flooded  ({len(flooded)} moves): {summary(flooded)}")
    ratio = statistics.median(flooded) / statistics.median(baseline)
    print(f"median ratio flooded / baseline: {ratio:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--flood", choices=["refresh", "refused", "accepted", "lobby"], default="refresh"
    )
    # Two phases of 60 moves fit in one hand of two players (its pile runs dry after ~150).
    parser.add_argument("--moves", type=int, default=60, help="moves timed in each phase (60)")
    parser.add_argument(
        "--sockets",
        type=int,
        default=0,
        help="flooding sockets (refresh: 60, accepted: 8, lobby: 300)",
    )
    parser.add_argument("--refreshes", type=int, default=100, help="refreshes a burst (100)")
    parser.add_argument("--refused", type=int, default=5000, help="refused moves (5000)")
    args = parser.parse_args()
    if args.flood == "refresh" and not args.sockets:
        args.sockets = 60
    tmp = Path(tempfile.mkdtemp(prefix="okey-bench-flood-"))
    server = None
    try:
        env = setup.server_env(tmp, 0.05)
        info = prepare(env)
        port = setup.free_port()
        server = setup.start_server(env, port, tmp / "daphne.log", "okeysite.asgi:application")
        asyncio.run(run(args, port, info))
        return 0
    finally:
        if server is not None:
            setup.stop_server(server)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
