"""A player's profile beside Django's user: the name others see, the language they read the
site in, and whether the account is a guest's (made by "Play as a guest", kept or not)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts import names


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    # Shown to other players instead of the username; blank: the username. Set through the
    # name policy (accounts.names: the profile form, the admin's cleaning).
    display_name = models.CharField(_("display name"), max_length=40, blank=True)
    # The language the site speaks to this player; blank: the browser's (cookie, then
    # Accept-Language), as for visitors.
    language = models.CharField(
        _("language"), max_length=10, choices=settings.LANGUAGES, blank=True
    )
    # Made by "Play as a guest": a generated name and no password until the player keeps the
    # account (accounts.views.keep_account). `manage.py cleanup_guests` deletes old unused ones.
    is_guest = models.BooleanField(_("guest"), default=False)
    # The bot level this player last chose for "Play now" (a level's key); blank: the default.
    play_now_level = models.CharField(max_length=10, blank=True)
    # The options this player last chose before sitting down, by variant ({"okey101":
    # {"hands": 3, ...}}): offered first next time ("Play now", "Practice with bots").
    play_options = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("profile")
        verbose_name_plural = _("profiles")

    def __str__(self) -> str:
        return f"profile of {self.user_id}"

    @classmethod
    def of(cls, user: Any) -> Profile:
        """The user's profile, made (empty) the first time it is asked for."""
        profile, _created = cls.objects.get_or_create(user=user)
        return profile


def display_name(user: Any) -> str:
    """The name other players see: the profile's display name, else the username. The display
    name is cleaned as it is shown too (``accounts.names.shown``): a row may predate the name
    policy; one with nothing visible left shows the username.

    Reads ``user.profile`` as it is: load it with ``select_related("user__profile")`` (a user
    without a profile row then costs no query and falls back to the username)."""
    if user is None:
        return ""
    try:
        profile = user.profile
    except ObjectDoesNotExist:
        return str(user.get_username())
    if profile is not None and profile.display_name:
        return names.shown(profile.display_name) or str(user.get_username())
    return str(user.get_username())


class NameKey(models.Model):
    """A key of a player's username or display name (``accounts.names.keys``: what the name
    looks like). A key belongs to one player: whether a new name looks like another's is one
    indexed lookup, and of two look-alike names saved at the same moment only the first keeps
    its key (``accounts.names.claim`` refuses the other). Kept in step with the names by
    ``accounts.signals``; a key two players shared before the rule stays the first's."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="name_keys"
    )
    key = models.CharField(max_length=600, unique=True)

    class Meta:
        verbose_name = _("name key")
        verbose_name_plural = _("name keys")

    def __str__(self) -> str:
        return self.key
