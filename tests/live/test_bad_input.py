"""Bad input is refused cheaply and clearly, and never takes a socket down.

Oversized chat is refused on its size before any cleaning, and a user over the rate limit
before their text is looked at; a socket message larger than the protocol needs is refused
unread (and the servers cap messages far past that). Inputs that could crash a socket's
handler (deeply nested JSON, a hand that does not exist, an anonymous "ready") get a
refusal and the socket stays open; should a handler fail all the same, the socket answers
with a generic refusal, and if a socket dies its presence goes with it."""

from __future__ import annotations

import asyncio
import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils import timezone

from games import actions, chat, limits
from games.actions import requests
from games.errors import GameError
from games.live.table_socket import TableConsumer
from games.models import ChatMessage, Hand, Match, Presence, Watcher
from tests.live_daphne import serve_command_lines
from tests.play import seed_of, user_table
from tests.sockets import PATIENCE, Players, TableSockets, drain, lobby_sockets, socket
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def refusals(frames: list[str]) -> list[str]:
    return [m for f in frames for m in re.findall(r'data-error="([^"]+)"', f)]


def nested(depth: int) -> str:
    return '{"type": "move", "hand": 1, "move": ' + "[" * depth + "]" * depth + "}"


# ----------------------------------------------------------------------------- chat
def test_chat_is_refused_on_its_size_and_rate_before_its_text_is_cleaned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table, users = user_table("duz")
    cleaned: list[Any] = []
    real_clean = chat.clean_text

    def clean_text(text: Any) -> str:
        cleaned.append(text)
        return real_clean(text)

    monkeypatch.setattr(chat, "clean_text", clean_text)
    for text in ("x" * 1_000_000, " " * (chat.MAX_TYPED + 1)):
        with pytest.raises(GameError) as refused:
            actions.send_chat(table.pk, users[0], text=text)
        assert refused.value.code == "chat_too_long"
    with pytest.raises(GameError) as refused:
        actions.send_chat(table.pk, users[0], text=["a list"])
    assert refused.value.code == "bad_chat"
    assert cleaned == []
    # What typing may add beyond the limit (spaces round it, decomposed letters) still passes
    # the size check, and is cleaned.
    decomposed = "s\u0327" * chat.MAX_LENGTH  # "ş" typed as s + a combining cedilla
    assert actions.send_chat(table.pk, users[0], text=decomposed).text == "ş" * chat.MAX_LENGTH
    for n in range(chat.RATE_COUNT - 1):
        actions.send_chat(table.pk, users[0], text=f"line {n}")
    cleaned.clear()
    with pytest.raises(GameError) as refused:
        actions.send_chat(table.pk, users[0], text="y" * chat.MAX_LENGTH)
    assert refused.value.code == "chat_too_fast"
    assert cleaned == []
    assert ChatMessage.objects.filter(user=users[0]).count() == chat.RATE_COUNT


# ----------------------------------------------------------------------------- sockets
async def _still_usable(ws: WebsocketCommunicator) -> None:
    await ws.send_to(text_data=json.dumps({"type": "refresh"}))
    # The answer may wait for the end of a second (a refresh is answered once a second).
    frames = [await ws.receive_from()]
    while 'id="table-live"' not in frames[-1]:
        frames.append(await ws.receive_from())


@pytest.mark.slow
@pytest.mark.players("duz", seed=61)
async def test_an_oversized_table_socket_message_is_refused_unread_and_the_socket_stays(
    players: Players, table_socket: TableSockets
) -> None:
    ws = await table_socket(players.table_id, players.cookies[0])
    await drain(ws)
    chat_text = json.dumps({"type": "chat", "text": "z" * 1_000_000})
    for message in ("x" * (limits.MAX_MESSAGE_LENGTH + 1), chat_text):
        await ws.send_to(text_data=message)
        assert refusals(await drain(ws)) == ["too_big"]
    await ws.send_to(bytes_data=b"{}")
    assert refusals(await drain(ws)) == ["bad_move"]
    await _still_usable(ws)
    # A message of the largest size the protocol needs is read.
    layout = ["r13"] * 40
    arrange = {"type": "arrange", "hand": players.hand.pk, "layout": layout}
    assert len(json.dumps(arrange)) < limits.MAX_MESSAGE_LENGTH
    await ws.send_to(text_data=json.dumps(arrange))
    assert refusals(await drain(ws)) == ["bad_layout"]
    await ws.disconnect()
    assert not await database_sync_to_async(ChatMessage.objects.exists)()


@pytest.mark.django_db(transaction=True)
async def test_an_oversized_lobby_socket_message_is_refused_and_the_socket_stays() -> None:
    async with lobby_sockets("") as [(ws, _first)]:
        await drain(ws)
        await ws.send_to(text_data="x" * (limits.MAX_MESSAGE_LENGTH + 1))
        frames = await drain(ws)
        assert len(frames) == 1 and 'data-error="too_big"' in frames[0]
        assert 'id="lobby-tables"' not in frames[0]
        await ws.send_to(text_data="refresh")
        assert any('id="lobby-tables"' in f for f in await drain(ws))


