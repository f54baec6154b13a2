"""The admin: variants with validated options, tables with seats, matches and hands read-only."""

from __future__ import annotations

import html
import json
import random
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from games import actions, engine
from games.models import Hand, Match, Table, Variant
from tests.markup import form_fields
from tests.play import bot_table, random_move, seed_of, user_table
from tests.users import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client() -> Client:
    make_user("boss", superuser=True)
    client = Client()
    client.login(username="boss", password=PASSWORD)
    return client


def _played_hand(moves: int = 6) -> Hand:
    table = bot_table("okey51")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(11))
    hand = match.hands.get()
    rng = random.Random(1)
    for _ in range(moves):
        hand.refresh_from_db()
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=actions.BOT)
    hand.refresh_from_db()
    return hand


@pytest.mark.parametrize(
    ("key", "refused", "why", "accepted", "filled_in"),
    [
        (
            "okey51",
            {"hands": 2},
            "hands is one of 1, 3",
            {"hands": 3, "doubling": False},
            "partners",
        ),
        (
            "okey101",
            {"add_limit": 4},
            "add_limit is one of 0, 1, 2, 3",
            {"hands": 11, "add_limit": 0, "give_back_penalty": 101},
            "from_hand_below_bar",
        ),
    ],
)
def test_it_lists_and_edits_variants_with_engine_checked_options(
    admin_client: Client,
    key: str,
    refused: dict[str, Any],
    why: str,
    accepted: dict[str, Any],
    filled_in: str,
) -> None:
    variant = Variant.objects.get(key=key)
    url = reverse("admin:games_variant_change", args=[variant.pk])
    assert admin_client.get(reverse("admin:games_variant_changelist")).status_code == 200
    data = {"key": key, "name": variant.name, "description": variant.description}
    response = admin_client.post(url, {**data, "default_options": json.dumps(refused)})
    assert response.status_code == 200
    assert why in response.content.decode()
    response = admin_client.post(url, {**data, "default_options": json.dumps(accepted)})
    assert response.status_code == 302
    variant.refresh_from_db()
    assert accepted.items() <= variant.default_options.items()
    assert filled_in in variant.default_options  # the defaults, filled in by the engine


def test_it_shows_tables_matches_and_hands_with_their_move_log(admin_client: Client) -> None:
    hand = _played_hand()
    match = hand.match
    pages = [
        reverse("admin:games_table_changelist") + "?status__exact=playing",
        reverse("admin:games_table_change", args=[match.table_id]),
        reverse("admin:games_match_changelist") + "?q=okey",
        reverse("admin:games_match_change", args=[match.pk]),
        reverse("admin:games_hand_changelist"),
        reverse("admin:games_hand_change", args=[hand.pk]),
    ]
    expected = [
        [match.table.name],
        [match.table.name, "random", "Seats"],
        [f"match {match.pk} at"],
        ["scoreboard", "seat 0", "hand 1"],
        [f"hand {hand.number} of match {match.pk}"],
        [hand.commitment, "Participants", "Moves"],
    ]
    for url, needles in zip(pages, expected, strict=True):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        for needle in needles:
            assert needle in page, (url, needle)
    page = html.unescape(
        admin_client.get(reverse("admin:games_hand_change", args=[hand.pk])).content.decode()
    )
    assert "revealed when the hand ends" in page
    assert hand.seed not in page
    moves = list(hand.moves.order_by("number"))
    assert len(moves) == 6
    for m in moves:  # every move's normalised action is listed
        assert json.dumps(m.action) in page or str(m.action) in page, m.action
    # A live hand's drawn tiles stay hidden from staff; the public part of the event shows.
    draws = [e for m in moves for e in m.events if e.get("private_to") is not None]
    assert draws, "the sample hand has no draw from the pile"
    for e in draws:
        assert json.dumps(e) not in page
        assert json.dumps(engine.event_for(e, -1)) in page


