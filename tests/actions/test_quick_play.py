"""The lobby's "Play now" seats people together (games.actions.quick_play): one forming table
per variant fills with people, bots of the chosen level take its empty seats once the wait is
over (the clock), a person may start it sooner, and a player who left matches often waits a
while. "Practice with bots" (actions.play_now) still starts at once against three bots."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from games import actions, clock, policy, reads
from games.catalog import ensure_variants
from games.errors import GameError
from games.models import Abandonment, Hand, Match, Move, Participant, Seat, Table
from tests.live_daphne import fail_or_skip
from tests.play import bot_table, seed_of
from tests.threads import at_once
from tests.users import SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]
# The module (``games.actions.quick_play`` is also the name of its function, exported there).
quick = importlib.import_module("games.actions.quick_play")


def people(table: Table) -> list[int | None]:
    return list(table.seats.order_by("position").values_list("user_id", flat=True))


def bots(table: Table) -> list[str]:
    return list(table.seats.order_by("position").values_list("bot_level", flat=True))


def seated_at(user: Any) -> list[int]:
    return list(Seat.objects.filter(user=user).values_list("table_id", flat=True))


# ----------------------------------------------------------------------------- forming a table
def test_two_people_pressing_play_now_for_one_variant_sit_at_the_same_table() -> None:
    ayse, can = make_user("ayse"), make_user("can")
    before = timezone.now()

    first = actions.quick_play(ayse, "classic", level="expert")
    second = actions.quick_play(can, "classic", level="greedy")

    assert second.pk == first.pk
    table = Table.objects.get()
    assert table.quick and table.auto_start and not table.is_private
    assert table.status == Table.Status.OPEN and table.created_by is None
    assert table.variant.key == "classic" and table.players == 4
    # The one who formed it chose the bots; the wait is the setting's.
    assert table.fill_level == "expert"
    assert table.fill_at is not None
    wait = timedelta(seconds=settings.QUICK_PLAY_WAIT_SECONDS)
    assert before + wait <= table.fill_at <= timezone.now() + wait
    assert people(table) == [ayse.pk, can.pk, None, None]
    assert bots(table) == ["", "", "", ""]
    assert not Match.objects.exists()


def test_another_variant_forms_another_table() -> None:
    ayse, can = make_user("ayse"), make_user("can")
    classic = actions.quick_play(ayse, "classic")
    duz = actions.quick_play(can, "duz")
    assert classic.pk != duz.pk
    assert duz.variant.key == "duz" and people(duz) == [can.pk, None, None, None]


def test_the_fourth_person_starts_the_match_with_no_bots() -> None:
    players = [make_user(f"p{n}") for n in range(4)]
    tables = {actions.quick_play(p, "okey51").pk for p in players}
    assert len(tables) == 1
    table = Table.objects.get()
    assert table.status == Table.Status.PLAYING
    assert people(table) == [p.pk for p in players] and bots(table) == [""] * 4
    match = Match.objects.get(table=table)
    assert match.hands.get().status == Hand.Status.PLAYING
    # A fifth person forms the next table.
    fifth = actions.quick_play(make_user("p4"), "okey51")
    assert fifth.pk != table.pk and fifth.status == Table.Status.OPEN


def test_the_fullest_forming_table_is_filled_first() -> None:
    lone = actions.quick_play(make_user("lone"), "duz")
    # Another forming table of duz with two people waiting (formed before the first filled).
    pair = actions.create_table(variant="duz", created_by=None, auto_start=True)
    Table.objects.filter(pk=pair.pk).update(
        quick=True, fill_at=timezone.now() + timedelta(seconds=30), fill_level="strong"
    )
    actions.sit(pair, make_user("a"))
    actions.sit(pair, make_user("b"))
    assert actions.quick_play(make_user("c"), "duz").pk == pair.pk
    assert people(Table.objects.get(pk=lone.pk))[1:] == [None, None, None]


def test_a_person_waiting_who_presses_play_now_again_stays_at_their_table() -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "gobek17")
    fill_at = Table.objects.get(pk=table.pk).fill_at

    again = actions.quick_play(ayse, "gobek17")

    assert again.pk == table.pk
    assert Table.objects.count() == 1 and seated_at(ayse) == [table.pk]
    assert Table.objects.get(pk=table.pk).fill_at == fill_at  # the wait is not restarted


def test_a_person_waiting_who_wants_another_game_moves_to_it() -> None:
    ayse, can = make_user("ayse"), make_user("can")
    classic = actions.quick_play(ayse, "classic")
    actions.quick_play(can, "classic")

    duz = actions.quick_play(ayse, "duz")

    assert duz.variant.key == "duz" and seated_at(ayse) == [duz.pk]
    assert people(Table.objects.get(pk=classic.pk)) == [None, can.pk, None, None]


def test_a_person_seated_at_another_live_table_is_refused_and_nothing_is_made() -> None:
    ayse = make_user("ayse")
    other = actions.open_table(variant="duz", user=ayse)
    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")
    assert refused.value.code == "already_seated"
    assert list(Table.objects.values_list("pk", flat=True)) == [other.pk]
    with pytest.raises(GameError) as refused:
        actions.quick_play(make_user("bob"), "classic", level="random")
    assert refused.value.code == "bad_bot"


def test_it_joins_a_public_table_waiting_for_players_before_forming_one() -> None:
    host = make_user("host")
    waiting = actions.open_table(variant="classic", user=host, auto_start=True)
    # Not these: a private one, one with a bot, one that does not start by itself, a league's.
    private = actions.open_table(
        variant="classic", user=make_user("h2"), is_private=True, auto_start=True
    )
    with_bot = actions.open_table(variant="classic", user=make_user("h3"), auto_start=True)
    actions.add_bot(with_bot, 1, "greedy", by=with_bot.created_by)
    by_hand = actions.open_table(variant="classic", user=make_user("h4"))

    table = actions.quick_play(make_user("ayse"), "classic")

    assert table.pk == waiting.pk and not Table.objects.get(pk=table.pk).quick
    for other in (private, with_bot, by_hand):
        assert people(Table.objects.get(pk=other.pk))[1:] == [None, None, None]


# ----------------------------------------------------------------------------- bots fill the rest
def test_bots_of_the_chosen_level_fill_the_empty_seats_once_the_wait_is_over() -> None:
    ayse, can = make_user("ayse"), make_user("can")
    table = actions.quick_play(ayse, "classic", level="greedy")
    actions.quick_play(can, "classic", level="expert")
    fill_at = Table.objects.get(pk=table.pk).fill_at
    assert fill_at is not None

    assert actions.fill_with_bots(table.pk, fill_at - timedelta(seconds=1)) is None
    assert Table.objects.get(pk=table.pk).status == Table.Status.OPEN  # not yet

    match = actions.fill_with_bots(table.pk, fill_at)

    assert match is not None and match.table_id == table.pk
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    assert people(table) == [ayse.pk, can.pk, None, None]
    assert bots(table) == ["", "", "greedy", "greedy"]
    hand = match.hands.get()
    assert [(p.user_id, p.bot_level) for p in hand.participants.order_by("position")] == [
        (ayse.pk, ""),
        (can.pk, ""),
        (None, "greedy"),
        (None, "greedy"),
    ]
    # Again (a second clock worker, a late pass): nothing more happens.
    assert actions.fill_with_bots(table.pk, fill_at + timedelta(seconds=5)) is None
    assert Match.objects.filter(table=table).count() == 1


def test_the_clock_fills_a_forming_table_when_its_wait_is_over_and_not_before() -> None:
    table = actions.quick_play(make_user("ayse"), "duz", level="expert")
    fill_at = Table.objects.get(pk=table.pk).fill_at
    assert fill_at is not None

    clock.tick(now=fill_at - timedelta(seconds=1))
    assert Table.objects.get(pk=table.pk).status == Table.Status.OPEN
    assert bots(table) == [""] * 4

    clock.tick(now=fill_at)
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    assert bots(table) == ["", "expert", "expert", "expert"]
    assert Match.objects.get(table=table).status == Match.Status.PLAYING


def test_the_clock_keeps_going_when_one_table_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    first = actions.quick_play(make_user("ayse"), "duz")
    second = actions.quick_play(make_user("can"), "classic")
    real = actions.fill_with_bots

    def broken(table_id: int, now: Any = None) -> Any:
        if table_id == first.pk:
            raise RuntimeError("broken table")
        return real(table_id, now)

    monkeypatch.setattr(actions, "fill_with_bots", broken)
    clock.tick(now=timezone.now() + timedelta(hours=1))
    assert Table.objects.get(pk=second.pk).status == Table.Status.PLAYING


def test_a_forming_table_everyone_left_is_closed_not_filled_nor_listed() -> None:
    ayse, can = make_user("ayse"), make_user("can")
    table = actions.quick_play(ayse, "classic")
    actions.stand(table, ayse)
    # While it is empty nobody is sent there: the next person forms a table of their own.
    mine = actions.quick_play(can, "classic")
    assert mine.pk != table.pk
    actions.stand(mine, can)

    clock.tick(now=timezone.now() + timedelta(seconds=settings.QUICK_PLAY_WAIT_SECONDS + 1))

    for t in (table, mine):
        t.refresh_from_db()
        assert t.status == Table.Status.FINISHED
        assert bots(t) == [""] * 4 and people(t) == [None] * 4
    assert not Match.objects.exists()
    assert reads.lobby_tables(make_user("viewer")) == []


def test_a_person_who_stands_up_frees_the_seat_and_the_table_keeps_forming() -> None:
    ayse, can, deniz = make_user("ayse"), make_user("can"), make_user("deniz")
    table = actions.quick_play(ayse, "okey51")
    actions.quick_play(can, "okey51")
    actions.stand(table, ayse)
    assert actions.quick_play(deniz, "okey51").pk == table.pk
    assert people(table) == [deniz.pk, can.pk, None, None]


def test_a_seated_person_may_start_at_once_with_bots_and_nobody_else_may() -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "classic", level="strong")
    for stranger in (make_user("bob"), None):
        with pytest.raises(GameError) as refused:
            actions.start_with_bots(table.pk, by=stranger)
        assert refused.value.code == "not_seated"
    assert Table.objects.get(pk=table.pk).status == Table.Status.OPEN

    match = actions.start_with_bots(table.pk, by=ayse)

    assert match.table_id == table.pk
    assert bots(table) == ["", "strong", "strong", "strong"]
    with pytest.raises(GameError) as refused:
        actions.start_with_bots(table.pk, by=ayse)
    assert refused.value.code == "not_forming"
    # A table "Play now" did not form is started by its host, not this way.
    host = make_user("host")
    other = actions.open_table(variant="duz", user=host)
    with pytest.raises(GameError) as refused:
        actions.start_with_bots(other.pk, by=host)
    assert refused.value.code == "not_forming"


def test_nobody_hosts_a_forming_table() -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "duz")
    t = Table.objects.get(pk=table.pk)
    seats = list(t.seats.all())
    assert not policy.may_host(t, seats, ayse)
    assert policy.may_host(t, seats, make_user("staff", staff=True))
    controls = reads.seat_controls(table.pk, ayse)
    assert not controls["may_manage"] and not controls["can_start"]
    assert controls["quick"]["seated"] == 1 and controls["quick"]["may_start"]
    assert 0 < controls["quick"]["fill_in"] <= settings.QUICK_PLAY_WAIT_SECONDS


def test_nobody_at_a_forming_table_may_seat_bots_or_start_it_by_a_crafted_request() -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "duz")
    for call in (
        lambda: actions.add_bot(table.pk, 1, "greedy", by=ayse),
        lambda: actions.start_match(table.pk, by=ayse),
    ):
        with pytest.raises(GameError) as exc:
            call()
        assert exc.value.code == "not_host"
    assert bots(Table.objects.get(pk=table.pk)) == ["", "", "", ""]


def test_a_seat_its_player_left_is_offered_between_hands_before_forming_a_table() -> None:
    """A public match whose player left is between hands: Play now seats a person there (a
    bot played the seat meanwhile), rather than forming a new table."""
    first, second = make_user("first"), make_user("second")
    table = actions.open_table(variant="classic", user=first)
    actions.sit(table, second, 1)
    for position in (2, 3):
        actions.add_bot(table, position, "greedy", by=first)
    match = actions.start_match(table.pk, by=first, seed=seed_of(3))
    actions.leave_table(table, first)
    newcomer = make_user("newcomer")
    # Mid-hand the seat is not free: a new table forms.
    formed = actions.quick_play(newcomer, "classic")
    assert formed.pk != table.pk and formed.quick
    actions.stand(formed, newcomer)
    Hand.objects.filter(match=match).update(status=Hand.Status.FINISHED)
    Match.objects.filter(pk=match.pk).update(next_hand_at=timezone.now())
    assert actions.quick_play(newcomer, "classic").pk == table.pk
    assert people(Table.objects.get(pk=table.pk))[0] == newcomer.pk


def test_a_table_filled_while_it_was_chosen_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock may fill the table a quick play chose before the quick play sits there: the
    person goes to the next table (here a new one), never gets a refusal."""
    table = actions.quick_play(make_user("ayse"), "classic")
    stale = list(quick._forming(table.variant, Q()))
    actions.start_with_bots(table.pk, by=Seat.objects.get(table=table, position=0).user)
    monkeypatch.setattr(quick, "_forming", lambda v, same: stale)

    other = actions.quick_play(make_user("can"), "classic")

    assert other.pk != table.pk and other.status == Table.Status.OPEN


