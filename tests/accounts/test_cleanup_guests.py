"""`manage.py cleanup_guests`: old unused guest accounts go; seats and counted results keep
theirs."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Profile
from accounts.views import create_guest
from games.models import Match, Participant, Seat
from tests.users import make_user

from .helpers import finish, played_match

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

User = get_user_model()


def guest(days_old: int, last_login_days: int | None = None) -> Any:
    """A guest made ``days_old`` days ago, last logged in ``last_login_days`` ago (or never)."""
    user = create_guest()
    now = timezone.now()
    User.objects.filter(pk=user.pk).update(
        date_joined=now - timedelta(days=days_old),
        last_login=None if last_login_days is None else now - timedelta(days=last_login_days),
    )
    return user


def cleanup(*args: str) -> str:
    out = io.StringIO()
    call_command("cleanup_guests", *args, stdout=out)
    return out.getvalue().strip()


def exists(user: Any) -> bool:
    return User.objects.filter(pk=user.pk).exists()


def leave_seat(user: Any) -> None:
    """The player's seats go to nobody (they played, then left the table)."""
    Seat.objects.filter(user=user).update(user=None)


def test_it_deletes_old_guests_that_never_logged_in_again() -> None:
    old = guest(days_old=31)
    assert cleanup() == (
        "Deleted 1 guest account(s) unused for 30 days; "
        "kept 0 that hold a seat or played a finished match."
    )
    assert not exists(old)
    assert not Profile.objects.filter(user_id=old.pk).exists()


@pytest.mark.slow
def test_it_counts_from_the_last_log_in_when_there_is_one() -> None:
    came_back = guest(days_old=90, last_login_days=2)
    gone = guest(days_old=90, last_login_days=45)
    assert cleanup().startswith("Deleted 1 guest account(s)")
    assert exists(came_back) and not exists(gone)


def test_it_keeps_recent_guests_and_players() -> None:
    recent = guest(days_old=29)
    player = make_user("ayse")
    User.objects.filter(pk=player.pk).update(date_joined=timezone.now() - timedelta(days=400))
    kept_player = make_user("mehmet", is_guest=False)
    User.objects.filter(pk=kept_player.pk).update(date_joined=timezone.now() - timedelta(days=400))
    assert cleanup().startswith("Deleted 0 guest account(s)")
    assert exists(recent) and exists(player) and exists(kept_player)


def test_days_sets_the_cut_off() -> None:
    week_old = guest(days_old=8)
    assert cleanup("--days", "10").startswith("Deleted 0")
    assert exists(week_old)
    assert cleanup("--days", "7").startswith("Deleted 1 guest account(s) unused for 7 days")
    assert not exists(week_old)


def test_a_dry_run_deletes_nothing() -> None:
    old = guest(days_old=60)
    seated = guest(days_old=60)
    played_match(seated)
    assert cleanup("--dry-run") == (
        "Would delete 1 guest account(s) unused for 30 days; "
        "kept 1 that hold a seat or played a finished match."
    )
    assert exists(old) and exists(seated)


def test_it_never_deletes_a_guest_with_a_seat() -> None:
    seated = guest(days_old=60)
    match = played_match(seated)
    finish(match, [10, 0, 0, 0], [0])  # over, but the seat is still theirs
    at_open_table = guest(days_old=60, last_login_days=40)
    played = played_match(make_user("host"), seed=2)
    Seat.objects.filter(table=played.table, position=1).update(bot_level="", user=at_open_table)
    assert cleanup().startswith("Deleted 0 guest account(s) unused for 30 days; kept 2")
    assert exists(seated) and exists(at_open_table)


def test_it_never_deletes_a_guest_who_played_a_finished_match() -> None:
    player = guest(days_old=60)
    match = played_match(player)
    leave_seat(player)
    finish(match, [3, 1, 2, 0], [3])
    assert cleanup().endswith("kept 1 that hold a seat or played a finished match.")
    assert exists(player)


@pytest.mark.parametrize("status", [Match.Status.PLAYING, Match.Status.ABANDONED])
def test_it_deletes_a_guest_whose_matches_never_counted(status: str) -> None:
    player = guest(days_old=60)
    match = played_match(player)
    Match.objects.filter(pk=match.pk).update(status=status)
    leave_seat(player)
    hands = list(Participant.objects.filter(user=player).values_list("pk", flat=True))
    assert hands

    assert cleanup().startswith("Deleted 1 guest account(s)")

    assert not exists(player)
    # The hands are kept; their seat now names nobody.
    holders = Participant.objects.filter(pk__in=hands).values_list("user_id", flat=True)
    assert list(holders) == [None] * len(hands)


def test_it_refuses_negative_days() -> None:
    with pytest.raises(SystemExit):
        call_command("cleanup_guests", "--days", "-1", stdout=io.StringIO(), stderr=io.StringIO())
