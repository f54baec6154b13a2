"""What one ASGI server process runs beside its sockets: the presence heartbeat of all its
sockets, and (without Redis) the clock.

No socket polls the database. A process keeps the channel names of its open sockets here
and refreshes their presence rows in one query per kind every ``Presence.HEARTBEAT``
seconds, however many sockets it holds; rows of a process that dies go stale and stop
counting (``Presence.FRESH``).

The clock (``games.clock.tick``: bots, move timers, away seats, the next hand) must publish
where the sockets listen. With Redis, any process reaches every socket, so the clock runs as
its own worker (``manage.py run_clock``, one or several). With the in-memory channel layer
(the embedded default of ``make run``) only this process's own layer reaches its sockets, so
the clock runs inside the server, as a task on its event loop (``CLOCK_IN_SERVER``, on by
default when ``REDIS_URL`` is unset). Either way a clock move reaches open pages as soon as it
commits.

``ServerTasks`` wraps the ASGI application and starts both tasks on the first connection
(daphne does not speak the ASGI lifespan protocol).

Stopping (Ctrl-C, SIGTERM): when daphne begins to stop, this process's tasks are cancelled
(no clock pass starts any more: ``_stop_when_told``). A worker thread still finishing a
socket's ``disconnect`` waits for the stopped loop no longer than a send may take
(``broadcast.IN_MEMORY_SECONDS``), so the process ends within seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import close_old_connections

from games import actions, reads
from games.actions import broadcast, events
from games.clock import Housekeeping, Outage, outage, paused, tick
from games.errors import UNREACHABLE
from games.live import loop_reads
from games.models import Presence

log = logging.getLogger(__name__)

try:  # daphne's WebSocket transport (autobahn) refuses a frame once its client has gone
    from autobahn.exception import Disconnected as ClientGone
except ImportError:  # pragma: no cover - another ASGI server

    class ClientGone(Exception):  # type: ignore[no-redef]
        """Never raised: this server has no such error."""


class QuietSend:
    """For a socket consumer: a frame sent after the client has closed the connection (a
    group message that arrived before the close did) is dropped, not logged as an error by
    the server; the consumer's disconnect is on its way."""

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        try:
            await super().send(text_data, bytes_data, close)  # type: ignore[misc]
        except ClientGone:
            log.debug("a frame for a socket that has just closed was dropped")


# This process's open sockets, by channel name.
table_sockets: set[str] = set()  # seated players' table sockets (Presence rows)
lobby_sockets: set[str] = set()  # signed-in lobby sockets (LobbyPresence rows)
watch_sockets: set[str] = set()  # spectators' table sockets (Watcher rows)

_tasks: dict[str, asyncio.Task[None]] = {}


def _sockets(kind: str) -> set[str]:
    return {"table": table_sockets, "lobby": lobby_sockets, "watch": watch_sockets}[kind]


def socket_opened(kind: str, channel_name: str) -> None:
    """``kind``: ``"table"`` (a seated player), ``"watch"`` (a spectator) or ``"lobby"``."""
    _sockets(kind).add(channel_name)
    _start()


def socket_closed(kind: str, channel_name: str) -> None:
    _sockets(kind).discard(channel_name)


