"""A tournament before it runs (tournaments/actions.py): organisers create it with the engine's
checks on its options, players register within its places and conditions and withdraw, and
twenty players racing for sixteen places on PostgreSQL let exactly sixteen in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from games import policy
from games.errors import GameError
from leagues.models import Rating
from tests.leagues.helpers import BOT, finished_match, table
from tests.live_daphne import fail_or_skip
from tests.threads import at_once, codes
from tests.users import SignedIn, make_user
from tournaments import actions
from tournaments.models import Entry, NoShow, Tournament

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]


def organiser(name: str = "orga") -> Any:
    user = make_user(name)
    user.groups.add(Group.objects.get_or_create(name=policy.ORGANISERS)[0])
    return user


def knockout(size: int = 4, **kwargs: Any) -> Tournament:
    return actions.create(
        by=organiser(), name="Friday sit-and-go", variant="okey101", format="knockout",
        size=size, rated=False, **kwargs,
    )  # fmt: skip


def refused(code: str, fn: Any, *args: Any, **kwargs: Any) -> GameError:
    with pytest.raises(GameError) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value


def test_an_organiser_or_staff_creates_and_anyone_else_is_refused() -> None:
    made = knockout(8, options={"hands": 3})
    assert (made.format, made.places, made.rounds, made.state) == (
        "knockout",
        8,
        None,
        "registering",
    )
    assert made.options["hands"] == 3  # the engine's checked options, the variant's defaults beside
    swiss = actions.create(
        by=make_user("boss", staff=True), name="Swiss", variant="classic", format="swiss", rounds=5
    )
    assert (swiss.places, swiss.rounds) == (200, 5)
    refused("organisers_only", actions.create, by=make_user("ali"), name="Mine",
            variant="classic", format="swiss", rounds=3)  # fmt: skip
    assert Tournament.objects.count() == 2


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"size": 6}, "bad_size"),
        ({"format": "swiss", "rounds": 12}, "bad_rounds"),
        ({"format": "swiss", "rounds": 3, "places": 3}, "bad_places"),
        ({"format": "arena"}, "bad_format"),
        ({"options": {"hands": 0}}, "bad_options"),
        ({"variant": "chess"}, "bad_variant"),
        ({"name": " \u200b "}, "bad_name"),
        ({"starts_at": "past"}, "bad_start"),
    ],
)
def test_a_tournament_that_cannot_be_played_is_refused_and_nothing_is_made(
    changes: dict[str, Any], code: str
) -> None:
    asked = {"name": "Cup", "variant": "okey101", "format": "knockout", "size": 8, **changes}
    if asked.get("starts_at") == "past":
        asked["starts_at"] = timezone.now() - timedelta(minutes=1)
    refused(code, actions.create, by=organiser(), **asked)
    assert not Tournament.objects.exists()


def test_players_register_until_it_is_full_and_a_withdrawal_frees_a_place() -> None:
    event = knockout(4)
    players = [make_user(f"p{n}") for n in range(5)]
    for player in players[:4]:
        actions.register(event.pk, player, "10.0.0.1")
    refused("full", actions.register, event.pk, players[4])
    refused("registered", actions.register, event.pk, players[0])
    actions.withdraw(event.pk, players[0])
    refused("not_registered", actions.withdraw, event.pk, players[0])
    actions.register(event.pk, players[4])
    assert Entry.objects.filter(tournament=event, withdrawn_at__isnull=True).count() == 4
    refused("full", actions.register, event.pk, players[0])  # back only if a place is free
    event.state = Tournament.State.RUNNING
    event.save(update_fields=["state"])
    refused("not_registering", actions.register, event.pk, make_user("late"))
    refused("not_registering", actions.withdraw, event.pk, players[1])


def test_entry_conditions_guests_account_age_and_rated_matches() -> None:
    rated = actions.create(
        by=organiser(), name="Rated", variant="classic", format="swiss", rounds=3,
        min_rated_matches=5, min_account_days=7,
    )  # fmt: skip
    refused("guest", actions.register, rated.pk, make_user("guest-abc123", is_guest=True))
    newcomer = make_user("yeni")
    refused("too_new", actions.register, rated.pk, newcomer)
    type(newcomer).objects.filter(pk=newcomer.pk).update(
        date_joined=timezone.now() - timedelta(days=8)
    )
    newcomer.refresh_from_db()
    refused("too_few_matches", actions.register, rated.pk, newcomer)
    Rating.objects.create(
        user=newcomer, variant=rated.variant, mu=25, sigma=8, ordinal=1, matches=5
    )
    assert actions.register(rated.pk, newcomer).user_id == newcomer.pk


@pytest.mark.django_db(transaction=True)
def test_twenty_registrations_racing_for_sixteen_places_let_sixteen_in_on_postgresql() -> None:
    if connection.vendor != "postgresql":
        fail_or_skip(
            "POSTGRESQL TEST: registrations at once need several writers (SQLite has one). "
            "Run with e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey."
        )
    event = knockout(16)
    players = [make_user(f"racer{n}") for n in range(20)]
    answers = at_once([lambda p=p: actions.register(event.pk, p, "10.0.0.1") for p in players])
    assert codes(answers) == ["full"] * 4 + ["ok"] * 16
    assert Entry.objects.filter(tournament=event).count() == 16


def test_an_invite_only_tournament_takes_those_with_its_invitation() -> None:
    private = knockout(4, public=False)
    refused("invite_only", actions.register, private.pk, make_user("ali"))
    refused("invite_only", actions.register, private.pk, make_user("veli"), invite="guess")
    entry = actions.register(private.pk, make_user("can"), invite=private.invite_token)
    assert entry.tournament_id == private.pk


def test_a_no_show_waits_a_day_then_twice_as_long_until_a_match_is_played_to_its_end() -> None:
    player = make_user("kacak")
    event = knockout(8)
    now = timezone.now()
    NoShow.objects.create(user=player, tournament=event, at=now - timedelta(hours=23))
    error = refused("no_show_wait", actions.register, event.pk, player)
    assert "1 h" in error.message  # a day from the no-show, 23 hours ago
    NoShow.objects.filter(user=player).update(at=now - timedelta(hours=25))
    assert actions.barred_until(player.pk) is None  # the day is over
    NoShow.objects.create(user=player, tournament=event, at=now - timedelta(hours=25))
    until = actions.barred_until(player.pk)
    assert until is not None and abs(until - (now + timedelta(hours=23))) < timedelta(minutes=1)
    for _ in range(8):  # many: a month at the most
        NoShow.objects.create(user=player, tournament=event, at=now)
    until = actions.barred_until(player.pk)
    assert until is not None and abs(until - (now + timedelta(days=30))) < timedelta(minutes=1)
    # A match played to its end since clears them.
    finished_match(table("duz"), [player, BOT, BOT, BOT], [0, 0, 0, 0], [0])
    assert actions.barred_until(player.pk) is None
    assert actions.register(event.pk, player).user_id == player.pk


def test_staff_see_tournaments_their_entries_and_no_shows_in_the_admin(
    signed_in: SignedIn,
) -> None:
    event = knockout(4)
    player = make_user("ali")
    actions.register(event.pk, player)
    NoShow.objects.create(user=player, tournament=event, at=timezone.now())
    staff = signed_in(make_user("boss", superuser=True))
    for url in (
        reverse("admin:tournaments_tournament_changelist"),
        reverse("admin:tournaments_tournament_change", args=[event.pk]),
        reverse("admin:tournaments_noshow_changelist"),
    ):
        page = staff.get(url)
        assert page.status_code == 200, url
    assert (
        "Friday sit-and-go"
        in staff.get(reverse("admin:tournaments_tournament_changelist")).content.decode()
    )
