"""A table's live socket: presence for the away rule, and a fresh fragment on every change."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from games import engine, selectors, services
from games.catalog import ensure_variants
from games.models import Presence, Seat, Table
from okeysite.asgi import application

from .helpers import seed_of, user_table

pytestmark = pytest.mark.django_db(transaction=True)


def socket(table_id: int, cookie: str = "", query: str = "") -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost:8000"), (b"host", b"localhost:8000")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    path = f"/ws/tables/{table_id}/" + (f"?{query}" if query else "")
    return WebsocketCommunicator(application, path, headers=headers)


def cookie_for(user: object) -> str:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def version_of(html: str) -> int:
    match = re.search(r'data-version="(\d+)"', html)
    assert match, html
    return int(match.group(1))


async def test_it_tracks_presence_and_pushes_each_move() -> None:
    def setup() -> tuple[int, list[str], str, str, list[object]]:
        table, users = user_table("duz")
        match = services.start_match(table, by=services.SYSTEM, seed=seed_of(41))
        eng = match.hands.get().engine_hand()
        mine = engine.format_tile(eng.racks[1][0])
        return table.pk, [cookie_for(u) for u in users], mine, match.hands.get().seed, users

    table_id, cookies, my_tile, seed, users = await database_sync_to_async(setup)()
    ws = socket(table_id, cookies[1])
    connected, _ = await ws.connect(timeout=5)
    assert connected
    try:
        html = await ws.receive_from(timeout=5)
        assert 'id="table-live"' in html and 'hx-swap-oob="true"' in html
        assert f'data-tile="{my_tile}"' in html.split('class="rack"')[1].split("rack-tools")[0]
        assert seed not in html
        assert version_of(html) == 0
        rows = await database_sync_to_async(list)(
            Presence.objects.filter(seat__table_id=table_id).values_list("seat__position", "user")
        )
        assert rows == [(1, users[1].pk)]

        def move() -> None:
            hand = selectors.current_hand(Table.objects.get(pk=table_id))
            assert hand is not None
            tile = engine.format_tile(hand.engine_hand().racks[0][0])
            services.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0])

        await database_sync_to_async(move)()
        pushed = await ws.receive_from(timeout=5)
        assert version_of(pushed) == 1
    finally:
        await ws.disconnect()
    seat = await database_sync_to_async(Seat.objects.get)(table_id=table_id, position=1)
    assert seat.last_seen is not None
    assert not await database_sync_to_async(Presence.objects.filter(seat=seat).exists)()


async def test_it_refuses_a_private_table_without_the_invite() -> None:
    def setup() -> tuple[int, str]:
        ensure_variants()
        table = services.create_table(variant="okey51", created_by=None, is_private=True)
        return table.pk, table.invite_token

    table_id, token = await database_sync_to_async(setup)()
    ws = socket(table_id)
    connected, _ = await ws.connect(timeout=5)
    assert not connected
    await ws.disconnect()
    ws = socket(table_id, query=f"invite={token}")
    connected, _ = await ws.connect(timeout=5)
    assert connected
    await ws.receive_from(timeout=5)
    await ws.disconnect()


async def test_it_notices_changes_made_by_another_process() -> None:
    """A move whose broadcast never arrives (another process, a dropped message) still shows."""
    from games.consumers import TableConsumer

    def setup() -> tuple[int, str, object]:
        table, users = user_table("okey51")
        services.start_match(table, by=services.SYSTEM, seed=seed_of(42))
        return table.pk, cookie_for(users[1]), users[0]

    table_id, cookie, starter = await database_sync_to_async(setup)()
    TableConsumer.watch_seconds = 0.2
    ws = socket(table_id, cookie)
    try:
        connected, _ = await ws.connect(timeout=5)
        assert connected
        assert version_of(await ws.receive_from(timeout=5)) == 0

        def silent_move() -> None:
            from unittest import mock

            hand = selectors.current_hand(Table.objects.get(pk=table_id))
            assert hand is not None
            tile = engine.format_tile(hand.engine_hand().racks[0][0])
            with mock.patch.object(services, "_publish"):  # the broadcast is lost
                services.play(hand, 0, {"do": "discard", "tile": tile}, by=starter)

        await database_sync_to_async(silent_move)()
        assert version_of(await ws.receive_from(timeout=5)) == 1
    finally:
        TableConsumer.watch_seconds = 2.0
        await ws.disconnect()