# ----------------------------------------------------------------------------- leaving often
def left_matches(user: Any, *ago_minutes: float) -> list[Match]:
    """``user`` left a match being played, once for each time given (minutes ago)."""
    now = timezone.now()
    matches = []
    for n, minutes in enumerate(ago_minutes):
        table = bot_table("duz", level="greedy")
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(300 + n))
        Abandonment.objects.create(
            user=user, match=match, position=0, at=now - timedelta(minutes=minutes)
        )
        matches.append(match)
    return matches


def finished_match_of(
    user: Any,
    minutes_ago: float = 0,
    *,
    practice: bool = False,
    own_moves: int = policy.LEAVE_LIFTED_BY_MOVES,
    **participant: Any,
) -> Match:
    """A match ``user`` played to its end (their seat in its last hand) with another person
    (or alone with bots: ``practice``), ``own_moves`` of its moves theirs, finished then."""
    if practice:
        match = actions.play_now(user, "duz", seed=seed_of(400))
    else:
        ensure_variants()
        table = actions.create_table(variant="duz", created_by=None)
        Seat.objects.filter(table=table, position=0).update(user=user)
        Seat.objects.filter(table=table, position=1).update(user=make_user(f"with-{user.pk}"))
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(400))
    hand = match.hands.get()
    Move.objects.bulk_create(
        Move(hand=hand, number=1000 + n, seat=0, action={}, by=Move.By.USER, user=user)
        for n in range(own_moves)
    )
    Participant.objects.filter(hand__match=match, user=user).update(**participant)
    at = timezone.now() - timedelta(minutes=minutes_ago)
    Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED, finished_at=at)
    Table.objects.filter(pk=match.table_id).update(status=Table.Status.FINISHED)
    return match


