"""Table chat over the table socket: lines reach every socket escaped and outside the board,
canned phrases in each reader's language, mutes per reader (every tab of theirs), chat off and
private tables, staff deletion dropping the line from open pages, and a rematch emptying the
open panels."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import translation

from games import actions, chat
from games.errors import NotAllowed
from games.models import ChatMessage, Table
from tests.markup import chat_panel, page_of, texts
from tests.play import seed_of
from tests.sockets import Players, TableSockets, cookie_for, drain, players_at_table
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def chat_frames(frames: list[str]) -> list[str]:
    return [f for f in frames if "chat-line" in f or 'id="chat-lines"' in f]


@pytest.fixture
def two_rude_lines(players: Players) -> list[int]:
    """Two lines said at the players' table (no match yet), by seats 0 and 1: their ids."""
    said = [(0, "rude words"), (1, "more rude words")]
    return [actions.send_chat(players.table_id, players.users[p], text=t).pk for p, t in said]


@pytest.fixture
def boss(transactional_db: None) -> Any:
    """A superuser, for the admin."""
    return make_user("boss", superuser=True)


@pytest.fixture
def fan_cookie(transactional_db: None) -> str:
    """A signed-in spectator's."""
    return cookie_for(make_user("fan"))


@pytest.fixture
def guest_cookie(transactional_db: None) -> str:
    """The only user: a guest who came with the invite."""
    return cookie_for(make_user("guest"))


@pytest.fixture
def muted_chat_table(transactional_db: None) -> Players:
    """Four players (no move timer) whose match has ended (abandoned: the table is open
    again), with a line said by seat 1 and seat 0's mute of seat 2 made during it."""
    players = players_at_table("duz", seed=1011, options={"timer": 0})
    actions.send_chat(players.table_id, players.users[1], text="first match talk")
    actions.mute_chat(players.table_id, players.users[0], players.users[2].pk)
    actions.end_match(players.hand.match, by=actions.SYSTEM)
    return players


# ----------------------------------------------------------------------------- the admin
async def test_staff_delete_a_line_in_the_admin_and_open_pages_drop_it(
    players: Players,
    two_rude_lines: list[int],
    boss: Any,
    signed_in: SignedIn,
    table_socket: TableSockets,
) -> None:
    ids = two_rude_lines
    ws = await table_socket(players.table_id, players.cookies[2])
    await drain(ws)

    def delete_one_then_the_other() -> None:
        admin = signed_in(boss)
        url = reverse("admin:games_chatmessage_delete", args=[ids[0]])
        assert admin.post(url, {"post": "yes"}).status_code == 302
        changelist = reverse("admin:games_chatmessage_changelist")
        response = admin.post(
            changelist,
            {"action": "delete_selected", "_selected_action": [ids[1]], "post": "yes"},
        )
        assert response.status_code == 302

    await database_sync_to_async(delete_one_then_the_other)()
    frames = await drain(ws)
    for pk in ids:
        assert f'<li id="chat-line-{pk}" hx-swap-oob="delete"></li>' in frames
    assert not await database_sync_to_async(ChatMessage.objects.exists)()


# ----------------------------------------------------------------------------- the socket
@pytest.mark.slow
@pytest.mark.players("duz", seed=1005)
async def test_a_message_reaches_every_socket_escaped_and_outside_the_board(
    players: Players, fan_cookie: str, table_socket: TableSockets
) -> None:
    player = await table_socket(players.table_id, players.cookies[0])
    fan = await table_socket(players.table_id, fan_cookie)
    anonymous = await table_socket(players.table_id)
    sockets = [player, fan, anonymous]
    for ws in sockets:
        await drain(ws)
    # A seated player and a spectator talk over their sockets.
    await player.send_json_to({"type": "chat", "text": "<script>alert(1)</script>"})
    await drain(player, 0.5)
    await fan.send_json_to({"type": "chat", "text": "  nice move  "})
    for ws in sockets:
        frames = chat_frames(await drain(ws, 0.5))
        joined = "".join(frames)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in joined or ws is player
        assert "<script>" not in joined
        assert "nice move" in joined
        assert all('id="table-live"' not in f for f in frames)
        assert all('hx-swap-oob="beforeend"' in f for f in frames)
    stored = await database_sync_to_async(list)(
        ChatMessage.objects.order_by("id").values_list("text", "match_id")
    )
    assert [text for text, _match in stored] == ["<script>alert(1)</script>", "nice move"]
    assert all(match is not None for _text, match in stored)  # the match being played
    # An anonymous reader cannot send: refused on their socket alone, nothing stored.
    await anonymous.send_json_to({"type": "chat", "text": "hi"})
    refusal = await drain(anonymous)
    assert any('id="move-error"' in f and 'data-error="sign_in"' in f for f in refusal)
    assert await drain(player) == []
    # Too long: refused, and so is an empty message.
    await fan.send_json_to({"type": "chat", "text": "x" * 201})
    await fan.send_json_to({"type": "chat", "text": "   "})
    errors = await drain(fan, 1.0)  # both refusals, on a loaded machine too
    assert any('data-error="chat_too_long"' in f for f in errors)
    assert any('data-error="chat_empty"' in f for f in errors)
    assert await database_sync_to_async(ChatMessage.objects.count)() == 2


