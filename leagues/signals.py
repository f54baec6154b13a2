"""What the leagues hear: an ended match is rated and counted in its season; a new season
member gets a line in the stored standings at once (a match that only now falls between
members may count, so the season's standings are recomputed)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from games.actions.events import match_ended
from leagues import hooks, standings
from leagues.models import SeasonMember


@receiver(match_ended, dispatch_uid="leagues.match_ended")
def match_ended_rate_and_count(sender: Any, match_id: int, **kwargs: Any) -> None:
    hooks.match_over(match_id)


@receiver(post_save, sender=SeasonMember, dispatch_uid="leagues.member_joined")
def member_joined(sender: Any, instance: SeasonMember, created: bool, **kwargs: Any) -> None:
    if created and not kwargs.get("raw"):
        standings.recompute(instance.season_id)
