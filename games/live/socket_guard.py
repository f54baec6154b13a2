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

A consumer using :class:`Guarded` has ``_refuse(refusal)`` (tell this socket alone why, from a
``GameError``)
and a ``disconnect`` that is safe to run on a socket that never finished connecting.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from django.db import InterfaceError, OperationalError

from games.errors import GameError
from games.limits import MAX_MESSAGE_LENGTH

log = logging.getLogger(__name__)

# The database cannot be reached (a lost connection, a restart, no connection from the pool).
UNREACHABLE = (OperationalError, InterfaceError)


class Guarded:
    """A mixin for an ``AsyncWebsocketConsumer`` (before it in the bases)."""

    cleaned_up = False

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

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        self.cleaned_up = True
        await super().websocket_disconnect(message)  # type: ignore[misc]

    async def websocket_receive(self, message: dict[str, Any]) -> None:
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

    async def _refuse(self, code: str, message: str, move_id: Any = None) -> None:
        raise NotImplementedError


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
