"""What one client may cost the table sockets' server (games.limits): a refresh answered at
most once a second, a bounded number of sockets per account and per address, and a socket
whose messages keep being refused dropped to silence for a while. A flood from one client then
costs the other tables a bounded amount of the server's work."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from games import actions, engine, limits, protocol
from games.catalog import ensure_variants
from games.live import server_tasks
from games.live.lobby_socket import LobbyConsumer
from games.live.socket_guard import socket_address
from games.live.table_socket import CLOSE_TOO_MANY, TableConsumer
from games.models import Participant, Presence, Watcher
from tests import threads
from tests.live_daphne import DaphneServer, fail_or_skip
from tests.sockets import (
    Players,
    TableSockets,
    cookie_for,
    drain,
    live_frames,
    lobby_socket,
)
from tests.users import make_user

pytestmark = pytest.mark.django_db(transaction=True)


class Performed:
    """Counts the messages the actions carry out (``actions.perform``), those of ``kind`` if
    given; each of those takes ``delay`` seconds more (a busy database)."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, kind: type | None = None, delay: float = 0.0
    ) -> None:
        self.count = 0
        perform = actions.perform

        def counted(message: Any, sender: Any) -> Any:
            if kind is None or isinstance(message, kind):
                self.count += 1
                time.sleep(delay)
            return perform(message, sender)

        monkeypatch.setattr(actions, "perform", counted)


