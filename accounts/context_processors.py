"""The signed-in player's account for every page (base.html's header): their display name, a
link to their profile, and whether they are a guest ("Keep this account").

The name and the guest flag come from the session (``SESSION_KEY``), written at log-in
(``accounts.signals``, with the language, from one read of the profile) and whenever the site
changes them (the profile form, "Keep this account"), so a page costs no query for them. A
session without them reads the profile once and keeps them. A change made elsewhere (another
browser, the admin) shows in a session's header from its next log-in, as the language does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from accounts import names
from accounts.models import Profile

SESSION_KEY = "account"


@dataclass(frozen=True)
class Account:
    name: str
    url: str
    is_guest: bool


def remember(session: Any, user_id: Any, display_name: str, is_guest: bool) -> None:
    """Keep what the header shows of the signed-in ``user_id`` in their session."""
    if session is not None:
        session[SESSION_KEY] = {"user": user_id, "name": display_name, "guest": bool(is_guest)}


def _kept(request: HttpRequest, user_id: Any) -> tuple[str, bool]:
    """The display name ("" for none) and the guest flag: from the session, else read."""
    session = getattr(request, "session", None)
    kept = session.get(SESSION_KEY) if session is not None else None
    if isinstance(kept, dict) and kept.get("user") == user_id:
        return str(kept.get("name") or ""), bool(kept.get("guest"))
    profile = Profile.objects.filter(user_id=user_id).values_list("display_name", "is_guest")
    name, guest = profile.first() or ("", False)
    remember(session, user_id, name, guest)
    return name, guest


def _account(request: HttpRequest) -> Account | None:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    name, guest = _kept(request, user.pk)
    username = user.get_username()
    return Account(
        name=names.shown(name) or username,  # a stored name may predate the name policy
        url=reverse("profile", args=[username]),
        is_guest=guest,
    )


def account(request: HttpRequest) -> dict[str, Any]:
    """``account``: built only when a template uses it."""
    return {"account": SimpleLazyObject(lambda: _account(request))}
