"""What happens once a match has ended (finished or abandoned): it is rated and counted in its
season. ``games.actions.events.match_ended`` brings it here after the transaction that ended
the match commits; each step runs in its own transaction, and a failure is logged, never
raised into the game (``python manage.py rate_matches`` and the admin's "Recompute standings"
catch up)."""

from __future__ import annotations

import logging

from leagues import ratings, standings
from leagues.models import RatingChange

log = logging.getLogger(__name__)


def match_over(match_id: int) -> None:
    """Rate the match (once), then add it to its season's stored standings (once)."""

    rated = False
    try:
        rated = ratings.rate_match(match_id)
    except Exception:
        log.exception("rating match %s failed", match_id)
    try:
        standings.count_match(match_id)
        if rated:
            changed = RatingChange.objects.filter(match_id=match_id)
            users = list(changed.values_list("user_id", flat=True))
            variant = changed.values_list("variant_id", flat=True).first()
            if variant is not None:
                standings.refresh_ratings(users, variant)
    except Exception:
        log.exception("counting match %s in its season failed", match_id)
