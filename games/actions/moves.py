"""Moves: a seat's move, checked and applied through the engine, logged and stored, in one
transaction that locks the hand row alone; and the rack's arrangement (private to the seat).

``play`` takes an engine move; ``submit`` a move as the table page sends it (tiles picked on
the rack, grouped as they stand there)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connections, router, transaction
from django.utils import timezone

from games import engine, policy, reads
from games.actions import events
from games.actions.matches import close_hand, snapshot
from games.engine import layout as rack_layout
from games.errors import GameError, StaleVersion
from games.models import (
    Hand,
    Move,
    Participant,
    Seat,
    Table,
)


@dataclass
class Played:
    """The outcome of an accepted move (or of a repeated ``client_move_id``)."""

    move: Move
    version: int
    events: list[dict[str, Any]] = field(default_factory=list)
    repeated: bool = False


def play(
    hand: Hand | int,
    seat: int,
    move: dict[str, Any],
    *,
    by: AbstractBaseUser | str,
    expected_version: int | None = None,
    client_move_id: str | None = None,
    level: str = "",
    table_id: int | None = None,
    slots: list[int] | None = None,
) -> Played:
    """Apply one move for ``seat`` of ``hand``, as ``by`` (a user, ``"bot"`` or ``"clock"``).
    ``table_id``: the table the client is at; a hand of another table is answered exactly as
    a hand that does not exist (``no_hand``), before anything about it is looked at, so no
    answer tells another table's hand (private or not) from a missing one. ``slots``: the
    places on the seat's stand of the tiles the move plays (a move of one tile: its one
    slot, which must hold that tile); the stand then loses those copies, not the first ones.

    In one transaction: lock the hand, answer a repeated ``client_move_id`` with its first
    result, refuse a stale ``expected_version``, check with the policy that ``by`` may act for
    the seat, apply through the engine, append the engine's normalised move, store the snapshot
    and version, set the deadline, close the hand and match when they end (dealing the next
    hand), and publish after commit. ``level`` names the bot level that chose a bot's move.
    """
    pk = _hand_pk(hand)
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise GameError("bad_seat", f"a seat is a number, not {seat!r}")
    if not isinstance(move, dict):
        raise GameError("bad_move", "a move is an object with a 'do' field")
    if expected_version is not None and (
        isinstance(expected_version, bool) or not isinstance(expected_version, int)
    ):
        raise GameError("bad_move", "expected_version is a number")
    if client_move_id is not None and (
        not isinstance(client_move_id, str) or len(client_move_id) > 64
    ):
        raise GameError("bad_move", "client_move_id is a string of at most 64 characters")
    try:
        with transaction.atomic():
            return _play_locked(
                pk, seat, move, by, expected_version, client_move_id, level, table_id, slots
            )
    except Hand.DoesNotExist as exc:
        raise GameError("no_hand", f"there is no hand {pk}") from exc
    except IntegrityError:
        # A move sent again passed the checks (or two raced): the unique id kept the first.
        repeated = _repeat_of(pk, client_move_id, seat, by)
        if repeated is not None:
            return repeated
        raise


# Kinds whose tiles a client picks on the rack: the selected tiles, grouped as they stand.
_TABLE_PLAYS = ("open", "lay")

# Kinds that play one tile of the rack, named by ``tile`` (and its ``slot`` on the stand).
_ONE_TILE = ("discard", "finish", "add", "swap")


# Refusals after which a finish is tried again with the solver's grouping instead of the rack's.
_FINISH_RETRY = ("not_a_finish", "invalid_meld", "bad_move", "bad_groups")


def submit(
    hand: Hand | int,
    seat: int,
    request: dict[str, Any],
    *,
    by: AbstractBaseUser | str,
    expected_version: int | None = None,
    client_move_id: str | None = None,
    table_id: int | None = None,
) -> Played:
    """A move as the table page sends it: an engine move whose tiles may come from the rack.
    ``table_id``: the table the client is at (see :func:`play`).

    ``request`` is ``{"do": ...}`` with the engine's fields (``tile``, ``meld``, ``end``,
    ``onto``), plus optionally ``layout`` (the rack as arranged, saved first) and where the
    played tiles stand (a rack holds two copies of a tile, and the place says which one):
    ``slot`` beside ``tile`` for a move of one tile, ``slots`` for ``open`` and ``lay``, whose
    selected tiles may also come as ``tiles`` by name (the first copies on the rack). ``open``
    and ``lay`` use the selected tiles grouped as they stand on the rack (two-tile groups are
    pairs). ``finish`` first tries the groups arranged on the rack; if they are not melds, the
    engine's solver looks for any grouping.
    """
    if not isinstance(request, dict) or not isinstance(request.get("do"), str):
        raise GameError("bad_move", "a move is an object with a 'do' field")
    pk = _hand_pk(hand)
    move = {k: v for k, v in request.items() if k not in ("layout", "tiles", "slots", "slot")}
    arranged = request.get("layout")
    if arranged is not None:
        arranged = arrange(pk, seat, arranged, by=by, table_id=table_id)
    kind = move["do"]
    played: list[int] | None = None
    if kind in _ONE_TILE and request.get("slot") is not None:
        played = [request["slot"]]
    if kind in _TABLE_PLAYS and "melds" not in move and "pairs" not in move:
        slots, selected = request.get("slots"), request.get("tiles")
        if arranged is None:
            arranged = _layout_of(pk, seat, table_id)
        if isinstance(slots, list) and slots:
            played = slots
            try:
                groups = rack_layout.groups_at(arranged, slots)
            except ValueError as exc:
                raise GameError("bad_move", f"those are not tiles on your rack: {exc}") from None
        elif isinstance(selected, list) and all(isinstance(t, str) for t in selected):
            groups = rack_layout.selected_groups(arranged, selected)
        else:
            raise GameError("bad_move", "select the tiles to put on the table")
        if groups and all(len(g) == 2 for g in groups):
            move["pairs"] = groups
        else:
            move["melds"] = groups
    options = {
        "by": by,
        "expected_version": expected_version,
        "client_move_id": client_move_id,
        "table_id": table_id,
        "slots": played,
    }
    if kind == "finish" and "groups" not in move and isinstance(move.get("tile"), str):
        if arranged is None:
            arranged = _layout_of(pk, seat, table_id)
        if played is None:
            groups = rack_layout.groups(arranged, leave_out=move["tile"])
        else:
            try:
                groups = rack_layout.groups(rack_layout.taken(arranged, played))
            except ValueError as exc:
                raise GameError("bad_move", f"that is not a tile on your rack: {exc}") from None
        try:
            return play(pk, seat, {**move, "groups": groups}, **options)  # type: ignore[arg-type]
        except GameError as exc:
            if exc.code not in _FINISH_RETRY:
                raise
    return play(pk, seat, move, **options)  # type: ignore[arg-type]


def arrange(
    hand: Hand | int, seat: int, layout: Any, *, by: Any, table_id: int | None = None
) -> list[str | None]:
    """Keep how the seat's holder arranged their rack. It must hold exactly the rack's tiles.
    Not game state (no version, no broadcast): private to the seat, like the rack.
    ``table_id``: the table the client is at (a hand of another is no hand, as in ``play``)."""
    pk = _hand_pk(hand)
    h = Hand.objects.select_related("match").filter(pk=pk).first()
    if h is None or (table_id is not None and h.match.table_id != table_id):
        raise GameError("no_hand", f"there is no hand {pk}")
    seat_row = Seat.objects.filter(table_id=h.match.table_id, position=seat).first()
    if seat_row is None:
        raise GameError("bad_seat", f"no seat {seat} at this table")
    policy.check_arrange(seat_row, by)
    if h.status != Hand.Status.PLAYING:
        raise GameError("hand_over", "the hand has ended")
    rack = h.view_for(seat)["rack"]
    try:
        checked = rack_layout.check(layout, rack)
    except ValueError as exc:
        raise GameError("bad_layout", str(exc)) from exc
    Participant.objects.filter(hand=h, position=seat).update(layout=checked)
    return checked


def _layout_of(hand_id: int, seat: int, table_id: int | None = None) -> list[str | None]:
    """The seat's stored layout, fitted to its rack now (a hand of a table other than
    ``table_id`` is no hand)."""
    hands = Hand.objects.filter(pk=hand_id)
    if table_id is not None:
        hands = hands.filter(match__table_id=table_id)
    h = hands.first()
    if h is None:
        raise GameError("no_hand", f"there is no hand {hand_id}")
    stored = (
        Participant.objects.filter(hand=h, position=seat).values_list("layout", flat=True).first()
    )
    return rack_layout.reconcile(stored or [], h.view_for(seat)["rack"])


def _hand_pk(hand: Any) -> int:
    """A hand's id as a client may send it: a number an id can be (a row's id is a positive
    64-bit integer; a bigger one would overflow the database's), else there is no such hand."""
    if isinstance(hand, Hand):
        return int(hand.pk)
    if isinstance(hand, bool) or not isinstance(hand, int) or not 0 < hand < 2**63:
        raise GameError("no_hand", f"there is no hand {hand!r}")
    return hand


