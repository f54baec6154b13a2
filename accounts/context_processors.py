"""The signed-in player's account for every page (base.html's header): their display name, a
link to their profile, and whether they are a guest ("Keep this account")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from accounts.models import Profile


@dataclass(frozen=True)
class Account:
    name: str
    url: str
    is_guest: bool


def _account(request: HttpRequest) -> Account | None:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    profile = Profile.objects.filter(user_id=user.pk).only("display_name", "is_guest").first()
    username = user.get_username()
    return Account(
        name=(profile.display_name if profile else "") or username,
        url=reverse("profile", args=[username]),
        is_guest=bool(profile and profile.is_guest),
    )


def account(request: HttpRequest) -> dict[str, Any]:
    """``account``: read (one query) only when a template uses it."""
    return {"account": SimpleLazyObject(lambda: _account(request))}