def test_three_matches_left_in_a_day_make_play_now_wait() -> None:
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 4)
    tables = Table.objects.count()

    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")

    assert refused.value.code == "leave_cooldown"
    assert refused.value.detail is not None and 5 * 60 <= int(refused.value.detail) <= 6 * 60
    assert Table.objects.count() == tables and seated_at(ayse) == []
    # Practice is no "Play now": it still seats them with bots.
    assert actions.play_now(ayse, "duz").table.status == Table.Status.PLAYING


@pytest.mark.parametrize(
    "ago",
    [
        (300, 60),  # two are not enough
        (60 * 25, 60, 4),  # one of three is older than a day
        (300, 60, 11),  # the latest was over ten minutes ago
    ],
)
def test_fewer_leaves_or_an_old_one_do_not(ago: tuple[float, ...]) -> None:
    ayse = make_user("ayse")
    left_matches(ayse, *ago)
    assert actions.quick_play(ayse, "classic").quick


def test_a_match_played_to_its_end_after_the_latest_leave_lifts_the_wait() -> None:
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 8)
    finished_match_of(ayse, minutes_ago=1)
    assert actions.quick_play(ayse, "classic").quick


@pytest.mark.parametrize(
    ("minutes_ago", "participant"),
    [
        (9, {}),  # finished before the latest leave
        (1, {"left_at": 3}),  # left before its end
    ],
)
def test_a_match_not_played_to_its_end_after_the_leaves_does_not(
    minutes_ago: float, participant: dict[str, Any]
) -> None:
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 8)
    finished_match_of(ayse, minutes_ago=minutes_ago, **participant)
    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")
    assert refused.value.code == "leave_cooldown"


