"""The ASGI application that ``bench/load.py``'s daphne processes serve (bench only, never
deployed): the site's own ``okeysite.asgi.application``, plus two things a load benchmark needs.

- **A bare socket** at ``/ws/bare/<table_id>/``: through the same middleware as the table
  socket (``AllowedHostsOriginValidator`` + ``AuthMiddlewareStack``, the same ``sessionid``
  cookie; an anonymous socket is refused), it joins the group ``bare-<table_id>`` and sends
  every group message's ``html`` to its client as it is: no database, no template. Its delivery
  time is the floor under the table socket's push latency (Redis, the process's event loop,
  daphne's WebSocket framing, the client).
- **``GET /bench/stats``**: JSON with this process's ``pid``, its ``rss_kb`` (``VmRSS``) and
  ``queries``, the SQL statements executed so far. They are counted by wrapping
  ``django.db.backends.utils.CursorWrapper.execute`` and ``executemany`` here, in this
  module (every ORM query goes through them; ``executemany`` counts as one), and psycopg's
  ``AsyncCursor.execute`` (the table sockets' reads on the event loop), so nothing in the
  site changes. And ``timings``: for a few functions wrapped here the same way, how many
  calls, their total seconds and how many threads ran them: ``submit`` (``actions.submit``,
  a socket's move, its commit and publish included); ``publish`` (what the actions call
  after commit, in the thread that committed: ``async_to_sync(group_send)``, or
  ``games.actions.broadcast.send`` where they queue the message); ``render``
  (``TableConsumer._render``, one socket's fragments); and, where the socket has it,
  ``state`` (``reads.table_state``, one read of a table in a thread) and
  ``loop_state`` (``games.live.loop_reads.table_state``, one read on the event loop).
- **``GET /bench/published``**: JSON ``{"<hand>:<version>": t}``, the wall-clock time at
  which this process handed each move's ``hand.moved`` message over after its commit (the
  actions' ``on_commit``): where push latency starts as the goal measures it ("commit
  until every other seat's frame").

    python -m daphne -b 127.0.0.1 -p 8001 bench.bare_asgi:application
"""

from __future__ import annotations

import functools
import gc
import json
import os
import threading
import time
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "okeysite.settings")
django.setup()  # before channels.auth, which imports the auth models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.db.backends import utils  # noqa: E402
from django.urls import path  # noqa: E402

from games import actions, limits, reads  # noqa: E402
from games.actions import broadcast  # noqa: E402
from games.live import loop_reads  # noqa: E402
from games.live.table_socket import TableConsumer  # noqa: E402
from okeysite.asgi import application as site  # noqa: E402

# Every bench client connects from 127.0.0.1: the site's limit on sockets per address (64)
# would refuse most of them. The limits per user and per table still apply.
limits.SOCKETS_PER_ADDRESS = 1_000_000

# ----------------------------------------------------------------------------- counters
_queries = 0
_queries_lock = threading.Lock()
_timings: dict[str, list[Any]] = {}  # name -> [calls, seconds, thread ids]


def _counted(method: Any) -> Any:
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _queries
        with _queries_lock:
            _queries += 1
        return method(self, *args, **kwargs)

    wrapper.__wrapped__ = method  # type: ignore[attr-defined]
    return wrapper


# CursorDebugWrapper (DEBUG on) calls these through super(): each statement counts once.
utils.CursorWrapper.execute = _counted(utils.CursorWrapper.execute)  # type: ignore[method-assign]
utils.CursorWrapper.executemany = _counted(utils.CursorWrapper.executemany)  # type: ignore[method-assign]


def _counted_async(method: Any) -> Any:
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _queries
        with _queries_lock:
            _queries += 1
        return await method(self, *args, **kwargs)

    return wrapper


# The statements the table sockets run on the event loop (games.loop_reads: psycopg's
# asynchronous cursors, not Django's) count too.
try:
    import psycopg

    psycopg.AsyncCursor.execute = _counted_async(psycopg.AsyncCursor.execute)  # type: ignore[method-assign]
except ImportError:  # SQLite only
    pass


def _record(name: str, seconds: float) -> None:
    with _queries_lock:
        entry = _timings.setdefault(name, [0, 0.0, set()])
        entry[0] += 1
        entry[1] += seconds
        entry[2].add(threading.get_ident())


