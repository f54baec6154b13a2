"""One creator cannot fill the lobby: an account has at most a few open tables it opened, the
guests of one address too, and one address may ask for only so many new tables an hour. The
lobby then still lists everybody else's tables."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.limits import Rate
from games import actions, limits
from games.models import Table
from games.pages import table as table_pages
from tests.pages.test_lobby import home, post_new_table
from tests.users import SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]


def lobby_tables(client: Client) -> list[str]:
    return [a.text() for a in home(client).all("a", class_="table-name")]


def test_one_account_cannot_push_the_other_tables_out_of_the_lobby(signed_in: SignedIn) -> None:
    others = [
        actions.open_table(variant="duz", user=make_user(f"other{i}"), name=f"Other {i}")
        for i in range(3)
    ]
    flooder = signed_in(make_user("flooder"), REMOTE_ADDR="198.51.100.1")
    for i in range(limits.OPEN_TABLES_PER_ACCOUNT + 5):
        post_new_table(flooder, "duz", {"name": f"Mine {i}", "other_tables": True})
    mine = Table.objects.filter(created_by__username="flooder")
    assert mine.count() == limits.OPEN_TABLES_PER_ACCOUNT
    response = post_new_table(flooder, "duz", {"name": "One more", "other_tables": True})
    assert "as many open tables" in response.content.decode()
    listed = lobby_tables(Client())
    assert all(t.name in listed for t in others), listed
    # Leaving a table one opened (nobody else there) closes it, and makes room for another.
    actions.leave_table(mine.first(), mine.first().created_by)  # type: ignore[union-attr, arg-type]
    post_new_table(flooder, "duz", {"name": "Again", "other_tables": True})
    assert Table.objects.filter(name="Again").exists()


def test_the_guests_of_one_address_share_a_cap(signed_in: SignedIn) -> None:
    address = "203.0.113.50"
    made = 0
    for i in range(limits.OPEN_TABLES_PER_GUEST_ADDRESS + 2):
        guest = signed_in(make_user(f"guest-{i:06d}", is_guest=True), REMOTE_ADDR=address)
        post_new_table(guest, "classic", {"name": f"Guest {i}"})
        made = Table.objects.filter(created_from=address).count()
    assert made == limits.OPEN_TABLES_PER_GUEST_ADDRESS
    # Another address's guest, and a player with an account at this address, are not held.
    elsewhere = signed_in(make_user("guest-zzzzzz", is_guest=True), REMOTE_ADDR="203.0.113.51")
    post_new_table(elsewhere, "classic", {"name": "Elsewhere"})
    member = signed_in(make_user("member"), REMOTE_ADDR=address)
    post_new_table(member, "classic", {"name": "Member's"})
    assert Table.objects.filter(name__in=["Elsewhere", "Member's"]).count() == 2


def test_one_address_may_ask_for_only_so_many_new_tables_an_hour(
    settings: Any, signed_in: SignedIn
) -> None:
    address = "192.0.2.77"
    for i in range(limits.NEW_TABLES_PER_HOUR):
        client = signed_in(make_user(f"p{i}"), REMOTE_ADDR=address)
        post_new_table(client, "okey51", {"name": f"T{i}"})
    assert Table.objects.filter(created_from=address).count() == limits.NEW_TABLES_PER_HOUR
    late = signed_in(make_user("late"), REMOTE_ADDR=address)
    response = late.post(reverse("new_table"), {"variant": "okey51", "name": "Late"})
    assert "Many tables were opened from your address" in response.content.decode()
    assert not Table.objects.filter(name="Late").exists()


def test_the_move_endpoints_take_from_a_budget_before_any_work(
    monkeypatch: pytest.MonkeyPatch, signed_in: SignedIn
) -> None:
    """The table's messages over HTTP count against a budget per account and per address
    (``games.limits.HTTP_MESSAGES_*``), before the table is even read: past it, a 429 with the
    refusal, and nothing is carried out. (The HTTP move endpoint had no limit.)"""
    small = (
        Rate("test.http-account", "5/h", key=table_pages._account_key),
        Rate("test.http-address", "8/h"),
    )
    monkeypatch.setattr(table_pages, "HTTP_MESSAGES", small)
    carried_out = []
    monkeypatch.setattr(actions, "perform", lambda *args, **kwargs: carried_out.append(args))
    table = actions.open_table(variant="duz", user=make_user("host"), name="Limits")
    player = signed_in(make_user("quick"), REMOTE_ADDR="198.51.100.70")
    move = reverse("table_move", args=[table.pk])
    chat = reverse("table_chat", args=[table.pk])
    hide = {"payload": json.dumps({"type": "hide"})}
    answers = [player.post(move, hide).status_code for _ in range(5)]
    assert 429 not in answers and len(carried_out) == 5
    refused = player.post(move, hide)
    assert refused.status_code == 429 and 'data-error="too_fast"' in refused.content.decode()
    line = {"payload": json.dumps({"type": "chat", "text": "hi"})}
    assert player.post(chat, line).status_code == 429  # the chat's endpoint counts too
    assert len(carried_out) == 5
    # Another account at the same address has its own count, up to the address's.
    other = signed_in(make_user("neighbour"), REMOTE_ADDR="198.51.100.70")
    assert [other.post(move, hide).status_code for _ in range(2)] == [200, 429]
