"""Which matches are rated: those with at least two people, for the people in them (bots
never are); and leaving a match costs its last place (``games.models.Abandonment``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from openskill.models import PlackettLuce

from games.models import Abandonment, Match
from leagues import hooks, ratings, results
from leagues.models import EarlyLeavePair, RatedMatch, Rating, RatingChange, Standing
from tests.leagues.helpers import (
    BOT,
    establish,
    finished_match,
    leave,
    newcomers,
    season,
    table,
    users,
)
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db

MODEL = PlackettLuce()


def expected(ranks: dict[Any, float], teams: list[list[Any]] | None = None) -> dict[int, Any]:
    """Each player's rating after one match from fresh ratings: ``teams`` (default: one
    player a side, in the order of ``ranks``), each placed at its first player's rank."""
    teams = teams or [[u] for u in ranks]
    new = MODEL.rate(
        [[MODEL.rating() for _ in team] for team in teams],
        ranks=[float(ranks[team[0]]) for team in teams],
    )
    return {
        u.pk: r
        for team, after in zip(teams, new, strict=True)
        for u, r in zip(team, after, strict=True)
    }


def assert_rated(want: dict[int, Any]) -> None:
    got = {r.user_id: r for r in Rating.objects.all()}
    assert set(got) == set(want)
    for user_id, rating in want.items():
        assert got[user_id].mu == pytest.approx(rating.mu, abs=1e-9)
        assert got[user_id].sigma == pytest.approx(rating.sigma, abs=1e-9)
        assert got[user_id].matches == 1


def places(out: results.Outcome) -> dict[int, int]:
    return {u: s.place for s in out.sides for u in s.users}


def outcome_of(match: Match) -> results.Outcome:
    out = results.outcome(
        match, results.participants_of([match.pk])[match.pk], match.table.variant.key
    )
    assert out is not None
    return out


def test_two_people_and_two_bots_are_rated_by_their_places_one_person_alone_is_not() -> None:
    a, b, c = users("a", "b", "c")
    # okey51: the fewest points win. A bot won; b (10) came second, a (30) third.
    two = finished_match(table(), [a, BOT, b, BOT], [30, 5, 10, 40], [1])
    assert ratings.rate_match(two.pk) is True
    assert RatedMatch.objects.get(match=two).rated is True
    assert_rated(expected({a: 3, b: 2}))
    assert Rating.objects.get(user=b).mu > 25 > Rating.objects.get(user=a).mu
    assert RatingChange.objects.filter(match=two).count() == 2  # nothing for the bots

    # One person and three bots: not rated, whatever the person's place (here first).
    alone = finished_match(table(), [BOT, c, BOT, BOT], [30, 5, 10, 40], [1])
    assert ratings.rate_match(alone.pk) is False
    assert RatedMatch.objects.get(match=alone).rated is False
    assert not Rating.objects.filter(user=c).exists()
    assert not RatingChange.objects.filter(match=alone).exists()


def test_two_partners_against_two_bots_are_not_rated() -> None:
    a, b = users("a", "b")
    m = finished_match(
        table(partners=True), [a, BOT, b, BOT], [5, 20, 10, 30], [0, 2], teams=[0, 1, 0, 1]
    )
    assert ratings.rate_match(m.pk) is False  # their one side has nobody rated to face
    assert not Rating.objects.exists()


def test_a_leaver_who_was_ahead_is_placed_last_and_loses_rating() -> None:
    a, b, c, d = users("a", "b", "c", "d")
    s = season(members=[a, b, c, d], allow_bots=True)
    # d held seat 3 in the first hand, left, and the bot that took the seat won the match.
    m = finished_match(table(season=s), [a, b, c, d], [30, 20, 40, 5], [3], hands=2)
    leave(m, d, from_hand=2)
    out = outcome_of(m)
    assert out.left == [d.pk]
    # The seat d left keeps its first place (a bot's now: not rated); d comes below it all.
    assert places(out) == {b.pk: 2, a.pk: 3, c.pk: 4, d.pk: 5}
    assert out.side_of(d.pk).left and out.letter(d.pk) == "L"
    assert out.points(d.pk) == 5  # their seat's total, as before

    hooks.match_over(m.pk)
    assert_rated(expected({b: 2, a: 3, c: 4, d: 5}))
    assert Rating.objects.get(user=d).mu < 25
    assert Rating.objects.order_by("mu").first().user_id == d.pk
    # In the season's standings too, the match is a loss for d.
    row = Standing.objects.get(season=s, user=d)
    assert (row.played, row.won, row.points, row.form) == (1, 0, 5, "L")


