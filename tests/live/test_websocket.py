"""WebSocket handshakes through the real ASGI application (origin check, auth, layer)."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from games.actions import LOBBY_GROUP
from okeysite.asgi import application
from tests.sockets import Communicator, cookie_for
from tests.users import make_user

# The auth middleware reads the session through database_sync_to_async, in another thread.
pytestmark = pytest.mark.django_db(transaction=True)

ALLOWED_ORIGIN = b"http://localhost:8000"


def lobby(origin: bytes, cookie: str = "") -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return Communicator(application, "/ws/lobby/", headers=headers)


@pytest.fixture
async def guest_socket() -> AsyncIterator[WebsocketCommunicator]:
    communicator = lobby(ALLOWED_ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    try:
        yield communicator
    finally:
        await communicator.disconnect()


@pytest.fixture
def ayse_cookie(transactional_db: None) -> str:
    """A signed-in player's."""
    return cookie_for(make_user("ayse"))


async def test_it_accepts_a_socket_from_an_allowed_origin(
    guest_socket: WebsocketCommunicator,
) -> None:
    html = await guest_socket.receive_from()

    assert 'id="lobby-status"' in html
    assert "as a guest" in html


async def test_it_refuses_a_socket_from_a_foreign_origin() -> None:
    communicator = lobby(b"http://evil.example.test")
    try:
        connected, _ = await communicator.connect()
        assert not connected
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize(
    "origin",
    [
        b"http://localhost:8001",  # another port of an allowed host
        b"https://localhost:8000",  # another scheme
        b"http://localhost",  # the default port is not 8000
        b"null",
    ],
)
async def test_it_refuses_a_socket_from_another_port_or_scheme_of_an_allowed_host(
    origin: bytes,
) -> None:
    communicator = lobby(origin)
    try:
        connected, _ = await communicator.connect()
        assert not connected
    finally:
        await communicator.disconnect()


async def test_a_trusted_origin_and_a_tls_proxys_scheme_are_accepted(settings: Any) -> None:
    # A front end of an allowed host on another port, declared as trusted.
    settings.CSRF_TRUSTED_ORIGINS = ["http://127.0.0.1:9000"]
    communicator = lobby(b"http://127.0.0.1:9000")
    try:
        assert (await communicator.connect())[0]
    finally:
        await communicator.disconnect()
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    headers = [
        (b"origin", b"https://localhost"),
        (b"host", b"localhost"),
        (b"x-forwarded-proto", b"https"),
    ]
    communicator = Communicator(application, "/ws/lobby/", headers=headers)
    try:
        assert (await communicator.connect())[0]
    finally:
        await communicator.disconnect()


async def test_it_knows_the_signed_in_player(ayse_cookie: str) -> None:
    communicator = lobby(ALLOWED_ORIGIN, ayse_cookie)
    try:
        connected, _ = await communicator.connect()
        assert connected
        html = await communicator.receive_from()
        assert "as ayse" in html
    finally:
        await communicator.disconnect()


async def test_it_forwards_lobby_broadcasts_through_the_channel_layer(
    guest_socket: WebsocketCommunicator,
) -> None:
    await guest_socket.receive_from()  # the greeting
    fragment = '<p id="lobby-news">A table opened</p>'

    await get_channel_layer().group_send(LOBBY_GROUP, {"type": "lobby.html", "html": fragment})

    assert await guest_socket.receive_from() == fragment


@pytest.mark.slow
async def test_a_burst_of_refresh_requests_costs_one_render_a_second(
    guest_socket: WebsocketCommunicator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lobby renders its list for a client that asks, but a client asking in a loop gets
    at most one render per ``refresh_seconds``, the last request answered after the window."""
    from games.live.lobby_socket import LobbyConsumer

    await guest_socket.receive_from()
    renders = []
    render = LobbyConsumer._render

    def counted(self: LobbyConsumer) -> str:
        renders.append(1)
        return render(self)

    monkeypatch.setattr(LobbyConsumer, "_render", counted)
    monkeypatch.setattr(LobbyConsumer, "refresh_seconds", 0.5, raising=False)
    for _ in range(40):
        await guest_socket.send_to(text_data='{"type": "refresh"}')
    frames = []
    while not await guest_socket.receive_nothing(timeout=0.8):
        frames.append(await guest_socket.receive_from())
    assert 1 <= len(renders) <= 3, len(renders)
    assert 1 <= len(frames) <= 3 and 'id="lobby-tables"' in frames[-1]
