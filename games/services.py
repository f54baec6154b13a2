"""The only code that writes game state.

Every change follows one pattern (zulip's "check, then do, then tell on commit"): open a
transaction, lock the rows it touches, check, apply through the engine, write, and publish to
the table's channel group only after the commit. Consumers, views, the admin and the clock call
these functions and nothing else.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from games import engine
from games.models import Hand, Match, Move, Seat, Table, Variant

log = logging.getLogger(__name__)

BOT = "bot"
CLOCK = "clock"


class GameError(Exception):
    """A refused request; ``code`` is stable (engine codes for refused moves)."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail


class StaleVersion(GameError):
    """The client played against an older version of the hand."""


def table_group(table_id: int) -> str:
    return f"table-{table_id}"


def _publish(table_id: int, message: dict[str, Any]) -> None:
    """Send to the table's group once the transaction has committed (best effort)."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(table_group(table_id), message)
        except Exception:  # the database is the truth; a lost message only delays a client
            log.exception("publishing to table %s failed", table_id)

    transaction.on_commit(send)


# ----------------------------------------------------------------------------- tables and seats
def create_table(
    *,
    variant: str | Variant,
    created_by: AbstractBaseUser | None,
    name: str = "",
    options: dict[str, Any] | None = None,
    is_private: bool = False,
    move_timer: int | None = None,
    players: int = 4,
    season: Any = None,
) -> Table:
    """A new open table with empty seats; options are validated by the engine."""
    v = variant if isinstance(variant, Variant) else Variant.objects.get(key=variant)
    merged = {**v.default_options, **(options or {})}
    if move_timer is not None:
        merged["timer"] = move_timer
    try:
        checked = engine.validate_options(v.key, merged)
        engine.variants.check_players(v.key, players)
    except engine.OptionsError as exc:
        raise GameError("bad_options", str(exc)) from exc
    if checked.get("partners") and players != 4:
        raise GameError("bad_options", "partners need four players")
    if season is not None and season.league.variant_id != v.pk:
        raise GameError("bad_season", "the season's league plays another variant")
    with transaction.atomic():
        table = Table.objects.create(
            variant=v,
            options=checked,
            name=name or f"{v.name} table",
            is_private=is_private,
            created_by=created_by,
            move_timer=int(checked["timer"]),
            players=players,
            season=season,
        )
        Seat.objects.bulk_create(
            [
                Seat(table=table, position=p, team=(p % 2) if checked.get("partners") else None)
                for p in range(players)
            ]
        )
    _publish(table.id, {"type": "table.changed", "table": table.id})
    return table


def _locked_table(table: Table | int) -> Table:
    pk = table.pk if isinstance(table, Table) else table
    return Table.objects.select_for_update().get(pk=pk)


def sit(table: Table | int, user: AbstractBaseUser, position: int | None = None) -> Seat:
    """Seat a player at an empty place (the first free one if none is named)."""
    with transaction.atomic():
        t = _locked_table(table)
        seats = list(Seat.objects.select_for_update().filter(table=t))
        mine = next((s for s in seats if s.user_id == user.pk), None)
        if mine is not None:
            if mine.away:
                mine.away = False
                mine.timeouts_in_a_row = 0
                mine.save(update_fields=["away", "timeouts_in_a_row"])
            return mine
        if t.status == Table.Status.FINISHED:
            raise GameError("table_finished", "this table has finished")
        free = [s for s in seats if s.is_empty and (position is None or s.position == position)]
        if not free:
            raise GameError("seat_taken", "that seat is not free")
        seat = free[0]
        seat.user = user  # type: ignore[assignment]
        seat.save(update_fields=["user"])
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return seat


def add_bot(table: Table | int, position: int, level: str = "greedy") -> Seat:
    """Put a bot of ``level`` on an empty seat."""
    if level not in Seat.Bot.values or not level:
        raise GameError("bad_bot", f"no bot level {level!r}")
    with transaction.atomic():
        t = _locked_table(table)
        seat = Seat.objects.select_for_update().filter(table=t, position=position).first()
        if seat is None or not seat.is_empty:
            raise GameError("seat_taken", "that seat is not free")
        seat.bot_level = level
        seat.save(update_fields=["bot_level"])
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return seat


def stand(table: Table | int, user: AbstractBaseUser) -> None:
    """Leave a seat. Before a match the seat is freed; during one, a bot keeps it warm."""
    with transaction.atomic():
        t = _locked_table(table)
        seat = Seat.objects.select_for_update().filter(table=t, user=user).first()
        if seat is None:
            raise GameError("not_seated", "you have no seat at this table")
        if t.status == Table.Status.PLAYING:
            seat.away = True
            seat.save(update_fields=["away"])
        else:
            seat.user = None
            seat.save(update_fields=["user"])
    _publish(t.id, {"type": "table.changed", "table": t.id})


leave = stand


def start_match(table: Table | int, *, seed: str | None = None) -> Match:
    """Start a match once every seat is filled; hand 1 is dealt from ``seed`` (or a fresh one)."""
    with transaction.atomic():
        t = _locked_table(table)
        if Match.objects.filter(table=t, status=Match.Status.PLAYING).exists():
            raise GameError("match_in_progress", "a match is being played at this table")
        seats = list(Seat.objects.filter(table=t))
        if any(s.is_empty for s in seats):
            raise GameError("seats_not_filled", "every seat needs a player or a bot")
        start = engine.scoring.start_score(t.variant.key, t.options)
        hands = t.options.get("hands") if _planned(t) else None
        match = Match.objects.create(table=t, hands_planned=hands, totals=[start] * t.players)
        hand = _deal(match, t, number=1, starter=0, scores=match.totals, seed=seed)
        t.status = Table.Status.PLAYING
        t.save(update_fields=["status"])
    _publish(t.id, {"type": "hand.dealt", "table": t.id, "hand": hand.id, "version": 0})
    return match


def _planned(t: Table) -> bool:
    key = t.variant.key
    if key == "classic":
        return t.options.get("scoring") == "plus_minus"
    return key != "duz"


def _deal(
    match: Match, t: Table, *, number: int, starter: int, scores: list[int], seed: str | None
) -> Hand:
    seed = seed or engine.new_seed()
    eng = engine.Hand.from_deal(
        t.variant.key,
        engine.deal(seed, t.players),
        t.options,
        starter=starter,
        scores=scores,
        number=number,
        seed=seed,
    )
    return Hand.objects.create(
        match=match,
        number=number,
        starter=starter,
        commitment=engine.commitment(seed),
        seed=seed,
        state=eng.to_state(),
        turn=eng.turn,
        turn_index=eng.turn_index,
        deadline=_deadline(t),
    )


def _deadline(t: Table) -> Any:
    return timezone.now() + timedelta(seconds=t.move_timer) if t.move_timer else None


def end_match(match: Match | int, reason: str = "ended by an administrator") -> Match:
    """Stop a stuck match: its open hand and the match become abandoned."""
    with transaction.atomic():
        pk = match.pk if isinstance(match, Match) else match
        m = Match.objects.select_for_update().get(pk=pk)
        if m.status != Match.Status.PLAYING:
            return m
        Hand.objects.filter(match=m, status=Hand.Status.PLAYING).update(
            status=Hand.Status.ABANDONED, deadline=None, finished_at=timezone.now()
        )
        m.status = Match.Status.ABANDONED
        m.finished_at = timezone.now()
        m.save(update_fields=["status", "finished_at"])
        Table.objects.filter(pk=m.table_id).update(status=Table.Status.OPEN)
    _publish(m.table_id, {"type": "table.changed", "table": m.table_id, "reason": reason})
    return m


# ----------------------------------------------------------------------------- moves
@dataclass
class Played:
    """The outcome of an accepted move (or of a repeated ``client_move_id``)."""

    move: Move
    version: int
    events: list[dict[str, Any]] = field(default_factory=list)
    repeated: bool = False
    next_hand: Hand | None = None


def play(
    hand: Hand | int,
    seat: int,
    move: dict[str, Any],
    *,
    by: AbstractBaseUser | str,
    expected_version: int | None = None,
    client_move_id: str | None = None,
) -> Played:
    """Apply one move for ``seat`` of ``hand``, as ``by`` (a user, ``"bot"`` or ``"clock"``).

    In one transaction: lock the hand, answer a repeated ``client_move_id`` with its first
    result, refuse a stale ``expected_version``, check that ``by`` may act for the seat, apply
    through the engine, append the move, store the snapshot and version, set the deadline,
    close the hand and match when they end (dealing the next hand), and publish after commit.
    """
    pk = hand.pk if isinstance(hand, Hand) else hand
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
            return _play_locked(pk, seat, move, by, expected_version, client_move_id)
    except IntegrityError:
        # Two requests with the same client_move_id raced past the check: the first won.
        if client_move_id:
            first = Move.objects.filter(hand_id=pk, client_move_id=client_move_id).first()
            if first is not None:
                return _repeated(first, seat, by)
        raise


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
) -> Played:
    h = Hand.objects.select_for_update().select_related("match__table__variant").get(pk=pk)
    if client_move_id:
        first = Move.objects.filter(hand=h, client_move_id=client_move_id).first()
        if first is not None:
            return _repeated(first, seat, by)
    if h.status != Hand.Status.PLAYING:
        raise GameError("hand_over", "the hand has ended")
    if expected_version is not None and expected_version != h.version:
        raise StaleVersion(
            "stale_version", f"the hand is at version {h.version}, not {expected_version}"
        )
    table = h.match.table
    seat_row = Seat.objects.filter(table=table, position=seat).first()
    if seat_row is None:
        raise GameError("bad_seat", f"no seat {seat} at this table")
    kind, user = _check_actor(h, seat_row, by)
    eng = h.engine_hand()
    turn_before = eng.turn
    result = eng.play(seat, move)
    if not result.ok:
        raise GameError(result.error or "refused", result.message or "", result.detail)
    h.version += 1
    row = Move.objects.create(
        hand=h,
        number=h.version,
        seat=seat,
        action=dict(move),
        events=result.events,
        by=kind,
        user=user,
        client_move_id=client_move_id or None,
    )
    h.state = eng.to_state()
    h.turn, h.turn_index = eng.turn, eng.turn_index
    fields = ["state", "version", "deadline", "turn", "turn_index", "updated_at"]
    if eng.turn != turn_before or eng.over:
        h.deadline = None if eng.over else _deadline(table)
    if kind == Move.By.USER and seat_row.timeouts_in_a_row:
        Seat.objects.filter(pk=seat_row.pk).update(timeouts_in_a_row=0)
    next_hand = None
    if eng.over:
        next_hand = _close_hand(h, eng, table)
        fields += ["status", "ending", "finisher", "kind", "multiplier", "hand_scores"]
        fields += ["finished_at"]
    h.save(update_fields=fields)
    public = [engine.event_for(e, -1) for e in result.events]
    message: dict[str, Any] = {
        "type": "hand.moved",
        "table": table.id,
        "hand": h.id,
        "version": h.version,
        "seat": seat,
        "events": public,
    }
    if next_hand is not None:
        message["next_hand"] = next_hand.id
    _publish(table.id, message)
    return Played(row, h.version, result.events, next_hand=next_hand)


def _check_actor(h: Hand, seat: Seat, by: AbstractBaseUser | str) -> tuple[str, Any]:
    if by == BOT:
        if not seat.bot_level and not seat.away:
            raise GameError("not_your_seat", "a bot plays only bot seats and away players")
        return Move.By.BOT, None
    if by == CLOCK:
        if h.clock_turn != h.turn_index:
            raise GameError("not_your_seat", "the clock plays only a turn whose time ran out")
        return Move.By.CLOCK, None
    if isinstance(by, str) or not getattr(by, "is_authenticated", False):
        raise GameError("not_your_seat", "sign in to play")
    if seat.user_id != by.pk:
        raise GameError("not_your_seat", "that is not your seat")
    if seat.away:
        # A returning player takes the seat back at once.
        Seat.objects.filter(pk=seat.pk).update(away=False, timeouts_in_a_row=0)
    return Move.By.USER, by


def _close_hand(h: Hand, eng: engine.Hand, table: Table) -> Hand | None:
    r = eng.result
    h.status = Hand.Status.FINISHED
    h.ending = r["ending"]
    h.finisher = r.get("finisher")
    h.kind = r.get("kind") or ""
    h.multiplier = int(r.get("multiplier", 1))
    h.hand_scores = r["hand_scores"]
    h.finished_at = timezone.now()
    h.deadline = None
    match = Match.objects.select_for_update().get(pk=h.match_id)
    match.totals = list(r["scores"])
    if r["match_over"]:
        match.status = Match.Status.FINISHED
        match.winners = list(r["winners"])
        match.ranking = _ranking(table, match.totals)
        match.finished_at = timezone.now()
        match.save(update_fields=["totals", "status", "winners", "ranking", "finished_at"])
        Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
        return None
    match.save(update_fields=["totals"])
    # Saving the closed hand first frees the "one open hand per match" constraint.
    h.save(update_fields=["status"])
    return _deal(
        match,
        table,
        number=h.number + 1,
        starter=(h.starter + 1) % table.players,
        scores=match.totals,
        seed=None,
    )


def _ranking(table: Table, totals: list[int]) -> list[int]:
    """Seats from best to worst: highest first in classic, lowest first elsewhere."""
    reverse = table.variant.key == "classic"
    return sorted(range(len(totals)), key=lambda s: totals[s], reverse=reverse)


# ----------------------------------------------------------------------------- clock and presence
def claim_timeout(hand: Hand | int, now: Any = None) -> Seat | None:
    """Claim a hand whose deadline has passed, once: the clock may then play that turn.

    The claim is a conditional update on (version, deadline), so of several workers exactly
    one wins. The seat's timeouts in a row go up; at two the seat is marked away.
    """
    now = now or timezone.now()
    pk = hand.pk if isinstance(hand, Hand) else hand
    with transaction.atomic():
        h = Hand.objects.select_for_update().filter(pk=pk).first()
        if h is None or h.status != Hand.Status.PLAYING or h.deadline is None or h.deadline > now:
            return None
        if h.clock_turn == h.turn_index:
            return None
        claimed = Hand.objects.filter(pk=pk, version=h.version, deadline=h.deadline).update(
            clock_turn=h.turn_index, deadline=None
        )
        if claimed != 1:
            return None
        seat = Seat.objects.select_for_update().get(table_id=h.match.table_id, position=h.turn)
        seat.timeouts_in_a_row += 1
        if seat.user_id and seat.timeouts_in_a_row >= 2:
            seat.away = True
        seat.save(update_fields=["timeouts_in_a_row", "away"])
    _publish(seat.table_id, {"type": "table.changed", "table": seat.table_id})
    return seat


def socket_opened(seat: Seat | int) -> None:
    """A player's socket for their seat connected: they are here (and back, if away)."""
    pk = seat.pk if isinstance(seat, Seat) else seat
    with transaction.atomic():
        s = Seat.objects.select_for_update().get(pk=pk)
        s.sockets += 1
        s.connected = True
        s.last_seen = timezone.now()
        returning = s.away
        s.away = False
        if returning:
            s.timeouts_in_a_row = 0
        s.save(update_fields=["sockets", "connected", "last_seen", "away", "timeouts_in_a_row"])
    _publish(s.table_id, {"type": "table.changed", "table": s.table_id})


