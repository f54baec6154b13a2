"""A new season member gets a line in the stored standings at once; a match that only now
falls between members may count, so the season's standings are recomputed."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from leagues.models import SeasonMember


@receiver(post_save, sender=SeasonMember, dispatch_uid="leagues.member_joined")
def member_joined(sender: Any, instance: SeasonMember, created: bool, **kwargs: Any) -> None:
    if created and not kwargs.get("raw"):
        from leagues import standings

        standings.recompute(instance.season_id)
