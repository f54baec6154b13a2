"""Seats: sit, stand, seat or remove a bot, staff taking a player off a seat, and the lobby's
"New table" and "Play now", which open a table and seat its player.

One live table per player (unless a table allows more): a user's row is locked while they
take a seat, so two requests of theirs are checked one after the other."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import Profile, display_name
from games import policy
from games.actions import events
from games.actions.matches import end_match, start_match
from games.actions.tables import create_table, locked_table, visibility_changed
from games.errors import GameError
from games.models import (
    Abandonment,
    Hand,
    Match,
    Move,
    Participant,
    Seat,
    Table,
    Variant,
)


def sit(
    table: Table | int,
    user: AbstractBaseUser,
    position: int | None = None,
    *,
    invite: str | None = None,
    with_people: bool = True,
) -> Seat:
    """Seat a player at an empty place (the first free one if none is named), or give them
    their own seat back (an away player returns). A player who left matches often waits
    before a new seat, whichever way they come to it (``check_cooldown``), unless the table is
    theirs alone with bots (``with_people`` false: practice)."""
    with transaction.atomic():
        visibility_changed(table.pk if isinstance(table, Table) else table)
        t, seats = locked_table(table)
        lock_user(user)  # one live table per player: two sits by one user run one at a time
        elsewhere = None if t.other_tables else live_elsewhere(user, t.pk)
        vacated = vacated_seats(t, seats)
        played = bool(vacated) and played_in_match(t, user)
        seat = policy.check_sit(t, seats, user, position, invite, elsewhere, vacated, played)
        if seat.user_id != user.pk and with_people:
            check_cooldown(user, timezone.now())
        if seat.user_id == user.pk:
            if seat.away:
                seat.away = False
                seat.timeouts_in_a_row = 0
                seat.last_seen = timezone.now()
                seat.save(update_fields=["away", "timeouts_in_a_row", "last_seen"])
            return seat
        seat.user = user  # type: ignore[assignment]
        # A new occupant starts fresh: nothing of the previous holder's presence carries over
        # (nor the bot that played a vacated seat: the person plays it from the next hand).
        seat.bot_level = ""
        seat.stand_in = False
        seat.away = False
        seat.timeouts_in_a_row = 0
        seat.last_seen = timezone.now()
        seat.save(
            update_fields=[
                "user",
                "bot_level",
                "stand_in",
                "away",
                "timeouts_in_a_row",
                "last_seen",
            ]
        )
        _auto_start(t, seats)
    events.to_table(events.table_changed(t.id))
    return seat


def vacated_seats(t: Table, seats: list[Seat]) -> set[int]:
    """The seats of a match being played that a person may take now: their player left the
    match (a bot plays them meanwhile) and the match is between hands, so the newcomer starts
    with a fresh deal."""
    if t.status != Table.Status.PLAYING:
        return set()
    if not any(s.stand_in for s in seats):
        return set()
    match = Match.objects.filter(table=t, status=Match.Status.PLAYING).first()
    if match is None or match.next_hand_at is None:
        return set()
    return {s.position for s in seats if s.stand_in and not s.user_id}


def check_cooldown(user: Any, now: datetime) -> None:
    """Read what the leave rule needs (``policy.check_quick_play``): the player's recent
    abandonments and, only when there are enough of them to matter, when a match they played
    to its end last finished."""
    uid = policy.viewer_id(user)
    abandoned = list(
        Abandonment.objects.filter(user_id=uid, at__gt=now - policy.LEAVE_WINDOW).values_list(
            "at", flat=True
        )
    )
    last_finished = None
    if len(abandoned) >= policy.LEAVE_LIMIT:
        last_finished = _last_finished(uid, max(abandoned))
    policy.check_quick_play(user, abandoned, last_finished, now)


def _last_finished(uid: int | None, since: datetime) -> datetime | None:
    """When the latest match that ``uid`` played to its end finished, after ``since``: they
    held their seat in its last hand (a ``Participant`` row of theirs they did not leave),
    left it at no point (no ``Abandonment``), played it with another person (not practice),
    and played ``policy.LEAVE_LIFTED_BY_MOVES`` of its moves themselves (a match the bots
    played for them while they were away does not count)."""
    later_hand = Hand.objects.filter(
        match_id=OuterRef("hand__match_id"), number__gt=OuterRef("hand__number")
    )
    left = Abandonment.objects.filter(user_id=uid, match_id=OuterRef("hand__match_id"))
    another = Participant.objects.filter(
        hand__match_id=OuterRef("hand__match_id"), user__isnull=False
    ).exclude(user_id=uid)
    finished = (
        Participant.objects.filter(
            user_id=uid,
            left_at__isnull=True,
            hand__match__status=Match.Status.FINISHED,
            hand__match__finished_at__gt=since,
        )
        .filter(~Exists(later_hand), ~Exists(left), Exists(another))
        .order_by("-hand__match__finished_at")
        .values_list("hand__match_id", "hand__match__finished_at")
    )
    for match_id, finished_at in finished[:20]:
        own = Move.objects.filter(hand__match_id=match_id, user_id=uid, by=Move.By.USER).count()
        if own >= policy.LEAVE_LIFTED_BY_MOVES:
            return finished_at  # type: ignore[no-any-return]
    return None


def _with_another_person(match: Match, user_id: Any) -> bool:
    """Whether a person other than ``user_id`` played in the match (a seat of its hands)."""
    return (
        Participant.objects.filter(hand__match=match, user__isnull=False)
        .exclude(user_id=user_id)
        .exists()
    )


def played_in_match(t: Table, user: Any) -> bool:
    """Whether ``user`` held a seat in a hand of the match being played at ``t``, or left it."""
    uid = policy.viewer_id(user)
    match = Match.objects.filter(table=t, status=Match.Status.PLAYING).first()
    if uid is None or match is None:
        return False
    return (
        Participant.objects.filter(hand__match=match, user_id=uid).exists()
        or Abandonment.objects.filter(match=match, user_id=uid).exists()
    )


def lock_user(user: Any) -> None:
    """Lock the user's row (after the table's): seat-taking by one user is serialised, so the
    one-live-table rule holds under concurrent requests."""
    uid = policy.viewer_id(user)
    if uid is not None:
        list(get_user_model().objects.select_for_update().filter(pk=uid).values_list("pk"))


def live_elsewhere(user: Any, table_id: int | None = None) -> int | None:
    """The id of a live table (open or playing), other than ``table_id``, where ``user``
    holds a seat; None if there is none. Tables whose options let their players sit at
    other tables (``other_tables``) do not count."""
    uid = policy.viewer_id(user)
    if uid is None:
        return None
    seats = Seat.objects.filter(
        user_id=uid, table__status__in=policy.LIVE_STATUSES, table__other_tables=False
    )
    if table_id is not None:
        seats = seats.exclude(table_id=table_id)
    return seats.values_list("table_id", flat=True).first()


def _auto_start(t: Table, seats: list[Seat]) -> None:
    """Start the match now if the table's creator asked for it and every seat is filled
    (inside the caller's transaction, with the table locked)."""
    if t.auto_start and t.status == Table.Status.OPEN and not any(s.is_empty for s in seats):
        start_match(t, by=policy.SYSTEM)


def add_bot(table: Table | int, position: int, level: str = "greedy", *, by: Any) -> Seat:
    """Put a bot of ``level`` on an empty seat (the table's host, before the match)."""
    with transaction.atomic():
        t, seats = locked_table(table)
        seat = policy.check_seat_bot(t, seats, by, position, level)
        seat.bot_level = level
        seat.save(update_fields=["bot_level"])
        _auto_start(t, seats)
    events.to_table(events.table_changed(t.id))
    return seat


def remove_bot(table: Table | int, position: int, *, by: Any) -> Seat:
    """Take a bot off its seat (the table's host, before the match)."""
    with transaction.atomic():
        t, seats = locked_table(table)
        seat = policy.check_remove_bot(t, seats, by, position)
        seat.bot_level = ""
        seat.stand_in = False
        seat.save(update_fields=["bot_level", "stand_in"])
    events.to_table(events.table_changed(t.id))
    return seat


def stand(table: Table | int, user: AbstractBaseUser) -> None:
    """Leave a seat. Before a match the seat is freed; during one, a bot keeps it warm."""
    with transaction.atomic():
        t, seats = locked_table(table)
        seat = policy.check_stand(t, seats, user)
        if t.status == Table.Status.PLAYING:
            seat.away = True
            seat.save(update_fields=["away"])
        else:
            _free(seat)
    events.to_table(events.table_changed(t.id))


def leave_table(table: Table | int, user: AbstractBaseUser) -> Seat:
    """Leave the table for good. Before a match (or after one) the seat is freed. During a
    match a bot takes the seat for the rest of it: the leaver is free to sit elsewhere at
    once, the hand being played shows them no further than here, and the match records
    that they left (``Abandonment``: last place in a rated match, and "Play now" waits for
    one who leaves often). A match that no person is left in is ended."""
    table_id = table.pk if isinstance(table, Table) else table
    with transaction.atomic():
        visibility_changed(table_id)
        t, seats = locked_table(table_id)
        seat = policy.check_leave(t, seats, user)
        match = None
        if t.status == Table.Status.PLAYING:
            match = Match.objects.filter(table=t, status=Match.Status.PLAYING).first()
        if match is None:
            _free(seat)
            if t.created_by_id is not None and not any(s.user_id for s in seats if s != seat):
                # Nobody is left at a table someone opened: it closes (off the lobby, and off
                # its creator's count of open tables).
                t.status = Table.Status.FINISHED
                t.save(update_fields=["status"])
        else:
            now = timezone.now()
            # Leaving a match played with bots alone (practice) costs nobody anything.
            if _with_another_person(match, seat.user_id):
                Abandonment.objects.get_or_create(
                    user_id=seat.user_id,
                    match=match,
                    defaults={"position": seat.position, "at": now},
                )
            _to_stand_in(t, seat, t.fill_level or policy.STAND_IN_LEVEL)
            if not any(s.user_id for s in seats if s.pk != seat.pk):
                end_match(match, by=policy.SYSTEM, reason="every player left")
                # Nobody is left to play at this table again: off the lobby.
                Table.objects.filter(pk=t.pk).update(status=Table.Status.FINISHED)
                events.to_lobby()
    events.to_table(events.table_changed(t.id))
    return seat


def come_back(table: Table | int, user: AbstractBaseUser) -> Seat:
    """ "I'm back": a player whose seat a bot was playing (they timed out, or lost the
    connection) plays it again."""
    table_id = table.pk if isinstance(table, Table) else table
    with transaction.atomic():
        t, seats = locked_table(table_id)
        seat = policy.check_stand(t, seats, user)
        if not (seat.away or seat.timeouts_in_a_row):
            return seat
        seat.away = False
        seat.timeouts_in_a_row = 0
        seat.last_seen = timezone.now()
        seat.save(update_fields=["away", "timeouts_in_a_row", "last_seen"])
    events.to_table(events.table_changed(t.id))
    return seat


leave = stand


def _to_stand_in(t: Table, seat: Seat, level: str) -> None:
    """During a match, a bot of ``level`` takes a player's seat for the rest of it (a person
    may take it between hands: ``stand_in``); until the hand being played is over, its
    replay shows the player no further than this. The table's log names them: after the
    moves of the hand being played, or of the one just over when they leave between hands."""
    for hand in Hand.objects.filter(match__table_id=t.pk, status=Hand.Status.PLAYING):
        Participant.objects.filter(
            hand=hand, position=seat.position, user_id=seat.user_id, left_at=None
        ).update(left_at=hand.version)
    latest = (
        Hand.objects.filter(match__table_id=t.pk)
        .order_by("-match_id", "-number")
        .values_list("pk", "version")
        .first()
    )
    seat.left_name = display_name(seat.user)
    seat.left_hand, seat.left_at = latest if latest is not None else (None, None)
    _free(seat)
    seat.bot_level = level
    seat.stand_in = True
    seat.save(update_fields=["bot_level", "stand_in", "left_name", "left_hand", "left_at"])


def _free(seat: Seat) -> None:
    seat.user = None
    seat.away = False
    seat.timeouts_in_a_row = 0
    seat.last_seen = None
    seat.save(update_fields=["user", "away", "timeouts_in_a_row", "last_seen"])
    seat.presences.all().delete()


def remove_player(seat: Seat | int, *, by: Any, level: str = policy.STAND_IN_LEVEL) -> Seat:
    """Staff take a player off a seat. Before a match the seat is freed; during one a bot of
    ``level`` takes the seat over for the rest of the match (the hands already dealt keep
    the player as their participant)."""
    policy.check_staff(by, "remove a player")
    pk = seat.pk if isinstance(seat, Seat) else seat
    table_id = Seat.objects.values_list("table_id", flat=True).get(pk=pk)
    with transaction.atomic():
        visibility_changed(table_id)
        t, seats = locked_table(table_id)
        s = next(x for x in seats if x.pk == pk)
        if not s.user_id:
            raise GameError("not_seated", "nobody sits on that seat")
        if t.status == Table.Status.PLAYING:
            if level not in Seat.Bot.values or not level:
                raise GameError("bad_bot", f"no bot level {level!r}")
            _to_stand_in(t, s, level)
        else:
            _free(s)
    events.to_table(events.table_changed(t.id))
    return s


# The bot levels "Play now" offers (easy, strong, expert), and the one it seats unless the
# player chose another.
PLAY_NOW_LEVELS = (Seat.Bot.GREEDY, Seat.Bot.STRONG, Seat.Bot.EXPERT)
PLAY_NOW_LEVEL = Seat.Bot.STRONG


def open_table(
    *,
    variant: str | Variant,
    user: AbstractBaseUser,
    name: str = "",
    options: dict[str, Any] | None = None,
    is_private: bool = False,
    players: int = 4,
    auto_start: bool = False,
    other_tables: bool = False,
    chat_enabled: bool = True,
    address: str | None = None,
) -> Table:
    """A signed-in player opens a table (the lobby's "New table") and takes seat 0, in one
    transaction: a refused option or a seat elsewhere leaves nothing behind. ``address``: the
    request's, for the limit on guests' tables per address."""
    with transaction.atomic():
        lock_user(user)
        live = Table.objects.filter(status__in=policy.LIVE_STATUSES)
        opened = live.filter(created_by=user).count()
        by_guests = 0
        if address and Profile.objects.filter(user=user, is_guest=True).exists():
            by_guests = live.filter(
                created_from=address, created_by__profile__is_guest=True
            ).count()
        elsewhere = None if other_tables else live_elsewhere(user)
        policy.check_open_table(user, elsewhere, opened, by_guests)
        table = create_table(
            variant=variant,
            created_by=user,
            name=name,
            options=options,
            is_private=is_private,
            players=players,
            auto_start=auto_start,
            other_tables=other_tables,
            chat_enabled=chat_enabled,
            created_from=address,
        )
        sit(table, user, 0)
    return table


def play_now(
    user: AbstractBaseUser,
    variant: str | Variant,
    *,
    level: str = PLAY_NOW_LEVEL,
    seed: str | None = None,
    options: dict[str, Any] | None = None,
) -> Match:
    """One click to play: a table of ``variant`` with its default options (or ``options``,
    checked by the engine), the player at seat 0 and a bot of ``level`` (one of
    ``PLAY_NOW_LEVELS``) on every other seat, and the match started (hand 1 dealt)."""
    if level not in PLAY_NOW_LEVELS:
        raise GameError("bad_bot", f"no bot level {level!r} for Play now")
    with transaction.atomic():
        lock_user(user)
        policy.check_open_table(user, live_elsewhere(user))
        table = create_table(variant=variant, created_by=user, options=options)
        sit(table, user, 0, with_people=False)
        for position in range(1, table.players):
            add_bot(table, position, level, by=user)
        return start_match(table, by=user, seed=seed)
