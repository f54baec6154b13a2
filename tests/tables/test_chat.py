"""Table chat: who may talk, what a message may hold, the rate limit, mutes, the history a
page opens with, canned phrases in each reader's language, staff deletion through the admin,
the HTTP fallback, and chat never touching a hand."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse
from django.utils import translation

from games import actions, audit, chat, reads
from games.catalog import ensure_variants
from games.errors import GameError, NotAllowed
from games.models import ChatMessage, ChatMute, Hand, Move, Table
from tests.users import make_user

from .helpers import seed_of, user_table
from .test_table_socket import cookie_for, drain, socket

pytestmark = pytest.mark.django_db(transaction=True)


def texts(html_text: str) -> list[str]:
    """The chat lines' texts in a page or frame, unescaped, in order."""
    return [html.unescape(t) for t in re.findall(r'class="chat-text">(.*?)</span>', html_text)]


def chat_frames(frames: list[str]) -> list[str]:
    return [f for f in frames if "chat-line" in f or 'id="chat-lines"' in f]


def page_of(table_id: int, user: Any = None, query: str = "") -> str:
    client = Client()
    if user is not None:
        client.force_login(user)
    url = reverse("table", args=[table_id]) + (f"?{query}" if query else "")
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def chat_panel(page: str) -> str:
    return page.split('id="chat"')[1].split("</aside>")[0]


# ----------------------------------------------------------------------------- the rules
def test_a_message_is_stripped_and_at_most_200_characters() -> None:
    table, users = user_table("duz")
    ok = actions.send_chat(table.pk, users[0], text="  " + "a" * 200 + "\n ")
    assert ok.text == "a" * 200 and ok.author == users[0].get_username()
    assert ok.match is None  # before the table's first match
    for text, code in [("b" * 201, "chat_too_long"), ("", "chat_empty"), (" \n\t ", "chat_empty")]:
        with pytest.raises(GameError) as refused:
            actions.send_chat(table.pk, users[1], text=text)
        assert refused.value.code == code
    # Control characters: line breaks become spaces, the others (and direction overrides)
    # are dropped; the text is kept as plain text.
    line = actions.send_chat(table.pk, users[1], text="a\x00b\x07\nc\u202e\td")
    assert line.text == "ab c d"
    with pytest.raises(GameError) as refused:
        actions.send_chat(table.pk, users[1], text="\x00\x01")
    assert refused.value.code == "chat_empty"
    for bad in ({"text": ["x"]}, {"canned": "nope"}, {"text": "x", "canned": "hello"}):
        with pytest.raises(GameError):
            actions.send_chat(table.pk, users[1], **bad)
    assert list(ChatMessage.objects.values_list("text", flat=True)) == ["a" * 200, "ab c d"]
    # A message keeps the name its author was shown under when they wrote it.
    from accounts.models import Profile

    profile = Profile.of(users[2])
    profile.display_name = "Ayşe"
    profile.save()
    assert actions.send_chat(table.pk, users[2], canned="hello").author == "Ayşe"
    profile.display_name = "Ayşe K."
    profile.save()
    assert ChatMessage.objects.get(user=users[2]).author == "Ayşe"


def test_at_most_five_messages_per_ten_seconds_per_user_across_tables() -> None:
    table, users = user_table("duz")
    other = actions.create_table(variant="okey51", created_by=None)
    for n in range(5):
        actions.send_chat(table.pk if n % 2 else other.pk, users[0], text=f"message {n}")
    with pytest.raises(GameError) as refused:
        actions.send_chat(table.pk, users[0], text="one too many")
    assert refused.value.code == "chat_too_fast"
    with pytest.raises(GameError):
        actions.send_chat(other.pk, users[0], canned="hello")
    assert ChatMessage.objects.filter(user=users[0]).count() == 5
    assert not ChatMessage.objects.filter(text="one too many").exists()
    # Others are not slowed down by one user; ten seconds later the user may talk again.
    actions.send_chat(table.pk, users[1], text="fine")
    ChatMessage.objects.filter(user=users[0]).update(
        created_at=ChatMessage.objects.get(text="fine").created_at
        - __import__("datetime").timedelta(seconds=chat.RATE_SECONDS + 1)
    )
    actions.send_chat(table.pk, users[0], text="back again")
    assert ChatMessage.objects.filter(user=users[0], text="back again").exists()


