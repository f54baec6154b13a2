"""What every socket of the site does with what it cannot read, and with its own failures.

- A message larger than the protocol needs (``games.limits.MAX_MESSAGE_LENGTH`` characters)
  is refused unread. Daphne's own cap (``SERVER_MAX_MESSAGE_BYTES``) closes the socket on
  anything past that.
- A message whose handling fails because the database is unreachable (PostgreSQL restarting,
  the connection pool empty) is refused at once in those words ("unavailable"), logged in one
  line: nothing is wrong with the message, and it may be sent again.
- A message whose handling fails with an error nobody foresaw is logged (with its traceback)
  and answered with a generic refusal: the socket stays open, since one bad message is no
  reason to drop a player from the table.
- A socket that ends without its disconnect (a group message's handler that failed, which
  ends the consumer) still cleans up as a close does: its presence rows and its place in the
  groups go, so it is never left counted as watching or here.

- Every message, whatever it is, takes a token from its connection's and its address's
  budgets where daphne reads it (``okeysite.frame_guard``), then from its account's here
  (:class:`MessageBudget`; ``games.limits``). Without one it is dropped unread (one
  ``too_fast`` refusal says so), and a socket that keeps on is closed with
  ``limits.CLOSE_TOO_FAST``.

A consumer using :class:`Guarded` has ``_refuse(refusal)`` (tell this socket alone why, from a
``GameError``)
and a ``disconnect`` that is safe to run on a socket that never finished connecting.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any

from accounts.limits import address_of
from games import limits
from games.errors import UNREACHABLE, GameError
from games.limits import MAX_MESSAGE_LENGTH

log = logging.getLogger(__name__)


class Bucket:
    """A token bucket: ``rate`` tokens a second, holding at most ``burst`` (full at first)."""

    __slots__ = ("at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst, self.tokens, self.at = rate, burst, float(burst), now

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def full(self, now: float) -> bool:
        return self.tokens + (now - self.at) * self.rate >= self.burst


class Buckets:
    """One bucket per key (an account, an address) in this server process; buckets back to
    full are forgotten now and then, so that the keys seen do not pile up."""

    PRUNE_AT = 10_000

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.buckets: dict[Any, Bucket] = {}

    def take(self, key: Any, now: float) -> bool:
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= self.PRUNE_AT:
                self.buckets = {k: b for k, b in self.buckets.items() if not b.full(now)}
            bucket = self.buckets[key] = Bucket(self.rate, self.burst, now)
        return bucket.take(now)


# Seconds before a socket over its budget is told so again.
TELL_AGAIN_AFTER = 10.0

ACCOUNTS = Buckets(limits.ACCOUNT_MESSAGES_PER_SECOND, limits.ACCOUNT_MESSAGE_BURST)
# What the frame guard (``okeysite.frame_guard``) puts on a socket's queue when it starts
# dropping its frames: the consumer then tells the client. (A client sending it only hears the
# same.)
OVER_BUDGET = "\x00okey:over-budget"


class MessageBudget:
    """The budget one socket's messages take from in the consumer: its account's, shared by
    the account's sockets in this process. (Each connection's own budget and its address's
    are taken where daphne reads the frames: ``okeysite.frame_guard``.)"""

    def __init__(self, scope: dict[str, Any]) -> None:
        user = scope.get("user")
        self.account = user.pk if user is not None and user.is_authenticated else None
        self.dropped = 0

    def take(self) -> bool:
        """Whether this message may be read (a token from the account's budget)."""
        if self.account is None or ACCOUNTS.take(self.account, time.monotonic()):
            return True
        self.dropped += 1
        return False


class OpenSockets:
    """How many sockets of a kind are open in this server process per key (an account, an
    address), each key with its cap. Checking and taking is one step on the event loop (no
    await between them), so a burst of connects cannot all pass a cap."""

    def __init__(self) -> None:
        self.counts: collections.Counter[Any] = collections.Counter()

    def take(self, caps: list[tuple[Any, int]]) -> bool:
        """Count one more socket under every key, if none is at its cap."""
        if any(self.counts[key] >= cap for key, cap in caps):
            return False
        for key, _cap in caps:
            self.counts[key] += 1
        return True

    def give_back(self, caps: list[tuple[Any, int]]) -> None:
        for key, _cap in caps:
            self.counts[key] -= 1
            if self.counts[key] <= 0:
                del self.counts[key]


def socket_address(scope: dict[str, Any]) -> str | None:
    """The client's address as the limits count it: the connection's peer (daphne puts the
    proxy's X-Forwarded-For there only with ``--proxy-headers``, as for HTTP), an IPv6 one
    reduced to its /64 as the HTTP limits do (``accounts.limits.address_of``)."""
    client = scope.get("client")
    return address_of(str(client[0])) if client else None


class Guarded:
    """A mixin for an ``AsyncWebsocketConsumer`` (before it in the bases)."""

    cleaned_up = False
    budget: MessageBudget | None = None
    told_too_fast_at = float("-inf")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)  # type: ignore[misc]
        finally:
            if not self.cleaned_up:
                self.cleaned_up = True
                try:
                    await self.disconnect(1011)  # type: ignore[attr-defined]
                except Exception:
                    log.exception("cleaning up after a socket that failed")

    async def dispatch(self, message: dict[str, Any]) -> None:
        """A client's message goes straight to its handler. Channels first closes stale
        database connections before every handler, a hop to the database thread: a message
        then waits behind any save in progress, even one dropped for its budget or answered
        without the database, and a flood costs the thread a hop a message.
        ``database_sync_to_async`` closes them around each call that uses the database."""
        if message.get("type") == "websocket.receive":
            await self.websocket_receive(message)
            return
        await super().dispatch(message)  # type: ignore[misc]

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        self.cleaned_up = True
        await super().websocket_disconnect(message)  # type: ignore[misc]

    async def websocket_receive(self, message: dict[str, Any]) -> None:
        if message.get("text") == OVER_BUDGET:
            self._tell_too_fast("too many messages: slow down")
            return
        if not self._within_budget():
            return
        text, data = message.get("text"), message.get("bytes")
        size = len(text) if text is not None else len(data or b"")
        try:
            if size > MAX_MESSAGE_LENGTH:
                await self._refuse(
                    GameError("too_big", f"a message has at most {MAX_MESSAGE_LENGTH} characters")
                )
                return
            await super().websocket_receive(message)  # type: ignore[misc]
        except UNREACHABLE as exc:
            log.warning(
                "a message on socket %s failed: %s", getattr(self, "channel_name", "?"), exc
            )
            await self._refuse(GameError("unavailable", "the database is unreachable"))
        except Exception:
            log.exception("a message on socket %s failed", getattr(self, "channel_name", "?"))
            await self._refuse(
                GameError("server_error", "the server failed to handle that message")
            )

    def _within_budget(self) -> bool:
        """Take this message's tokens (:class:`MessageBudget`). Past the budget the message is
        dropped unread: the first time one refusal says so, and past
        ``MESSAGES_DROPPED_BEFORE_CLOSE`` dropped messages the socket is closed."""
        if self.budget is None:
            self.budget = MessageBudget(self.scope)  # type: ignore[attr-defined]
        if self.budget.take():
            return True
        if self.budget.dropped >= limits.MESSAGES_DROPPED_BEFORE_CLOSE:
            if self.budget.dropped == limits.MESSAGES_DROPPED_BEFORE_CLOSE:
                log.warning(
                    "socket %s closed: too many messages", getattr(self, "channel_name", "?")
                )
                _background(self.close(code=limits.CLOSE_TOO_FAST))  # type: ignore[attr-defined]
            return False
        self._tell_too_fast("too many messages: slow down")
        return False

    def _tell_too_fast(self, why: str) -> None:
        """Refuse with ``too_fast``, once in ``TELL_AGAIN_AFTER`` seconds whatever the limit
        met (a flood that a refill lets through now and then is not answered at its pace)."""
        now = time.monotonic()
        if now - self.told_too_fast_at >= TELL_AGAIN_AFTER:
            self.told_too_fast_at = now
            _background(self._refuse(GameError("too_fast", why)))

    async def _refuse(self, code: str, message: str, move_id: Any = None) -> None:
        raise NotImplementedError


# The tasks started and not awaited by a handler: kept until done (a task only weakly held
# may be collected before it runs).
_running: set[asyncio.Task[None]] = set()


def _background(work: Any) -> None:
    task = asyncio.ensure_future(work)
    _running.add(task)
    task.add_done_callback(_running.discard)


class OneRefreshASecond:
    """For a socket consumer whose client may ask for its whole view again (a read and a
    render each): at most one answer per ``refresh_seconds``; asks meanwhile are answered by
    that one answer at the window's end, never queued. The consumer answers in
    ``_answer_refresh`` and cancels ``refreshing`` on disconnect."""

    refresh_seconds = 1.0
    refreshing: asyncio.Task[None] | None = None
    refreshed_at = float("-inf")

    def _refresh(self) -> None:
        if self.refreshing is not None and not self.refreshing.done():
            return  # one is coming
        wait = self.refreshed_at + self.refresh_seconds - time.monotonic()
        self.refreshing = asyncio.create_task(self._refresh_after(max(wait, 0.0)))

    async def _refresh_after(self, wait: float) -> None:
        if wait:
            await asyncio.sleep(wait)
        self.refreshed_at = time.monotonic()
        await self._answer_refresh()

    async def _answer_refresh(self) -> None:
        raise NotImplementedError
