"""WebSocket consumers.

For now only the lobby: a socket that every open home page joins. It speaks HTML, as the
htmx WebSocket extension expects: each message is a fragment whose element ids say where it
is swapped in (out-of-band swap). Tables and moves arrive with later issues.
"""

from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

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
