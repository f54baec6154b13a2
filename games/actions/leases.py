"""What the clock (``games.clock``) writes: a hand leased to one clock worker at a time, a
hand set aside after a failed turn, and a timed-out turn claimed once."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from games.actions import events
from games.models import (
    Hand,
    Seat,
)

# How long a clock worker may hold a hand; a turn takes well under a second.
LEASE_SECONDS = 30


# How long a hand whose turn failed is left alone before the clock tries it again.
FAILED_BACKOFF_SECONDS = 60


def take_lease(hand_id: int, now: Any = None) -> str | None:
    """Lease a hand for one clock worker (a conditional update, so of several workers exactly
    one wins): a token if it won, None if another worker holds it. A worker that dies
    holding a lease loses it when the lease runs out."""
    now = now or timezone.now()
    token = uuid.uuid4().hex[:16]
    won = (
        Hand.objects.filter(pk=hand_id, status=Hand.Status.PLAYING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        .update(lease_until=now + timedelta(seconds=LEASE_SECONDS), lease_owner=token)
    )
    return token if won == 1 else None


def release_lease(hand_id: int, token: str) -> None:
    """Give back the lease ``token`` holds (nothing if it ran out and another worker has it)."""
    Hand.objects.filter(pk=hand_id, lease_owner=token).update(lease_until=None, lease_owner="")


def set_aside(hand_id: int) -> None:
    """A hand whose turn failed for the clock: no worker takes it for a while, so that one
    broken hand does not fill every pass with the same error."""
    Hand.objects.filter(pk=hand_id).update(
        lease_until=timezone.now() + timedelta(seconds=FAILED_BACKOFF_SECONDS),
        lease_owner="failed",
    )


def claim_timeout(hand: Hand | int, now: Any = None) -> Seat | None:
    """Claim a hand whose deadline has passed, once: the clock may then play that turn.

    The claim is a conditional update on (version, deadline), so of several workers exactly
    one wins. The seat's timeouts in a row go up; at two the seat is marked away.
    """
    now = now or timezone.now()
    pk = hand.pk if isinstance(hand, Hand) else hand
    with transaction.atomic():
        h = Hand.objects.select_for_update(of=("self",)).select_related("match").filter(pk=pk)
        h = h.first()
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
    events.to_table(events.table_changed(seat.table_id))
    return seat
