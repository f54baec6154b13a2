"""A socket lives no longer than the session it was opened with: a log-out (that session), a
new password or a deactivated account (every session of the user) closes the table and lobby
sockets opened before, so that a copied session signed out over HTTP plays and chats no more."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from games.live.session_groups import CLOSE_SESSION_ENDED
from tests.sockets import (
    Players,
    TableSockets,
    cookie_of,
    drain,
    lobby_sockets,
)
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def log_ins(players: Players, signed_in: SignedIn) -> list[Client]:
    """Two log-ins of seat 0's player (a copied session, another device)."""
    return [signed_in(players.users[0]) for _ in range(2)]


async def _open(table_socket: TableSockets, table_id: int, client: Client, lobby: Any) -> list[Any]:
    """The table socket of ``client``'s session, opened beside its lobby socket, and both
    read to quiet."""
    table = await table_socket(table_id, cookie_of(client))
    for ws in (table, lobby):
        await drain(ws)
    return [table, lobby]


async def _closed(ws: Any) -> bool:
    output = await ws.receive_output()
    while output["type"] != "websocket.close":
        output = await ws.receive_output()
    return bool(output.get("code") == CLOSE_SESSION_ENDED)


async def _stays_open(ws: Any, seconds: float = 0.5) -> bool:
    """No close arrives within ``seconds`` (a frame may: the server's heartbeat tells the lobby
    when the number of players online changes, whatever the test is doing)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await ws.receive_nothing(timeout=max(0.0, deadline - loop.time())):
        if (await ws.receive_output())["type"] == "websocket.close":
            return False
    return True


@pytest.mark.slow
@pytest.mark.players("duz", seed=4)
async def test_a_log_out_closes_the_sockets_of_that_session_alone(
    players: Players, log_ins: list[Client], table_socket: TableSockets
) -> None:
    copied, other = log_ins
    async with lobby_sockets(cookie_of(copied), cookie_of(other)) as lobbies:
        [(copied_lobby, _), (other_lobby, _)] = lobbies
        of_copied = await _open(table_socket, players.table_id, copied, copied_lobby)
        of_other = await _open(table_socket, players.table_id, other, other_lobby)
        await database_sync_to_async(copied.post)("/accounts/logout/")
        for ws in of_copied:
            assert await _closed(ws)
        for ws in of_other:
            assert await ws.receive_nothing(timeout=0.5)  # still open


@pytest.mark.slow
@pytest.mark.players("duz", seed=4)
@pytest.mark.parametrize("change", ["password", "deactivated"])
async def test_a_new_password_or_a_deactivated_account_closes_every_socket(
    change: str, players: Players, log_ins: list[Client], table_socket: TableSockets
) -> None:
    user, (first, second) = players.users[0], log_ins
    async with lobby_sockets(cookie_of(first), cookie_of(second)) as lobbies:
        [(first_lobby, _), (second_lobby, _)] = lobbies
        sockets = await _open(table_socket, players.table_id, first, first_lobby)
        sockets += await _open(table_socket, players.table_id, second, second_lobby)

        def end() -> None:
            if change == "password":
                user.set_password("a new one 2026")
            else:
                user.is_active = False
            user.save()

        await database_sync_to_async(end)()
        for ws in sockets:
            assert await _closed(ws)


@pytest.mark.slow
@pytest.mark.players("duz", seed=4)
async def test_a_log_in_saving_last_login_closes_nothing(
    players: Players, log_ins: list[Client], signed_in: SignedIn, table_socket: TableSockets
) -> None:
    user, first = players.users[0], log_ins[0]
    async with lobby_sockets(cookie_of(first)) as [(lobby, _)]:
        sockets = await _open(table_socket, players.table_id, first, lobby)

        def log_in_again() -> None:
            signed_in(user)  # saves last_login alone

        await database_sync_to_async(log_in_again)()
        for ws in sockets:
            assert await _stays_open(ws)