def test_who_may_chat() -> None:
    ensure_variants()
    host = make_user("host")
    table = actions.create_table(variant="duz", created_by=host, is_private=True)
    actions.sit(table, host, 0)
    fan = make_user("fan")
    # Anonymous visitors read but cannot send.
    with pytest.raises(NotAllowed) as refused:
        actions.send_chat(table.pk, AnonymousUser(), text="hi", invite=table.invite_token)
    assert refused.value.code == "sign_in"
    # A private table: its seats, its creator and whoever holds the invite; to anyone else
    # it is no table at all.
    for who in (fan, AnonymousUser()):
        with pytest.raises(NotAllowed) as refused:
            actions.send_chat(table.pk, who, text="hi")
        assert refused.value.code == "no_table"
    actions.send_chat(table.pk, fan, text="hi", invite=table.invite_token)
    actions.send_chat(table.pk, host, text="welcome")
    # An anonymous visitor with the invite reads, and logging in brings them back with it.
    panel = chat_panel(page_of(table.pk, query=f"invite={table.invite_token}"))
    assert texts(panel) == ["hi", "welcome"]
    assert f"next=/tables/{table.pk}/%3Finvite%3D{table.invite_token}" in panel
    # A spectator of a public table (signed in, not seated) may chat.
    public = actions.create_table(variant="okey51", created_by=None)
    assert actions.send_chat(public.pk, fan, canned="good_luck").canned == "good_luck"
    # Chat off: refused for everyone.
    actions.update_table(public, by=actions.SYSTEM, chat_enabled=False)
    with pytest.raises(GameError) as refused:
        actions.send_chat(public.pk, fan, text="hello?")
    assert refused.value.code == "chat_off"
    with pytest.raises(GameError) as refused:
        actions.send_chat(999999, fan, text="hello?")
    assert refused.value.code == "no_table"


def test_chat_never_touches_the_hand_its_state_version_or_moves() -> None:
    table, users = user_table("okey51")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1001))
    hand = match.hands.get()
    before = (hand.version, hand.state, hand.updated_at, list(Move.objects.values_list("pk")))
    fan = make_user("fan")
    line = actions.send_chat(table.pk, users[0], text="good luck all")
    actions.send_chat(table.pk, fan, canned="well_played")
    actions.mute_chat(table.pk, users[1], fan.pk)
    actions.unmute_chat(table.pk, users[1], fan.pk)
    actions.delete_chat_message(line.pk, by=actions.SYSTEM)
    hand.refresh_from_db()
    assert (hand.version, hand.state, hand.updated_at, list(Move.objects.values_list("pk"))) == (
        before
    )
    assert audit.verify_hand(hand) == []
    assert "chat" not in json.dumps(hand.state)
    # The message is kept with the match being played.
    assert ChatMessage.objects.get().match_id == match.pk


# ----------------------------------------------------------------------------- history
def test_a_late_joiner_sees_the_last_50_of_60_oldest_first() -> None:
    table, users = user_table("duz")
    ChatMessage.objects.bulk_create(
        ChatMessage(table=table, user=users[n % 4], author=users[n % 4].username, text=f"m{n}")
        for n in range(60)
    )
    late = make_user("late")
    context = reads.chat_context(table.pk, late)
    assert [line["text"] for line in context["lines"]] == [f"m{n}" for n in range(10, 60)]
    page = page_of(table.pk, late)
    assert texts(chat_panel(page)) == [f"m{n}" for n in range(10, 60)]
    assert page.count('class="chat-line"') == 50


def test_the_history_window_follows_the_latest_match() -> None:
    """Before the first match: what was said so far. During the first match: that, and what
    is said in it. From the second match on: that match's lines only."""
    table, users = user_table("duz")
    actions.send_chat(table.pk, users[0], text="waiting for players")
    first = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1002))
    actions.send_chat(table.pk, users[1], text="in the first match")
    assert texts_of(table.pk, users[2]) == ["waiting for players", "in the first match"]
    actions.end_match(first, by=actions.SYSTEM)
    actions.send_chat(table.pk, users[1], canned="well_played")  # kept with the last match
    assert texts_of(table.pk, users[2]) == [
        "waiting for players",
        "in the first match",
        "Well played",
    ]
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1003))
    actions.send_chat(table.pk, users[3], text="second match")
    assert texts_of(table.pk, users[2]) == ["second match"]