def _repeat_of(
    hand_id: int, client_move_id: str | None, seat: int, by: AbstractBaseUser | str
) -> Played | None:
    """The first result of a move whose ``client_move_id`` was played before, if it was."""
    if not client_move_id:
        return None
    first = Move.objects.filter(hand_id=hand_id, client_move_id=client_move_id).first()
    return _repeated(first, seat, by) if first is not None else None


def _repeated(first: Move, seat: int, by: AbstractBaseUser | str) -> Played:
    """A client_move_id seen before: the same sender gets the first result, nobody else."""
    same = first.seat == seat and (
        first.by != Move.By.USER or (not isinstance(by, str) and first.user_id == by.pk)
    )
    if not same:
        raise GameError("bad_move", "that client_move_id belongs to another move")
    return Played(first, first.number, list(first.events), repeated=True)


def _play_locked(
    pk: int,
    seat: int,
    move: dict[str, Any],
    by: AbstractBaseUser | str,
    expected_version: int | None,
    client_move_id: str | None,
    level: str,
    table_id: int | None = None,
    slots: list[int] | None = None,
) -> Played:
    locked = reads.locked_hand(pk, seat)
    h, seat_row = locked.hand, locked.seat
    if table_id is not None and locked.table_id != table_id:
        raise GameError("no_hand", f"there is no hand {pk}")
    try:
        if h.status != Hand.Status.PLAYING:
            raise GameError("hand_over", "the hand has ended")
        if expected_version is not None and expected_version != h.version:
            raise StaleVersion(
                "stale_version", f"the hand is at version {h.version}, not {expected_version}"
            )
        if seat_row is None:
            raise GameError("bad_seat", f"no seat {seat} at this table")
        actor = policy.check_move(h, seat_row, by)
        # The snapshot was just read for this move alone: the engine may keep it uncopied.
        eng = engine.Hand.from_state(h.state, copy_data=False)
        stand = None
        if slots is not None:
            move, stand = _from_slots(locked.layout, eng.rack(seat), move, slots)
        turn_before = eng.turn
        result = eng.play(seat, move)
        if not result.ok:
            raise GameError(
                result.error or "refused", result.message or "", result.detail, result.tiles
            )
    except GameError:
        # A move sent again (a client that reconnected) is refused by now: if its
        # client_move_id was played, the sender gets the first result instead. (An accepted
        # move never looks: a repeat that passes the checks fails on the unique
        # client_move_id, and ``play`` answers it the same way.)
        repeated = _repeat_of(pk, client_move_id, seat, by)
        if repeated is not None:
            return repeated
        raise
    table_id = locked.table_id
    h.version += 1
    user = by if actor.kind == "player" else None
    row = Move(
        hand=h,
        number=h.version,
        seat=seat,
        action=result.move,
        events=result.events,
        by=_RECORDED_BY[actor.kind],
        user=user,
        bot_level="" if user is not None else (level or actor.level),
        client_move_id=client_move_id or None,
    )
    h.state = snapshot(eng)
    h.turn, h.turn_index = eng.turn, eng.turn_index
    fields = ["state", "version", "deadline", "turn", "turn_index", "updated_at"]
    if eng.turn != turn_before or eng.over:
        timer = locked.move_timer
        h.deadline = None if eng.over or not timer else timezone.now() + timedelta(seconds=timer)
    seat_changed = user is not None and bool(seat_row.timeouts_in_a_row or seat_row.away)
    if seat_changed:
        # The player moved: they are here, and an away seat is theirs again at once.
        Seat.objects.filter(pk=seat_row.pk).update(
            away=False, timeouts_in_a_row=0, last_seen=timezone.now()
        )
    if eng.over:
        close_hand(h, eng, Table.objects.select_related("variant").get(pk=table_id))
        fields += ["status", "ending", "finisher", "kind", "multiplier", "hand_scores"]
        fields += ["finished_at"]
    _write_move(row, h, fields)
    layout = locked.layout
    if stand is not None and not eng.over:
        # The stand loses the copies the player chose; by name it would lose the first ones.
        rack = eng.rack(seat)
        fitted = rack_layout.reconcile(stand, rack)
        if fitted != rack_layout.reconcile(layout or [], rack):
            Participant.objects.filter(hand_id=h.pk, position=seat).update(layout=fitted)
            layout = fitted
    public = [engine.event_for(e, -1) for e in result.events]
    apply = None
    if not eng.over and not seat_changed:
        # Left out when the move changed more than the hand's row (a seat back from away, a
        # closed hand): a server process then reads the table instead of bringing it forward.
        apply = events.MoveApplied(
            action=result.move,
            visibility=h.visibility,
            deadline=h.deadline.isoformat() if h.deadline else None,
            updated_at=h.updated_at.isoformat(),
            layout=layout,
        )
    events.to_table(events.hand_moved(table_id, h.id, h.version, seat, public, apply))
    return Played(row, h.version, result.events)


