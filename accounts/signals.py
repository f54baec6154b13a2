"""At log-in, the player's profile language goes into the session (accounts.language), and so
do their display name and guest flag, for the header (accounts.context_processors). When a
username or a display name is saved, by any path (the forms, the admin, a guest's creation, a
command), the player's name keys follow it (accounts.names.store_keys)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts import context_processors, language, names
from accounts.models import Profile


@receiver(user_logged_in, dispatch_uid="accounts.remember_language")
def remember_language(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    row = Profile.objects.filter(user_id=user.pk).values_list(
        "language", "display_name", "is_guest"
    )
    code, name, guest = row.first() or ("", "", False)
    language.remember(session, code or "")
    context_processors.remember(session, user.pk, name, guest)


def _saved(fields: Any, name: str) -> bool:
    return fields is None or name in fields


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.username_keys")
def username_keys(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    if not _saved(update_fields, "username"):  # a log-in's last_login, a new password
        return
    shown = Profile.objects.filter(user_id=instance.pk).values_list("display_name", flat=True)
    names.store_keys(instance.pk, instance.get_username(), shown.first() or "")


@receiver(post_save, sender=Profile, dispatch_uid="accounts.display_name_keys")
def display_name_keys(
    sender: Any, instance: Profile, update_fields: Any = None, **kwargs: Any
) -> None:
    if not _saved(update_fields, "display_name"):
        return
    names.store_keys(instance.user_id, instance.user.get_username(), instance.display_name)