def _timed(name: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _record(name, time.perf_counter() - start)

    return wrapper


def _timed_async(name: str, fn: Any) -> Any:
    """:func:`_timed` for a coroutine function (its time includes its awaits)."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            _record(name, time.perf_counter() - start)

    return wrapper


# Each is looked up at call time: ``actions.submit`` and ``reads.table_state`` (one read of a
# table shared by its sockets) by the table socket, ``self._render`` on the consumer, and
# ``broadcast.send``, where the actions hand messages over after commit.
for _name, _owner, _attribute in (
    ("submit", actions, "submit"),
    ("render", TableConsumer, "_render"),
    ("state", reads, "table_state"),
    ("advance", reads, "state_after_move"),
    ("publish", broadcast, "send"),
):
    if _owner is not None and hasattr(_owner, _attribute):
        setattr(_owner, _attribute, _timed(_name, getattr(_owner, _attribute)))


# Each move's commit, as the time its message was handed over after it (/bench/published).
_published: dict[str, float] = {}

# Where a push's time goes in the servers: a move's group message is stamped (wall clock) as
# the actions hand it over after commit; a table socket records its age when the socket's
# handler gets it ("arrived") and when the socket has sent its frame ("framed").
_send = broadcast.send


def _stamped_send(group: str, message: dict[str, Any]) -> None:
    if message.get("type") == "hand.moved":
        message = {**message, "bench_at": time.time()}
        _published[f"{message.get('hand')}:{message.get('version')}"] = message["bench_at"]
    _send(group, message)


broadcast.send = _stamped_send
_hand_moved, _send_table = TableConsumer.hand_moved, TableConsumer._send_table


async def _timed_hand_moved(self: Any, event: dict[str, Any]) -> None:
    at = event.get("bench_at")
    if at is not None:
        _record("arrived", time.time() - at)
        self._bench_at = at
    await _hand_moved(self, event)


async def _timed_send_table(self: Any, *args: Any, **kwargs: Any) -> None:
    await _send_table(self, *args, **kwargs)
    change = args[0] if args else kwargs.get("change")
    at = getattr(self, "_bench_at", None)
    if change is not None and at is not None:
        _record("framed", time.time() - at)
        self._bench_at = None


TableConsumer.hand_moved = _timed_hand_moved  # type: ignore[method-assign]
TableConsumer._send_table = _timed_send_table  # type: ignore[method-assign]

# The garbage collector's pauses, by generation ("gc0", "gc1", "gc2"): every thread of the
# process stops while it runs.
# The callback takes no lock (a collection can start while this thread holds one): it
# appends, and /bench/stats adds the pauses up.
_gc_started: list[float] = []
_gc_pauses: list[tuple[int, float]] = []


def _gc_callback(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[:] = [time.perf_counter()]
    elif _gc_started:
        _gc_pauses.append((info["generation"], time.perf_counter() - _gc_started[0]))


gc.callbacks.append(_gc_callback)

# the table read on the event loop
loop_reads.table_state = _timed_async("loop_state", loop_reads.table_state)


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def _stats(scope: Any, receive: Any, send: Any) -> None:
    while _gc_pauses:
        generation, seconds = _gc_pauses.pop(0)
        _record(f"gc{generation}", seconds)
    with _queries_lock:
        timings = {
            name: {"calls": calls, "seconds": seconds, "threads": len(threads)}
            for name, (calls, seconds, threads) in _timings.items()
        }
    stats = {"pid": os.getpid(), "rss_kb": _rss_kb(), "queries": _queries, "timings": timings}
    body = json.dumps(stats).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# ----------------------------------------------------------------------------- bare socket
class BareConsumer(AsyncWebsocketConsumer):
    """Joins ``bare-<table_id>`` and forwards each group message's ``html``, untouched."""

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close()
            return
        self.group = f"bare-{int(self.scope['url_route']['kwargs']['table_id'])}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def layer_resumed(self, event: dict[str, Any]) -> None:
        """Redis failed and answers again (okeysite.channel_layers): nothing to send afresh."""

    async def bare_frame(self, event: dict[str, Any]) -> None:
        if "bench_at" in event:
            _record("bare_arrived", time.time() - event["bench_at"])
        await self.send(text_data=event["html"])


bare_socket = AllowedHostsOriginValidator(
    AuthMiddlewareStack(URLRouter([path("ws/bare/<int:table_id>/", BareConsumer.as_asgi())]))
)


async def _published_moves(scope: Any, receive: Any, send: Any) -> None:
    body = json.dumps(_published).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def application(scope: Any, receive: Any, send: Any) -> Any:
    if scope["type"] == "http" and scope["path"] == "/bench/stats":
        return await _stats(scope, receive, send)
    if scope["type"] == "http" and scope["path"] == "/bench/published":
        return await _published_moves(scope, receive, send)
    if scope["type"] == "websocket" and scope["path"].startswith("/ws/bare/"):
        return await bare_socket(scope, receive, send)
    return await site(scope, receive, send)
