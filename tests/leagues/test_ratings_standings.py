"""Ratings (OpenSkill Plackett-Luce) and season standings, checked against an example
computed by hand: four players, three matches, one tie, and one 2v2 match."""

from __future__ import annotations

import datetime
import random
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from openskill.models import PlackettLuce

from games import actions
from games.actions import events
from games.models import Match
from leagues import hooks, ratings, standings
from leagues.models import RatedMatch, Rating, RatingChange, Season, SeasonMember, Standing
from tests.leagues.helpers import BOT, finished_match, season, table, users
from tests.play import play_match_with_bots, seed_of
from tests.threads import at_once
from tests.users import PASSWORD, SignedIn, make_user

pytestmark = pytest.mark.django_db


def stored(s: Season) -> list[tuple[Any, ...]]:
    rows = Standing.objects.filter(season=s).order_by("rank", "user_id")
    return [standings.as_tuple(r) for r in rows]


def computed(s: Season) -> list[tuple[Any, ...]]:
    return [standings.as_tuple(line) for line in standings.compute_standings(s)]


def example(**settings: Any) -> tuple[Season, list[Any], list[Match]]:
    """okey51 (penalty points: the fewest win). M1: A wins alone. M2: B and D tie for first.
    M3, 2v2: A and C (seats 0 and 2) beat B and D."""
    a, b, c, d = users("ayse", "burak", "cem", "deniz")
    s = season(members=[a, b, c, d], **settings)
    t1, t2 = table(season=s), table(season=s, partners=True)
    now = timezone.now()
    m1 = finished_match(t1, [a, b, c, d], [10, 30, 20, 40], [0], when=now)
    m2 = finished_match(
        t1, [b, a, d, c], [15, 25, 15, 50], [0, 2], when=now + datetime.timedelta(minutes=1)
    )
    m3 = finished_match(
        t2,
        [a, b, c, d],
        [5, 20, 10, 30],
        [0, 2],
        teams=[0, 1, 0, 1],
        when=now + datetime.timedelta(minutes=2),
    )
    for m in (m1, m2, m3):
        hooks.match_over(m.pk)
    return s, [a, b, c, d], [m1, m2, m3]


def expected_ratings(a: Any, b: Any, c: Any, d: Any) -> dict[int, Any]:
    model = PlackettLuce()
    r = {u.pk: model.rating() for u in (a, b, c, d)}

    def rate(teams: list[list[Any]], ranks: list[float]) -> None:
        new = model.rate([[r[u.pk] for u in team] for team in teams], ranks=ranks)
        for team, after in zip(teams, new, strict=True):
            for u, rating in zip(team, after, strict=True):
                r[u.pk] = rating

    rate([[a], [b], [c], [d]], [1, 3, 2, 4])
    rate([[b], [a], [d], [c]], [1, 3, 1, 4])  # B and D tie
    rate([[a, c], [b, d]], [1, 2])
    return r


def test_standings_and_ratings_match_the_example_computed_by_hand() -> None:
    s, (a, b, c, d), _ = example()
    # By hand: A 10+25+5=40 (W L W); B 30+15+20=65 (L D L); C 20+50+10=80 (L L W);
    # D 40+15+30=85 (L D L). Fewest points first.
    want = expected_ratings(a, b, c, d)
    rating = {u.pk: pytest.approx(want[u.pk].ordinal(), abs=1e-9) for u in (a, b, c, d)}
    assert stored(s) == [
        (a.pk, 1, 3, 2, 0, 40, rating[a.pk], "WLW"),
        (b.pk, 2, 3, 0, 1, 65, rating[b.pk], "LDL"),
        (c.pk, 3, 3, 1, 0, 80, rating[c.pk], "LLW"),
        (d.pk, 4, 3, 0, 1, 85, rating[d.pk], "LDL"),
    ]
    for u in (a, b, c, d):
        row = Rating.objects.get(user=u, variant__key="okey51")
        assert row.mu == pytest.approx(want[u.pk].mu, abs=1e-9)
        assert row.sigma == pytest.approx(want[u.pk].sigma, abs=1e-9)
        assert row.ordinal == pytest.approx(want[u.pk].ordinal(), abs=1e-9)
        assert row.matches == 3
        history = list(RatingChange.objects.filter(user=u).order_by("match_id"))
        assert len(history) == 3
        assert history[0].mu_before == pytest.approx(25.0)
        assert history[-1].ordinal == pytest.approx(row.ordinal)
        assert [h.mu_before for h in history[1:]] == [h.mu_after for h in history[:-1]]
    assert stored(s) == computed(s)