@pytest.mark.parametrize(
    "kind",
    [{"practice": True}, {"own_moves": policy.LEAVE_LIFTED_BY_MOVES - 1}],
    ids=["practice", "played-by-the-bots-while-away"],
)
def test_a_practice_match_or_one_the_bots_played_for_them_does_not_lift_it(
    kind: dict[str, Any],
) -> None:
    """A match played with bots alone, or one whose moves the bots made for them while they
    were away, lifted the wait in 33 s: it does not any more."""
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 8)
    finished_match_of(ayse, minutes_ago=1, **kind)
    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")
    assert refused.value.code == "leave_cooldown"


def test_the_wait_holds_at_every_route_to_a_seat_with_people() -> None:
    """Play now was the only route it held: a serial leaver sat straight down at a lobby
    table, an invite or an auto-start table, or opened one. Practice with bots stays open."""
    ensure_variants()
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 4)
    lobby = actions.open_table(variant="duz", user=make_user("host1"), name="Lobby")
    private = actions.open_table(
        variant="duz", user=make_user("host2"), name="Friends", is_private=True
    )
    auto = actions.create_table(variant="duz", created_by=None, name="Auto", auto_start=True)
    routes = [
        lambda: actions.sit(lobby, ayse),
        lambda: actions.sit(private, ayse, invite=private.invite_token),
        lambda: actions.sit(auto, ayse),
        lambda: actions.open_table(variant="duz", user=ayse, name="Mine"),
    ]
    for route in routes:
        with pytest.raises(GameError) as refused:
            route()
        assert refused.value.code == "leave_cooldown"
    assert seated_at(ayse) == []
    assert actions.play_now(ayse, "duz").table.status == Table.Status.PLAYING


