"""The hottest reads, written out in SQL: the table page's (``reads.tables`` uses them)
and a move's locked read (``actions.moves.play``).

Every table page and every table socket frame reads the table with its seats and the hand it
shows; the page also counts its watchers and looks for the viewer's chat mutes. Composed by
the ORM, each of these queries costs several times more than running it (a join of five
models: 4 ms of query building for 1 ms on the database; docs/PERFORMANCE.md, the table page
and the lobby), so they are written out here: built once per process and database from the
models' own tables and columns, and their rows made into model instances with the fields' own
converters, as the ORM would. They read exactly what the ORM queries they stand for read
(``tests/reads`` run them on SQLite and on PostgreSQL).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connections, router
from django.db.models import Model, Q
from django.utils import timezone

from accounts.models import Profile
from games.models import (
    ChatMessage,
    ChatMute,
    Hand,
    LobbyPresence,
    Match,
    Move,
    Participant,
    Presence,
    Seat,
    Table,
    Variant,
    Watcher,
)
from okeysite.sql import Columns, convert, converters_of


def _names(using: str) -> Any:
    connection = connections[using]
    qn = connection.ops.quote_name

    def table(model: type[Model]) -> str:
        return qn(model._meta.db_table)

    def col(model: type[Model], name: str) -> str:
        return qn(model._meta.get_field(name).column)

    return qn, table, col


def _fresh_since(connection: Any) -> Any:
    """The oldest ``seen_at`` of a presence row that still counts, as a statement parameter."""
    return connection.ops.adapt_datetimefield_value(Presence.fresh_since(timezone.now()))


def _values(
    row: tuple[Any, ...], start: int, converters: list[Any], connection: Any
) -> tuple[Any, ...]:
    """``row``'s values from ``start``, one per (column, converters) pair, converted."""
    return tuple(
        convert(value, column, steps, connection)
        for value, (column, steps) in zip(
            row[start : start + len(converters)], converters, strict=True
        )
    )


# ----------------------------------------------------------------------------- seats
@dataclass(frozen=True)
class _SeatsSql:
    sql: str
    parts: tuple[Columns, ...]


_seats_sql: dict[str, _SeatsSql] = {}


def _seats_statement(using: str) -> _SeatsSql:
    found = _seats_sql.get(using)
    if found is not None:
        return found
    user_model = get_user_model()
    _qn, table, col = _names(using)
    parts = (
        Columns(Seat, "s", using),
        Columns(Table, "t", using),
        Columns(Variant, "v", using),
        Columns(user_model, "u", using),
        Columns(Profile, "p", using),
    )
    here = (
        f"EXISTS (SELECT 1 FROM {table(Presence)} pr"
        f" WHERE pr.{col(Presence, 'seat')} = s.{col(Seat, 'id')}"
        f" AND pr.{col(Presence, 'user')} = s.{col(Seat, 'user')}"
        f" AND pr.{col(Presence, 'seen_at')} >= %s)"
    )
    sql = (
        f"SELECT {', '.join(p.sql for p in parts)}, {here}"
        f" FROM {table(Seat)} s"
        f" JOIN {table(Table)} t ON t.{col(Table, 'id')} = s.{col(Seat, 'table')}"
        f" JOIN {table(Variant)} v ON v.{col(Variant, 'id')} = t.{col(Table, 'variant')}"
        f" LEFT JOIN {table(user_model)} u ON u.{col(user_model, 'id')} = s.{col(Seat, 'user')}"
        f" LEFT JOIN {table(Profile)} p ON p.{col(Profile, 'user')} = u.{col(user_model, 'id')}"
        f" WHERE s.{col(Seat, 'table')} = %s ORDER BY s.{col(Seat, 'position')}"
    )
    found = _seats_sql[using] = _SeatsSql(sql, parts)
    return found


