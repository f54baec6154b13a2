"""Table chat on the table page: the panel, escaped, with the right notice; the "New table"
form's and the admin's switch; and the HTTP fallback, which goes through the same action as the
socket."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from games import actions, chat, reads
from games.catalog import ensure_variants
from games.models import ChatMessage, Hand, Table
from tests.markup import chat_panel, form_fields, page_of
from tests.play import user_table
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_the_new_table_form_and_the_admin_turn_the_chat_off(signed_in: SignedIn) -> None:
    ensure_variants()
    host = make_user("host")
    client = signed_in(host)
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
    admin = signed_in(boss)
    url = reverse("admin:games_table_change", args=[chatty.pk])
    page = admin.get(url).content.decode()
    assert 'name="chat_enabled"' in page
    response = admin.post(url, {**form_fields(page), "name": "Chatty", "is_private": ""})
    assert response.status_code == 302
    chatty.refresh_from_db()
    assert not chatty.chat_enabled


# ----------------------------------------------------------------------------- HTTP
def test_the_http_fallback_goes_through_the_same_service(signed_in: SignedIn) -> None:
    ensure_variants()
    table, users = user_table("duz")
    client = signed_in(users[0])
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
