"""The clock: bots play their seats, and a seat whose time ran out is played by the greedy bot.

``tick()`` does one pass over the hands being played and is what the ``run_clock`` worker runs
in a loop. Several workers may run at once: a timeout is claimed by a conditional update
(``services.claim_timeout``) and every move goes through ``services.play`` with the version the
worker read, so a second worker's move is refused as stale and never applied twice.
"""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from typing import Any

from django.db.models import Prefetch
from django.utils import timezone

from games import services
from games.engine.bots import choose_moves
from games.models import Hand, Seat

log = logging.getLogger(__name__)

TIMEOUT_LEVEL = "greedy"


def tick(*, bot_delay: float = 0.0, grace_seconds: int = 20, now: Any = None) -> int:
    """One pass: mark gone players away, then play every turn that is due. Returns moves played."""
    now = now or timezone.now()
    services.mark_gone_players_away(grace_seconds, now)
    played = 0
    hands = (
        Hand.objects.filter(status=Hand.Status.PLAYING)
        .select_related("match__table")
        .prefetch_related(
            Prefetch("match__table__seats", queryset=Seat.objects.order_by("position"))
        )
    )
    for hand in hands:
        seat = next(s for s in hand.match.table.seats.all() if s.position == hand.turn)
        if hand.clock_turn == hand.turn_index:
            # A claimed timeout whose turn is not finished yet (a worker stopped mid-turn).
            played += play_turn(hand.pk, seat.position, services.CLOCK, TIMEOUT_LEVEL)
        elif seat.bot_level or seat.away:
            if hand.updated_at <= now - timedelta(seconds=bot_delay):
                level = seat.bot_level or TIMEOUT_LEVEL
                played += play_turn(hand.pk, seat.position, services.BOT, level)
        elif hand.deadline is not None and hand.deadline <= now:
            if services.claim_timeout(hand.pk, now) is not None:
                played += play_turn(hand.pk, seat.position, services.CLOCK, TIMEOUT_LEVEL)
    return played


def play_turn(hand_id: int, seat: int, by: str, level: str, limit: int = 60) -> int:
    """Play ``seat``'s current turn with the bot, one move at a time through the service.

    Stops when the turn ends, when the hand changed under us (another worker, or the player
    came back), or when the clock no longer holds the turn.
    """
    played = 0
    for _ in range(limit):
        hand = Hand.objects.get(pk=hand_id)
        if hand.status != Hand.Status.PLAYING or hand.turn != seat:
            return played
        if by == services.CLOCK and hand.clock_turn != hand.turn_index:
            return played
        view = hand.view_for(seat)
        rng = random.Random(f"{hand_id}-{hand.version}")
        for move in choose_moves(view, level, rng):
            try:
                services.play(hand, seat, move, by=by, expected_version=hand.version)
            except services.StaleVersion:
                return played
            except services.GameError as exc:
                if exc.code in ("not_your_seat", "hand_over"):
                    return played
                continue  # the engine refused this candidate: try the next one
            played += 1
            break
        else:
            log.error("the bot found no legal move in hand %s for seat %s", hand_id, seat)
            return played
    return played