def table_and_seats(table_id: int) -> tuple[Table, tuple[Seat, ...]]:
    """The table (with its variant) and its seats by position, each with its user and the
    user's profile, and annotated ``here`` as ``Presence.here()`` does: what
    ``Seat.objects.filter(table_id=...).select_related("table__variant", "user__profile")
    .annotate(here=Presence.here()).order_by("position")`` reads, in one statement. A table
    always has its seats; one without reads as ``Table.objects.get`` (``Table.DoesNotExist``
    for no table)."""
    using = router.db_for_read(Seat)
    sql, params = seats_query(table_id, using)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return Table.objects.select_related("variant").get(pk=table_id), ()
    return table_and_seats_of(rows, using)


def seats_query(table_id: int, using: str) -> tuple[str, list[Any]]:
    """:func:`table_and_seats`'s statement and parameters (run here, or on the event loop
    by ``games.live.loop_reads``)."""
    return _seats_statement(using).sql, [_fresh_since(connections[using]), table_id]


def table_and_seats_of(rows: list[tuple[Any, ...]], using: str) -> tuple[Table, tuple[Seat, ...]]:
    """The table and its seats made from the rows of :func:`seats_query` (at least one)."""
    seat_cols, table_cols, variant_cols, user_cols, profile_cols = _seats_statement(using).parts
    no_profile = get_user_model()._meta.get_field("profile")
    table: Table | None = None
    seats = []
    for row in rows:
        seat = seat_cols.make(row, 0)
        at = len(seat_cols)
        if table is None:
            table = table_cols.make(row, at)
            table.variant = variant_cols.make(row, at + len(table_cols))
        at += len(table_cols) + len(variant_cols)
        seat.table = table
        if seat.user_id is not None:
            user = user_cols.make(row, at)
            profile = profile_cols.make(row, at + len(user_cols))
            if profile.pk is not None:
                user.profile = profile
            else:
                no_profile.set_cached_value(user, None)  # user.profile: DoesNotExist, no query
            seat.user = user
        at += len(user_cols) + len(profile_cols)
        seat.here = bool(row[at])
        seats.append(seat)
    assert table is not None
    return table, tuple(seats)


# ----------------------------------------------------------------------------- the hand
# The moves a table read shows, as one JSON array of [number, action, events] in a column of
# the hand's statement, by database (``%s``: how many last moves, and the earlier moves'
# kind); elsewhere :func:`hand_moves` reads them with the ORM.
_MOVES_COLUMN = {
    "postgresql": (
        "(SELECT json_agg(json_build_array(mv.{number}, mv.{action}, mv.{events}))::text"
        " FROM {move} mv WHERE mv.{hand} = h.{id} AND mv.{number} <= h.{version}"
        " AND (mv.{number} > h.{version} - %s OR mv.{action} ->> 'do' = %s))"
    ),
    "sqlite": (
        "(SELECT json_group_array(json_array(mv.{number}, json(mv.{action}), json(mv.{events})))"
        " FROM {move} mv WHERE mv.{hand} = h.{id} AND mv.{number} <= h.{version}"
        " AND (mv.{number} > h.{version} - %s OR json_extract(mv.{action}, '$.do') = %s))"
    ),
}


@dataclass(frozen=True)
class _HandSql:
    sql: str
    hand: Columns
    match: Columns
    layout: tuple[Any, list[Any]]  # a layout column and its converters
    with_moves: bool  # the moves are a column of the statement


_hand_sql: dict[tuple[str, int], _HandSql] = {}


def _hand_statement(using: str, players: int) -> _HandSql:
    found = _hand_sql.get((using, players))
    if found is not None:
        return found
    _qn, table, col = _names(using)
    hand_cols, match_cols = Columns(Hand, "h", using), Columns(Match, "m", using)
    layouts = "".join(
        f", (SELECT pa.{col(Participant, 'layout')} FROM {table(Participant)} pa"
        f" WHERE pa.{col(Participant, 'hand')} = h.{col(Hand, 'id')}"
        f" AND pa.{col(Participant, 'position')} = {int(p)})"
        for p in range(players)
    )
    moves = _MOVES_COLUMN.get(connections[using].vendor)
    if moves is not None:
        names = {n: col(Move, n) for n in ("number", "action", "events", "hand")}
        moves = ", " + moves.format(
            move=table(Move), id=col(Hand, "id"), version=col(Hand, "version"), **names
        )
    sql = (
        f"SELECT {hand_cols.sql}, {match_cols.sql}{layouts}{moves or ''}"
        f" FROM {table(Hand)} h"
        f" JOIN {table(Match)} m ON m.{col(Match, 'id')} = h.{col(Hand, 'match')}"
        f" WHERE m.{col(Match, 'table')} = %s"
        f" ORDER BY m.{col(Match, 'started_at')} DESC, h.{col(Hand, 'number')} DESC LIMIT 1"
    )
    found = _HandSql(sql, hand_cols, match_cols, _layout_converters(using), moves is not None)
    _hand_sql[(using, players)] = found
    return found


