"""The clock: bots play their seats, and a seat whose time ran out is played by a stand-in bot.

``tick()`` is one pass, and what the ``run_clock`` worker runs in a loop:

1. mark players away who are gone (no fresh socket for the grace period), seat bots at the
   tables "Play now" formed whose wait is over (their matches start), and deal the next
   hand of each match whose between-hands pause is over;
2. pick the hands that are due, in SQL: a deadline passed, a claimed timeout not yet played,
   or a bot (or an away player's stand-in) on turn whose thinking delay is over. Only ids
   are read; a hand's state is loaded when it is played;
3. for each, take a lease (``actions.take_lease``), so that of several workers exactly one
   plays a hand's turn, then play the turn through ``actions.play`` and release the lease.
   The clock writes no game state itself: leases, claims and moves are the actions'.

Each hand is handled on its own: one that fails is logged with its id and set aside for a
while, and the pass goes on with the others. Who plays the turn is
``policy.actor_for_turn``, the same answer the move service checks moves against.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from games import actions, policy
from games.engine.bots import DEFAULT_BUDGET_MS, moves_in_order
from games.errors import UNREACHABLE
from games.models import Hand, Match, Seat, Table

log = logging.getLogger(__name__)

# Hands handled in one pass, oldest change first, so that no table starves.
BATCH = 200
# The bot levels that search for their move (and spend their time budget doing it).
SEARCHING_LEVELS = (Seat.Bot.EXPERT,)
# How often a clock that passes several times a second marks gone players away and announces
# the sockets of a dead server: both are measured in seconds, and their queries were most of
# an idle pass.
HOUSEKEEPING_SECONDS = 1.0


# How often the clock looks for open tables nobody has been at (limits.IDLE_TABLE_MINUTES).
IDLE_TABLES_SECONDS = 60.0


class Housekeeping:
    """For a loop of passes: whether this pass should do the housekeeping (the first, then
    one every ``seconds``)."""

    def __init__(self, seconds: float = HOUSEKEEPING_SECONDS) -> None:
        self.last: float | None = None
        self.seconds = seconds

    def due(self) -> bool:
        now = time.monotonic()
        if self.last is not None and now - self.last < self.seconds:
            return False
        self.last = now
        return True


_idle_tables = Housekeeping(IDLE_TABLES_SECONDS)


class Outage:
    """What a loop that keeps retrying (the clock, the presence heartbeat) says about the
    database being unreachable: one line when it goes (not a traceback a pass), one when it
    answers again with how long it was gone, and meanwhile nothing. ``settled(seconds)``:
    whether it has answered for at least that long since it came back (a player whose socket
    stayed open throughout looks gone until their server's heartbeat has written again)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.since: float | None = None  # when it went, during an outage
        self.back_at = float("-inf")  # when it last came back

    def failed(self, exc: BaseException) -> None:
        if self.since is None:
            self.since = time.monotonic()
            log.warning("%s: the database is unreachable (%s); retrying", self.what, exc)

    def answered(self) -> None:
        if self.since is not None:
            gone = time.monotonic() - self.since
            self.since, self.back_at = None, time.monotonic()
            log.warning("%s: the database answers again after %.0f s", self.what, gone)

    def settled(self, seconds: float) -> bool:
        return self.since is None and time.monotonic() - self.back_at >= seconds


# The clock's own (one per process that runs passes).
outage = Outage("the clock")


def due_hands(now: Any, bot_delay: float = 0.0, think_ms: float = 0.0) -> list[int]:
    """Ids of the hands whose turn the clock should play now, least recently changed first.

    A bot on turn is due ``bot_delay`` seconds after the hand last changed, so that people
    can follow; a bot that searches (``SEARCHING_LEVELS``) is due ``think_ms`` sooner, so that
    its thinking fills the pause instead of lengthening it."""
    on_turn = Seat.objects.filter(table_id=OuterRef("match__table_id"), position=OuterRef("turn"))
    stand_in = on_turn.filter(Q(bot_level__gt="") | Q(away=True) | Q(user__isnull=True))
    searching = on_turn.filter(bot_level__in=SEARCHING_LEVELS, away=False, user__isnull=True)
    early = max(0.0, bot_delay - think_ms / 1000)
    due = (
        Hand.objects.filter(status=Hand.Status.PLAYING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        .annotate(bot_on_turn=Exists(stand_in), searching_on_turn=Exists(searching))
        .filter(
            Q(deadline__lte=now)
            | Q(clock_turn=F("turn_index"))
            | Q(bot_on_turn=True, updated_at__lte=now - timedelta(seconds=bot_delay))
            | Q(searching_on_turn=True, updated_at__lte=now - timedelta(seconds=early))
        )
        .order_by("updated_at", "pk")
    )
    return list(due.values_list("pk", flat=True)[:BATCH])


def paused() -> bool:
    """Whether the clock is paused: while the file ``CLOCK_PAUSE_FILE`` names exists, no pass
    plays anything (maintenance; the test suite's live server between its tests).

    A pass that finds the clock paused leaves the file ``<CLOCK_PAUSE_FILE>.seen`` beside it:
    a pass already running when the pause began plays to its end first, so once that file
    exists this process's clock is playing nothing (remove it before pausing again)."""
    pause = settings.CLOCK_PAUSE_FILE
    if not pause or not os.path.exists(pause):
        return False
    seen = f"{pause}.seen"
    if not os.path.exists(seen):
        with contextlib.suppress(OSError):  # a read-only folder: paused all the same
            open(seen, "a").close()  # noqa: SIM115
    return True


def tick(
    *,
    bot_delay: float = 0.0,
    grace_seconds: int = 20,
    now: Any = None,
    think_ms: float = 0.0,
    housekeeping: bool = True,
) -> int:
    """One pass: tell the pages about sockets of a dead server and mark gone players away
    (``housekeeping``: a loop passing several times a second does that once every
    ``HOUSEKEEPING_SECONDS``), fill the forming tables that are due, deal the next hands, then
    play every turn that is due (``think_ms``: what a searching bot may spend on a decision,
    see :func:`due_hands`). Returns moves played."""
    if paused():
        return 0
    now = now or timezone.now()
    if housekeeping:
        try:
            actions.announce_stale_sockets(now)
            # After an outage the players whose sockets stayed open look gone until their
            # servers' heartbeats have written again: not away for the outage's length.
            if outage.settled(grace_seconds):
                actions.mark_gone_players_away(grace_seconds, now)
        except UNREACHABLE:
            raise  # the pass fails as a whole: one line per outage (Outage)
        except Exception:
            log.exception("marking gone players away failed")
        if _idle_tables.due():
            try:
                actions.close_idle_tables(now)
            except UNREACHABLE:
                raise
            except Exception:
                log.exception("closing idle tables failed")
    played = 0
    for table_id in (
        Table.objects.filter(quick=True, status=Table.Status.OPEN, fill_at__lte=now)
        .order_by("fill_at", "pk")
        .values_list("pk", flat=True)[:BATCH]
    ):
        try:
            actions.fill_with_bots(table_id, now)
        except UNREACHABLE:
            raise
        except Exception:
            log.exception("the clock could not seat the bots of table %s", table_id)
    for match_id in Match.objects.filter(
        status=Match.Status.PLAYING, next_hand_at__lte=now
    ).values_list("pk", flat=True)[:BATCH]:
        try:
            if actions.deal_next_hand(match_id, now=now) is not None:
                played += 1
        except UNREACHABLE:
            raise
        except Exception:
            log.exception("the clock could not deal the next hand of match %s", match_id)
    for hand_id in due_hands(now, bot_delay, think_ms):
        try:
            played += run_hand(hand_id, now, think_ms)
        except Hand.DoesNotExist:  # deleted while we played it (its table was removed)
            log.info("hand %s is gone; nothing to play", hand_id)
        except UNREACHABLE:
            raise
        except Exception:
            log.exception("the clock could not play hand %s; trying it again later", hand_id)
            actions.set_aside(hand_id)
    return played


def run_hand(hand_id: int, now: Any = None, think_ms: float = 0.0) -> int:
    """Play the due turn of one hand under a lease. Returns the moves played."""
    now = now or timezone.now()
    token = actions.take_lease(hand_id, now)
    if token is None:
        return 0
    try:
        hand = Hand.objects.select_related("match").get(pk=hand_id)
        seat = _seat_on_turn(hand)
        actor = policy.actor_for_turn(hand, seat)
        if actor.kind == "player":
            if hand.deadline is None or hand.deadline > now:
                return 0  # the player's time has not run out: nothing to do
            if actions.claim_timeout(hand.pk, now) is None:
                return 0
            return play_turn(hand_id, seat.position, actions.CLOCK, policy.STAND_IN_LEVEL)
        return play_turn(hand_id, seat.position, actor.kind, actor.level, think_ms=think_ms)
    finally:
        actions.release_lease(hand_id, token)


def _seat_on_turn(hand: Hand) -> Seat:
    seat = Seat.objects.filter(table_id=hand.match.table_id, position=hand.turn).first()
    if seat is None:
        raise LookupError(f"hand {hand.pk}: the table has no seat {hand.turn}")
    return seat


def play_turn(
    hand_id: int, seat: int, by: str, level: str, limit: int = 60, think_ms: float = 0.0
) -> int:
    """Play ``seat``'s current turn with the bot, one move at a time through the service
    (``think_ms``: a searching bot's budget for each decision; 0: the engine's default).

    Stops when the turn ends, when the hand changed under us (another worker, or the player
    came back), or when the policy no longer hands the turn to ``by``.
    """
    played = 0
    for _ in range(limit):
        hand = Hand.objects.get(pk=hand_id)
        if hand.status != Hand.Status.PLAYING or hand.turn != seat:
            return played
        view = hand.view_for(seat)
        rng = random.Random(f"{hand_id}-{hand.version}")
        for move in moves_in_order(view, level, rng, think_ms or DEFAULT_BUDGET_MS):
            try:
                actions.play(hand, seat, move, by=by, expected_version=hand.version, level=level)
            except actions.StaleVersion:
                return played
            except actions.GameError as exc:
                if exc.code in ("not_your_seat", "hand_over"):
                    return played
                continue  # the engine refused this candidate: try the next one
            played += 1
            break
        else:
            log.error("the bot found no legal move in hand %s for seat %s", hand_id, seat)
            return played
    return played
