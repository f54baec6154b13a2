"""Tables can belong to a league season, run from the admin."""

from __future__ import annotations

import datetime

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from games import actions
from games.models import Variant
from leagues.models import League, Season
from tests.users import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def _season(variant: str = "okey51") -> Season:
    league = League.objects.create(name="İstanbul league", variant=Variant.objects.get(key=variant))
    return Season.objects.create(
        league=league,
        name="Winter 2026",
        starts_on=datetime.date(2026, 12, 1),
        ends_on=datetime.date(2027, 2, 28),
    )


def test_it_puts_a_table_in_a_season_of_its_variant() -> None:
    season = _season()
    table = actions.create_table(variant="okey51", created_by=None, season=season)
    assert list(season.tables.all()) == [table]
    with pytest.raises(actions.GameError) as exc:
        actions.create_table(variant="duz", created_by=None, season=season)
    assert exc.value.code == "bad_season"


def test_it_refuses_a_season_that_ends_before_it_starts() -> None:
    league = League.objects.create(name="Ankara", variant=Variant.objects.get(key="duz"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Season.objects.create(
            league=league,
            name="Backwards",
            starts_on=datetime.date(2026, 5, 1),
            ends_on=datetime.date(2026, 4, 1),
        )


def test_it_runs_leagues_and_seasons_from_the_admin() -> None:
    season = _season()
    make_user("boss", superuser=True)
    client = Client()
    client.login(username="boss", password=PASSWORD)
    for url in [
        reverse("admin:leagues_league_changelist"),
        reverse("admin:leagues_league_change", args=[season.league_id]),
        reverse("admin:leagues_season_changelist"),
        reverse("admin:games_table_changelist") + f"?season__id__exact={season.pk}",
    ]:
        assert client.get(url).status_code == 200, url