def latest_hand(
    table_id: int, players: int, last: int = 0, kind: str = ""
) -> tuple[Hand | None, dict[int, Any], list[tuple[int, Any, Any]]]:
    """The table's latest hand with its match (``Hand.objects.filter(match__table_id=...)
    .select_related("match").order_by("-match__started_at", "-number").first()``), each
    seat's stored rack layout for it (``Participant.layout`` by position, for ``players``
    seats; a seat without a row is left out), and its moves as :func:`hand_moves` reads them
    (the ``last`` moves up to the hand's version, and the earlier ones of ``kind``). One
    statement on PostgreSQL and SQLite (the moves as a JSON array in a column of it)."""
    using = router.db_for_read(Hand)
    sql, params = hand_query(table_id, players, last, kind, using)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    hand, layouts, moves = latest_hand_of(row, players, using)
    if hand is not None and moves is None:
        moves = hand_moves(hand.pk, hand.version - last, hand.version, kind)
    return hand, layouts, moves or []


def hand_query(
    table_id: int, players: int, last: int, kind: str, using: str
) -> tuple[str, list[Any]]:
    """:func:`latest_hand`'s statement and parameters (run here, or on the event loop by
    ``games.live.loop_reads``)."""
    statement = _hand_statement(using, players)
    return statement.sql, [last, kind, table_id] if statement.with_moves else [table_id]


def latest_hand_of(
    row: tuple[Any, ...] | None, players: int, using: str
) -> tuple[Hand | None, dict[int, Any], list[tuple[int, Any, Any]] | None]:
    """The hand, layouts and moves made from :func:`hand_query`'s row (None: no hand). The
    moves are None where the statement has no column of them (see :func:`hand_moves`)."""
    if row is None:
        return None, {}, []
    statement = _hand_statement(using, players)
    connection = connections[using]
    hand = statement.hand.make(row, 0)
    hand.match = statement.match.make(row, len(statement.hand))
    at = len(statement.hand) + len(statement.match)
    layouts = {
        p: convert(row[at + p], *statement.layout, connection)
        for p in range(players)
        if row[at + p] is not None
    }
    if not statement.with_moves:
        return hand, layouts, None
    listed = json.loads(row[at + players] or "[]")
    moves = sorted(((int(n), a, e) for n, a, e in listed), key=lambda move: move[0])
    return hand, layouts, moves


# ----------------------------------------------------------------------------- the moves
def hand_moves(hand_id: int, after: int, upto: int, kind: str) -> list[tuple[int, Any, Any]]:
    """``(number, action, events)`` of the hand's moves numbered ``after`` < n <= ``upto``,
    and of its earlier moves whose action is ``kind`` (``{"do": kind, ...}``), by number.
    :func:`latest_hand` takes them with the hand on PostgreSQL and SQLite; this is the same
    read by the ORM, for other databases."""
    return list(
        Move.objects.using(router.db_for_read(Move))
        .filter(Q(number__gt=after) | Q(action__do=kind), hand_id=hand_id, number__lte=upto)
        .order_by("number")
        .values_list("number", "action", "events")
    )


# ----------------------------------------------------------------------------- a move
_lock_sql: dict[str, tuple[str, Columns, Columns]] = {}


