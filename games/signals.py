"""What the games hear of other apps' changes: a player's new name shows at their tables; a
session that ends (a log-out, a new password, a deactivated account) closes its sockets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save, pre_save
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


@receiver(user_logged_out, dispatch_uid="games.logged_out")
def logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """A log-out ends its session: the sockets opened with it close (the user's other
    sessions, on other devices, go on)."""
    session = getattr(request, "session", None)
    key = getattr(session, "session_key", None)
    if key:
        actions.sessions_ended(session_key=key)


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="games.user_saving")
def user_saving(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """A new password (Django signs the user's other sessions out with it) or a deactivated
    account ends every session of theirs: every socket of theirs closes. (A log-in saves
    ``last_login`` alone and is not looked at.)"""
    if instance.pk is None:
        return
    if update_fields is not None and not {"password", "is_active"} & set(update_fields):
        return
    before = (
        get_user_model().objects.filter(pk=instance.pk).values_list("password", "is_active").first()
    )
    if before is None:
        return
    password, active = before
    if password != instance.password or (active and not instance.is_active):
        actions.sessions_ended(user_id=instance.pk)