def test_quitting_practice_does_not_count_as_leaving() -> None:
    ayse = make_user("ayse")
    match = actions.play_now(ayse, "duz")
    actions.leave_table(match.table, ayse)
    assert not Abandonment.objects.filter(user=ayse).exists()
    # Leaving a match with another person does.
    table, match = two_people_match(ayse)
    actions.leave_table(table, ayse)
    assert Abandonment.objects.filter(user=ayse, match=match).exists()


def two_people_match(user: Any) -> tuple[Table, Match]:
    ensure_variants()
    table = actions.create_table(variant="classic", created_by=None)
    actions.sit(table, user, 0)
    actions.sit(table, make_user(f"other-{user.pk}"), 1)
    for position in (2, 3):
        actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
    return table, actions.start_match(table, by=actions.SYSTEM)


def test_a_finished_match_whose_last_hand_they_did_not_hold_does_not_lift_it() -> None:
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60, 8)
    match = finished_match_of(ayse, minutes_ago=1)
    # A later hand was dealt with a bot on their seat: they were gone by the end.
    Hand.objects.filter(match=match).update(status=Hand.Status.FINISHED)
    last = Hand.objects.create(
        match=match,
        number=2,
        starter=1,
        commitment="c",
        seed="s",
        state={},
        status=Hand.Status.FINISHED,
    )
    Participant.objects.create(hand=last, position=0, bot_level="greedy")
    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")
    assert refused.value.code == "leave_cooldown"