class Renders:
    """Counts the table reads-and-renders the sockets of this process make for their
    viewers (``TableConsumer._render``: a read of the table and a render)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        render = TableConsumer._render

        def counted(consumer: Any, state: Any) -> Any:
            self.count += 1
            return render(consumer, state)

        monkeypatch.setattr(TableConsumer, "_render", counted)


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_refreshes_are_answered_at_most_once_a_second(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    ws = await table_socket(players.table_id, address="198.51.100.7")
    await drain(ws)
    renders = Renders(monkeypatch)
    start = time.monotonic()
    for _ in range(100):
        await ws.send_to(text_data=json.dumps({"type": "refresh"}))
    frames = live_frames(await drain(ws, 1.5))
    # The first at once, then one more at the end of each second for the 99 others (one
    # second on an idle machine; sending them can take longer on a busy one).
    most = 1 + math.ceil(time.monotonic() - start - 1.5)
    assert 1 <= len(frames) <= max(2, most) and renders.count <= max(2, most), (
        len(frames),
        renders.count,
        most,
    )
    await ws.send_to(text_data=json.dumps({"type": "refresh"}))
    assert live_frames(await drain(ws, 1.5))  # a later one is answered, never lost


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_one_address_may_open_only_so_many_sockets_on_a_table_and_in_all(
    players: Players, table_socket: TableSockets
) -> None:
    table_id = players.table_id
    opened = []
    for _ in range(limits.SOCKETS_PER_TABLE):
        ws = await table_socket(table_id, address="203.0.113.9")
        await drain(ws)
        opened.append(ws)
    extra = await table_socket(table_id, address="203.0.113.9", first_frame=False)
    refusal = await extra.receive_from()
    assert 'data-error="too_many_sockets"' in refusal
    closed = await extra.receive_output()
    assert closed == {"type": "websocket.close", "code": CLOSE_TOO_MANY}
    # Counted once per open socket: the extra one left nothing behind.
    count = await database_sync_to_async(Watcher.objects.filter(table_id=table_id).count)()
    assert count == limits.SOCKETS_PER_TABLE
    # Another address is not held up by this one.
    other = await table_socket(table_id, address="203.0.113.10", first_frame=False)
    assert live_frames(await drain(other))
    opened.append(other)
    # A socket closed makes room again (once its close is written: the communicator's
    # default wait of 1 s can cancel that write on a loaded machine).
    await opened.pop(0).disconnect(timeout=10)
    again = await table_socket(table_id, address="203.0.113.9", first_frame=False)
    assert live_frames(await drain(again))


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_strangers_watching_from_a_players_address_never_lock_them_out_of_their_seat(
    players: Players, table_socket: TableSockets
) -> None:
    """A café: strangers behind the same address fill its spectator caps at this table; the
    player seated here still connects (their own account's caps hold them), and is here."""
    table_id, cafe = players.table_id, "203.0.113.77"
    for _ in range(limits.SOCKETS_PER_TABLE):
        await drain(await table_socket(table_id, address=cafe))
    stranger = await table_socket(table_id, address=cafe, first_frame=False)
    assert 'data-error="too_many_sockets"' in await stranger.receive_from()
    player = await table_socket(table_id, players.cookies[0], address=cafe, first_frame=False)
    frames = await drain(player)
    assert live_frames(frames) and not any("too_many_sockets" in f for f in frames)
    assert await database_sync_to_async(
        Presence.objects.filter(seat__table_id=table_id, seat__position=0).exists
    )()


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_one_account_may_open_only_so_many_sockets_on_a_table(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, cookie = players.table_id, players.cookies[0]
    for i in range(limits.SOCKETS_PER_TABLE):
        ws = await table_socket(table_id, cookie, address=f"192.0.2.{i + 1}")
        await drain(ws)
    extra = await table_socket(table_id, cookie, address="192.0.2.200", first_frame=False)
    assert 'data-error="too_many_sockets"' in await extra.receive_from()
    assert (await extra.receive_output())["code"] == CLOSE_TOO_MANY


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
@pytest.mark.usefixtures("unmetered_sockets")  # the refusals' own limit, alone
async def test_a_socket_whose_messages_keep_being_refused_is_dropped_to_silence(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    carried_out = Performed(monkeypatch)
    ws = await table_socket(players.table_id, players.cookies[1], address="198.51.100.8")
    await drain(ws)
    bad = {"type": "move", "hand": players.hand.pk, "move": {"do": "draw"}}  # not their turn
    for _ in range(200):
        await ws.send_to(text_data=json.dumps(bad))
    frames = await drain(ws, 1.0)
    codes = [f.split('data-error="')[1].split('"')[0] for f in frames if "data-error" in f]
    # The database saw only the first refusals; then one word that it is too fast.
    assert carried_out.count == limits.REFUSALS_ALLOWED
    assert codes.count("not_your_turn") + codes.count("not_your_seat") <= len(codes)
    assert codes.count("too_fast") == 1 and len(codes) == limits.REFUSALS_ALLOWED + 1


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_a_flood_of_refreshes_costs_other_tables_a_bounded_number_of_renders(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """Ten sockets (under the limits) sending fifty refreshes each make at most one render a
    second each, not five hundred: the work a flood adds to the server, which
    every other table's moves wait behind, is bounded (the figures of the latency of another
    table during a flood: docs/SECURITY.md, bench/load.py --flood)."""
    flood = []
    for i in range(20):
        ws = await table_socket(players.table_id, address=f"198.51.100.{(i // 4) + 20}")
        await drain(ws, 0.05)
        flood.append(ws)
    renders = Renders(monkeypatch)
    started = time.monotonic()
    for _ in range(50):
        for ws in flood:
            await ws.send_to(text_data=json.dumps({"type": "refresh"}))
    for ws in flood:
        await drain(ws, 0.05)
    await drain(flood[-1], 1.2)
    for ws in flood:
        await drain(ws, 0.05)
    seconds = time.monotonic() - started
    # At most one render a second per socket (and one at the start) while the flood was
    # read and answered: five hundred were asked for.
    bound = len(flood) * (math.ceil(seconds) + 1)
    assert renders.count <= bound, (renders.count, bound)


# ----------------------------------------------------------------------------- message budgets
class Read:
    """Counts the messages the table sockets of this process read (``protocol.parse``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        parse = protocol.parse

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return parse(*args, **kwargs)

        monkeypatch.setattr(protocol, "parse", counted)


@pytest.mark.slow
@pytest.mark.parametrize(
    "frame",
    ['{"type": "ping"}', '{"type": "hide"}', '{"type": "sit"}', "not json at all"],
    ids=["ping", "hide", "sit", "garbage"],
)
def test_frames_past_a_sockets_budget_are_dropped_where_daphne_reads_them(
    daphne_live_server: DaphneServer, frame: str
) -> None:
    """Accepted, refused or unreadable: past the connection's burst a frame is thrown away
    before the application sees it (one too_fast says so), and past
    MESSAGES_DROPPED_BEFORE_CLOSE drops the socket is closed with CLOSE_TOO_FAST. Before,
    only refused messages were limited, in the consumer: eight sockets queued 24,000 accepted
    ones in a second, and one socket sending as fast as it could got 700,000 frames read in
    20 s without the consumer ever reaching its budget."""
    ensure_variants()
    table = actions.create_table(variant="duz", created_by=None, name="Flooded")
    ws = connect(
        f"{daphne_live_server.ws_url}/ws/tables/{table.pk}/",
        origin=daphne_live_server.url,  # type: ignore[arg-type]
        proxy=None,
        max_size=None,
        open_timeout=15,
        legacy=True,  # a plain connection, closed by close()
    )
    ws.recv(timeout=15)  # the table as it is
    answers: list[str] = []
    closed = None
    started = time.monotonic()
    try:
        while time.monotonic() - started < 60:
            for _ in range(50):
                ws.send(frame)
            with contextlib.suppress(TimeoutError):
                while True:
                    answers.append(str(ws.recv(timeout=0.05)))
    except ConnectionClosed as exc:
        closed = exc.rcvd.code if exc.rcvd else None
    most = limits.MESSAGE_BURST + limits.MESSAGES_PER_SECOND * (time.monotonic() - started) + 1
    assert closed == limits.CLOSE_TOO_FAST
    assert sum('data-error="too_fast"' in a for a in answers) == 1
    if frame == '{"type": "ping"}':  # each one read is answered: count them
        assert limits.MESSAGE_BURST <= answers.count("pong") <= most
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_an_accounts_sockets_share_its_budget_and_a_person_never_meets_it(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """Four sockets of one account (under the socket caps) share the account's budget in the
    consumer; a person's pace (a message every 200 ms, faster than a player drags tiles)
    never meets it."""
    sockets = [
        await table_socket(players.table_id, players.cookies[1], address=f"203.0.113.{i}")
        for i in range(4)
    ]
    for ws in sockets:
        await drain(ws)
    read = Read(monkeypatch)
    started = time.monotonic()
    for ws in sockets:
        for _ in range(limits.MESSAGE_BURST):
            await ws.send_to(text_data=json.dumps({"type": "hide"}))
    for ws in sockets:
        await drain(ws)
    refill = limits.ACCOUNT_MESSAGES_PER_SECOND * (time.monotonic() - started)
    assert read.count <= limits.ACCOUNT_MESSAGE_BURST + refill + 1 < 4 * limits.MESSAGE_BURST

    person = await table_socket(players.table_id, players.cookies[2], address="203.0.113.50")
    await drain(person)
    read.count = 0
    for _ in range(20):
        await person.send_to(text_data=json.dumps({"type": "ping"}))
        await person.receive_from()  # each answered: none dropped
        await asyncio.sleep(0.2)
    assert read.count == 20


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_arrangements_sent_faster_than_they_are_saved_are_coalesced_to_the_latest(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    seat = 1
    ws = await table_socket(players.table_id, players.cookies[seat], address="198.51.100.10")
    await drain(ws)
    # A busy database: the next ones arrive while one saves.
    saved = Performed(monkeypatch, protocol.Arrange, delay=0.05)
    rack = await database_sync_to_async(lambda: players.hand.engine_hand().racks[seat])()
    tiles = sorted(engine.format_tile(t) for t in rack)
    layouts = []
    for n in range(30):
        order = tiles[n % len(tiles) :] + tiles[: n % len(tiles)]
        layouts.append(order + [None] * (32 - len(order)))
    for layout in layouts:
        await ws.send_to(
            text_data=json.dumps({"type": "arrange", "hand": players.hand.pk, "layout": layout})
        )
    await drain(ws, 1.0)
    assert 1 <= saved.count < len(layouts)
    stored = await database_sync_to_async(
        lambda: list(Participant.objects.get(hand=players.hand, position=seat).layout or [])
    )()
    assert stored == layouts[-1]


def test_a_socket_counts_an_ipv6_client_by_its_64_as_the_http_limits_do() -> None:
    scope = {"client": ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 5000)}
    assert socket_address(scope) == "2001:db8:1:2::"
    assert socket_address({"client": ("198.51.100.1", 1)}) == "198.51.100.1"
    assert socket_address({}) is None


# ----------------------------------------------------------------------------- lobby sockets
@pytest.mark.slow
async def test_lobby_sockets_are_capped_per_address_and_account_even_in_a_burst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """300 anonymous lobby sockets from one address made another table's moves take seconds:
    each renders the whole lobby. Past the caps a socket is told why and closed before any
    read or render, a burst of simultaneous connects included; other addresses are not held
    up, and a closed socket makes room."""
    renders = 0
    render = LobbyConsumer._render

    def counted(consumer: Any) -> str:
        nonlocal renders
        renders += 1
        return render(consumer)

    monkeypatch.setattr(LobbyConsumer, "_render", counted)
    burst = [
        lobby_socket(address="198.51.100.60") for _ in range(limits.LOBBY_SOCKETS_PER_ADDRESS + 20)
    ]
    await asyncio.gather(*(ws.connect() for ws in burst))
    firsts = [await ws.receive_output() for ws in burst]
    accepted = [
        ws for ws, out in zip(burst, firsts, strict=True) if "lobby-tables" in out.get("text", "")
    ]
    refused = [
        ws
        for ws, out in zip(burst, firsts, strict=True)
        if 'data-error="too_many_sockets"' in out.get("text", "")
    ]
    assert len(accepted) == limits.LOBBY_SOCKETS_PER_ADDRESS and len(refused) == 20
    assert renders == limits.LOBBY_SOCKETS_PER_ADDRESS  # the refused ones cost no render
    for ws in refused:
        assert (await ws.receive_output())["code"] == CLOSE_TOO_MANY
    elsewhere = lobby_socket(address="198.51.100.61")
    assert (await elsewhere.connect())[0]
    assert "lobby-tables" in await elsewhere.receive_from()
    await accepted.pop().disconnect()
    again = lobby_socket(address="198.51.100.60")
    assert (await again.connect())[0]
    assert "lobby-tables" in await again.receive_from()
    for ws in [*accepted, elsewhere, again]:
        await ws.disconnect()
    await server_tasks.stop()


@pytest.mark.slow
async def test_one_accounts_lobby_sockets_are_capped_from_any_address() -> None:
    user = await database_sync_to_async(make_user)("lobbyist")
    cookie = await database_sync_to_async(cookie_for)(user)
    opened = []
    for n in range(limits.LOBBY_SOCKETS_PER_USER + 1):
        ws = lobby_socket(cookie, address=f"203.0.113.{100 + n}")
        assert (await ws.connect())[0]
        opened.append((ws, await ws.receive_from()))
    assert all("lobby-tables" in first for _ws, first in opened[:-1])
    assert 'data-error="too_many_sockets"' in opened[-1][1]
    for ws, _first in opened:
        await ws.disconnect()
    await server_tasks.stop()


@pytest.mark.slow
@pytest.mark.players("duz", seed=3)
async def test_a_socket_sends_its_seat_and_chat_messages_a_few_at_a_time(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """Sit, leave, ready, hide, the chat's: each writes and redraws the table for everyone,
    and a person sends a few a minute. Past a small budget of their own (within the socket's)
    they are dropped unread, with one too_fast. (A flood of them took another table's moves
    from 21 to 100 ms at the median.)"""
    carried_out = Performed(monkeypatch)
    ws = await table_socket(players.table_id, players.cookies[1], address="198.51.100.11")
    await drain(ws)
    started = time.monotonic()
    for n in range(30):
        kind = ("hide", "sit", "back")[n % 3]
        await ws.send_to(text_data=json.dumps({"type": kind}))
    frames = await drain(ws, 0.5)
    refill = limits.RARE_MESSAGES_PER_SECOND * (time.monotonic() - started)
    assert limits.RARE_MESSAGE_BURST <= carried_out.count <= limits.RARE_MESSAGE_BURST + refill + 1
    assert sum('data-error="too_fast"' in f for f in frames) == 1
    # A move is not one of them: it is carried out.
    await ws.send_to(text_data=json.dumps({"type": "ping"}))
    assert await ws.receive_from() == "pong"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_simultaneous_connects_from_one_address_cannot_all_pass_the_cap_on_postgresql() -> None:
    """Twenty sockets of one address counted at the same moment, each in its own thread and
    database connection (as several server processes would): the caps are taken under a lock,
    so exactly SOCKETS_PER_TABLE of them are admitted, not all twenty."""
    if connection.vendor != "postgresql":
        fail_or_skip(
            "POSTGRESQL TEST: the locks under test are PostgreSQL's (SQLite has one writer). "
            "Run with e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey."
        )
    ensure_variants()
    table = actions.create_table(variant="duz", created_by=None, name="Crowded")
    answers = threads.at_once(
        [
            lambda n=n: actions.watcher_opened(table.pk, None, f"burst-{n}", "198.51.100.99")
            for n in range(20)
        ]
    )
    assert threads.codes(answers) == sorted(
        ["ok"] * limits.SOCKETS_PER_TABLE + ["too_many_sockets"] * (20 - limits.SOCKETS_PER_TABLE)
    )
    assert Watcher.objects.filter(table=table).count() == limits.SOCKETS_PER_TABLE
