"""What the games hear of other apps' changes: a player's new name shows at their tables."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts.models import Profile
from games import actions


@receiver(post_save, sender=Profile, dispatch_uid="games.profile_saved")
def profile_saved(sender: Any, instance: Profile, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is None or "display_name" in update_fields:
        actions.name_changed(instance.user_id)


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="games.user_saved")
def user_saved(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    # A log-in saves last_login alone: nothing shown changed.
    if update_fields is None or "username" in update_fields:
        actions.name_changed(instance.pk)
