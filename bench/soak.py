"""A soak: 30 bot tables played for 10 minutes over real sockets while clients drop and come
back at random, then the audit (a script, not a test; not in CI).

    .venv/bin/python bench/soak.py                  # 30 tables, 10 minutes
    .venv/bin/python bench/soak.py --tables 8 --minutes 1

On the private servers of ``bench/faults.py`` (PostgreSQL on 5433 made with ``initdb`` in a
temporary directory, Redis on 6380 without persistence; refused if either port is taken, the
shared 5432/6379 are never touched), the production set-up of ``manage.py serve``: two daphne
processes and a ``run_clock`` worker. Each table (the four variants in turn) has three bots
(seats 1 to 3) and a player on seat 0 whose client draws and discards on its turn (away while
its socket is down past the grace period: a bot plays for it), presses "ready" after a hand
and asks for a rematch after a match; and two spectators, one signed in, one anonymous. The
clients are spread over the two processes.

Every ``--every`` seconds on average one open client, player or spectator, is dropped: half
of the time with a close frame, half of the time abruptly (the TCP connection aborted, as a
lost network does); it stays away 0 to ``--away`` seconds, then connects again.

At the end, every client connected again and the servers settled:
- Presence rows (seated players' sockets) and Watcher rows (spectators' sockets) are exactly
  those of the open sockets: none left by a closed one (ghosts), none missing;
- every socket is closed; after ``Presence.FRESH`` seconds plus a heartbeat, no Presence or
  Watcher row is left and no seat is "here" without a socket;
- ``manage.py verify_hands`` over every hand (the servers stopped first), tile conservation
  of every stored hand, and every move a client saw acknowledged has its ``Move`` row.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.faults import (  # noqa: E402
    VARIANTS,
    Client,
    Clients,
    PrivatePostgres,
    PrivateRedis,
    Site,
    audit,
    make_session,
    say,
    setup_django,
    site_environment,
)


def prepare(tables: int, ports: list[int]) -> list[Client]:
    from django.contrib.auth import get_user_model

    from games import actions, policy
    from games.catalog import ensure_variants

    ensure_variants()
    users = get_user_model()
    clients = []
    for t in range(tables):
        variant = VARIANTS[t % len(VARIANTS)]
        table = actions.create_table(variant=variant, created_by=None, name=f"soak {t}")
        player = users.objects.create_user(f"soak-{t}-player", password=None)
        actions.sit(table, player, 0)
        for position in range(1, table.players):
            actions.add_bot(table, position, "greedy", by=policy.SYSTEM)
        watcher = users.objects.create_user(f"soak-{t}-watcher", password=None)
        clients.append(
            Client(f"t{table.pk}p", table.pk, ports[t % 2], make_session(player), plays=True)
        )
        clients.append(Client(f"t{table.pk}w", table.pk, ports[(t + 1) % 2], make_session(watcher)))
        clients.append(Client(f"t{table.pk}a", table.pk, ports[t % 2]))
        actions.start_match(table, by=policy.SYSTEM)
    return clients


def presence(open_channels: bool) -> dict[str, Any]:
    """The Presence and Watcher rows, the fresh ones, and the seats "here"."""
    from django.db import connection
    from django.utils import timezone

    from games.models import Presence, Seat, Watcher

    now = timezone.now()
    try:
        out = {
            "presence_rows": Presence.objects.count(),
            "presence_fresh": Presence.objects.filter(
                seen_at__gte=Presence.fresh_since(now)
            ).count(),
            "watcher_rows": Watcher.objects.count(),
            "watcher_fresh": Watcher.objects.filter(Watcher.fresh(now)).count(),
            "seats_here": Seat.objects.filter(user__isnull=False)
            .annotate(here=Presence.here(now))
            .filter(here=True)
            .count(),
            "presence_per_seat": dict(
                Counter(Presence.objects.values_list("seat__table_id", flat=True))
            ),
            "watchers_per_table": dict(Counter(Watcher.objects.values_list("table_id", flat=True))),
        }
    finally:
        connection.close()
    return out


async def soak(args: argparse.Namespace, site: Site) -> dict[str, Any]:
    run = Clients(think=args.think, answer=30)
    for client in await asyncio.to_thread(prepare, args.tables, site.ports):
        run.add(client)
    watchdog = asyncio.create_task(run.watchdog())
    began = time.monotonic()
    while not run.connected() and time.monotonic() - began < 120:
        await asyncio.sleep(0.2)
    say(f"{len(run.clients)} sockets open; soaking {args.minutes} min")

    dropped = Counter[str]()
    away: set[asyncio.Task[None]] = set()

    async def drop(client: Client) -> None:
        abrupt = random.random() < 0.5
        dropped["abrupt" if abrupt else "closed"] += 1
        dropped["player" if client.plays else "spectator"] += 1
        await run.close(client, abrupt=abrupt)
        await asyncio.sleep(random.uniform(0, args.away))
        client.want_open = True

    end = time.monotonic() + 60 * args.minutes
    next_report = time.monotonic() + 60
    while time.monotonic() < end:
        await asyncio.sleep(random.expovariate(1 / args.every))
        candidates = [c for c in run.clients if c.connected and c.want_open]
        if candidates:
            task = asyncio.create_task(drop(random.choice(candidates)))
            away.add(task)
            task.add_done_callback(away.discard)
        if time.monotonic() >= next_report:
            next_report += 60
            acked = sum(1 for m in run.moves.values() if m.outcome == "acknowledged")
            minute = round((time.monotonic() - began) / 60)
            say(
                f"minute {minute}: {sum(dropped[k] for k in ('abrupt', 'closed'))} drops, "
                f"{run.reconnects} reconnects, {len(run.moves)} player moves ({acked} acked)"
            )
    say("the soak is over: every client connects again")
    await asyncio.gather(*away)
    began = time.monotonic()
    while not run.connected() and time.monotonic() - began < 120:
        await asyncio.sleep(0.2)
    all_back = run.connected()
    await asyncio.sleep(5)  # the servers settle (presence written, frames sent)
    open_players = sum(1 for c in run.clients if c.plays and c.connected)
    open_spectators = sum(1 for c in run.clients if not c.plays and c.connected)
    while_open = await asyncio.to_thread(presence, True)

    run.playing = False
    await asyncio.sleep(2)
    # Half the sockets go with a close frame, half abruptly.
    for i, client in enumerate(run.clients):
        await run.close(client, abrupt=i % 2 == 1)
    await run.stop()
    watchdog.cancel()
    await asyncio.sleep(5)
    after_close = await asyncio.to_thread(presence, False)
    from games.models import Presence

    window = Presence.FRESH + Presence.HEARTBEAT + 5
    say(f"waiting {window} s (the freshness window and a heartbeat)")
    await asyncio.sleep(window)
    after_window = await asyncio.to_thread(presence, False)

    acked = {m.id for m in run.moves.values() if m.outcome == "acknowledged"}
    checked = await asyncio.to_thread(audit, acked)
    return {
        "tables": args.tables,
        "sockets": len(run.clients),
        "dropped": dict(dropped),
        "reconnects": run.reconnects,
        "connect_failures": run.connect_failures,
        "moves": dict(Counter(m.outcome or "in flight" for m in run.moves.values())),
        "sent": len(run.moves),
        "all_back": all_back,
        "open_players": open_players,
        "open_spectators": open_spectators,
        "while_open": while_open,
        "after_close": after_close,
        "after_window": after_window,
        "audit": checked,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--every", type=float, default=1.0, help="mean seconds between drops")
    parser.add_argument("--away", type=float, default=8.0, help="longest time a client stays away")
    parser.add_argument("--think", type=float, default=0.5, help="a player's think time (s)")
    parser.add_argument("--bot-delay", default="0.5", help="BOT_DELAY_SECONDS of the clock")
    parser.add_argument("--clean", action="store_true", help="remove the servers' logs at the end")
    args = parser.parse_args()
    command = "bench/soak.py " + " ".join(sys.argv[1:])

    logs = Path(tempfile.mkdtemp(prefix="okey-soak-logs-"))
    pg, redis = PrivatePostgres(), PrivateRedis()
    site = None
    ok = False
    try:
        say(f"private PostgreSQL on {pg.port}, Redis on {redis.port}; logs in {logs}")
        pg.init()
        redis.start()
        pg.create_database("okey_soak")
        env = site_environment(
            pg.url("okey_soak"),
            redis.url(0),
            redis.url(1),
            BOT_DELAY_SECONDS=args.bot_delay,
            NEXT_HAND_PAUSE_SECONDS="3",
            AWAY_GRACE_SECONDS="20",
        )
        site = Site(env, 2, logs)
        site.migrate()
        setup_django(env)
        site.start()
        started = time.monotonic()
        r = asyncio.run(soak(args, site))
        seconds = time.monotonic() - started
        # The command reads each hand, then its moves: with the clock still playing the bots
        # a move committed in between reads as a difference. The servers stop first.
        site.stop()
        verify = subprocess.run(
            [sys.executable, "manage.py", "verify_hands"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        a, w, c, x = r["audit"], r["while_open"], r["after_close"], r["after_window"]
        ghosts_open = (w["presence_rows"] - r["open_players"]) + (
            w["watcher_rows"] - r["open_spectators"]
        )
        print(f"\nsoak.py: {command}  ({seconds / 60:.1f} min in all)")
        print(
            f"tables: {r['tables']} (the four variants), sockets: {r['sockets']} "
            "(a player and two spectators a table, three bots)"
        )
        print(
            f"disconnects made: {r['dropped']}; reconnects: {r['reconnects']}; "
            f"failed connects: {r['connect_failures']}"
        )
        print(
            f"hands: {a['hands']} ({a['finished']} finished); moves: {a['moves']} "
            f"(the players' {r['sent']}: {r['moves']})"
        )
        print(
            f"verify_hands: rc {verify.returncode}: {verify.stdout.strip()} "
            f"{verify.stderr.strip()[-300:]}"
        )
        print(
            f"replay check failures: {len(a['verify_failed'])}; tiles not conserved: "
            f"{len(a['tiles_not_conserved'])}; acknowledged moves lost: {len(a['lost'])}"
        )
        print(
            f"all clients back: {r['all_back']}; open: {r['open_players']} players, "
            f"{r['open_spectators']} spectators; rows then: {w['presence_rows']} Presence, "
            f"{w['watcher_rows']} Watcher; ghost rows: {ghosts_open}"
        )
        print(
            f"5 s after every socket closed: {c['presence_rows']} Presence, "
            f"{c['watcher_rows']} Watcher rows; seats here: {c['seats_here']}"
        )
        print(
            f"after the freshness window: {x['presence_rows']} Presence "
            f"({x['presence_fresh']} fresh), {x['watcher_rows']} Watcher "
            f"({x['watcher_fresh']} fresh); seats here without a socket: {x['seats_here']}"
        )
        errors = site.errors()
        print(f"server log lines with an error: {len(errors)}")
        for line, n in Counter(e[:160] for e in errors).most_common(8):
            print(f"  {n} x {line}")
        ok = (
            verify.returncode == 0
            and not a["verify_failed"]
            and not a["tiles_not_conserved"]
            and not a["lost"]
            and r["all_back"]
            and ghosts_open == 0
            and w["presence_rows"] == r["open_players"]
            and w["watcher_rows"] == r["open_spectators"]
            and c["presence_rows"] == c["watcher_rows"] == c["seats_here"] == 0
            and x["presence_rows"] == x["watcher_rows"] == x["seats_here"] == 0
        )
        print(f"soak clean: {ok}")
    finally:
        if site is not None:
            site.stop()
        redis.remove()
        pg.remove()
        if args.clean:
            shutil.rmtree(logs, ignore_errors=True)
        else:
            print(f"servers' logs: {logs}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
