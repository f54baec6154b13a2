"""WebSocket consumers.

The lobby (a socket every open home page joins) and a table's live socket. Both speak HTML, as
the htmx WebSocket extension expects: each message is a fragment whose element ids say where it
is swapped in (out-of-band swap). Sending moves over the socket arrives with live play.
"""

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import aclose_old_connections, database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from games.models import Presence

LOBBY_GROUP = "lobby"


class LobbyConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        await self.channel_layer.group_add(LOBBY_GROUP, self.channel_name)
        await self.accept()
        # scope["user"] is resolved by AuthMiddlewareStack from the session cookie.
        user = self.scope.get("user")
        username = user.get_username() if user is not None and user.is_authenticated else ""
        await self.send(
            text_data=render_to_string("games/lobby_status.html", {"username": username})
        )

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(LOBBY_GROUP, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # The lobby takes no commands yet; the client only listens.
        return None

    async def lobby_html(self, event: dict[str, Any]) -> None:
        """Forward an HTML fragment sent to the lobby group to this socket."""
        await self.send(text_data=event["html"])


class TableConsumer(AsyncWebsocketConsumer):
    """A table's live socket: it re-sends the table fragment whenever the table changes.

    A seated player's socket also keeps a Presence row fresh (a heartbeat every
    ``Presence.HEARTBEAT`` seconds): while it is fresh the player is here; once every socket of
    theirs is closed or stale for the grace period, the clock marks the seat away and a bot
    keeps it warm. The fragment is rendered per socket from the engine's view of the viewer's
    own seat (``selectors.table_context``).
    """

    table_id: int
    seat_id: int | None
    # The channel layer is best effort, and the clock worker may publish from a process this
    # socket's layer cannot hear (the in-memory layer of `make run`): every few seconds the
    # socket also compares the table's state in the database with what it last sent.
    watch_seconds = 2.0
    heartbeat_seconds: float = float(Presence.HEARTBEAT)
    watcher: "asyncio.Task[None] | None" = None
    heart: "asyncio.Task[None] | None" = None
    sent: Any = None

    async def connect(self) -> None:
        from games import services

        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.seat_id = None
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.invite = (query.get("invite") or [None])[0]
        allowed, seat_id = await database_sync_to_async(self._admit)()
        if not allowed:
            await self.close()
            return
        self.seat_id = seat_id
        await self.channel_layer.group_add(services.table_group(self.table_id), self.channel_name)
        await self.accept()
        if self.seat_id is not None:
            await database_sync_to_async(services.socket_opened)(
                self.seat_id, self.scope["user"], self.channel_name
            )
            self.heart = asyncio.create_task(self._heartbeat())
        await self._send_table()
        self.watcher = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.watch_seconds)
            await aclose_old_connections()
            if await database_sync_to_async(self._signature)() != self.sent:
                await self._send_table()

    async def _heartbeat(self) -> None:
        from games import services

        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            await aclose_old_connections()
            await database_sync_to_async(services.socket_alive)(self.channel_name)

    def _signature(self) -> Any:
        """What the fragment depends on: the hand in play and its version, the seats and who
        is here, the table's status."""
        from games.models import Hand, Seat, Table

        hand = (
            Hand.objects.filter(match__table_id=self.table_id, status=Hand.Status.PLAYING)
            .values_list("id", "version")
            .first()
        )
        seats = tuple(
            Seat.objects.filter(table_id=self.table_id)
            .annotate(here=Presence.here())
            .order_by("position")
            .values_list("user_id", "bot_level", "away", "here")
        )
        status = Table.objects.filter(pk=self.table_id).values_list("status", flat=True).first()
        return hand, seats, status

    def _admit(self) -> tuple[bool, int | None]:
        from games import policy
        from games.models import Table

        table = Table.objects.filter(pk=self.table_id).prefetch_related("seats").first()
        if table is None:
            return False, None
        user = self.scope.get("user")
        seats = list(table.seats.all())
        if not policy.can_see(table, seats, user, self.invite):
            return False, None
        user_id = user.pk if user is not None and user.is_authenticated else None
        seat = next((s for s in seats if user_id and s.user_id == user_id), None)
        return True, seat.pk if seat is not None else None

    async def disconnect(self, code: int) -> None:
        from games import services

        for task in (self.watcher, self.heart):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if not hasattr(self, "table_id"):
            return
        await self.channel_layer.group_discard(
            services.table_group(self.table_id), self.channel_name
        )
        if self.seat_id is not None:
            await database_sync_to_async(services.socket_closed)(self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Moves arrive with the live-play issue; for now a client may only ask for a refresh.
        await self._send_table()

    async def _send_table(self) -> None:
        await aclose_old_connections()
        signature, html = await database_sync_to_async(self._render)()
        self.sent = signature
        await self.send(text_data=html)

    def _render(self) -> tuple[Any, str]:
        from games import selectors

        signature = self._signature()
        context = selectors.table_context(self.table_id, self.scope.get("user"), self.invite)
        return signature, render_to_string("games/table.html#live", context)

    # Group messages from games.services (sent after commit): re-render from the database.
    async def hand_moved(self, event: dict[str, Any]) -> None:
        await self._send_table()

    async def hand_dealt(self, event: dict[str, Any]) -> None:
        await self._send_table()

    async def table_changed(self, event: dict[str, Any]) -> None:
        await self._send_table()