def texts_of(table_id: int, user: Any) -> list[str]:
    with translation.override("en"):
        return [line["text"] for line in reads.chat_context(table_id, user)["lines"]]


def test_a_mute_hides_lines_for_the_muter_only_until_the_match_ends() -> None:
    table, users = user_table("duz")
    muter, talker, other = users[0], users[1], users[2]
    actions.send_chat(table.pk, talker, text="before the mute")
    actions.mute_chat(table.pk, muter, talker.pk)  # made before the match: lasts to its end
    actions.send_chat(table.pk, talker, text="while muted")
    assert texts_of(table.pk, muter) == []
    assert texts_of(table.pk, other) == ["before the mute", "while muted"]
    # A line whose author has since deleted their account (no user) hides from no one.
    leaver = make_user("leaver")
    actions.send_chat(table.pk, leaver, text="bye")
    leaver.delete()
    assert texts_of(table.pk, muter) == ["bye"]
    ChatMessage.objects.filter(text="bye").delete()
    context = reads.chat_context(table.pk, muter)
    assert context["muted"] == [{"id": talker.pk, "name": talker.get_username()}]
    actions.unmute_chat(table.pk, muter, talker.pk)
    assert texts_of(table.pk, muter) == ["before the mute", "while muted"]
    actions.mute_chat(table.pk, muter, talker.pk)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1004))
    assert reads.muted_ids(table.pk, muter) == {talker.pk}  # the match is still on
    actions.end_match(match, by=actions.SYSTEM)
    assert reads.muted_ids(table.pk, muter) == set()
    assert texts_of(table.pk, muter) == ["before the mute", "while muted"]
    assert ChatMute.objects.count() == 1  # kept, but over
    for bad in (muter.pk, "x", True):
        with pytest.raises(GameError):
            actions.mute_chat(table.pk, muter, bad)
    with pytest.raises(NotAllowed):
        actions.mute_chat(table.pk, AnonymousUser(), talker.pk)