def _lock_statement(using: str) -> tuple[str, Columns, Columns]:
    found = _lock_sql.get(using)
    if found is not None:
        return found
    connection = connections[using]
    qn, table, col = _names(using)
    hand_cols, seat_cols = Columns(Hand, table(Hand), using), Columns(Seat, "s", using)
    lock = f" FOR UPDATE OF {table(Hand)}" if connection.features.has_select_for_update_of else ""
    # Planned on every move: the timer by a subquery (a join fewer) plans faster.
    sql = (
        f"SELECT {hand_cols.sql}, {seat_cols.sql}, m.{col(Match, 'table')},"
        f" (SELECT t.{col(Table, 'move_timer')} FROM {table(Table)} t"
        f" WHERE t.{col(Table, 'id')} = m.{col(Match, 'table')}),"
        f" (SELECT pa.{col(Participant, 'layout')} FROM {table(Participant)} pa"
        f" WHERE pa.{col(Participant, 'hand')} = {table(Hand)}.{col(Hand, 'id')}"
        f" AND pa.{col(Participant, 'position')} = %s)"
        f" FROM {table(Hand)}"
        f" JOIN {table(Match)} m ON m.{col(Match, 'id')} = {table(Hand)}.{col(Hand, 'match')}"
        f" LEFT JOIN {table(Seat)} s"
        f" ON s.{col(Seat, 'table')} = m.{col(Match, 'table')} AND s.{col(Seat, 'position')} = %s"
        f" WHERE {table(Hand)}.{col(Hand, 'id')} = %s{lock}"
    )
    found = _lock_sql[using] = (sql, hand_cols, seat_cols)
    return found


_layout_conv: dict[str, tuple[Any, list[Any]]] = {}


def _layout_converters(using: str) -> tuple[Any, list[Any]]:
    """A stored rack layout's column and converters (``Participant.layout``)."""
    found = _layout_conv.get(using)
    if found is None:
        found = _layout_conv[using] = converters_of(
            Participant._meta.get_field("layout"), "pa", using
        )
    return found


@dataclass(frozen=True)
class LockedHand:
    """A hand locked for a move, with what the move needs read in the same statement."""

    hand: Hand
    seat: Seat | None  # the moving seat's row; None: the table has no such seat
    table_id: int
    move_timer: int  # the table's seconds per move (0: no timer)
    layout: list[str | None] | None  # the seat's stored rack layout for the hand, if any


def locked_hand(hand_id: int, seat: int) -> LockedHand:
    """Lock the hand's row (``SELECT ... FOR UPDATE OF`` the hand only, on PostgreSQL) and
    read with it, in one statement, the moving ``seat``'s row, its table's id and move timer,
    and the seat's stored rack layout for the hand; for ``actions.moves.play``. Raises
    ``Hand.DoesNotExist``. Must run inside a transaction.

    Every write to a hand's game state happens under this lock, so moves at one table are
    applied one at a time; the match, table and seat rows joined here are read, not locked,
    so other tables never wait on them. (SQLite has no row locks: its write transactions
    begin IMMEDIATE, one at a time.)"""
    using = router.db_for_write(Hand)
    sql, hand_cols, seat_cols = _lock_statement(using)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [seat, seat, hand_id])
        row = cursor.fetchone()
    if row is None:
        raise Hand.DoesNotExist(f"no hand {hand_id}")
    hand = hand_cols.make(row, 0)
    at = len(hand_cols) + len(seat_cols)
    layout = row[at + 2]
    if layout is not None:
        layout = convert(layout, *_layout_converters(using), connections[using])
    # No seat at that position: the LEFT JOIN's NULLs.
    seat_row = None if row[len(hand_cols)] is None else seat_cols.make(row, len(hand_cols))
    return LockedHand(hand, seat_row, row[at], row[at + 1] or 0, layout)


# ----------------------------------------------------------------------------- the page
@dataclass(frozen=True)
class PageCounts:
    """What the table page reads beside the board: how many watch (as
    ``reads.watching``), whether the viewer has ever muted anyone at the table, and the
    ids of the table's two latest matches (newest first), for the chat window."""

    watching: int
    has_mutes: bool
    latest_matches: list[int]


