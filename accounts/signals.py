"""At log-in, the player's profile language goes into the session (accounts.language)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from accounts import language
from accounts.models import Profile


@receiver(user_logged_in, dispatch_uid="accounts.remember_language")
def remember_language(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    code = Profile.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    language.remember(session, code or "")
