"""At log-in, the player's profile language goes into the session (accounts.language), and so
do their display name and guest flag, for the header (accounts.context_processors)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from accounts import context_processors, language
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