def test_the_season_ranks_by_wins_or_by_rating_when_it_says_so() -> None:
    s, (a, b, c, d), _ = example(counting=Season.Counting.WINS)
    # A 2 wins, C 1, then B and D (no win, one draw each) by points: B 65, D 85.
    assert [row[:2] for row in stored(s)] == [(a.pk, 1), (c.pk, 2), (b.pk, 3), (d.pk, 4)]
    assert stored(s) == computed(s)
    s.counting = Season.Counting.RATING
    s.save()
    standings.recompute(s)
    by_rating = sorted((a, b, c, d), key=lambda u: -Rating.objects.get(user=u).ordinal)
    assert [row[0] for row in stored(s)] == [u.pk for u in by_rating]


def test_a_match_is_rated_and_counted_once_however_often_the_update_runs() -> None:
    s, players, matches = example()
    before = stored(s)
    ratings_before = list(Rating.objects.values_list("user_id", "mu", "sigma", "matches"))
    for m in matches:
        hooks.match_over(m.pk)
        assert ratings.rate_match(m.pk) is False
        assert standings.count_match(m.pk) is False
    call_command("rate_matches")
    call_command("rate_matches")
    assert stored(s) == before
    assert list(Rating.objects.values_list("user_id", "mu", "sigma", "matches")) == ratings_before
    assert RatingChange.objects.count() == 12
    assert RatedMatch.objects.filter(rated=True).count() == 3