def test_it_shows_drawn_tiles_once_the_hand_is_over(admin_client: Client) -> None:
    hand = _played_hand()
    staff = get_user_model().objects.get(username="boss")
    actions.end_match(hand.match, by=staff)
    page = html.unescape(
        admin_client.get(reverse("admin:games_hand_change", args=[hand.pk])).content.decode()
    )
    draws = [e for m in hand.moves.all() for e in m.events if e.get("private_to") is not None]
    assert draws and all(json.dumps(e) in page for e in draws)
    assert hand.seed in page  # revealed with the end


def test_it_cannot_change_game_state_from_the_admin(admin_client: Client) -> None:
    hand = _played_hand()
    match, table = hand.match, hand.match.table
    seat = table.seats.get(position=0)
    # Hands, matches and seats have no change form that saves, and cannot be deleted.
    for name, pk in [("hand", hand.pk), ("match", match.pk), ("seat", seat.pk)]:
        url = reverse(f"admin:games_{name}_change", args=[pk])
        page = admin_client.get(url).content.decode()
        assert 'name="_save"' not in page, name
        assert admin_client.post(url, {"status": "finished", "turn": 3}).status_code == 403
        delete = reverse(f"admin:games_{name}_delete", args=[pk])
        assert admin_client.post(delete, {"post": "yes"}).status_code == 403, name
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.version == 6
    # A playing table: only name, privacy and season may change, through the service.
    url = reverse("admin:games_table_change", args=[table.pk])
    page = admin_client.get(url).content.decode()
    for field in ("variant", "options", "players", "move_timer", "status"):
        assert f'name="{field}"' not in page, field
    assert 'name="name"' in page
    response = admin_client.post(
        url,
        {
            **form_fields(page),
            "name": "Renamed",
            "is_private": "",
            "season": "",
            "variant": Variant.objects.get(key="duz").pk,
            "status": "finished",
            "players": 2,
        },
    )
    assert response.status_code == 302
    table.refresh_from_db()
    assert table.name == "Renamed"
    assert table.variant.key == "okey51" and table.status == "playing" and table.players == 4
    # A table with matches is history: it cannot be deleted (nor its seats, with it).
    delete = reverse("admin:games_table_delete", args=[table.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert table.seats.count() == 4


def test_it_creates_tables_through_the_service(admin_client: Client) -> None:
    url = reverse("admin:games_table_add")
    data = {
        **form_fields(admin_client.get(url).content.decode()),
        "variant": Variant.objects.get(key="duz").pk,
        "name": "Cup final",
        "options": "{}",
        "is_private": "",
        "move_timer": 15,
        "players": 4,
        "season": "",
    }
    bad = admin_client.post(
        url, {**data, "variant": Variant.objects.get(key="okey51").pk, "options": '{"hands": 2}'}
    )
    assert bad.status_code == 200 and "hands is one of 1, 3" in bad.content.decode()
    assert admin_client.post(url, data).status_code == 302
    table = Table.objects.get(name="Cup final")
    assert table.seats.count() == 4 and table.options["timer"] == 15
    assert table.created_by is not None and table.created_by.username == "boss"


def test_it_removes_a_player_through_the_service(admin_client: Client) -> None:
    table, users = user_table("okey51")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(12))
    seat = table.seats.get(position=2)
    response = admin_client.post(
        reverse("admin:games_seat_changelist"),
        {"action": "remove_players", "_selected_action": [seat.pk]},
        follow=True,
    )
    assert "1 player(s) removed" in response.content.decode()
    seat.refresh_from_db()
    assert seat.user is None and seat.bot_level == "greedy"


def test_it_verifies_hands_and_ends_stuck_matches_from_the_admin(admin_client: Client) -> None:
    hand = _played_hand()
    response = admin_client.post(
        reverse("admin:games_hand_changelist"),
        {"action": "verify", "_selected_action": [hand.pk]},
        follow=True,
    )
    assert "1 hand(s) verified" in response.content.decode()
    response = admin_client.post(
        reverse("admin:games_match_changelist"),
        {"action": "end_stuck_matches", "_selected_action": [hand.match_id]},
        follow=True,
    )
    assert response.status_code == 200
    assert Match.objects.get(pk=hand.match_id).status == Match.Status.ABANDONED
    assert Hand.objects.get(pk=hand.pk).status == Hand.Status.ABANDONED
