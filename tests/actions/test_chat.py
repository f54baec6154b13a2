"""Table chat through the actions: who may talk, what a message may hold, the rate limit,
mutes, the history a page opens with, staff reading it in the admin, and chat never touching a
hand. (On the page: tests/pages/test_chat.py; over the socket: tests/live/test_chat.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils import translation

from games import actions, audit, chat, reads
from games.catalog import ensure_variants
from games.errors import GameError, NotAllowed
from games.models import ChatMessage, ChatMute, Move
from tests.markup import chat_panel, page_of, texts
from tests.play import seed_of, user_table
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db(transaction=True)


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


# ----------------------------------------------------------------------------- the admin
def test_staff_read_chat_in_the_admin_read_only(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    actions.send_chat(table.pk, users[0], text="hello staff")
    actions.send_chat(table.pk, users[1], canned="thanks")
    boss = make_user("boss", superuser=True)
    admin = signed_in(boss)
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