def test_the_unique_row_stops_a_second_rating_that_got_past_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As if two workers both found the match unrated: the second insert of its RatedMatch
    fails and its updates roll back, inside an outer transaction too."""
    a, b = users("a", "b")
    m = finished_match(table(), [a, b, *users("c", "d")], [1, 2, 3, 4], [0])
    monkeypatch.setattr(ratings, "_already_rated", lambda pk: False)
    with transaction.atomic():
        assert ratings.rate_match(m.pk) is True
        assert ratings.rate_match(m.pk) is False
    assert RatingChange.objects.filter(match=m).count() == 4
    assert set(Rating.objects.values_list("matches", flat=True)) == {1}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("skip_check", [False, True])
def test_two_workers_racing_rate_a_match_once(
    monkeypatch: pytest.MonkeyPatch, skip_check: bool
) -> None:
    players = users("w", "x", "y", "z")
    m = finished_match(table(), players, [40, 30, 20, 10], [3])
    if skip_check:  # both pass the exists check: the unique constraint decides
        monkeypatch.setattr(ratings, "_already_rated", lambda pk: False)
    outcomes = at_once([lambda: ratings.rate_match(m.pk)] * 2)
    assert sorted(outcomes, key=str) == [False, True]
    assert RatingChange.objects.filter(match=m).count() == 4
    assert set(Rating.objects.values_list("matches", flat=True)) == {1}
    assert RatedMatch.objects.filter(match=m).count() == 1


def test_bots_are_never_rated_and_their_matches_count_only_where_the_season_allows() -> None:
    a, b, c = users("a", "b", "c")
    model = PlackettLuce()
    strict = season(members=[a, b, c])
    m = finished_match(table(season=strict), [a, b, c, BOT], [10, 20, 30, 5], [3])
    hooks.match_over(m.pk)
    # Rated for its three people by their places among all the sides (the bot was 1st)...
    want = model.rate([[model.rating()] for _ in range(3)], ranks=[2, 3, 4])
    got = [Rating.objects.get(user=u) for u in (a, b, c)]
    assert [r.mu for r in got] == pytest.approx([w[0].mu for w in want])
    assert RatedMatch.objects.get(match=m).rated is True
    assert RatingChange.objects.filter(match=m).count() == 3  # nothing for the bot
    # ...but not counted in a season that does not allow bots.
    assert [row[2] for row in stored(strict)] == [0, 0, 0]  # nobody played a counted match

    relaxed = season(name="Relaxed", members=[a, b, c], allow_bots=True)
    m2 = finished_match(table(season=relaxed), [a, b, BOT, c], [10, 20, 5, 30], [2])
    hooks.match_over(m2.pk)
    assert RatingChange.objects.filter(match=m2).count() == 3
    assert [(row[0], row[2], row[7]) for row in stored(relaxed)] == [
        (a.pk, 1, "L"),
        (b.pk, 1, "L"),
        (c.pk, 1, "L"),
    ]
    assert stored(relaxed) == computed(relaxed)


def test_only_matches_between_members_at_the_season_tables_count() -> None:
    a, b, c, d, stranger = users("a", "b", "c", "d", "stranger")
    s = season(members=[a, b, c, d])
    other = season(name="Other", members=[a, b, c, d])
    counted = finished_match(table(season=s), [a, b, c, d], [1, 2, 3, 4], [0])
    with_stranger = finished_match(table(season=s), [a, b, c, stranger], [1, 2, 3, 4], [0])
    elsewhere = finished_match(table(season=other), [a, b, c, d], [4, 3, 2, 1], [3])
    no_season = finished_match(table(), [a, b, c, d], [4, 3, 2, 1], [3])
    too_late = finished_match(
        table(season=s),
        [a, b, c, d],
        [4, 3, 2, 1],
        [3],
        when=timezone.now() + datetime.timedelta(days=60),
    )
    abandoned = finished_match(
        table(season=s), [a, b, c, d], [9, 3, 2, 1], [], status=Match.Status.ABANDONED
    )
    for m in (counted, with_stranger, elsewhere, no_season, too_late, abandoned):
        hooks.match_over(m.pk)
    assert {row[0]: row[2] for row in stored(s)} == {a.pk: 1, b.pk: 1, c.pk: 1, d.pk: 1}
    assert stored(s) == computed(s)
    # Ratings do not depend on seasons: every finished match between people is rated.
    assert RatedMatch.objects.filter(rated=True).count() == 5
    assert not RatedMatch.objects.filter(match=abandoned).exists()

    s.count_abandoned = True
    s.save()
    lines = {line.user_id: line for line in standings.recompute(s)}
    assert lines[d.pk].played == 2 and lines[d.pk].form == "LW"  # d had the fewest points
    assert stored(s) == computed(s)


def test_live_rows_equal_recomputed_ones_after_several_matches() -> None:
    a, b, c, d = users("a", "b", "c", "d")
    s = season(members=[a, b, c])
    t = table(season=s)
    start = timezone.now()
    for n in range(6):
        order = [a, b, c, d][n % 4 :] + [a, b, c, d][: n % 4]
        if n == 4:  # joining recomputes: d's earlier matches now count
            SeasonMember.objects.create(season=s, user=d)
        m = finished_match(
            t, order, [n, 2 * n % 5, 7 - n, 3], [0], when=start + datetime.timedelta(minutes=n)
        )
        hooks.match_over(m.pk)
        assert stored(s) == computed(s)
    live = stored(s)
    standings.recompute(s)
    assert stored(s) == live


def season_match_under_way() -> tuple[Season, Match]:
    """Four members at a table of a season that counts abandoned matches, their match begun."""
    a, b, c, d = users("a", "b", "c", "d")
    s = season(members=[a, b, c, d], count_abandoned=True)
    t = table(season=s)
    for p, u in enumerate((a, b, c, d)):
        actions.sit(t, u, p)
    return s, actions.start_match(t, by=actions.SYSTEM)


def test_the_services_call_the_hook_when_a_match_ends(
    django_capture_on_commit_callbacks: Any,
) -> None:
    s, match = season_match_under_way()
    with django_capture_on_commit_callbacks(execute=True):
        actions.end_match(match, by=actions.SYSTEM)
    # Abandoned: not rated, counted (the season counts abandoned matches).
    assert not RatedMatch.objects.exists()
    assert [row[2] for row in stored(s)] == [1, 1, 1, 1]


def test_a_follower_that_fails_when_a_match_ends_is_logged_and_the_game_goes_on(
    django_capture_on_commit_callbacks: Any, caplog: pytest.LogCaptureFixture
) -> None:
    s, match = season_match_under_way()
    heard: list[int] = []

    def broken(sender: Any, match_id: int, **kwargs: Any) -> None:
        heard.append(match_id)
        raise RuntimeError("a follower's bug")

    events.match_ended.connect(broken, dispatch_uid="test.broken")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            actions.end_match(match, by=actions.SYSTEM)
    finally:
        events.match_ended.disconnect(dispatch_uid="test.broken")
    assert heard == [match.pk]
    assert Match.objects.get(pk=match.pk).status == Match.Status.ABANDONED
    assert [row[2] for row in stored(s)] == [1, 1, 1, 1]  # the leagues heard it all the same
    assert any("a follower's bug" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_the_season_page_shows_the_standings_the_rule_and_a_join_button(
    signed_in: SignedIn,
) -> None:
    s, (a, *_), _ = example(open_to_join=True, allow_bots=True)
    url = reverse("season_standings", args=[s.league_id, s.pk])
    page = Client().get(url).content.decode()
    assert 'data-player="ayse"' in page and "WLW" not in page  # form letters are spans
    assert "Matches with a bot count" in page and "Abandoned matches do not count" in page
    assert "join-season" not in page  # anonymous visitors get no button
    newcomer = users("newcomer")[0]
    client = signed_in(newcomer)
    assert 'data-action="join-season"' in client.get(url).content.decode()
    response = client.post(reverse("season_join", args=[s.league_id, s.pk]))
    assert response.status_code == 302
    assert SeasonMember.objects.filter(season=s, user=newcomer).exists()
    assert Standing.objects.filter(season=s, user=newcomer, played=0, rank=5).exists()
    s.open_to_join = False
    s.save()
    assert client.post(reverse("season_join", args=[s.league_id, s.pk])).status_code == 404


def test_the_leaderboard_lists_the_top_players_by_ordinal() -> None:
    _, players, _ = example()
    page = Client().get(reverse("leaderboard", args=["okey51"])).content.decode()
    order = sorted(players, key=lambda u: -Rating.objects.get(user=u).ordinal)
    positions = [page.index(f'data-player="{u.username}"') for u in order]
    assert positions == sorted(positions)
    assert Client().get(reverse("leaderboard", args=["nope"])).status_code == 404


def test_the_admin_shows_standings_and_recomputes_them() -> None:
    s, _, _ = example()
    Standing.objects.filter(season=s).update(points=0)
    make_user("boss", superuser=True)
    client = Client()
    client.login(username="boss", password=PASSWORD)
    assert client.get(reverse("admin:leagues_season_change", args=[s.pk])).status_code == 200
    assert client.get(reverse("admin:leagues_rating_changelist")).status_code == 200
    response = client.post(
        reverse("admin:leagues_season_changelist"),
        {"action": "recompute_standings", "_selected_action": [s.pk]},
    )
    assert response.status_code == 302
    assert stored(s) == computed(s)


@pytest.mark.slow
def test_a_match_that_finishes_through_the_services_is_looked_at_once(
    django_capture_on_commit_callbacks: Any,
) -> None:
    s = season(allow_bots=True)
    t = table(season=s)
    for p in range(4):
        actions.add_bot(t, p, "random", by=actions.SYSTEM)
    match = actions.start_match(t, by=actions.SYSTEM, seed=seed_of(7))
    with django_capture_on_commit_callbacks(execute=True):
        play_match_with_bots(match, random.Random(7))
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    # Only bots played: looked at once, not rated (nobody to rate), nothing to count.
    assert RatedMatch.objects.get(match=match).rated is False
    assert not Rating.objects.exists() and not Standing.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_count_a_match_in_the_standings_once() -> None:
    players = users("w", "x", "y", "z")
    s = season(members=players)
    m = finished_match(table(season=s), players, [40, 30, 20, 10], [3])
    outcomes = at_once([lambda: hooks.match_over(m.pk) or standings.count_match(m.pk)] * 2)
    assert outcomes == [False, False]  # the hook counted it; the second count found it
    assert [row[2] for row in stored(s)] == [1, 1, 1, 1]
    assert stored(s) == computed(s)
    assert RatingChange.objects.filter(match=m).count() == 4


@pytest.mark.django_db
def test_the_leagues_index_lists_seasons_and_leaderboards() -> None:
    from games.catalog import ensure_variants
    from games.models import Variant
    from leagues.models import League, Season

    ensure_variants()
    league = League.objects.create(name="Ankara", variant=Variant.objects.get(key="duz"))
    season = Season.objects.create(
        league=league,
        name="Spring",
        starts_on=datetime.date(2026, 3, 1),
        ends_on=datetime.date(2026, 5, 31),
    )
    page = Client().get(reverse("leagues")).content.decode()
    assert "Ankara" in page and f'data-season="{season.pk}"' in page
    assert reverse("season_standings", args=[league.pk, season.pk]) in page
    for key in ("classic", "duz", "okey51", "gobek17", "okey101"):
        assert reverse("leaderboard", args=[key]) in page
    assert reverse("leagues") in Client().get(reverse("lobby")).content.decode()


@pytest.mark.django_db
def test_a_season_s_table_options_rule_its_tables() -> None:
    from django.core.exceptions import ValidationError

    from games.catalog import ensure_variants
    from games.errors import GameError
    from games.models import Variant
    from leagues.models import League, Season

    ensure_variants()
    league = League.objects.create(name="İzmir", variant=Variant.objects.get(key="okey51"))
    season = Season(
        league=league,
        name="Autumn",
        starts_on=datetime.date(2026, 9, 1),
        ends_on=datetime.date(2026, 11, 30),
        table_options={"hands": 5},
    )
    with pytest.raises(ValidationError):  # the engine says okey51 plays 1 or 3 hands
        season.full_clean()
    season.table_options = {"bogus": 1}
    with pytest.raises(ValidationError):
        season.full_clean()
    season.table_options = {"hands": 1}
    season.full_clean()
    season.save()

    # A table opened for the season plays by its options, whatever the table asked for.
    table = actions.create_table(
        variant="okey51", created_by=None, season=season, options={"hands": 3}
    )
    assert table.options["hands"] == 1
    # A table with other options cannot be attached to the season afterwards.
    other = actions.create_table(variant="okey51", created_by=None, options={"hands": 3})
    with pytest.raises(GameError) as refused:
        actions.update_table(other, by=actions.SYSTEM, season=season)
    assert refused.value.code == "season_options"
    other.refresh_from_db()
    assert other.season_id is None
    same = actions.create_table(variant="okey51", created_by=None, options={"hands": 1})
    actions.update_table(same, by=actions.SYSTEM, season=season)

    page = Client().get(reverse("season_standings", args=[league.pk, season.pk])).content
    text = page.decode()
    assert "data-table-options" in text and "hands=1" in text
    assert f'data-table="{table.pk}"' in text and f'data-table="{same.pk}"' in text


@pytest.mark.django_db
def test_the_admin_opens_a_table_for_a_season_through_the_services(signed_in: SignedIn) -> None:
    from games.catalog import ensure_variants
    from games.models import Table, Variant
    from leagues.models import League, Season

    ensure_variants()
    league = League.objects.create(name="Bursa", variant=Variant.objects.get(key="duz"))
    season = Season.objects.create(
        league=league,
        name="Winter",
        starts_on=datetime.date(2026, 12, 1),
        ends_on=datetime.date(2027, 2, 28),
        table_options={"timer": 60},
    )
    staff = make_user("boss", superuser=True)
    client = signed_in(staff)
    response = client.post(
        reverse("admin:leagues_season_changelist"),
        {"action": "open_table", "_selected_action": [season.pk]},
        follow=True,
    )
    assert response.status_code == 200
    table = Table.objects.get(season=season)
    assert table.options["timer"] == 60 and table.move_timer == 60
    assert table.seats.count() == 4 and table.status == Table.Status.OPEN
    assert reverse("table", args=[table.pk]) in response.content.decode()