def test_the_servers_cap_a_websocket_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """Daphne's own cap (it closes the socket, 1009) is set far above what the consumers
    refuse, in the Procfile and in ``manage.py serve``."""
    from games.management.commands import serve

    cap = str(serve.WEBSOCKET_MAX_BYTES)
    assert limits.MAX_MESSAGE_LENGTH < serve.WEBSOCKET_MAX_BYTES <= 128 * 1024
    web = next(
        line for line in (BASE_DIR / "Procfile").read_text().splitlines() if line.startswith("web:")
    )
    daphne = web.split("daphne", 1)[1].split()
    for option in ("--websocket-max-message-size", "--websocket-max-frame-size"):
        assert daphne[daphne.index(option) + 1] == cap, web

    daphnes = serve_command_lines(monkeypatch, "--processes", "2")
    assert len(daphnes) == 2
    for command in daphnes:
        for option in ("--websocket-max-message-size", "--websocket-max-frame-size"):
            assert command[command.index(option) + 1] == cap, command


@pytest.mark.slow
@pytest.mark.players("duz", seed=61)
async def test_nested_json_unknown_hands_and_an_anonymous_ready_are_refused_on_the_socket(
    players: Players, table_socket: TableSockets
) -> None:
    ws = await table_socket(players.table_id, players.cookies[0])
    await drain(ws)
    await ws.send_to(text_data=nested(3000))
    assert refusals(await drain(ws)) == ["bad_move"]
    for hand in (999999, -1, 0, 10**30, 2**63):
        move = {"type": "move", "hand": hand, "move": {"do": "draw"}}
        await ws.send_to(text_data=json.dumps(move))
        assert refusals(await drain(ws)) == ["no_hand"], hand
        arrange = {"type": "arrange", "hand": hand, "layout": []}
        await ws.send_to(text_data=json.dumps(arrange))
        assert refusals(await drain(ws)) == ["no_hand"], hand
    await _still_usable(ws)
    await ws.disconnect()
    hand = await database_sync_to_async(Hand.objects.get)(pk=players.hand.pk)
    assert hand.version == 0

    # A spectator's "ready" while the table waits between hands.
    def pause() -> None:
        Match.objects.filter(table_id=players.table_id).update(
            next_hand_at=timezone.now() + timedelta(seconds=30)
        )

    await database_sync_to_async(pause)()
    spectator = await table_socket(players.table_id)
    await drain(spectator)
    await spectator.send_to(text_data=json.dumps({"type": "ready"}))
    assert refusals(await drain(spectator)) == ["not_seated"]
    await _still_usable(spectator)


def test_ready_refuses_an_anonymous_visitor() -> None:
    table, _users = user_table("duz")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(62))
    Match.objects.filter(table=table).update(next_hand_at=timezone.now() + timedelta(seconds=30))
    with pytest.raises(GameError) as refused:
        actions.ready(table.pk, AnonymousUser())  # type: ignore[arg-type]
    assert refused.value.code == "not_seated"


def test_the_actions_refuse_a_hand_that_does_not_exist() -> None:
    table, users = user_table("duz")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(63))
    for hand in (999999, -1, 10**30, "1", None, 1.0):
        for call in (
            lambda h: actions.submit(h, 0, {"do": "draw"}, by=users[0]),
            lambda h: actions.submit(h, 0, {"do": "draw", "layout": []}, by=users[0]),
            lambda h: actions.submit(h, 0, {"do": "open", "tiles": ["r1"]}, by=users[0]),
            lambda h: actions.play(h, 0, {"do": "draw"}, by=users[0]),
            lambda h: actions.arrange(h, 0, [], by=users[0]),
        ):
            with pytest.raises(GameError) as refused:
                call(hand)
            assert refused.value.code == "no_hand", hand