_page_sql: dict[str, str] = {}


def _page_statement(using: str) -> str:
    found = _page_sql.get(using)
    if found is not None:
        return found
    _qn, table, col = _names(using)
    latest = (
        f"SELECT mt.{col(Match, 'id')} FROM {table(Match)} mt WHERE mt.{col(Match, 'table')} = %s"
        f" ORDER BY mt.{col(Match, 'started_at')} DESC, mt.{col(Match, 'id')} DESC LIMIT 1"
    )
    sql = (
        f"SELECT (SELECT COUNT(*) FROM {table(Watcher)} w"
        f" WHERE w.{col(Watcher, 'table')} = %s AND w.{col(Watcher, 'seen_at')} >= %s"
        f" AND NOT EXISTS (SELECT 1 FROM {table(Seat)} se"
        f" WHERE se.{col(Seat, 'table')} = w.{col(Watcher, 'table')}"
        f" AND se.{col(Seat, 'user')} = w.{col(Watcher, 'user')})),"
        f" EXISTS (SELECT 1 FROM {table(ChatMute)} cm WHERE cm.{col(ChatMute, 'table')} = %s"
        f" AND cm.{col(ChatMute, 'user')} = %s),"
        f" ({latest}), ({latest} OFFSET 1)"
    )
    _page_sql[using] = sql
    return sql


def page_counts(table_id: int, user_id: int | None) -> PageCounts:
    """:class:`PageCounts` for the table and the viewer (``None``: anonymous), in one
    statement."""
    using = router.db_for_read(Watcher)
    connection = connections[using]
    since = _fresh_since(connection)
    with connection.cursor() as cursor:
        cursor.execute(
            _page_statement(using), [table_id, since, table_id, user_id, table_id, table_id]
        )
        watching, mutes, latest, before = cursor.fetchone()
    return PageCounts(
        watching=int(watching or 0),
        has_mutes=user_id is not None and bool(mutes),
        latest_matches=[m for m in (latest, before) if m is not None],
    )


# ----------------------------------------------------------------------------- the lobby
@dataclass(frozen=True)
class LobbyList:
    """What the lobby's live part reads (``reads.lobby_context``), in one statement.

    ``tables``: the listed tables, newest first, as tuples of ``LOBBY_TABLE`` values;
    ``seats``: each listed table's seats by position, as tuples of ``LOBBY_SEAT`` values;
    ``watching``: how many watch each listed table (as ``reads.watching`` counts);
    ``online``: the players online (as ``online_count``)."""

    tables: list[tuple[Any, ...]]
    seats: dict[int, list[tuple[Any, ...]]]
    watching: dict[int, int]
    online: int


# The values of a listed table and of a seat, in order (``reads.lobby`` names them).
LOBBY_TABLE = (
    (Table, "id"),
    (Table, "name"),
    (Variant, "key"),
    (Variant, "name"),
    (Table, "status"),
    (Table, "is_private"),
    (Table, "invite_token"),
    (Table, "created_by"),
    (Table, "players"),
    (Table, "move_timer"),
    (Table, "auto_start"),
    (Table, "other_tables"),
    (Table, "options"),
)
LOBBY_SEAT = (
    (Seat, "table"),
    (Seat, "position"),
    (Seat, "user"),
    (Seat, "bot_level"),
    (Seat, "team"),
    (Seat, "away"),
    ("user", "username"),
    (Profile, "display_name"),
)


@dataclass(frozen=True)
class _LobbySql:
    sql: str
    table_converters: list[tuple[Any, list[Any]]]
    seat_converters: list[tuple[Any, list[Any]]]


_lobby_sql: dict[tuple[str, bool], _LobbySql] = {}


