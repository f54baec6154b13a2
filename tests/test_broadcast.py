"""Publishing from synchronous code (``games.broadcast``): one kept event loop, in order.

The Redis tests are skipped without REDIS_URL (loudly) and fail instead under CI=true."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from channels.layers import get_channel_layer

from games import broadcast


async def _receive_all(layer: Any, group: str, count: int, send: Any) -> list[dict[str, Any]]:
    """Join ``group`` with a new channel, run ``send`` in a thread with no event loop (as the
    services' on-commit callbacks run in a clock worker), and collect ``count`` messages."""
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    try:
        await asyncio.to_thread(send)
        return [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(count)]
    finally:
        await layer.group_discard(group, channel)


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
