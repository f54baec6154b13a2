"""A budget on the WebSocket frames a client sends, taken where daphne reads them, before they
are queued for the application (``install``, called by ``okeysite.asgi``).

Why written here: neither daphne nor Channels limits the messages a socket sends. Daphne puts
every frame it reads on the application's queue, unbounded, and the consumer takes them one
at a time: a client sending as fast as it can (700,000 pings in 20 s from one socket, measured
on this machine) fills the queue far faster than a consumer can even drop them, so a budget
in the consumer is never reached while the server's loop spends itself reading, and every
other table waits. Here a frame past the budget costs a token check and is thrown away.

The budget (``games.limits``): per connection ``MESSAGES_PER_SECOND`` with bursts of
``MESSAGE_BURST``, and per address (an IPv6 one by its /64) ``ADDRESS_MESSAGES_PER_SECOND``
with bursts of ``ADDRESS_MESSAGE_BURST``, for every socket of this server process. The first
frame dropped puts ``OVER_BUDGET`` on the application's queue, once in a while, so that the
consumer tells the client in its language (``games.live.socket_guard``); after
``MESSAGES_DROPPED_BEFORE_CLOSE`` dropped frames over at least ``CLOSE_AFTER`` seconds the
socket is closed with ``CLOSE_TOO_FAST``, and a client that goes on regardless is cut off.
"""

from __future__ import annotations

import time
from typing import Any

from daphne.ws_protocol import WebSocketProtocol

from accounts.limits import address_of
from games import limits
from games.live.socket_guard import OVER_BUDGET, TELL_AGAIN_AFTER, Bucket, Buckets

ADDRESSES = Buckets(limits.ADDRESS_MESSAGES_PER_SECOND, limits.ADDRESS_MESSAGE_BURST)
# Seconds a socket goes on sending past its budget before it is closed (the consumer has told
# it meanwhile), and after the close before a client that ignores it is cut off.
CLOSE_AFTER = 0.5
CUT_OFF_AFTER = 2.0


class FrameBudget:
    """One connection's budget, and what it dropped."""

    def __init__(self, address: str | None, now: float) -> None:
        self.address = address
        self.own = Bucket(limits.MESSAGES_PER_SECOND, limits.MESSAGE_BURST, now)
        self.dropped = 0
        self.told_at = float("-inf")
        self.first_drop_at: float | None = None
        self.closed_at: float | None = None

    def take(self, now: float) -> bool:
        ok = self.own.take(now) and (self.address is None or ADDRESSES.take(self.address, now))
        if not ok:
            self.dropped += 1
        return ok


def guard(protocol: Any, payload: bytes, is_binary: bool, read: Any) -> None:
    """``WebSocketProtocol.onMessage`` within the budget: ``read`` is daphne's own."""
    now = time.monotonic()
    budget = getattr(protocol, "okey_budget", None)
    if budget is None:
        client = getattr(protocol, "client_addr", None)
        budget = FrameBudget(address_of(str(client[0])) if client else None, now)
        protocol.okey_budget = budget
    if budget.take(now):
        read(protocol, payload, is_binary)
        return
    if budget.first_drop_at is None:
        budget.first_drop_at = now
    if budget.closed_at is not None:
        if now - budget.closed_at >= CUT_OFF_AFTER:
            protocol.dropConnection(abort=True)  # it ignores the close: cut it off
        return
    if (
        budget.dropped >= limits.MESSAGES_DROPPED_BEFORE_CLOSE
        and now - budget.first_drop_at >= CLOSE_AFTER
    ):
        budget.closed_at = now
        protocol.sendClose(code=limits.CLOSE_TOO_FAST)
        # Nothing it sends is read any more: parsing a flood's frames, even to drop them, is
        # what costs. The close handshake's timeout then ends the connection.
        protocol.transport.pauseProducing()
    elif (
        now - budget.told_at >= TELL_AGAIN_AFTER
        and hasattr(protocol, "application_queue")
        and not protocol.muted
    ):
        budget.told_at = now
        protocol.application_queue.put_nowait({"type": "websocket.receive", "text": OVER_BUDGET})


def install() -> None:
    """Put the budget in front of daphne's frame reader (once)."""
    read = WebSocketProtocol.onMessage
    if getattr(read, "okey_guarded", False):
        return

    def on_message(self: Any, payload: bytes, isBinary: bool) -> None:  # noqa: N803
        guard(self, payload, isBinary, read)

    on_message.okey_guarded = True  # type: ignore[attr-defined]
    WebSocketProtocol.onMessage = on_message