def socket_closed(seat: Seat | int) -> None:
    """One of a player's sockets closed; with none left the grace period starts."""
    pk = seat.pk if isinstance(seat, Seat) else seat
    with transaction.atomic():
        s = Seat.objects.select_for_update().get(pk=pk)
        s.sockets = max(0, s.sockets - 1)
        s.connected = s.sockets > 0
        s.last_seen = timezone.now()
        s.save(update_fields=["sockets", "connected", "last_seen"])
    _publish(s.table_id, {"type": "table.changed", "table": s.table_id})


def mark_gone_players_away(grace_seconds: int = 20, now: Any = None) -> int:
    """Seats whose sockets have all been closed for the grace period are marked away."""
    now = now or timezone.now()
    gone = Seat.objects.filter(
        user__isnull=False,
        away=False,
        connected=False,
        last_seen__lte=now - timedelta(seconds=grace_seconds),
        table__status=Table.Status.PLAYING,
    )
    tables = set(gone.values_list("table_id", flat=True))
    count = gone.update(away=True)
    for table_id in tables:
        _publish(table_id, {"type": "table.changed", "table": table_id})
    return count


# ----------------------------------------------------------------------------- audit
def verify_hand(hand: Hand) -> list[str]:
    """Replay a hand from its seed and move log; list every way it differs from what is stored."""
    problems: list[str] = []
    table = hand.match.table
    if engine.commitment(hand.seed) != hand.commitment:
        problems.append("the seed does not match its commitment")
    previous = Hand.objects.filter(match=hand.match, number=hand.number - 1).only("state").first()
    if previous is None:
        start = engine.scoring.start_score(table.variant.key, table.options)
        scores = [start] * table.players
    else:
        scores = list(previous.state.get("result", {}).get("scores") or [])
    try:
        eng = engine.Hand.from_deal(
            table.variant.key,
            engine.deal(hand.seed, table.players),
            table.options,
            starter=hand.starter,
            scores=scores,
            number=hand.number,
            seed=hand.seed,
        )
    except (engine.TileError, engine.OptionsError, ValueError) as exc:
        return problems + [f"cannot deal: {exc}"]
    moves = list(hand.moves.order_by("number"))
    for expected, m in enumerate(moves, start=1):
        if m.number != expected:
            problems.append(f"move numbers jump from {expected - 1} to {m.number}")
            break
        result = eng.play(m.seat, m.action)
        if not result.ok:
            problems.append(f"move {m.number} is refused on replay: {result.error}")
            break
        if result.events != m.events:
            problems.append(f"move {m.number} produced other events on replay")
    if hand.version != len(moves):
        problems.append(f"version {hand.version} but {len(moves)} moves")
    if not problems and eng.to_state() != hand.state:
        problems.append("the replayed state differs from the stored snapshot")
    if hand.status == Hand.Status.FINISHED:
        r = eng.result
        if not r["over"]:
            problems.append("stored as finished but the replay has not ended")
        elif r["hand_scores"] != hand.hand_scores or r["ending"] != hand.ending:
            problems.append("the stored result differs from the replay")
    return problems