def test_a_leaver_counts_as_one_of_the_two_people() -> None:
    a, b = users("a", "b")
    m = finished_match(table(), [a, BOT, b, BOT], [5, 30, 20, 40], [0], hands=3)
    leave(m, a, from_hand=3)  # a was winning, and their bot finished the match first
    assert ratings.rate_match(m.pk) is True
    assert_rated(expected({b: 2, a: 5}))
    assert Rating.objects.get(user=a).mu < 25 < Rating.objects.get(user=b).mu


def test_a_2v2_leaver_is_last_while_the_partner_keeps_the_team_s_place() -> None:
    a, b, c, d = users("a", "b", "c", "d")
    # a and c (seats 0 and 2) against b and d; a left after the first hand; a and c's team won.
    m = finished_match(
        table(partners=True), [a, b, c, d], [5, 20, 10, 30], [0, 2], teams=[0, 1, 0, 1], hands=2
    )
    leave(m, a, from_hand=2)
    out = outcome_of(m)
    assert places(out) == {c.pk: 1, b.pk: 2, d.pk: 2, a.pk: 3}
    assert out.letter(c.pk) == "W" and out.letter(a.pk) == "L"
    assert out.side_of(c.pk).seats == [0, 2]  # the team keeps both seats and its total
    assert out.side_of(c.pk).total == 15

    assert ratings.rate_match(m.pk) is True
    assert_rated(expected({c: 1, b: 2, a: 3}, teams=[[c], [b, d], [a]]))
    assert Rating.objects.get(user=c).mu > 25 > Rating.objects.get(user=a).mu


def test_several_leavers_share_the_last_place() -> None:
    a, b, c, d = users("a", "b", "c", "d")
    m = finished_match(table(), [a, b, c, d], [10, 20, 30, 40], [0], hands=2)
    leave(m, a, from_hand=2)
    leave(m, c, from_hand=2)
    assert places(outcome_of(m)) == {b.pk: 2, d.pk: 4, a.pk: 5, c.pk: 5}


def test_who_left_is_read_in_one_query_per_batch_of_matches(
    django_assert_num_queries: Any,
) -> None:
    a, b, c, d = users("a", "b", "c", "d")
    m1 = finished_match(table(), [a, b, c, d], [10, 20, 30, 40], [0], hands=2)
    m2 = finished_match(table(), [d, c, b, a], [10, 20, 30, 40], [0], hands=2)
    leave(m1, b, from_hand=2)
    leave(m2, a, from_hand=2)
    with django_assert_num_queries(2):  # the Participant rows, the Abandonment rows
        parts = results.participants_of([m1.pk, m2.pk])
    assert {r["user_id"] for r in parts[m1.pk] if r["left"]} == {b.pk}
    assert {r["user_id"] for r in parts[m2.pk] if r["left"]} == {a.pk}


def test_the_profile_says_which_matches_are_rated() -> None:
    a, b = users("a", "b")
    ratings.rate_match(finished_match(table(), [a, BOT, b, BOT], [1, 2, 3, 4], [0]).pk)
    page = Client().get(reverse("profile", args=[a.get_username()])).content.decode()
    assert "data-rated-rule" in page
    assert "Matches with at least two people are rated" in page
    assert "a player who leaves a match is placed last" in page


def test_a_guest_gone_for_the_rest_of_a_rated_match_counts_as_having_left() -> None:
    """A guest whose seat a bot plays (away) when the match ends left it: last place, as a
    leaver; a player who is back by then has not."""
    import random

    from games import actions
    from games.catalog import ensure_variants
    from games.models import Seat
    from tests.play import play_hand, seed_of

    ensure_variants()
    host, guest = make_user("host"), make_user("guest-x1y2z3", is_guest=True)
    t = actions.create_table(variant="duz", created_by=None)  # duz: the match is one hand
    actions.sit(t, host, 0)
    actions.sit(t, guest, 1)
    for position in (2, 3):
        actions.add_bot(t, position, "greedy", by=actions.SYSTEM)
    match = actions.start_match(t, by=actions.SYSTEM, seed=seed_of(77))
    Seat.objects.filter(table=t, position=1).update(away=True)
    play_hand(match.hands.get(), [host, "bot", "bot", "bot"], random.Random(7))
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert list(Abandonment.objects.filter(match=match).values_list("user_id", flat=True)) == [
        guest.pk
    ]
    assert outcome_of(match).left == [guest.pk]