def _from_slots(
    stored: list[str | None] | None, rack: list[str], move: dict[str, Any], slots: Any
) -> tuple[dict[str, Any], list[str | None]]:
    """The move with its one tile read from its slot if it named none, and the stand as it
    will be: the seat's stand (``stored`` fitted to ``rack``) without the tiles in ``slots``.
    A slot that holds nothing, or not the tile the move names, is refused."""
    shown = rack_layout.reconcile(stored or [], rack)
    try:
        stand = rack_layout.taken(shown, slots)
    except ValueError as exc:
        raise GameError("bad_move", f"that is not a tile on your rack: {exc}") from None
    if move.get("do") in _ONE_TILE:
        if len(slots) != 1:
            raise GameError("bad_move", "a move of one tile has one slot")
        tile = move.get("tile")
        if tile is None:
            move = {**move, "tile": shown[slots[0]]}
        elif not isinstance(tile, str):
            raise GameError("bad_move", "'tile' is a tile such as R5")
        else:
            try:
                holds = rack_layout.holds(shown, slots[0], tile)
            except ValueError as exc:
                raise GameError("bad_tile", str(exc)) from None
            if not holds:
                raise GameError("bad_move", f"slot {slots[0]} does not hold {tile}")
    return move, stand


# Who played a move, as its row records it, by the kind of actor the policy found.
_RECORDED_BY = {"player": Move.By.USER, policy.BOT: Move.By.BOT, policy.CLOCK: Move.By.CLOCK}

