"""The admin: variants with validated options, tables with seats, matches and hands read-only."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from games import services
from games.models import Hand, Match, Variant

from .helpers import bot_table, random_move, seed_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client() -> Client:
    User = get_user_model()
    User.objects.create_superuser("boss", "boss@example.com", "pw")
    client = Client()
    client.login(username="boss", password="pw")
    return client


def _played_hand(moves: int = 6) -> Hand:
    table = bot_table("okey51")
    match = services.start_match(table, by=services.SYSTEM, seed=seed_of(11))
    hand = match.hands.get()
    rng = random.Random(1)
    for _ in range(moves):
        hand.refresh_from_db()
        seat, move = random_move(hand, rng)
        services.play(hand, seat, move, by=services.BOT)
    hand.refresh_from_db()
    return hand


def test_it_lists_and_edits_variants_with_engine_checked_options(admin_client: Client) -> None:
    variant = Variant.objects.get(key="okey51")
    url = reverse("admin:games_variant_change", args=[variant.pk])
    assert admin_client.get(reverse("admin:games_variant_changelist")).status_code == 200
    data = {
        "key": "okey51",
        "name": variant.name,
        "description": variant.description,
        "default_options": '{"hands": 2}',
    }
    response = admin_client.post(url, data)
    assert response.status_code == 200
    assert "hands is one of 1, 3" in response.content.decode()
    data["default_options"] = '{"hands": 3, "doubling": false}'
    response = admin_client.post(url, data)
    assert response.status_code == 302
    variant.refresh_from_db()
    assert variant.default_options["hands"] == 3
    assert variant.default_options["partners"] is False  # defaults filled in by the engine


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
    for url in pages:
        response = admin_client.get(url)
        assert response.status_code == 200, url
    page = admin_client.get(reverse("admin:games_hand_change", args=[hand.pk])).content.decode()
    assert "revealed when the hand ends" in page
    assert hand.seed not in page
    assert '"do": "discard"' in page or "discard" in page


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