# ----------------------------------------------------------------------------- the page
def test_the_page_shows_the_panel_escaped_and_the_right_notice() -> None:
    table, users = user_table("duz")
    actions.send_chat(table.pk, users[0], text="<script>alert(1)</script> & hi")
    page = page_of(table.pk, users[1])
    panel = chat_panel(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; hi" in panel
    assert "<script>alert" not in page
    assert 'maxlength="200"' in panel and 'data-action="chat-send"' in panel
    for key in chat.CANNED:
        assert f'data-canned="{key}"' in panel
    # The mute button is beside other people's lines, not one's own.
    assert f'data-action="mute" data-user="{users[0].pk}"' in panel
    assert 'data-action="mute"' not in chat_panel(page_of(table.pk, users[0]))
    # The panel is outside the live board.
    board = page.split('id="table-live"')[1].split('id="rack-area"')[0]
    assert 'id="chat' not in board
    # Anonymous visitors read, with an invitation to log in.
    anonymous = chat_panel(page_of(table.pk))
    assert "Log in or play as a guest to chat" in anonymous and "data-chat-anonymous" in anonymous
    assert "&lt;script&gt;" in anonymous
    assert f'?next=/tables/{table.pk}/"' in anonymous  # back here after logging in
    assert 'data-action="chat-send"' not in anonymous and 'data-action="mute"' not in anonymous
    # Chat off: the panel says so.
    actions.update_table(table, by=actions.SYSTEM, chat_enabled=False)
    off = chat_panel(page_of(table.pk, users[1]))
    assert "Chat is off at this table." in off and 'data-action="chat-send"' not in off


def test_the_new_table_form_and_the_admin_turn_the_chat_off() -> None:
    ensure_variants()
    host = make_user("host")
    client = Client()
    client.force_login(host)
    form = client.get(reverse("new_table")).content.decode()
    box = re.search(r'<input[^>]*name="chat_enabled"[^>]*>', form)
    assert box and "checked" in box.group(0)
    assert "Chat at this table" in form
    response = client.post(reverse("new_table"), {"variant": "duz", "name": "Quiet", "timer": 30})
    assert response.status_code == 302
    assert Table.objects.get(name="Quiet").chat_enabled is False  # the box was not ticked
    actions.stand(Table.objects.get(name="Quiet"), host)
    client.post(
        reverse("new_table"),
        {"variant": "duz", "name": "Chatty", "timer": 30, "chat_enabled": "on"},
    )
    chatty = Table.objects.get(name="Chatty")
    assert chatty.chat_enabled
    # Staff turn it off in the admin, through actions.update_table.
    boss = make_user("boss", superuser=True)
    admin = Client()
    admin.force_login(boss)
    url = reverse("admin:games_table_change", args=[chatty.pk])
    page = admin.get(url).content.decode()
    assert 'name="chat_enabled"' in page
    from .test_admin import form_fields

    response = admin.post(url, {**form_fields(page), "name": "Chatty", "is_private": ""})
    assert response.status_code == 302
    chatty.refresh_from_db()
    assert not chatty.chat_enabled


# ----------------------------------------------------------------------------- the admin
def test_staff_read_chat_in_the_admin_read_only() -> None:
    table, users = user_table("duz")
    actions.send_chat(table.pk, users[0], text="hello staff")
    actions.send_chat(table.pk, users[1], canned="thanks")
    boss = make_user("boss", superuser=True)
    admin = Client()
    admin.force_login(boss)
    listing = admin.get(reverse("admin:games_chatmessage_changelist") + "?q=staff")
    assert listing.status_code == 200
    body = listing.content.decode()
    assert "hello staff" in body and "[thanks]" not in body
    assert "[thanks]" in admin.get(reverse("admin:games_chatmessage_changelist")).content.decode()
    assert admin.get(reverse("admin:games_chatmessage_add")).status_code == 403
    line = ChatMessage.objects.get(text="hello staff")
    page = admin.get(reverse("admin:games_chatmessage_change", args=[line.pk])).content.decode()
    assert 'name="text"' not in page  # read-only
    with pytest.raises(NotAllowed):
        actions.delete_chat_message(line.pk, by=users[0])


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
        errors = await drain(fan)
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


# ----------------------------------------------------------------------------- HTTP
def test_the_http_fallback_goes_through_the_same_service() -> None:
    ensure_variants()
    table, users = user_table("duz")
    client = Client()
    client.force_login(users[0])
    url = reverse("table_chat", args=[table.pk])
    response = client.post(url, {"payload": json.dumps({"type": "chat", "text": "<b>hi</b>"})})
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="chat-lines"' in body and "&lt;b&gt;hi&lt;/b&gt;" in body
    assert client.post(url, {"text": "from a form"}).status_code == 200
    assert client.post(url, {"canned": "bye"}).status_code == 200
    assert list(ChatMessage.objects.order_by("id").values_list("text", "canned")) == [
        ("<b>hi</b>", ""),
        ("from a form", ""),
        ("", "bye"),
    ]
    refused = client.post(url, {"text": "y" * 201}).content.decode()
    assert 'data-error="chat_too_long"' in refused
    mute = {"payload": json.dumps({"type": "mute", "user": users[1].pk})}
    assert client.post(url, mute).status_code == 200
    assert reads.muted_ids(table.pk, users[0]) == {users[1].pk}
    assert Client().post(url, {"text": "anonymous"}).status_code == 403
    assert client.get(url).status_code == 405
    private = actions.create_table(variant="duz", created_by=None, is_private=True)
    private_url = reverse("table_chat", args=[private.pk])
    assert client.post(private_url, {"text": "hi"}).status_code == 404
    invited = client.post(f"{private_url}?invite={private.invite_token}", {"text": "hi"})
    assert invited.status_code == 200
    assert client.post(reverse("table_chat", args=[999999]), {"text": "x"}).status_code == 404
    assert ChatMessage.objects.filter(text="anonymous").count() == 0
    assert Hand.objects.count() == 0


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
