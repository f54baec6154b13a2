"""A player's statistics per variant (games.reads.stats), checked against the hands as stored, and
shown on their profile page."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from games import actions
from games.models import Hand, Match, Move
from games.reads import stats
from tests.leagues.helpers import establish
from tests.play import random_move, seed_of, user_table

pytestmark = pytest.mark.django_db


def play_out(variant: str, n: int) -> tuple[Match, list[Any]]:
    """A one-hand match at a table of four signed-up players, played at random to its end."""
    options = {"hands": 1} if variant == "okey51" else None
    table, users = user_table(variant, options)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(300 + n))
    rng = random.Random(n)
    for _ in range(3000):
        match.refresh_from_db()
        hand = match.hands.order_by("-number").first()
        assert hand is not None
        if hand.status != Hand.Status.PLAYING:
            if match.status != Match.Status.PLAYING:
                break
            actions.deal_next_hand(match, force=True)
            continue
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=users[seat])
    match.refresh_from_db()
    return match, users


def expected(user: Any, variant: str) -> dict[str, Any]:
    """The same figures, counted the slow way from the rows."""
    hands = [
        (h, h.participants.get(user=user).position)
        for h in Hand.objects.filter(
            participants__user=user,
            status=Hand.Status.FINISHED,
            match__table__variant__key=variant,
        )
    ]
    matches = {h.match for h, _ in hands}
    finished = [m for m in matches if m.status == Match.Status.FINISHED]
    seat_of = {h.match_id: seat for h, seat in hands}
    opened = []
    for h, seat in hands:
        move = Move.objects.filter(hand=h, seat=seat, action__do="open").first()
        if move is not None:
            turns = Move.objects.filter(
                hand=h, seat=seat, number__lt=move.number, action__do="discard"
            ).count()
            opened.append(turns + 1)
    penalties = [p for h, seat in hands for p in h.state.get("penalties", []) if p["seat"] == seat]
    return {
        "matches": len(finished),
        "wins": sum(1 for m in finished if seat_of[m.pk] in m.winners),
        "hands": len(hands),
        "finished": sum(1 for h, seat in hands if h.ending == "finish" and h.finisher == seat),
        "scores": [h.hand_scores[seat] for h, seat in hands],
        "opened": opened,
        "penalties": len(penalties),
        "penalty_points": sum(p["points"] for p in penalties),
    }


@pytest.mark.parametrize("variant", ["okey51", "duz", "okey101"])
def test_it_counts_each_variant_from_the_stored_hands(variant: str) -> None:
    first, users = play_out(variant, 1)
    assert first.status == Match.Status.FINISHED
    player = users[1]
    figures = {s["variant"]: s for s in stats.player_stats(player)}
    assert list(figures) == [variant]
    got, want = figures[variant], expected(player, variant)
    assert got["matches"] == want["matches"] == 1
    assert got["hands"] == want["hands"] >= 1
    assert got["wins"] == want["wins"]
    assert got["finished"] == want["finished"]
    assert got["average_score"] == round(sum(want["scores"]) / len(want["scores"]), 1)
    assert got["penalties"] == want["penalties"]
    assert got["penalty_points"] == want["penalty_points"]
    assert got["opened"] == len(want["opened"])
    if want["opened"]:
        assert got["open_turn"] == round(sum(want["opened"]) / len(want["opened"]), 1)
    assert got["open_variant"] == (variant in ("okey51", "okey101"))


def test_a_live_hand_does_not_count_yet_and_other_players_are_apart() -> None:
    table, users = user_table("classic")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(7))
    assert stats.player_stats(users[0]) == []
    match, players = play_out("duz", 2)
    assert stats.player_stats(users[0]) == []  # nothing of the other table's players
    won = {p.pk for seat, p in enumerate(players) if seat in match.winners}
    for p in players:
        (row,) = stats.player_stats(p)
        assert row["wins"] == (1 if p.pk in won else 0)


def test_the_profile_page_shows_the_statistics() -> None:
    _match, users = play_out("okey51", 3)
    page = Client().get(reverse("profile", args=[users[2].get_username()])).content.decode()
    (row,) = stats.player_stats(users[2])
    assert "data-stats" in page and 'data-variant="okey51"' in page
    assert f'data-stat="hands">{row["hands"]}<' in page
    empty = Client().get(reverse("profile", args=[users[2].get_username()]))
    assert empty.status_code == 200


def test_the_profile_page_draws_the_rating_history() -> None:
    from leagues.models import Rating, RatingChange
    from leagues.ratings import rate_match

    first, users = play_out("duz", 4)
    establish(*users)
    assert rate_match(first)
    page = Client().get(reverse("profile", args=[users[0].get_username()])).content.decode()
    rating = Rating.objects.get(user=users[0], variant__key="duz")
    # On the familiar scale: 1500 for a new player, 20 points per unit of the ordinal;
    # provisional after one rated match.
    assert f'data-rating="{round(1500 + 20 * rating.ordinal)}"' in page
    assert "data-provisional" in page and "μ" not in page
    assert reverse("leaderboard", args=["duz"]) in page
    # One rated match: the chart starts at the rating before it and ends at the one after.
    (change,) = RatingChange.objects.filter(user=users[0])
    drawn = page.split('data-values="')[1].split('"')[0].split()
    assert [int(v) for v in drawn] == [
        round(1500 + 20 * change.ordinal_before),
        round(1500 + 20 * change.ordinal),
    ]
    assert drawn[0] == "1500"  # a new player's rating
    assert (
        "data-ratings"
        not in Client()
        .get(reverse("profile", args=[user_table("duz")[1][0].get_username()]))
        .content.decode()
    )