@pytest.mark.slow
async def test_a_canned_phrase_arrives_in_each_readers_language(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, cookies = players.table_id, players.cookies
    lang = settings.LANGUAGE_COOKIE_NAME
    english = await table_socket(table_id, f"{cookies[0]}; {lang}=en")
    await drain(english)
    turkish = await table_socket(table_id, f"{cookies[1]}; {lang}=tr")
    await drain(turkish)
    await english.send_json_to({"type": "chat", "canned": "well_played"})
    en = "".join(chat_frames(await drain(english)))
    tr = "".join(chat_frames(await drain(turkish)))
    for frame in (en, tr):
        assert 'data-canned-key="well_played"' in frame
    assert texts(en) == ["Well played"]
    with translation.override("tr"):
        assert texts(tr) == [str(chat.CANNED["well_played"])]
    stored = await database_sync_to_async(ChatMessage.objects.get)()
    assert (stored.canned, stored.text) == ("well_played", "")
    # The page, too, shows the phrase in its reader's language.
    with translation.override("tr"):
        expected = str(chat.CANNED["well_played"])
    client = Client(headers={"accept-language": "tr"})
    page = await database_sync_to_async(client.get)(reverse("table", args=[table_id]))
    assert texts(chat_panel(page.content.decode())) == [expected]


@pytest.mark.slow
async def test_a_muted_author_does_not_reach_the_muter_live(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    monkeypatch.setattr(chat, "RATE_COUNT", 100)
    table_id, cookies, users = players.table_id, players.cookies, players.users
    muter_id, talker = users[0].pk, users[1]
    muter = await table_socket(table_id, cookies[0])
    muter_tab = await table_socket(table_id, cookies[0])  # a second tab of the same player
    other = await table_socket(table_id, cookies[2])
    sockets = [muter, muter_tab, other]

    async def say(text: str) -> None:
        await database_sync_to_async(actions.send_chat)(table_id, talker, text=text)

    for ws in sockets:
        await drain(ws)
    await say("said before")
    for ws in sockets:
        assert texts("".join(await drain(ws))) == ["said before"]
    await muter.send_json_to({"type": "mute", "user": talker.pk})
    # Both tabs of the muter get their list again, without the talker's lines, and a way
    # to unmute; the other reader gets nothing.
    for ws in (muter, muter_tab):
        frames = chat_frames(await drain(ws))
        assert len(frames) == 1 and texts(frames[0]) == []
        assert f'data-action="unmute" data-user="{talker.pk}"' in frames[0]
    assert await drain(other) == []
    await say("said while muted")
    assert chat_frames(await drain(muter)) == [] and chat_frames(await drain(muter_tab)) == []
    assert texts("".join(await drain(other))) == ["said while muted"]
    # The muter's own page and the other's page.
    muted_page = await database_sync_to_async(page_of)(table_id, users[0])
    assert texts(chat_panel(muted_page)) == []
    other_page = await database_sync_to_async(page_of)(table_id, users[2])
    assert texts(chat_panel(other_page)) == ["said before", "said while muted"]
    # Unmuted: the lines come back, and new ones arrive again.
    await muter_tab.send_json_to({"type": "unmute", "user": talker.pk})
    for ws in (muter, muter_tab):
        frames = chat_frames(await drain(ws))
        assert texts(frames[0]) == ["said before", "said while muted"]
    await say("after the unmute")
    assert texts("".join(await drain(muter))) == ["after the unmute"]
    # Muted again; the mute ends with the match (it was made before the match started).
    await muter.send_json_to({"type": "mute", "user": talker.pk})
    await drain(muter)
    await drain(muter_tab)

    def play_and_end() -> None:
        table = Table.objects.get(pk=table_id)
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1006))
        actions.send_chat(table_id, talker, text="during the match")
        actions.end_match(match, by=actions.SYSTEM)

    await database_sync_to_async(play_and_end)()
    # No line said during the mute is pushed to the muter. (The new match also re-sends
    # the whole panel, rendered with the mutes as they are when it renders: here, after
    # the match has ended, so it is left out of this check.)
    pushed = [f for f in chat_frames(await drain(muter)) if 'hx-swap-oob="beforeend"' in f]
    assert "during the match" not in "".join(pushed)
    await say("after the match")
    assert texts("".join(chat_frames(await drain(muter)))) == ["after the match"]
    # Refusals: oneself, nobody.
    await muter.send_json_to({"type": "mute", "user": muter_id})
    await muter.send_json_to({"type": "mute", "user": "someone"})
    errors = await drain(muter)
    assert any('data-error="chat_mute_self"' in f for f in errors)
    assert any('data-error="bad_chat"' in f for f in errors)


