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
from games.catalog import ensure_variants
from games.errors import NotAllowed
from games.models import ChatMessage, Table
from tests.markup import chat_panel, page_of, texts
from tests.play import seed_of, user_table
from tests.sockets import cookie_for, drain, socket
from tests.users import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def chat_frames(frames: list[str]) -> list[str]:
    return [f for f in frames if "chat-line" in f or 'id="chat-lines"' in f]


# ----------------------------------------------------------------------------- the admin
async def test_staff_delete_a_line_in_the_admin_and_open_pages_drop_it() -> None:
    def setup() -> tuple[int, list[int], str, Any]:
        table, users = user_table("duz")
        first = actions.send_chat(table.pk, users[0], text="rude words")
        second = actions.send_chat(table.pk, users[1], text="more rude words")
        boss = make_user("boss", superuser=True)
        return table.pk, [first.pk, second.pk], cookie_for(users[2]), boss

    table_id, ids, cookie, boss = await database_sync_to_async(setup)()
    ws = socket(table_id, cookie)
    try:
        assert (await ws.connect(timeout=5))[0]
        await drain(ws)

        def delete_one_then_the_other() -> None:
            admin = Client()
            admin.force_login(boss)
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
    finally:
        await ws.disconnect()


# ----------------------------------------------------------------------------- the socket
async def test_a_message_reaches_every_socket_escaped_and_outside_the_board() -> None:
    def setup() -> tuple[int, list[str], list[Any], str]:
        table, users = user_table("duz")
        actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1005))
        fan = make_user("fan")
        return table.pk, [cookie_for(u) for u in users], users, cookie_for(fan)

    table_id, cookies, users, fan_cookie = await database_sync_to_async(setup)()
    player, fan, anonymous = socket(table_id, cookies[0]), socket(table_id, fan_cookie), None
    anonymous = socket(table_id)
    sockets = [player, fan, anonymous]
    try:
        for ws in sockets:
            assert (await ws.connect(timeout=5))[0]
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
    finally:
        for ws in sockets:
            await ws.disconnect()


async def test_a_canned_phrase_arrives_in_each_readers_language() -> None:
    def setup() -> tuple[int, list[str], list[Any]]:
        table, users = user_table("duz")
        return table.pk, [cookie_for(u) for u in users], users

    table_id, cookies, users = await database_sync_to_async(setup)()
    lang = settings.LANGUAGE_COOKIE_NAME
    english = socket(table_id, f"{cookies[0]}; {lang}=en")
    turkish = socket(table_id, f"{cookies[1]}; {lang}=tr")
    try:
        for ws in (english, turkish):
            assert (await ws.connect(timeout=5))[0]
            await drain(ws)
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
    finally:
        await english.disconnect()
        await turkish.disconnect()


async def test_a_muted_author_does_not_reach_the_muter_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chat, "RATE_COUNT", 100)

    def setup() -> tuple[int, list[str], list[Any]]:
        table, users = user_table("duz")
        return table.pk, [cookie_for(u) for u in users], users

    table_id, cookies, users = await database_sync_to_async(setup)()
    muter_id, talker = users[0].pk, users[1]
    muter = socket(table_id, cookies[0])
    muter_tab = socket(table_id, cookies[0])  # a second tab of the same player
    other = socket(table_id, cookies[2])
    sockets = [muter, muter_tab, other]

    async def say(text: str) -> None:
        await database_sync_to_async(actions.send_chat)(table_id, talker, text=text)

    try:
        for ws in sockets:
            assert (await ws.connect(timeout=5))[0]
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
    finally:
        for ws in sockets:
            await ws.disconnect()


async def test_chat_off_refuses_and_open_panels_say_so() -> None:
    def setup() -> tuple[int, str]:
        table, users = user_table("duz")
        return table.pk, cookie_for(users[0])

    table_id, cookie = await database_sync_to_async(setup)()
    ws = socket(table_id, cookie)
    try:
        assert (await ws.connect(timeout=5))[0]
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
    finally:
        await ws.disconnect()


async def test_a_private_tables_chat_needs_its_invite() -> None:
    def setup() -> tuple[int, str, str]:
        ensure_variants()
        table = actions.create_table(variant="duz", created_by=None, is_private=True)
        return table.pk, table.invite_token, cookie_for(make_user("guest"))

    table_id, token, cookie = await database_sync_to_async(setup)()
    ws = socket(table_id, cookie, query=f"invite={token}")
    try:
        assert (await ws.connect(timeout=5))[0]
        await drain(ws)
        await ws.send_json_to({"type": "chat", "text": "thanks for the invite"})
        assert texts("".join(await drain(ws))) == ["thanks for the invite"]
    finally:
        await ws.disconnect()
    with pytest.raises(NotAllowed):
        await database_sync_to_async(actions.send_chat)(
            table_id, await database_sync_to_async(get_user_model().objects.get)(), text="x"
        )


async def test_a_rematch_empties_the_open_chat_panels_and_lifts_the_mutes() -> None:
    def setup() -> tuple[int, list[Any], list[str]]:
        table, users = user_table("duz", {"timer": 0})
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1011))
        actions.send_chat(table.pk, users[1], text="first match talk")
        actions.mute_chat(table.pk, users[0], users[2].pk)
        actions.end_match(match, by=actions.SYSTEM)
        # The match ended as abandoned and the table is open again: a new match starts.
        return table.pk, users, [cookie_for(u) for u in users]

    table_id, users, cookies = await database_sync_to_async(setup)()
    ws = socket(table_id, cookies[0])
    assert (await ws.connect(timeout=5))[0]
    try:
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
    finally:
        await ws.disconnect()
