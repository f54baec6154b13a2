"""Group messages sent from synchronous code (the services, after commit).

``async_to_sync(layer.group_send)`` in a thread with no event loop of its own (a clock
worker, a management command, a test) makes a new event loop for every message, and the
Redis layer a new connection with it: about 3 ms a message. Instead, with a layer that
crosses processes (Redis), this process keeps one publishing thread with one event loop: a
message is put on its queue (microseconds) and sent in order by one task over the layer's
kept connection. The caller does not wait for Redis: the database has committed already,
and the layer is best effort anyway (clients that miss a message re-fetch by version).

The in-memory layer lives on the ASGI server's own event loop and is not thread-safe, so it
keeps ``async_to_sync``, which from a server's worker thread runs the send on that loop.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

log = logging.getLogger(__name__)

# How long a process that exits waits for its queued messages to go out.
FLUSH_SECONDS = 2.0


class _Publisher:
    """One daemon thread running an event loop, and one task sending queued messages in
    the order they were queued."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[Any, str, dict[str, Any]]] | None = None
        self._thread: threading.Thread
        self._pending = 0
        self._idle = threading.Condition(self._lock)

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self._thread.is_alive():
                started = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(started,), name="okey-publisher", daemon=True
                )
                self._thread.start()
                started.wait()  # the thread takes no lock before this
            assert self._loop is not None
            return self._loop

    def _run(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._queue = asyncio.Queue()
        started.set()
        loop.run_until_complete(self._drain())

    async def _drain(self) -> None:
        assert self._queue is not None
        while True:
            layer, group, message = await self._queue.get()
            try:
                await layer.group_send(group, message)
            except Exception:  # the database is the truth; a lost message only delays a client
                log.exception("publishing to %s failed", group)
            finally:
                with self._lock:
                    self._pending -= 1
                    if not self._pending:
                        self._idle.notify_all()

    def put(self, layer: Any, group: str, message: dict[str, Any]) -> None:
        loop = self._ensure()
        with self._lock:
            self._pending += 1
        assert self._queue is not None
        loop.call_soon_threadsafe(self._queue.put_nowait, (layer, group, message))

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait until every queued message has been sent (or failed); False on a timeout."""
        with self._lock:
            return self._idle.wait_for(lambda: not self._pending, timeout)


_publisher = _Publisher()
atexit.register(_publisher.flush)


def send(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` from synchronous code, best effort (errors are logged).

    Messages from one process reach a group in the order they were sent."""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:  # best effort, as above
            log.exception("publishing to %s failed", group)
        return
    _publisher.put(layer, group, message)


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Wait for this process's queued messages to go out (tests, commands that exit)."""
    return _publisher.flush(timeout)