def test_a_finished_match_they_abandoned_does_not_count_as_played_to_its_end() -> None:
    ayse = make_user("ayse")
    left_matches(ayse, 300, 60)
    match = finished_match_of(ayse, minutes_ago=1)
    Abandonment.objects.create(
        user=ayse, match=match, position=0, at=timezone.now() - timedelta(minutes=2)
    )
    with pytest.raises(GameError) as refused:
        actions.quick_play(ayse, "classic")
    assert refused.value.code == "leave_cooldown"


def test_the_leave_rule_in_the_policy() -> None:
    now = timezone.now()
    ayse = make_user("ayse")
    three = [now - timedelta(minutes=m) for m in (100, 50, 2)]
    with pytest.raises(GameError) as refused:
        policy.check_quick_play(ayse, three, None, now)
    assert refused.value.detail == str(8 * 60)
    policy.check_quick_play(ayse, three, now - timedelta(minutes=1), now)
    policy.check_quick_play(ayse, three, None, now + timedelta(minutes=8))
    with pytest.raises(GameError) as refused:
        policy.check_quick_play(None, [], None, now)
    assert refused.value.code == "sign_in"


# ----------------------------------------------------------------------------- practice
def test_practice_with_bots_still_starts_at_once_against_three_bots() -> None:
    ayse = make_user("ayse")
    match = actions.play_now(ayse, "classic", level="expert")
    table = match.table
    assert not table.quick and table.status == Table.Status.PLAYING
    assert people(table) == [ayse.pk, None, None, None]
    assert bots(table) == ["", "expert", "expert", "expert"]


# ----------------------------------------------------------------------------- at the same moment
@pytest.mark.django_db(transaction=True)
def test_eight_play_now_requests_at_once_on_postgresql_make_two_full_tables_not_eight(
    signed_in: SignedIn,
) -> None:
    """Each request in its own thread and database connection, through the page: the
    variant's row lock makes them take turns, so each finds the table the ones before formed."""
    if connection.vendor != "postgresql":
        fail_or_skip(
            "POSTGRESQL TEST: the row locks under test are PostgreSQL's (SQLite has one writer). "
            "Run with e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey."
        )
    ensure_variants()
    users = [make_user(f"racer{n}") for n in range(8)]
    clients = [signed_in(user) for user in users]
    answers = at_once(
        [
            lambda c=c: c.post(reverse("play_now"), {"variant": "classic"}).status_code
            for c in clients
        ]
    )

    assert answers == [302] * 8
    tables = list(Table.objects.all())
    assert len(tables) == 2
    seated = list(Seat.objects.filter(user__isnull=False).values_list("user_id", flat=True))
    assert sorted(seated) == sorted(u.pk for u in users)  # each once, nobody twice
    for table in tables:
        assert table.status == Table.Status.PLAYING
        assert sum(1 for p in people(table) if p) == 4 and bots(table) == [""] * 4
        assert Match.objects.filter(table=table, status=Match.Status.PLAYING).count() == 1


def test_people_who_chose_the_same_options_are_seated_together_and_others_apart() -> None:
    """The options chosen before sitting down: two who want 101 of three hands share a table;
    one who wants a single hand forms another; the table is made with the options."""
    three = {"hands": 3, "partners": False, "doubling": False, "assisted": False}
    first = actions.quick_play(make_user("uc-el-1"), "okey101", options=three)
    assert first.options["hands"] == 3
    assert actions.quick_play(make_user("uc-el-2"), "okey101", options=three).pk == first.pk
    single = actions.quick_play(make_user("tek-el"), "okey101", options={**three, "hands": 1})
    assert single.pk != first.pk and single.options["hands"] == 1
    with pytest.raises(actions.GameError) as exc:
        actions.quick_play(make_user("bad"), "okey101", options={"hands": 4})
    assert exc.value.code == "bad_options"
