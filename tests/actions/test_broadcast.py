"""Publishing from synchronous code (``games.actions.broadcast``): one kept event loop, in order.

The Redis tests are skipped without REDIS_URL (loudly) and fail instead under CI=true."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from channels.layers import get_channel_layer

from games.actions import broadcast


async def _receive_all(layer: Any, group: str, count: int, send: Any) -> list[dict[str, Any]]:
    """Join ``group`` with a new channel, run ``send`` in a thread with no event loop (as the
    actions' on-commit callbacks run in a clock worker), and collect ``count`` messages. The
    layer's reader is stopped on this loop before it ends: cancelled only by the loop's own
    shutdown, its pop could lose that cancellation inside the Redis client and keep the loop
    from ever closing (the layer's connections stay: the publishing thread uses them)."""
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    try:
        await asyncio.to_thread(send)
        return [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(count)]
    finally:
        await layer.group_discard(group, channel)
        if hasattr(layer, "stop_reading"):
            await layer.stop_reading()


def test_it_publishes_over_redis_in_order_without_a_loop_per_message(
    redis_layer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    broadcast.send("warm-up", {"type": "x"})  # the publishing thread starts once
    assert broadcast.flush()
    made: list[int] = []
    real_new_loop = asyncio.new_event_loop

    def counting_new_loop() -> asyncio.AbstractEventLoop:
        made.append(threading.get_ident())
        return real_new_loop()

    def send() -> None:
        monkeypatch.setattr(asyncio, "new_event_loop", counting_new_loop)
        try:
            for n in range(40):
                broadcast.send("broadcast-test", {"type": "hand.moved", "n": n})
            assert broadcast.flush()
        finally:
            monkeypatch.setattr(asyncio, "new_event_loop", real_new_loop)

    received = asyncio.run(_receive_all(redis_layer, "broadcast-test", 40, send))
    assert [m["n"] for m in received] == list(range(40))
    assert made == [], "an event loop was made to publish a message"


def test_it_logs_a_failed_send_and_goes_on(
    redis_layer: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_send = type(redis_layer).group_send
    calls = {"n": 0}

    async def failing_once(self: Any, group: str, message: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("Redis went away")
        await real_send(self, group, message)

    monkeypatch.setattr(type(redis_layer), "group_send", failing_once)

    def send() -> None:
        broadcast.send("broadcast-fail", {"type": "x", "n": 0})
        broadcast.send("broadcast-fail", {"type": "x", "n": 1})
        assert broadcast.flush()

    received = asyncio.run(_receive_all(redis_layer, "broadcast-fail", 1, send))
    assert [m["n"] for m in received] == [1]
    assert "publishing to broadcast-fail failed" in caplog.text


def test_it_sends_on_the_in_memory_layer_from_a_thread(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    layer = get_channel_layer()

    def send() -> None:
        for n in range(3):
            broadcast.send("memory-test", {"type": "x", "n": n})

    received = asyncio.run(_receive_all(layer, "memory-test", 3, send))
    assert [m["n"] for m in received] == [0, 1, 2]


def test_in_a_server_it_publishes_on_the_servers_loop_in_order(
    redis_layer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server names its loop (``server_tasks.ServerTasks``): the messages its worker threads
    publish after commit are sent there, in order, not by a thread of their own (which would
    wait for the GIL after each Redis round trip while the loop renders)."""
    real_send = type(redis_layer).group_send
    sent_by: list[int] = []

    async def recording(self: Any, group: str, message: dict[str, Any]) -> None:
        sent_by.append(threading.get_ident())
        await real_send(self, group, message)

    monkeypatch.setattr(type(redis_layer), "group_send", recording)
    # The server's loop, in a thread of its own (the test receives on another loop).
    server = asyncio.new_event_loop()
    server_thread = threading.Thread(target=server.run_forever, daemon=True)
    server_thread.start()

    async def serve() -> None:
        broadcast.use_server_loop()

    asyncio.run_coroutine_threadsafe(serve(), server).result(5)
    try:

        def send() -> None:
            for n in range(20):
                broadcast.send("broadcast-server", {"type": "hand.moved", "n": n})
            assert broadcast.flush()

        received = asyncio.run(_receive_all(redis_layer, "broadcast-server", 20, send))
        assert [m["n"] for m in received] == list(range(20))
        assert set(sent_by) == {server_thread.ident}
    finally:

        async def stop() -> None:
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), server).result(5)
        server.call_soon_threadsafe(server.stop)
        server_thread.join(5)
        server.close()
    # The server's loop has gone: the thread publishes again.
    sent_by.clear()
    broadcast.send("broadcast-after", {"type": "x"})
    assert broadcast.flush()
    assert sent_by and sent_by[0] not in (server_thread.ident, threading.get_ident())