def test_guests_are_left_off_the_leaderboards() -> None:
    a, b = users("kept", "player")
    guest = make_user("guest-aa11bb", is_guest=True)
    ratings.rate_match(finished_match(table(), [a, guest, b, BOT], [30, 5, 10, 40], [1]).pk)
    # A guest is never an established account: rated (and listed) neither.
    assert not Rating.objects.filter(user=guest).exists()
    assert Rating.objects.filter(user__in=[a, b]).count() == 2
    page = Client().get(reverse("leaderboard", args=["okey51"])).content.decode()
    assert 'data-player="kept"' in page and 'data-player="player"' in page
    assert "guest-aa11bb" not in page


# ----------------------------------------------------------------------------- bought results
def test_a_second_account_that_sits_down_and_leaves_at_once_hands_nobody_rating(
    signed_in: SignedIn,
) -> None:
    """The farming attack: an account joins, leaves at once and so comes last, handing the
    other account a win. A match someone left before their seat played EARLY_LEAVE_MOVES
    moves is rated for nobody; the leave stays on their record, and the pair is flagged for
    staff once it happens again."""
    farmer, throwaway = users("farmer", "throwaway")
    for n in range(2):
        m = finished_match(table(), [farmer, throwaway, BOT, BOT], [40, 5, 10, 20], [0], hands=2)
        leave(m, throwaway, from_hand=2, moves=ratings.EARLY_LEAVE_MOVES - 1)
        assert ratings.rate_match(m.pk) is False
        assert RatedMatch.objects.get(match=m).reason == RatedMatch.Reason.EARLY_LEAVE
        assert not Rating.objects.exists() and not RatingChange.objects.exists()
        assert Abandonment.objects.filter(user=throwaway).count() == n + 1
        pair = EarlyLeavePair.objects.get(leaver=throwaway, other=farmer)
        assert (pair.times, pair.flagged, pair.last_match_id) == (n + 1, n == 1, m.pk)
    staff = signed_in(make_user("boss", superuser=True))
    page = staff.get(reverse("admin:leagues_earlyleavepair_changelist") + "?flagged=yes")
    assert page.status_code == 200 and "throwaway" in page.content.decode()
    # Past the first turns, leaving is a last place, rated as before.
    m = finished_match(table(), [farmer, throwaway, BOT, BOT], [40, 5, 10, 20], [0], hands=2)
    leave(m, throwaway, from_hand=2, moves=ratings.EARLY_LEAVE_MOVES)
    assert ratings.rate_match(m.pk) is True
    assert Rating.objects.get(user=throwaway).mu < 25 < Rating.objects.get(user=farmer).mu


def test_a_new_account_moves_nobodys_rating_until_it_has_played_matches_to_their_end() -> None:
    """A throwaway account is left out as a bot is: with one established player against it
    the match is not rated; beside two established players it leaves a gap in the places."""
    a, b = users("a", "b")
    (fresh,) = newcomers("fresh")
    m = finished_match(table(), [a, fresh, BOT, BOT], [40, 5, 10, 20], [0])
    assert ratings.rate_match(m.pk) is False
    assert RatedMatch.objects.get(match=m).reason == RatedMatch.Reason.TOO_FEW
    m = finished_match(table(), [a, fresh, b, BOT], [40, 5, 10, 20], [1])
    assert ratings.rate_match(m.pk) is True
    assert_rated(expected({b: 2, a: 4}))  # fresh came first: a gap, as a bot's side
    establish(fresh)
    assert ratings.established([a.pk, b.pk, fresh.pk], m.pk) == {a.pk, b.pk, fresh.pk}
    # Guests never are; a match they left does not count towards it.
    guest = make_user("guest-q1w2e3", is_guest=True)
    establish(guest)
    assert ratings.established([guest.pk], m.pk) == set()