@pytest.mark.slow
async def test_chat_off_refuses_and_open_panels_say_so(
    players: Players, table_socket: TableSockets
) -> None:
    table_id = players.table_id
    ws = await table_socket(table_id, players.cookies[0])
    await drain(ws)
    await database_sync_to_async(actions.update_table)(
        table_id, by=actions.SYSTEM, chat_enabled=False
    )
    frames = [f for f in await drain(ws) if 'id="chat-form"' in f]
    assert len(frames) == 1 and "data-chat-off" in frames[0]
    assert "Chat is off at this table." in frames[0]
    await ws.send_json_to({"type": "chat", "canned": "hello"})
    assert any('data-error="chat_off"' in f for f in await drain(ws))
    assert not await database_sync_to_async(ChatMessage.objects.exists)()
    await database_sync_to_async(actions.update_table)(
        table_id, by=actions.SYSTEM, chat_enabled=True
    )
    frames = [f for f in await drain(ws) if 'id="chat-form"' in f]
    assert 'data-action="chat-send"' in frames[0] and 'data-canned="hello"' in frames[0]


async def test_a_private_tables_chat_needs_its_invite(
    private_table: Table, guest_cookie: str, table_socket: TableSockets
) -> None:
    table_id = private_table.pk
    ws = await table_socket(table_id, guest_cookie, query=f"invite={private_table.invite_token}")
    await drain(ws)
    await ws.send_json_to({"type": "chat", "text": "thanks for the invite"})
    assert texts("".join(await drain(ws))) == ["thanks for the invite"]
    await ws.disconnect()
    with pytest.raises(NotAllowed):
        await database_sync_to_async(actions.send_chat)(
            table_id, await database_sync_to_async(get_user_model().objects.get)(), text="x"
        )


@pytest.mark.slow
async def test_a_rematch_empties_the_open_chat_panels_and_lifts_the_mutes(
    muted_chat_table: Players, table_socket: TableSockets
) -> None:
    table_id, users = muted_chat_table.table_id, muted_chat_table.users
    ws = await table_socket(table_id, muted_chat_table.cookies[0])
    await drain(ws)

    def new_match() -> None:
        actions.start_match(table_id, by=actions.SYSTEM, seed=seed_of(1012))

    await database_sync_to_async(new_match)()
    frames = await drain(ws, 0.5)
    panels = [f for f in frames if 'id="chat-lines"' in f and "beforeend" not in f]
    assert panels, frames
    assert "first match talk" not in panels[-1]  # the new match's window is empty
    # The mute ended with the match: the other player's new line reaches this socket.
    await database_sync_to_async(actions.send_chat)(table_id, users[2], text="hello again")
    assert "hello again" in "".join(chat_frames(await drain(ws, 0.5)))
