"""Group messages sent from synchronous code (the actions, after commit).

``async_to_sync(layer.group_send)`` in a thread with no event loop of its own (a clock
worker, a management command, a test) makes a new event loop for every message, and the
Redis layer a new connection with it: about 3 ms a message. Instead, with a layer that
crosses processes (Redis), this process keeps one publishing thread with one event loop: a
message is put on its queue (microseconds) and sent in order by one task over the layer's
kept connection. The caller does not wait for Redis: the database has committed already,
and the layer is best effort anyway (clients that miss a message re-fetch by version).

In an ASGI server the messages go out on the server's own event loop instead (the server
names it with its first connection: ``server_tasks.ServerTasks``), through the same queue and
one task there. A publishing thread would need the GIL back after each of a send's Redis
round trips (channels_redis's ``group_send`` makes three), and while the loop renders frames
it waits up to the interpreter's switch interval (5 ms) each time: a move's message, already
committed, could reach every socket 10-15 ms late. The thread stays for code with no server
loop (the clock worker, management commands, tests), and for a server whose loop has stopped.

The in-memory layer lives on the ASGI server's own event loop and is not thread-safe: from a
server's worker thread the send runs on that loop and is waited for, but never longer than
``IN_MEMORY_SECONDS`` (:func:`_send_in_memory`).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

log = logging.getLogger(__name__)

# How long a process that exits waits for its queued messages to go out.
FLUSH_SECONDS = 2.0


class _Publisher:
    """One task sending queued messages in the order they were queued: on the server's event
    loop where there is one (:meth:`use_server_loop`), else on the event loop of a daemon
    thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[Any, str, dict[str, Any]]] | None = None
        self._thread: threading.Thread
        self._server_loop: asyncio.AbstractEventLoop | None = None
        self._server_queue: asyncio.Queue[tuple[Any, str, dict[str, Any]]] | None = None
        self._server_task: asyncio.Task[None] | None = None
        self._pending = 0
        self._idle = threading.Condition(self._lock)

    def use_server_loop(self) -> None:
        """From now on, send on the running loop (the server's): called on it."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._server_loop is loop and self._server_task is not None:
                if not self._server_task.done():
                    return
            queue: asyncio.Queue[tuple[Any, str, dict[str, Any]]] = asyncio.Queue()
            self._server_loop, self._server_queue = loop, queue
            self._server_task = loop.create_task(self._drain(queue), name="okey-publisher")

    def _target(self) -> tuple[asyncio.AbstractEventLoop, Any]:
        """The loop to send on, and its queue: the server's while it runs."""
        with self._lock:
            loop, queue = self._server_loop, self._server_queue
        if loop is not None and loop.is_running() and not loop.is_closed():
            return loop, queue
        return self._ensure(), self._queue

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
        loop.run_until_complete(self._drain(self._queue))

    async def _drain(self, queue: asyncio.Queue[tuple[Any, str, dict[str, Any]]]) -> None:
        me = asyncio.current_task()
        # A cancelled sender stops even if the Redis client swallowed the CancelledError
        # (as the layer's reader does: okeysite.channel_layers), or a closing loop would
        # wait for it forever.
        while me is None or not me.cancelling():
            layer, group, message = await queue.get()
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
        loop, queue = self._target()
        with self._lock:
            self._pending += 1
        assert queue is not None
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (layer, group, message))
        except RuntimeError:  # the server's loop closed just now: the thread sends it
            thread_loop = self._ensure()
            assert self._queue is not None
            thread_loop.call_soon_threadsafe(self._queue.put_nowait, (layer, group, message))

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
            _send_in_memory(layer, group, message)
        except Exception:  # best effort, as above
            log.exception("publishing to %s failed", group)
        return
    _publisher.put(layer, group, message)


# The longest a server's worker thread waits for its loop to send a message on the in-memory
# layer (a send takes microseconds while the loop runs).
IN_MEMORY_SECONDS = 2.0


def _send_in_memory(layer: Any, group: str, message: dict[str, Any]) -> None:
    """A server's worker thread sends on the server's loop, as ``async_to_sync`` would, but
    waits for it at most ``IN_MEMORY_SECONDS``: a server that is stopping (Ctrl-C) no longer
    runs its loop, and a thread waiting for it for ever would keep the process alive. Code
    outside a server (a test, a command) sends with ``async_to_sync`` on a loop of its own."""
    loop = _server_loop_of_this_thread()
    if loop is None:
        async_to_sync(layer.group_send)(group, message)
    elif not loop.is_running():
        log.info("not publishing to %s: the server is stopping", group)
    else:
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
        try:
            future.result(IN_MEMORY_SECONDS)
        except concurrent.futures.TimeoutError:
            future.cancel()
            log.warning("publishing to %s timed out: the server is stopping", group)


def _server_loop_of_this_thread() -> asyncio.AbstractEventLoop | None:
    """The event loop whose ``sync_to_async`` runs this thread's code (asgiref records it in
    the thread, as ``async_to_sync`` reads it), if any."""
    local = SyncToAsync.threadlocal
    if getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    loop = getattr(local, "main_event_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


def use_server_loop() -> None:
    """Publish on the running event loop, the ASGI server's (``server_tasks.ServerTasks``)."""
    _publisher.use_server_loop()


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Wait for this process's queued messages to go out (tests, commands that exit)."""
    return _publisher.flush(timeout)
