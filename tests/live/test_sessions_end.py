"""A socket lives no longer than the session it was opened with: a log-out (that session), a
new password or a deactivated account (every session of the user) closes the table and lobby
sockets opened before, so that a copied session signed out over HTTP plays and chats no more."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client

from games import actions
from games.live.session_groups import CLOSE_SESSION_ENDED
from tests.play import seed_of, user_table
from tests.sockets import drain, lobby_socket, socket

pytestmark = pytest.mark.django_db(transaction=True)


async def _open(cookie: str, table_id: int) -> list[Any]:
    table, lobby = socket(table_id, cookie), lobby_socket(cookie)
    for ws in (table, lobby):
        assert (await ws.connect(timeout=5))[0]
        await drain(ws)
    return [table, lobby]


async def _closed(ws: Any) -> bool:
    output = await ws.receive_output(timeout=5)
    while output["type"] != "websocket.close":
        output = await ws.receive_output(timeout=5)
    return bool(output.get("code") == CLOSE_SESSION_ENDED)


async def _stays_open(ws: Any, seconds: float = 0.5) -> bool:
    """No close arrives within ``seconds`` (a frame may: the server's heartbeat tells the lobby
    when the number of players online changes, whatever the test is doing)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await ws.receive_nothing(timeout=max(0.0, deadline - loop.time())):
        if (await ws.receive_output(timeout=5))["type"] == "websocket.close":
            return False
    return True


def _setup() -> tuple[int, Any, Client, Client]:
    table, users = user_table("duz")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(4))
    clients = []
    for _ in range(2):  # two log-ins of one player (a copied session, another device)
        client = Client()
        client.force_login(users[0])
        clients.append(client)
    return table.pk, users[0], clients[0], clients[1]


def _cookie(client: Client) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


async def test_a_log_out_closes_the_sockets_of_that_session_alone() -> None:
    table_id, _user, copied, other = await database_sync_to_async(_setup)()
    of_copied = await _open(_cookie(copied), table_id)
    of_other = await _open(_cookie(other), table_id)
    try:
        await database_sync_to_async(copied.post)("/accounts/logout/")
        for ws in of_copied:
            assert await _closed(ws)
        for ws in of_other:
            assert await ws.receive_nothing(timeout=0.5)  # still open
    finally:
        for ws in of_copied + of_other:
            await ws.disconnect()


@pytest.mark.parametrize("change", ["password", "deactivated"])
async def test_a_new_password_or_a_deactivated_account_closes_every_socket(change: str) -> None:
    table_id, user, first, second = await database_sync_to_async(_setup)()
    sockets = await _open(_cookie(first), table_id) + await _open(_cookie(second), table_id)

    def end() -> None:
        if change == "password":
            user.set_password("a new one 2026")
        else:
            user.is_active = False
        user.save()

    try:
        await database_sync_to_async(end)()
        for ws in sockets:
            assert await _closed(ws)
    finally:
        for ws in sockets:
            await ws.disconnect()


async def test_a_log_in_saving_last_login_closes_nothing() -> None:
    table_id, user, first, _second = await database_sync_to_async(_setup)()
    sockets = await _open(_cookie(first), table_id)
    try:

        def log_in_again() -> None:
            Client().force_login(user)  # saves last_login alone

        await database_sync_to_async(log_in_again)()
        for ws in sockets:
            assert await _stays_open(ws)
    finally:
        for ws in sockets:
            await ws.disconnect()
