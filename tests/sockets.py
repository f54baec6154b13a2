"""Socket clients for the tests: a table's and the lobby's sockets opened through the real ASGI
application (``WebsocketCommunicator``), a signed-in player's session cookie, players seated at a
table for a socket test, the frames that arrive, and what a test needs to watch from outside
(the SQL statements every thread runs, a ``table.changed`` message lost on its way). Not a test
module; the ``table_socket`` and ``players`` fixtures (tests/conftest.py) are made of it."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from games import actions
from games.actions import broadcast
from games.live import server_tasks
from games.models import Hand
from okeysite.asgi import application
from tests.play import connect, seed_of, user_table
from tests.users import client_for

# How long a test waits for a frame, a close or a handshake that is sure to come. A passing test
# never waits it out, so it is generous: on a loaded machine (a CI host running other jobs) a
# socket's first frame has taken more than the 5 s the tests once allowed. A test that means
# "nothing arrives" says so with ``receive_nothing`` and its own short spell.
PATIENCE = 60.0


class Communicator(WebsocketCommunicator):
    """channels' test communicator with :data:`PATIENCE` as every wait's default (its own is
    one second), so that a test names a timeout only where the time is what it checks; and
    with the server's database connections closed after each call in a thread, as in daphne.
    channels' communicator turns that off while it runs the application (for tests inside a
    transaction), and then every thread that read kept its connection: on PostgreSQL the
    process's pool ran dry after a few dozen socket tests ("couldn't get a connection")."""

    async def send_input(self, message: Any) -> Any:
        return await ApplicationCommunicator.send_input(self, message)

    async def receive_output(self, timeout: float = PATIENCE) -> Any:
        return await ApplicationCommunicator.receive_output(self, timeout)

    async def connect(self, timeout: float = PATIENCE) -> Any:
        return await super().connect(timeout)

    async def receive_from(self, timeout: float = PATIENCE) -> Any:
        return await super().receive_from(timeout)

    async def receive_json_from(self, timeout: float = PATIENCE) -> Any:
        return await super().receive_json_from(timeout)

    async def disconnect(self, code: int = 1000, timeout: float = PATIENCE) -> None:
        await super().disconnect(code, timeout)


def socket(
    table_id: int, cookie: str = "", query: str = "", *, address: str = ""
) -> WebsocketCommunicator:
    """A table socket, not yet connected; ``address``: the client's IP address as the server
    sees it (the communicator's own otherwise)."""
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    path = f"/ws/tables/{table_id}/" + (f"?{query}" if query else "")
    ws = Communicator(application, path, headers=headers)
    if address:
        ws.scope["client"] = [address, 50000]
    return ws


def cookie_for(user: object) -> str:
    """The ``Cookie`` header of a new session signed in as ``user``."""
    return cookie_of(client_for(user))


def cookie_of(client: Client) -> str:
    """The ``Cookie`` header of the session ``client`` is signed in with."""
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


class TableSockets:
    """The table sockets a test opens (the ``table_socket`` fixture): each one connected, its
    first frame (the table as it is) taken unless the test reads it itself, and every one
    closed when the test ends (one the test closed already, or the server did, closes again
    quietly; one whose consumer failed raises its error there, as the test's own close would)."""

    def __init__(self) -> None:
        self.opened: list[WebsocketCommunicator] = []

    async def __call__(
        self,
        table_id: int,
        cookie: str = "",
        query: str = "",
        first_frame: bool = True,
        *,
        address: str = "",
    ) -> WebsocketCommunicator:
        ws = socket(table_id, cookie, query, address=address)
        self.opened.append(ws)
        connected, _ = await ws.connect()
        assert connected
        if first_frame:
            await ws.receive_from()
        return ws

    async def close_all(self) -> None:
        try:
            for ws in self.opened:
                await ws.disconnect()
        finally:
            await server_tasks.stop()


@dataclass
class Players:
    """Players seated at a table, with what an async test reads of them on its event loop,
    where the ORM is refused: the table's id, the users seat by seat, each one's session
    cookie, and the hand of their match as it was made (``match_hand``: None before a match)."""

    table_id: int
    users: list[Any]
    cookies: list[str]
    match_hand: Hand | None = None

    @property
    def hand(self) -> Hand:
        assert self.match_hand is not None, "no match started: give the players a seed"
        return self.match_hand