def _online_statement(using: str) -> str:
    """The players online (``%s`` twice: the freshness limit): distinct users with a fresh
    seated table socket or a fresh lobby socket."""
    _qn, table, col = _names(using)
    return (
        f"SELECT COUNT(*) FROM (SELECT pr.{col(Presence, 'user')} FROM {table(Presence)} pr"
        f" WHERE pr.{col(Presence, 'seen_at')} >= %s"
        f" UNION SELECT lp.{col(LobbyPresence, 'user')} FROM {table(LobbyPresence)} lp"
        f" WHERE lp.{col(LobbyPresence, 'seen_at')} >= %s) online_users"
    )


def _lobby_statement(using: str, signed_in: bool) -> _LobbySql:
    found = _lobby_sql.get((using, signed_in))
    if found is not None:
        return found
    user_model = get_user_model()
    _qn, table, col = _names(using)
    aliases = {Table: "t", Variant: "v", Seat: "s", user_model: "u", Profile: "p"}

    def field(model: Any, name: str) -> Any:
        return (user_model if model == "user" else model)._meta.get_field(name)

    listed = ", ".join(
        f"{aliases[f.model]}.{col(f.model, f.name)} AS c{i}"
        for i, f in enumerate(field(m, n) for m, n in LOBBY_TABLE)
    )
    seat_columns = ", ".join(
        f"{aliases[f.model]}.{col(f.model, f.name)}" for f in (field(m, n) for m, n in LOBBY_SEAT)
    )
    visible = f"t.{col(Table, 'is_private')} = %s"
    if signed_in:
        visible = (
            f"({visible} OR t.{col(Table, 'created_by')} = %s"
            f" OR t.{col(Table, 'id')} IN (SELECT se.{col(Seat, 'table')} FROM {table(Seat)} se"
            f" WHERE se.{col(Seat, 'user')} = %s))"
        )
    watching = (
        f"SELECT COUNT(*) FROM {table(Watcher)} w"
        f" WHERE w.{col(Watcher, 'table')} = t.{col(Table, 'id')}"
        f" AND w.{col(Watcher, 'seen_at')} >= %s AND NOT EXISTS (SELECT 1 FROM {table(Seat)} se"
        f" WHERE se.{col(Seat, 'table')} = w.{col(Watcher, 'table')}"
        f" AND se.{col(Seat, 'user')} = w.{col(Watcher, 'user')})"
    )
    n = len(LOBBY_TABLE)
    sql = (
        f"WITH listed AS (SELECT {listed}, ({watching}) AS watching,"
        f" t.{col(Table, 'created_at')} AS created_at"
        f" FROM {table(Table)} t JOIN {table(Variant)} v"
        f" ON v.{col(Variant, 'id')} = t.{col(Table, 'variant')}"
        f" WHERE t.{col(Table, 'status')} IN (%s, %s) AND {visible}"
        f" ORDER BY t.{col(Table, 'created_at')} DESC, t.{col(Table, 'id')} DESC LIMIT %s)"
        f" SELECT ({_online_statement(using)}),"
        f" {', '.join(f'l.c{i}' for i in range(n))}, l.watching, {seat_columns}"
        # One row even with no table listed, for the count.
        f" FROM (SELECT 1 AS one) o LEFT JOIN listed l ON 1 = 1"
        f" LEFT JOIN {table(Seat)} s ON s.{col(Seat, 'table')} = l.c0"
        f" LEFT JOIN {table(user_model)} u ON u.{col(user_model, 'id')} = s.{col(Seat, 'user')}"
        f" LEFT JOIN {table(Profile)} p ON p.{col(Profile, 'user')} = u.{col(user_model, 'id')}"
        f" ORDER BY l.created_at DESC, l.c0 DESC, s.{col(Seat, 'position')}"
    )
    found = _lobby_sql[(using, signed_in)] = _LobbySql(
        sql,
        [
            converters_of(field(m, name), aliases[field(m, name).model], using)
            for m, name in LOBBY_TABLE
        ],
        [
            converters_of(field(m, name), aliases[field(m, name).model], using)
            for m, name in LOBBY_SEAT
        ],
    )
    return found


