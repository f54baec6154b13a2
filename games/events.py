"""What the games tell other apps. Leagues, ratings and anything else that follows the games
subscribe here; the games never import them.

- ``match_ended`` (``match_id``): a match finished or was abandoned. Sent after the
  transaction that ended it commits, so a receiver reads the match as stored; a receiver's
  failure is logged, never raised into the game.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

match_ended = Signal()


def announce_match_ended(match_id: int) -> None:
    """Send ``match_ended`` once the current transaction commits (at once outside one)."""

    def send() -> None:
        for receiver, outcome in match_ended.send_robust(sender=None, match_id=match_id):
            if isinstance(outcome, Exception):
                log.error(
                    "%s failed after match %s ended",
                    getattr(receiver, "__qualname__", receiver),
                    match_id,
                    exc_info=outcome,
                )

    transaction.on_commit(send)