def players_at_table(
    variant: str = "duz",
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    present: bool = False,
) -> Players:
    """Four new users at a new table of ``variant`` (``tests.play.user_table``), each signed in;
    ``present``: each with a table socket open (Presence rows: ``tests.play.connect``);
    ``seed``: their match started, its first hand dealt from ``seed_of(seed)``."""
    table, users = user_table(variant, options)
    if present:
        connect(table, users)
    hand = None
    if seed is not None:
        hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(seed)).hands.get()
    return Players(table.pk, users, [cookie_for(u) for u in users], hand)


async def drain(ws: Any, timeout: float = 0.3) -> list[str]:
    """Every frame that arrives until the socket is quiet for ``timeout`` seconds."""
    frames = []
    while not await ws.receive_nothing(timeout=timeout):
        frames.append(await ws.receive_from())
    return frames


async def receive_until(
    ws: Any, wanted: Callable[[str], bool], timeout: float = PATIENCE
) -> list[str]:
    """Every frame that arrives up to and including the first one ``wanted`` accepts (the
    event a test waits for, rather than a quiet spell of so many seconds); fails after
    ``timeout`` seconds without it."""
    frames: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            frames.append(await ws.receive_from(timeout=timeout))
            if wanted(frames[-1]):
                return frames


def board_at(hand_id: int, version: int) -> Callable[[str], bool]:
    """Accepts the board frame of hand ``hand_id`` at ``version`` or later."""

    def wanted(frame: str) -> bool:
        return (
            'id="table-live"' in frame
            and f'data-hand="{hand_id}"' in frame
            and version_of(frame) >= version
        )

    return wanted


def version_of(html: str) -> int:
    match = re.search(r'data-version="(\d+)"', html)
    assert match, html
    return int(match.group(1))


class QueryCounter:
    """Counts the SQL statements every thread of this process runs (socket work runs in
    worker threads, where a per-connection capture would not see it)."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def __enter__(self) -> QueryCounter:
        from django.db.backends import utils

        self._patches = []
        for name in ("execute", "executemany"):
            original = getattr(utils.CursorWrapper, name)

            def counted(cursor: Any, sql: Any, *args: Any, _original: Any = original) -> Any:
                self.statements.append(str(sql))
                return _original(cursor, sql, *args)

            self._patches.append((name, original))
            setattr(utils.CursorWrapper, name, counted)
        return self

    def __exit__(self, *exc: object) -> None:
        from django.db.backends import utils

        for name, original in self._patches:
            setattr(utils.CursorWrapper, name, original)


def lobby_socket(cookie: str = "", *, address: str = "") -> WebsocketCommunicator:
    """A lobby socket, not yet connected (``address`` as for :func:`socket`)."""
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    ws = Communicator(application, "/ws/lobby/", headers=headers)
    if address:
        ws.scope["client"] = [address, 50000]
    return ws


@contextlib.asynccontextmanager
async def lobby_sockets(*cookies: str) -> AsyncIterator[list[tuple[WebsocketCommunicator, str]]]:
    """Open a lobby socket per cookie ("" for a guest); each comes with its first frame."""
    opened: list[tuple[WebsocketCommunicator, str]] = []
    try:
        for cookie in cookies:
            ws = lobby_socket(cookie)
            assert (await ws.connect())[0]
            opened.append((ws, await ws.receive_from()))
        yield opened
    finally:
        for ws, _first in opened:
            await ws.disconnect()
        await server_tasks.stop()


def live_frames(frames: list[str]) -> list[str]:
    return [f for f in frames if 'id="table-live"' in f]


class Loss:
    """Once armed, every ``table.changed`` message is lost on its way (the others go out)."""

    def __init__(self) -> None:
        self.armed = False
        self.lost: list[dict[str, Any]] = []


@pytest.fixture
def loss(monkeypatch: pytest.MonkeyPatch) -> Loss:
    found = Loss()
    send = broadcast.send

    def lossy(group: str, message: dict[str, Any]) -> None:
        if found.armed and message.get("type") == "table.changed":
            found.lost.append(message)
            return
        send(group, message)

    monkeypatch.setattr(broadcast, "send", lossy)
    return found