def lobby_list(user_id: int | None, statuses: tuple[str, str], limit: int) -> LobbyList:
    """The lobby's list for the viewer ``user_id`` (``None``: anonymous): the tables in
    ``statuses`` that are public, or theirs (they created them, or hold a seat there), newest
    first, at most ``limit``; with their seats, spectators, and the players online."""
    using = router.db_for_read(Table)
    statement = _lobby_statement(using, user_id is not None)
    connection = connections[using]
    since = _fresh_since(connection)
    visible: list[Any] = [False] if user_id is None else [False, user_id, user_id]
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, [since, *statuses, *visible, limit, since, since])
        rows = cursor.fetchall()
    n = len(LOBBY_TABLE)
    tables: list[tuple[Any, ...]] = []
    seats: dict[int, list[tuple[Any, ...]]] = {}
    watching: dict[int, int] = {}
    for row in rows:
        table_id = row[1]
        if table_id is None:
            break  # no table listed: the row of the count alone
        if table_id not in seats:
            tables.append(_values(row, 1, statement.table_converters, connection))
            seats[table_id] = []
            watching[table_id] = int(row[1 + n])
        if row[2 + n] is not None:  # the seat's table: a table without seats has none
            seats[table_id].append(_values(row, 2 + n, statement.seat_converters, connection))
    return LobbyList(tables, seats, watching, int(rows[0][0]) if rows else 0)


def online_count() -> int:
    """The players online (``reads.online_count``)."""
    using = router.db_for_read(Presence)
    connection = connections[using]
    since = _fresh_since(connection)
    with connection.cursor() as cursor:
        cursor.execute(_online_statement(using), [since, since])
        return int(cursor.fetchone()[0])


# ----------------------------------------------------------------------------- the chat panel
# The lines a panel shows when it opens, by how many matches the table has had (0, 1, 2 or
# more: ``%s`` is the latest): before the first match, what was said so far; during and after
# the first, that and the match's; from the second on, the latest match's only. So a rematch
# starts with an empty panel, and what was said while the seats filled stays through the
# first match.
_CHAT_WINDOW = ("c.{match} IS NULL", "(c.{match} = %s OR c.{match} IS NULL)", "c.{match} = %s")


@dataclass(frozen=True)
class _ChatSql:
    where: str  # the select, up to the window
    order: str  # the order and the limit
    user: str  # the author's column
    columns: Columns


_chat_sql: dict[tuple[str, int], _ChatSql] = {}


def _chat_statement(using: str, matches: int) -> _ChatSql:
    found = _chat_sql.get((using, matches))
    if found is not None:
        return found
    _qn, table, col = _names(using)
    columns = Columns(ChatMessage, "c", using)
    window = _CHAT_WINDOW[matches].format(match=col(ChatMessage, "match"))
    found = _chat_sql[(using, matches)] = _ChatSql(
        where=(
            f"SELECT {columns.sql} FROM {table(ChatMessage)} c"
            f" WHERE c.{col(ChatMessage, 'table')} = %s AND {window}"
        ),
        order=f" ORDER BY c.{col(ChatMessage, 'id')} DESC LIMIT %s",
        user=f"c.{col(ChatMessage, 'user')}",
        columns=columns,
    )
    return found


def chat_lines(
    table_id: int, latest_matches: list[int], muted: set[int], limit: int
) -> list[ChatMessage]:
    """The last ``limit`` lines of the table's chat panel (see ``_CHAT_WINDOW``), oldest
    first, without those of the ``muted`` users. ``latest_matches``: the ids of the table's
    latest matches, newest first (two are enough)."""
    using = router.db_for_read(ChatMessage)
    statement = _chat_statement(using, min(len(latest_matches), 2))
    sql, params = statement.where, [table_id, *latest_matches[:1]]
    if muted:  # rare (a viewer who muted someone), so not a kept statement
        listed = ", ".join(["%s"] * len(muted))
        sql += f" AND ({statement.user} IS NULL OR {statement.user} NOT IN ({listed}))"
        params += sorted(muted)
    with connections[using].cursor() as cursor:
        cursor.execute(sql + statement.order, [*params, limit])
        rows = cursor.fetchall()
    return [statement.columns.make(row, 0) for row in reversed(rows)]
