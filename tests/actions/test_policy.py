"""Who may do what: one policy module, checked by the services, the consumers and the views."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from games import actions, policy
from games.catalog import ensure_variants
from games.models import Hand, Seat
from tests.play import seed_of, user_table
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db


def refused(code: str, call: Any, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(actions.GameError) as exc:
        call(*args, **kwargs)
    assert exc.value.code == code, exc.value.message


def seats_of(table: Any) -> list[str]:
    """Who holds each seat of ``table``, in order: a username, ``bot (level)`` or ``empty``."""
    return [s.occupant for s in Seat.objects.filter(table=table).order_by("position")]


@pytest.fixture
def host() -> Any:
    ensure_variants()
    return make_user("host")


def test_it_lets_anyone_see_a_public_table_but_only_invitees_a_private_one(
    host: Any, signed_in: SignedIn
) -> None:
    public = actions.create_table(variant="okey51", created_by=host)
    private = actions.create_table(variant="okey51", created_by=host, is_private=True)
    stranger, staff = make_user("stranger"), make_user("staff", staff=True)
    seats = list(private.seats.all())
    assert policy.can_see(public, [], AnonymousUser())
    assert not policy.can_see(private, seats, AnonymousUser())
    assert not policy.can_see(private, seats, stranger)
    assert not policy.can_see(private, seats, stranger, "wrong-token")
    assert policy.can_see(private, seats, stranger, private.invite_token)
    assert policy.can_see(private, seats, host)  # its creator
    assert policy.can_see(private, seats, staff)
    actions.sit(private, stranger, 1, invite=private.invite_token)
    assert policy.can_see(private, list(private.seats.all()), stranger)  # now seated
    # The page and the socket ask the same question.
    assert Client().get(reverse("table", args=[private.pk])).status_code == 404
    assert signed_in(stranger).get(reverse("table", args=[private.pk])).status_code == 200


def test_it_refuses_a_private_seat_without_the_invite(host: Any) -> None:
    private = actions.create_table(variant="duz", created_by=host, is_private=True)
    guest = make_user("guest")
    refused("no_table", actions.sit, private, guest, 0)  # to them, no table at all
    assert not Seat.objects.filter(table=private, user=guest).exists()
    actions.sit(private, guest, 0, invite=private.invite_token)
    assert Seat.objects.get(table=private, position=0).user == guest


def test_it_refuses_a_seat_to_anonymous_users_and_at_running_tables(host: Any) -> None:
    table, users = user_table("okey51")
    refused("sign_in", actions.sit, table, AnonymousUser())
    actions.stand(table, users[3])
    actions.add_bot(table, 3, "greedy", by=actions.SYSTEM)
    actions.start_match(table, by=actions.SYSTEM)
    late = make_user("late")
    refused("match_in_progress", actions.sit, table, late)
    refused("bad_seat", actions.sit, actions.create_table(variant="duz", created_by=None), late, 7)
    assert not Seat.objects.filter(user=late).exists()


def test_it_lets_a_player_stand_only_from_their_own_seat(host: Any) -> None:
    table, users = user_table("duz")
    refused("not_seated", actions.stand, table, host)
    actions.stand(table, users[2])
    assert Seat.objects.get(table=table, position=2).is_empty


def test_it_lets_only_the_host_seat_and_remove_bots_before_the_match(host: Any) -> None:
    table = actions.create_table(variant="okey51", created_by=host)
    player = make_user("player")
    actions.sit(table, player, 0)
    refused("not_host", actions.add_bot, table, 1, "strong", by=player)
    refused("not_host", actions.add_bot, table, 1, "strong", by=AnonymousUser())
    refused("bad_bot", actions.add_bot, table, 1, "grandmaster", by=host)
    assert seats_of(table) == ["player", "empty", "empty", "empty"]
    for p in (1, 2, 3):
        actions.add_bot(table, p, "strong", by=host)
    assert seats_of(table) == ["player", "bot (strong)", "bot (strong)", "bot (strong)"]
    refused("seat_taken", actions.add_bot, table, 0, "strong", by=host)
    refused("not_host", actions.remove_bot, table, 3, by=player)
    refused("no_bot", actions.remove_bot, table, 0, by=host)
    assert seats_of(table) == ["player", "bot (strong)", "bot (strong)", "bot (strong)"]
    actions.remove_bot(table, 3, by=host)
    assert Seat.objects.get(table=table, position=3).is_empty
    actions.add_bot(table, 3, "random", by=host)
    actions.start_match(table, by=host)
    refused("match_in_progress", actions.remove_bot, table, 3, by=host)
    refused("match_in_progress", actions.add_bot, table, 3, "random", by=host)
    assert seats_of(table) == ["player", "bot (strong)", "bot (strong)", "bot (random)"]


def test_it_lets_a_seated_player_host_a_table_nobody_created() -> None:
    table, users = user_table("duz")  # created by the site
    actions.stand(table, users[3])
    outsider = make_user("outsider")
    refused("not_host", actions.add_bot, table, 3, "greedy", by=outsider)
    assert Seat.objects.get(table=table, position=3).is_empty
    actions.add_bot(table, 3, "greedy", by=users[0])
    assert seats_of(table)[3] == "bot (greedy)"


def test_it_starts_a_match_only_for_the_host_at_a_full_table(host: Any) -> None:
    table = actions.create_table(variant="duz", created_by=host)
    actions.sit(table, host, 0)
    refused("seats_not_filled", actions.start_match, table, by=host)
    for p in (1, 2, 3):
        actions.add_bot(table, p, "greedy", by=host)
    refused("not_host", actions.start_match, table, by=AnonymousUser())
    refused("not_host", actions.start_match, table, by=make_user("someone"))
    match = actions.start_match(table, by=host)
    refused("match_in_progress", actions.start_match, table, by=host)
    assert match.hands.count() == 1


def test_it_leaves_ending_matches_and_removing_players_to_staff() -> None:
    table, users = user_table("okey51")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(70))
    staff = make_user("staff", staff=True)
    refused("staff_only", actions.end_match, match, by=users[0])
    refused("staff_only", actions.remove_player, table.seats.get(position=1), by=users[0])
    seat = actions.remove_player(table.seats.get(position=1), by=staff)
    assert seat.user is None and seat.bot_level == "greedy"
    hand = match.hands.get()
    # The hand dealt before keeps the player as its participant.
    assert hand.participants.get(position=1).user == users[1]
    actions.end_match(match, by=staff)
    match.refresh_from_db()
    assert match.status == "abandoned"


def test_it_decides_who_moves_in_one_place() -> None:
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(71)).hands.get()
    seat = Seat.objects.get(table=table, position=0)
    assert policy.actor_for_turn(hand, seat) == policy.Actor("player")
    assert policy.check_move(hand, seat, users[0]).kind == "player"
    refused("not_your_seat", policy.check_move, hand, seat, users[1])
    refused("not_your_seat", policy.check_move, hand, seat, AnonymousUser())
    refused("not_your_seat", policy.check_move, hand, seat, actions.BOT)
    refused("not_your_seat", policy.check_move, hand, seat, actions.CLOCK)
    seat.away = True
    assert policy.actor_for_turn(hand, seat) == policy.Actor("bot", "greedy")
    assert policy.check_move(hand, seat, actions.BOT).kind == "bot"
    assert policy.check_move(hand, seat, users[0]).kind == "player"  # back at once
    seat.away = False
    Hand.objects.filter(pk=hand.pk).update(clock_turn=hand.turn_index)
    hand.refresh_from_db()
    assert policy.actor_for_turn(hand, seat) == policy.Actor("clock", "greedy")
    assert policy.check_move(hand, seat, actions.CLOCK).kind == "clock"
    refused("not_your_seat", policy.check_move, hand, seat, actions.BOT)
    bot_seat = Seat(table=table, position=0, bot_level="strong")
    hand.clock_turn = None
    assert policy.actor_for_turn(hand, bot_seat) == policy.Actor("bot", "strong")


def test_it_lets_signed_in_viewers_chat(host: Any) -> None:
    table = actions.create_table(variant="okey51", created_by=host, is_private=True)
    seats = list(table.seats.all())
    assert not policy.can_chat(table, seats, AnonymousUser(), table.invite_token)
    assert not policy.can_chat(table, seats, make_user("nosy"))
    assert policy.can_chat(table, seats, make_user("friend"), table.invite_token)
    assert policy.can_chat(table, seats, host)