# By database and the hand's fields written: the statement, the Move's fields, the hand's.
_write_move_sql: dict[tuple[str, tuple[str, ...]], tuple[str, list[Any], list[Any]]] = {}


def _write_move(row: Move, h: Hand, fields: list[str]) -> None:
    """Insert the move's row and update the hand's ``fields``: on PostgreSQL in one
    statement (the insert in a ``WITH``), written out once per process like the locked read;
    elsewhere through the ORM, as two statements.

    Every move runs this; composing an insert and an update through the ORM costs more than
    the round trips themselves (``bench/service.py``)."""
    using = router.db_for_write(Hand)
    connection = connections[using]
    if connection.vendor != "postgresql":
        row.save(using=using, force_insert=True)
        h.save(using=using, update_fields=fields)
        return
    key = (using, tuple(fields))
    found = _write_move_sql.get(key)
    if found is None:
        move_fields = [f for f in Move._meta.local_concrete_fields if not f.primary_key]
        hand_fields = [Hand._meta.get_field(name) for name in fields]
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in move_fields)
        places = ", ".join(["%s"] * len(move_fields))
        sets = ", ".join(f"{qn(f.column)} = %s" for f in hand_fields)
        pk = qn(Move._meta.pk.column)
        sql = (
            f"WITH new_move AS (INSERT INTO {qn(Move._meta.db_table)} ({columns})"
            f" VALUES ({places}) RETURNING {pk})"
            f" UPDATE {qn(Hand._meta.db_table)} SET {sets} WHERE {qn(Hand._meta.pk.column)} = %s"
            f" RETURNING (SELECT {pk} FROM new_move)"
        )
        found = _write_move_sql[key] = (sql, move_fields, hand_fields)
    sql, move_fields, hand_fields = found
    # pre_save fills auto_now(_add) dates on the instances, as save() would.
    params = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in move_fields]
    params += [f.get_db_prep_save(f.pre_save(h, False), connection) for f in hand_fields]
    params.append(h.pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        (row.pk,) = cursor.fetchone()
    row._state.adding, row._state.db = False, using