@pytest.mark.players("duz", seed=61)
async def test_a_failing_handler_answers_a_generic_refusal_and_the_socket_stays(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    players: Players,
    table_socket: TableSockets,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(requests, "rematch", broken)
    ws = await table_socket(players.table_id, players.cookies[0])
    await drain(ws)
    await ws.send_to(text_data=json.dumps({"type": "rematch"}))
    assert refusals(await drain(ws)) == ["server_error"]
    await _still_usable(ws)
    await ws.disconnect()
    # The bug is in the log, with its traceback, for someone to fix.
    assert any(r.exc_info and "a bug" in str(r.exc_info[1]) for r in caplog.records)


@pytest.mark.slow
@pytest.mark.players("duz", seed=61)
async def test_a_socket_that_dies_takes_its_presence_and_group_with_it(
    monkeypatch: pytest.MonkeyPatch, players: Players
) -> None:
    """A group message whose handler fails ends the socket (1011): its Presence and Watcher
    rows and its place in the table's group go with it, as on a close. (Both sockets die in
    the test: they are built here, not by ``table_socket``, which would close them.)"""

    async def broken(self: Any, event: dict[str, Any]) -> None:
        raise RuntimeError("a bug")

    table_id = players.table_id
    ws, spectator = socket(table_id, players.cookies[0]), socket(table_id)
    for opened in (ws, spectator):
        assert (await opened.connect())[0]
        await drain(opened)
    await drain(ws)
    assert await database_sync_to_async(Presence.objects.count)() == 1
    assert await database_sync_to_async(Watcher.objects.count)() == 1
    layer = get_channel_layer()
    assert await group_size(layer, actions.table_group(table_id)) == 2
    monkeypatch.setattr(TableConsumer, "table_changed", broken)
    await layer.group_send(
        actions.table_group(table_id), {"type": "table.changed", "table": table_id}
    )
    for dying in (ws, spectator):  # each consumer's task ends with the handler's error
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(dying.future, PATIENCE)
    assert await database_sync_to_async(Presence.objects.count)() == 0
    assert await database_sync_to_async(Watcher.objects.count)() == 0
    assert await group_size(layer, actions.table_group(table_id)) == 0


async def group_size(layer: Any, group: str) -> int:
    """How many channels the channel layer holds in ``group`` (in memory, or on Redis).

    On Redis the count comes through a client of its own: a command on the layer's own
    connections, from the test's loop, can leave the layer's reader stuck in its pop, and
    the loop's close then waits on it forever."""
    if hasattr(layer, "groups"):
        return len(layer.groups.get(group, {}))
    client = aioredis.from_url(os.environ["REDIS_URL"])
    try:
        return int(await client.zcard(layer._group_key(group)))
    finally:
        await client.aclose()


def test_the_http_endpoints_refuse_unknown_hands_and_nested_json(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(64))
    client = signed_in(users[0], raise_request_exception=False)
    url = reverse("table_move", args=[table.pk])
    for hand in (999999, 10**30, -5):
        payload = json.dumps({"type": "move", "hand": hand, "move": {"do": "draw"}})
        response = client.post(url, {"payload": payload})
        assert response.status_code == 200
        assert 'data-error="no_hand"' in response.content.decode()
    for empty in ({"payload": ""}, {}):
        response = client.post(url, empty)
        assert response.status_code == 200 and 'data-error="bad_move"' in response.content.decode()
    response = client.post(url, {"payload": nested(3000)})
    assert response.status_code == 200 and 'data-error="bad_move"' in response.content.decode()
    chat_url = reverse("table_chat", args=[table.pk])
    payload = '{"type": "chat", "text": ' + "[" * 3000 + "]" * 3000 + "}"
    response = client.post(chat_url, {"payload": payload})
    assert response.status_code == 200 and 'data-error="bad_chat"' in response.content.decode()
    # Larger than any message needs: refused unread.
    for endpoint in (url, chat_url):
        big = json.dumps({"type": "chat", "text": "x" * limits.MAX_MESSAGE_LENGTH})
        response = client.post(endpoint, {"payload": big})
        assert response.status_code == 200 and 'data-error="too_big"' in response.content.decode()
    assert not ChatMessage.objects.exists()
    for kind in ("mute", "unmute"):
        for user in (10**30, -1, "x", 999999):
            mute = json.dumps({"type": kind, "user": user})
            response = client.post(chat_url, {"payload": mute})
            assert response.status_code == 200, (kind, user)
            assert 'data-error="bad_chat"' in response.content.decode(), (kind, user)
    assert match.hands.get().version == 0


def test_a_body_larger_than_any_form_is_refused_before_it_is_read(signed_in: SignedIn) -> None:
    """Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE (400) from its length alone;
    the hand is untouched."""
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(65))
    client = signed_in(users[0], raise_request_exception=False)
    url = reverse("table_move", args=[table.pk])
    huge = "x" * (300 * 1024)
    for body in ({"payload": huge}, {"text": huge}):
        response = client.post(url, body)
        assert response.status_code == 400
    response = client.post(url, huge, content_type="application/json")
    assert response.status_code == 400
    assert match.hands.get().version == 0


def test_a_body_refused_for_its_size_is_logged_as_one_warning_with_its_size(
    caplog: pytest.LogCaptureFixture,
    signed_in: SignedIn,
) -> None:
    table, users = user_table("duz")
    client = signed_in(users[0], raise_request_exception=False)
    url = reverse("table_move", args=[table.pk])
    with caplog.at_level("INFO", logger="django.security.RequestDataTooBig"):
        response = client.post(url, "x" * (300 * 1024), content_type="application/json")
    assert response.status_code == 400
    records = [r for r in caplog.records if r.name == "django.security.RequestDataTooBig"]
    assert len(records) == 1
    record = records[0]
    assert record.levelname == "WARNING" and not record.exc_info
    assert str(300 * 1024) in record.getMessage() and url in record.getMessage()
