"""What one client may cost the table sockets' server (games.limits): a refresh answered at
most once a second, a bounded number of sockets per account and per address, and a socket
whose messages keep being refused dropped to silence for a while. A flood from one client then
costs the other tables a bounded amount of the server's work."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from games import actions, limits
from games.live import table_socket
from games.models import Watcher
from tests.play import seed_of, user_table
from tests.sockets import cookie_for, drain, live_frames, socket

pytestmark = pytest.mark.django_db(transaction=True)


def from_address(ws: WebsocketCommunicator, address: str) -> WebsocketCommunicator:
    ws.scope["client"] = [address, 50000]
    return ws


async def playing_table() -> dict[str, Any]:
    def setup() -> dict[str, Any]:
        table, users = user_table("duz")
        hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(3)).hands.get()
        return {"table": table.pk, "hand": hand.pk, "cookies": [cookie_for(u) for u in users]}

    return await database_sync_to_async(setup)()  # type: ignore[no-any-return]


class Renders:
    """Counts the table reads-and-renders the sockets of this process make for their
    viewers (``TableConsumer._render``: a read of the table and a render)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        render = table_socket.TableConsumer._render

        def counted(consumer: Any, state: Any) -> Any:
            self.count += 1
            return render(consumer, state)

        monkeypatch.setattr(table_socket.TableConsumer, "_render", counted)


async def test_refreshes_are_answered_at_most_once_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    info = await playing_table()
    ws = from_address(socket(info["table"]), "198.51.100.7")
    assert (await ws.connect(timeout=5))[0]
    try:
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
    finally:
        await ws.disconnect()


async def test_one_address_may_open_only_so_many_sockets_on_a_table_and_in_all() -> None:
    info = await playing_table()
    opened = []
    try:
        for _ in range(limits.SOCKETS_PER_TABLE):
            ws = from_address(socket(info["table"]), "203.0.113.9")
            assert (await ws.connect(timeout=5))[0]
            await drain(ws)
            opened.append(ws)
        extra = from_address(socket(info["table"]), "203.0.113.9")
        assert (await extra.connect(timeout=5))[0]
        refusal = await extra.receive_from(timeout=5)
        assert 'data-error="too_many_sockets"' in refusal
        closed = await extra.receive_output(timeout=5)
        assert closed == {"type": "websocket.close", "code": table_socket.CLOSE_TOO_MANY}
        # Counted once per open socket: the extra one left nothing behind.
        count = await database_sync_to_async(Watcher.objects.filter(table_id=info["table"]).count)()
        assert count == limits.SOCKETS_PER_TABLE
        # Another address is not held up by this one.
        other = from_address(socket(info["table"]), "203.0.113.10")
        assert (await other.connect(timeout=5))[0]
        assert live_frames(await drain(other))
        opened.append(other)
        # A socket closed makes room again (once its close is written: the communicator's
        # default wait of 1 s can cancel that write on a loaded machine).
        await opened.pop(0).disconnect(timeout=10)
        again = from_address(socket(info["table"]), "203.0.113.9")
        assert (await again.connect(timeout=5))[0]
        assert live_frames(await drain(again))
        opened.append(again)
    finally:
        for ws in opened:
            await ws.disconnect()


async def test_one_account_may_open_only_so_many_sockets_on_a_table() -> None:
    info = await playing_table()
    cookie = info["cookies"][0]
    opened = []
    try:
        for i in range(limits.SOCKETS_PER_TABLE):
            ws = from_address(socket(info["table"], cookie), f"192.0.2.{i + 1}")
            assert (await ws.connect(timeout=5))[0]
            await drain(ws)
            opened.append(ws)
        extra = from_address(socket(info["table"], cookie), "192.0.2.200")
        assert (await extra.connect(timeout=5))[0]
        assert 'data-error="too_many_sockets"' in await extra.receive_from(timeout=5)
        assert (await extra.receive_output(timeout=5))["code"] == table_socket.CLOSE_TOO_MANY
    finally:
        for ws in opened:
            await ws.disconnect()


async def test_a_socket_whose_messages_keep_being_refused_is_dropped_to_silence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    info = await playing_table()
    carried_out = 0
    perform = actions.perform

    def counted(*args: Any, **kwargs: Any) -> None:
        nonlocal carried_out
        carried_out += 1
        perform(*args, **kwargs)

    monkeypatch.setattr(actions, "perform", counted)
    ws = from_address(socket(info["table"], info["cookies"][1]), "198.51.100.8")
    assert (await ws.connect(timeout=5))[0]
    try:
        await drain(ws)
        bad = {"type": "move", "hand": info["hand"], "move": {"do": "draw"}}  # not their turn
        for _ in range(200):
            await ws.send_to(text_data=json.dumps(bad))
        frames = await drain(ws, 1.0)
        codes = [f.split('data-error="')[1].split('"')[0] for f in frames if "data-error" in f]
        # The database saw only the first refusals; then one word that it is too fast.
        assert carried_out == limits.REFUSALS_ALLOWED
        assert codes.count("not_your_turn") + codes.count("not_your_seat") <= len(codes)
        assert codes.count("too_fast") == 1 and len(codes) == limits.REFUSALS_ALLOWED + 1
    finally:
        await ws.disconnect()


async def test_a_flood_of_refreshes_costs_other_tables_a_bounded_number_of_renders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ten sockets (under the limits) sending fifty refreshes each make at most one render a
    second each, not five hundred: the work a flood adds to the server, which
    every other table's moves wait behind, is bounded (the figures of the latency of another
    table during a flood: docs/SECURITY.md, bench/load.py --flood)."""
    info = await playing_table()
    flood = [from_address(socket(info["table"]), f"198.51.100.{(i // 4) + 20}") for i in range(20)]
    try:
        for ws in flood:
            assert (await ws.connect(timeout=5))[0]
            await drain(ws, 0.05)
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
    finally:
        for ws in flood:
            await ws.disconnect()
