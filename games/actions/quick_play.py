"""The lobby's "Play now": seat a person at a table of the variant with other people who
want the same game, and fill its empty seats with bots once the wait is over.

A person is seated at once: at the forming table of the variant with the most people, else at
a public table waiting for players, else at a seat whose player left a match between its
hands, else at a new table that forms around them. A forming
table starts when its last seat is filled (``auto_start``), or at ``fill_at``, when the clock
seats bots of ``fill_level`` on its empty seats (:func:`fill_with_bots`); a person seated
there may start it sooner (:func:`start_with_bots`).

Quick plays of one variant run one after another: each locks the variant's row first, so
that people pressing "Play now" at the same moment find each other's table instead of
forming one each."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from games import engine, policy
from games.actions import events
from games.actions.matches import start_match
from games.actions.seats import (
    PLAY_NOW_LEVEL,
    PLAY_NOW_LEVELS,
    check_cooldown,
    live_elsewhere,
    sit,
    stand,
)
from games.actions.tables import create_table, locked_table
from games.errors import GameError
from games.models import Match, Seat, Table, Variant

# Refusals of a table that changed between choosing it and sitting there (the clock filled
# it, or its last seat was taken): the next table is tried.
_GONE = ("match_in_progress", "table_finished", "seat_taken")


def quick_play(
    user: AbstractBaseUser,
    variant: str | Variant,
    *,
    level: str = PLAY_NOW_LEVEL,
    options: dict[str, Any] | None = None,
) -> Table:
    """Seat ``user`` at a table of ``variant`` with other people (see the module), who chose
    the same ``options`` (the engine's checked options; the variant's quick options must
    match, the others are the defaults of a table this person forms). ``level``: the bots
    that fill a table this person forms. Returns the table."""
    if level not in PLAY_NOW_LEVELS:
        raise GameError("bad_bot", f"no bot level {level!r} for Play now")
    key = variant.key if isinstance(variant, Variant) else variant
    try:
        wanted = engine.validate_options(key, options)
    except engine.OptionsError as exc:
        raise GameError("bad_options", str(exc)) from exc
    same = Q(**{f"options__{name}": wanted[name] for name in engine.quick_options(key)})
    with transaction.atomic():
        v = Variant.objects.select_for_update().get(key=key)
        now = timezone.now()
        waiting = _forming_seat_of(user)
        if waiting is not None:
            if waiting.variant_id == v.pk and Table.objects.filter(same, pk=waiting.pk).exists():
                return waiting  # pressed again: still waiting at the same table
            stand(waiting, user)  # they want another game now: the seat goes to whoever comes
        check_cooldown(user, now)
        policy.check_open_table(user, live_elsewhere(user))
        found = [*_forming(v, same), *_waiting_for_players(v, same), *_seat_between_hands(v, same)]
        for table in found:
            try:
                sit(table, user)
            except GameError as exc:
                if exc.code not in _GONE:
                    raise
                continue
            return table
        table = create_table(
            variant=v,
            created_by=None,
            options=options,
            auto_start=True,
            quick=True,
            fill_at=now + timedelta(seconds=settings.QUICK_PLAY_WAIT_SECONDS),
            fill_level=level,
        )
        sit(table, user)
    return table


def _forming_seat_of(user: Any) -> Table | None:
    """The forming table where ``user`` waits, if any."""
    uid = policy.viewer_id(user)
    if uid is None:
        return None
    seat = (
        Seat.objects.filter(user_id=uid, table__quick=True, table__status=Table.Status.OPEN)
        .select_related("table")
        .first()
    )
    return seat.table if seat is not None else None


def _counted(tables: QuerySet[Table]) -> QuerySet[Table]:
    return tables.annotate(
        people=Count("seats", filter=Q(seats__user__isnull=False)),
        bots=Count("seats", filter=Q(seats__bot_level__gt="")),
        free=Count("seats", filter=Q(seats__user__isnull=True, seats__bot_level="")),
    )


def _forming(v: Variant, same: Q) -> list[Table]:
    """The forming tables of ``v`` with someone waiting and a free seat, and the options
    ``same`` asks for: the fullest first (its people wait least), then the oldest. An empty
    one is left to the clock to close."""
    tables = Table.objects.filter(
        same, variant=v, quick=True, status=Table.Status.OPEN, is_private=False
    )
    return list(
        _counted(tables)
        .filter(people__gt=0, free__gt=0)
        .order_by("-people", "created_at", "pk")[:5]
    )


def _open_to_strangers(v: Variant) -> QuerySet[Table]:
    """The tables of ``v`` "Play now" may seat a stranger at: public, not a league's (its
    matches count for a season: one sits there knowingly), nor one whose players sit at
    other tables too."""
    return Table.objects.filter(
        variant=v, is_private=False, other_tables=False, season__isnull=True
    )


def _waiting_for_players(v: Variant, same: Q) -> list[Table]:
    """Tables of ``v`` open to strangers that start by themselves once full, with people and
    no bots waiting at them, and the options ``same`` asks for: someone opened one to play
    with people."""
    tables = _open_to_strangers(v).filter(
        same, quick=False, status=Table.Status.OPEN, auto_start=True
    )
    return list(
        _counted(tables)
        .filter(people__gt=0, bots=0, free__gt=0)
        .order_by("-people", "created_at", "pk")[:5]
    )


def _seat_between_hands(v: Variant, same: Q) -> list[Table]:
    """Tables of ``v`` open to strangers playing a match that is between hands, with a seat
    whose player left it (a bot plays it meanwhile), and the options ``same`` asks for: a
    person takes it from the next hand (``seats.vacated_seats``)."""
    between = Match.objects.filter(
        table_id=OuterRef("pk"), status=Match.Status.PLAYING, next_hand_at__isnull=False
    )
    tables = _open_to_strangers(v).filter(
        same,
        Exists(between),
        status=Table.Status.PLAYING,
        seats__stand_in=True,
        seats__user__isnull=True,
    )
    return list(tables.distinct().order_by("created_at", "pk")[:5])


def fill_with_bots(table_id: int, now: datetime | None = None) -> Match | None:
    """The clock's part: once a forming table's wait is over, bots of its level take the empty
    seats and the match starts. A forming table nobody waits at any more is closed instead
    (the lobby stops listing it). Anything else (not due yet, filled or started already,
    by people or by another worker) is left as it is. Returns the match started, if any."""
    now = now or timezone.now()
    with transaction.atomic():
        t, seats = locked_table(table_id)
        if not policy.forming(t):
            return None
        if not any(s.user_id for s in seats):
            t.status = Table.Status.FINISHED
            t.save(update_fields=["status"])
            events.to_table(events.table_changed(t.id))
            return None
        if not policy.due_to_fill(t, now):
            return None
        policy.check_start_with_bots(t, seats, policy.SYSTEM)
        return _fill(t, seats)


def start_with_bots(table: Table | int, *, by: Any) -> Match:
    """A person waiting at a forming table stops waiting: bots of its level take the empty
    seats and the match starts now."""
    with transaction.atomic():
        t, seats = locked_table(table)
        policy.check_start_with_bots(t, seats, by)
        return _fill(t, seats)


def _fill(t: Table, seats: list[Seat]) -> Match:
    """Bots on the empty seats, then the match (inside the caller's transaction, with the
    table locked). The match's start tells the table and the lobby."""
    level = t.fill_level or PLAY_NOW_LEVEL
    for seat in seats:
        if seat.is_empty:
            seat.bot_level = level
            seat.save(update_fields=["bot_level"])
    return start_match(t, by=policy.SYSTEM)
