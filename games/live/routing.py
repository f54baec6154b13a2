"""The sockets' addresses (``okeysite.asgi`` routes ``websocket`` connections here)."""

from django.urls import path

from games.live.lobby_socket import LobbyConsumer
from games.live.table_socket import TableConsumer

websocket_urlpatterns = [
    path("ws/lobby/", LobbyConsumer.as_asgi()),
    path("ws/tables/<int:table_id>/", TableConsumer.as_asgi()),
]
