"""The lobby's socket (``/ws/lobby/``), which every open lobby page joins. Like the table's
socket it speaks HTML, as the htmx WebSocket extension expects: each message is a fragment
whose element ids say where it is swapped in (out-of-band swap).
"""

import asyncio
import contextlib
from typing import Any

from channels.db import aclose_old_connections, database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.html import format_html

from games import actions, limits, messages, reads
from games.actions import events
from games.actions.events import LOBBY_GROUP
from games.errors import GameError
from games.live import server_tasks, session_groups, table_socket
from games.live.socket_guard import Guarded, OneRefreshASecond, OpenSockets, socket_address

# The lobby sockets open in this process (``limits.LOBBY_SOCKETS_PER_*``).
OPEN = OpenSockets()


class LobbyConsumer(Guarded, OneRefreshASecond, server_tasks.QuietSend, AsyncWebsocketConsumer):
    """The lobby socket.

    On connect it sends, in one frame, the greeting (``#lobby-status``) and the live part of
    the lobby (``#lobby-online``, ``#lobby-return``, ``#lobby-tables``: ``lobby_tables.html``
    from ``reads.lobby_context``, rendered for this socket's viewer in their language).
    The actions send ``lobby.changed`` to the group after a table opens or its seats, match or
    settings change, or someone comes online or goes; the socket then renders the live part
    again (one render per burst of changes, ``debounce_seconds``) and sends it
    if it differs from the last one. It never polls the database.

    Players online: a signed-in viewer's socket has a ``LobbyPresence`` row, kept fresh by its
    server process's heartbeat (``server_tasks``), deleted on close; the count is taken from the
    database (``reads.online_count``), so it covers every daphne process.

    :class:`Guarded` refuses a message larger than the protocol needs, unread, answers a
    failure nobody foresaw with a refusal, and deletes the presence of a socket that ends
    without its disconnect.
    """

    debounce_seconds = 0.2
    counted: list[tuple[Any, int]] = []  # the caps this socket is counted under (OPEN)
    pending: "asyncio.Task[None] | None" = None
    sent_html: str | None = None
    signed_in = False
    language = "en"

    async def connect(self) -> None:
        # scope["user"] is resolved by AuthMiddlewareStack from the session cookie.
        user = self.scope.get("user")
        self.signed_in = bool(user is not None and user.is_authenticated)
        self.language = self._language()
        # Counted before any work: past the caps it is told why and closed.
        address = socket_address(self.scope)
        caps = [(("address", address), limits.LOBBY_SOCKETS_PER_ADDRESS)]
        if self.signed_in:
            caps.append((("user", user.pk), limits.LOBBY_SOCKETS_PER_USER))
        if not OPEN.take(caps):
            await self.accept()
            await self._refuse(
                GameError("too_many_sockets", "too many lobby connections are open from here")
            )
            await self.close(code=table_socket.CLOSE_TOO_MANY)
            return
        self.counted = caps
        await self.channel_layer.group_add(LOBBY_GROUP, self.channel_name)
        await self.accept()
        self.site_root = self._site_root()
        if self.signed_in:
            await database_sync_to_async(actions.lobby_socket_opened)(user, self.channel_name)
            server_tasks.socket_opened("lobby", self.channel_name)
            await session_groups.join(self)
        greeting, html = await database_sync_to_async(self._render_first)()
        self.sent_html = html
        await self.send(text_data=greeting + html)

    async def disconnect(self, code: int) -> None:
        if self.counted:
            OPEN.give_back(self.counted)
            self.counted = []
        server_tasks.socket_closed("lobby", self.channel_name)
        for task in (self.pending, self.refreshing):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.channel_layer.group_discard(LOBBY_GROUP, self.channel_name)
        await session_groups.leave(self)
        if self.signed_in:
            await database_sync_to_async(actions.lobby_socket_closed)(self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The lobby takes no commands; a client may only ask for the list again. A render
        costs a read of every open table: at most one per ``refresh_seconds`` a socket, and
        requests within that time are answered by one render at its end."""
        self._refresh()

    async def _answer_refresh(self) -> None:
        await self._send_lobby(force=True)

    async def _refuse(self, refusal: GameError, move_id: Any = None) -> None:
        """Why a message was refused, in the status line (the lobby has no other notice)."""

        with translation.override(self.language):
            html = format_html(
                '<p id="lobby-status" class="status refused" role="alert" hx-swap-oob="true"'
                ' data-error="{}">{}</p>',
                refusal.code,
                messages.refused(refusal),
            )
        await self.send(text_data=html)

    @events.handles(events.LOBBY_HTML)
    async def lobby_html(self, event: dict[str, Any]) -> None:
        """Forward an HTML fragment sent to the lobby group to this socket."""
        await self.send(text_data=event["html"])

    @events.handles(events.SESSION_ENDED)
    async def session_ended(self, event: dict[str, Any]) -> None:
        """The session this socket was opened with ended: no more of the player's lobby."""
        await self.close(code=session_groups.CLOSE_SESSION_ENDED)

    @events.handles(events.LOBBY_CHANGED)
    async def lobby_changed(self, event: dict[str, Any]) -> None:
        """A table changed (sent by the actions after commit): render the list again soon."""
        if self.pending is None or self.pending.done():
            self.pending = asyncio.create_task(self._soon())

    @events.handles(events.LAYER_RESUMED)
    async def layer_resumed(self, event: dict[str, Any]) -> None:
        """Redis failed and answers again (``okeysite.channel_layers``): changes published
        meanwhile were lost, so the list is rendered again (sent if it differs)."""
        await self.lobby_changed(event)

    async def _soon(self) -> None:
        await asyncio.sleep(self.debounce_seconds)
        await self._send_lobby()

    async def _send_lobby(self, force: bool = False) -> None:
        await aclose_old_connections()
        html = await database_sync_to_async(self._render)()
        if force or html != self.sent_html:
            self.sent_html = html
            await self.send(text_data=html)

    def _render(self) -> str:
        with translation.override(self.language):
            context = reads.lobby_context(self.scope.get("user"), self.site_root)
            return render_to_string("games/lobby_tables.html", context)

    def _render_first(self) -> tuple[str, str]:
        user = self.scope.get("user")
        username = user.get_username() if self.signed_in and user is not None else ""
        with translation.override(self.language):
            greeting = render_to_string("games/lobby_status.html", {"username": username})
        return greeting, self._render()

    def _language(self) -> str:
        """The viewer's language, as for a table socket (``games.live.table_socket.language_of``:
        the player's own, then the cookie, then Accept-Language)."""

        return table_socket.language_of(self.scope)

    def _site_root(self) -> str:
        """``http(s)://host`` of the page, for invite links to copy."""
        headers = dict(self.scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        scheme = "https" if self.scope.get("scheme") == "wss" else "http"
        return f"{scheme}://{host}" if host else ""


__all__ = ["LobbyConsumer"]