def _start() -> None:
    """Start this process's background tasks once, on its running event loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # not in a server (a management command, a sync test): nothing to run
    _stop_when_told()
    for name, factory in (("heartbeat", _heartbeat), ("clock", _clock)):
        task = _tasks.get(name)
        if task is not None and not task.done() and task.get_loop() is loop:
            continue
        if name == "clock" and not settings.CLOCK_IN_SERVER:
            continue
        _tasks[name] = loop.create_task(factory(), name=f"okey-{name}")


_watching_shutdown = False


def _stop_when_told() -> None:
    """Under daphne (Twisted's reactor): when the server begins to stop, cancel this process's
    tasks (no clock pass starts any more). Other servers, and tests, have no running reactor:
    nothing to do."""
    global _watching_shutdown
    # Looked up, not imported: importing it would install a reactor where none runs.
    reactor = sys.modules.get("twisted.internet.reactor")
    if _watching_shutdown or reactor is None or not getattr(reactor, "running", False):
        return
    _watching_shutdown = True
    reactor.addSystemEventTrigger("before", "shutdown", _shutting_down)


def _shutting_down() -> None:
    for task in _tasks.values():
        task.cancel()


def _in_thread(fn: Any) -> Any:
    """Run ``fn`` in a worker thread with a fresh database connection, closed afterwards
    (a task of the server must never block its event loop)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(call, thread_sensitive=False)


def _beat(
    tables: list[str], lobbies: list[str], watchers: list[str], online_before: int | None
) -> int | None:

    actions.sockets_alive(tables, lobbies, watchers)
    if not lobbies:
        return None  # no lobby here to tell; the processes with lobby sockets keep count
    online = reads.online_count()
    if online_before is not None and online != online_before:
        # Someone's sockets went stale (their server died): the lobbies' count is out of date.
        events.to_lobby()
    return online


# The presence heartbeat's word about the database (one line per outage).
heartbeat_outage = Outage("the presence heartbeat")


async def _heartbeat() -> None:
    beat = _in_thread(_beat)
    online: int | None = None
    while True:
        await asyncio.sleep(Presence.HEARTBEAT)
        try:
            online = await beat(
                sorted(table_sockets), sorted(lobby_sockets), sorted(watch_sockets), online
            )
            heartbeat_outage.answered()
        except UNREACHABLE as exc:  # one line per outage; the next beat retries
            heartbeat_outage.failed(exc)
        except Exception:  # the next beat retries; a missed one is within FRESH
            log.exception("the presence heartbeat failed")


def _pass(housekeeping: bool) -> int:
    return tick(
        bot_delay=settings.BOT_DELAY_SECONDS,
        grace_seconds=settings.AWAY_GRACE_SECONDS,
        think_ms=settings.BOT_THINK_MS,
        housekeeping=housekeeping,
    )


class _Wakes:
    """The clock's ear on the channel layer's ``events.CLOCK_GROUP``: every table change
    published after commit (a move, a deal, a seat) wakes it, so a bot on turn is played its
    delay after the change, with no pass in between. Best effort: a lost wake costs one
    ``CLOCK_INTERVAL_SECONDS``, the pause between passes when nothing wakes the clock."""

    REJOIN_SECONDS = 3600.0  # a layer forgets a group's member after a day (group_expiry)

    def __init__(self) -> None:
        self.woken = asyncio.Event()

    def listen(self) -> asyncio.Task[None] | None:
        layer = get_channel_layer()
        if layer is None:
            return None
        return asyncio.get_running_loop().create_task(self._receive(layer), name="okey-wakes")

    async def _receive(self, layer: Any) -> None:
        channel = await layer.new_channel()
        while True:
            try:
                await layer.group_add(events.CLOCK_GROUP, channel)
                async with asyncio.timeout(self.REJOIN_SECONDS):
                    while True:
                        await layer.receive(channel)
                        self.woken.set()
            except TimeoutError:
                continue
            except Exception:  # the layer's connection: the clock polls meanwhile
                log.exception("the clock's wakes failed; listening again")
                await asyncio.sleep(1)

    async def rest(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a wake; whether one came. A paused clock (the suite's
        live server between its tests) is told at once that it is paused (``paused()``
        leaves its mark), not at its next pass."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        slice_ = 0.05 if settings.CLOCK_PAUSE_FILE else seconds
        while True:
            left = until - loop.time()
            if left <= 0:
                return False
            try:
                async with asyncio.timeout(min(left, slice_)):
                    await self.woken.wait()
            except TimeoutError:
                if settings.CLOCK_PAUSE_FILE:
                    paused()
                continue
            self.woken.clear()
            return True


async def _clock() -> None:
    one_pass = _in_thread(_pass)
    wakes = _Wakes()
    listening = wakes.listen()
    loop = asyncio.get_running_loop()
    # After a change a bot is due in its delay, a searching bot its thinking time sooner.
    delay = max(0.0, settings.BOT_DELAY_SECONDS)
    due_after_a_change = sorted({max(0.0, delay - settings.BOT_THINK_MS / 1000), delay})
    housekeeping = Housekeeping()
    scheduled: list[float] = []
    log.info("the clock runs in this server (in-memory channel layer)")
    try:
        while True:
            began = loop.time()
            try:
                played = await one_pass(housekeeping.due())
                outage.answered()
            except UNREACHABLE as exc:  # one line per outage; the next pass retries
                outage.failed(exc)
                played = 0
            except Exception:  # keep the clock running; the next pass retries
                log.exception("clock pass failed; retrying")
                played = 0
            scheduled = [t for t in scheduled if t > began]  # this pass did those
            if played:
                continue
            # Rest until a pass is due: a change's bot, or CLOCK_INTERVAL_SECONDS at the latest
            # (move timers, tables to fill, the next hand, changes made by another process).
            latest = loop.time() + settings.CLOCK_INTERVAL_SECONDS
            while (due := min([latest, *scheduled])) > loop.time():
                if await wakes.rest(due - loop.time()):
                    now = loop.time()
                    scheduled += [now + after for after in due_after_a_change]
    finally:
        if listening is not None:
            listening.cancel()


class ServerTasks:
    """ASGI middleware: starts the process's background tasks with its first connection,
    and opens its pool for reads on the event loop (``games.live.loop_reads``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        _start()

        loop_reads.start()  # the server's own pool for the sockets' reads (PostgreSQL)
        if settings.BROADCAST_ON_SERVER_LOOP:
            broadcast.use_server_loop()  # messages after commit go out on this loop
        return await self.app(scope, receive, send)


async def stop() -> None:
    """Cancel this process's background tasks (tests; a server simply exits)."""
    for name in list(_tasks):
        task = _tasks.pop(name)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, RuntimeError):
            await task
