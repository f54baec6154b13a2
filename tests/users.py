"""Players for the tests: one way to make a user, with what a test needs and nothing else, and
one way to sign one in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import Profile

# Every user made here has it, so a test that signs in through a form knows what to type.
PASSWORD = "tiles-and-racks-42"


def make_user(name: str, *, staff: bool = False, superuser: bool = False, **profile: Any) -> Any:
    """A user called ``name`` with the password ``PASSWORD``: ``staff`` may use the admin and
    the staff actions, a ``superuser`` may do anything there. ``profile``: fields of their
    ``Profile`` (``display_name``, ``language``, ``is_guest``); without any, the profile is
    made empty when first asked for, as for a player who never changed it."""
    User = get_user_model()
    if superuser:
        user = User.objects.create_superuser(name, f"{name}@example.com", PASSWORD)
    else:
        user = User.objects.create_user(name, password=PASSWORD, is_staff=staff)
    if profile:
        Profile.objects.create(user=user, **profile)
    return user


# What the ``signed_in`` fixture gives: ``signed_in(user=None, language="", **client_kwargs)``.
SignedIn = Callable[..., Client]


def client_for(user: Any = None, *, language: str = "", **client_kwargs: Any) -> Client:
    """A test client signed in as ``user`` (``None``: an anonymous one), with the ``language``
    cookie of a reader who chose one; ``client_kwargs`` go to ``Client`` (``headers``,
    ``REMOTE_ADDR``, ``raise_request_exception``). Tests take it as the ``signed_in`` fixture;
    a helper that cannot take a fixture calls it."""
    client = Client(**client_kwargs)
    if language:
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    if user is not None:
        client.force_login(user)
    return client
