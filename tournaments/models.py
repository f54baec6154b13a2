"""A tournament and its entries: what an organiser set up (the variant and its table options,
the format and its size or rounds, when it starts, who may enter) and who registered. The
rounds, their tables and the standings come with the event's running (tournaments.seating,
tournaments.standings)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

# A knockout's fields: a power of two, from one table to sixteen tables in round 1.
KNOCKOUT_SIZES = (4, 8, 16, 32, 64)
SWISS_ROUNDS = range(2, 10)
# A Swiss event's most entrants (its seating takes well under a second at 200:
# docs/PERFORMANCE.md, "Tournament seating").
SWISS_MOST = 200


def _token() -> str:
    return secrets.token_urlsafe(16)


class Tournament(models.Model):
    class Format(models.TextChoices):
        KNOCKOUT = "knockout", _("Knockout")
        SWISS = "swiss", _("Swiss")

    class State(models.TextChoices):
        REGISTERING = "registering", _("Registering")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")

    name = models.CharField(_("name"), max_length=80)
    variant = models.ForeignKey("games.Variant", on_delete=models.PROTECT, related_name="+")
    # The tables' options, checked by the engine as a New table's are (never typed as JSON).
    options = models.JSONField(default=dict, blank=True)
    format = models.CharField(_("format"), max_length=10, choices=Format.choices)
    # Knockout: the field's size (KNOCKOUT_SIZES); Swiss: the most entrants it takes.
    places = models.PositiveIntegerField(_("places"))
    rounds = models.PositiveSmallIntegerField(_("rounds"), null=True, blank=True)  # Swiss
    # Blank: it starts when full.
    starts_at = models.DateTimeField(_("starts at"), null=True, blank=True)
    rated = models.BooleanField(_("rated"), default=True)
    public = models.BooleanField(_("public"), default=True)
    invite_token = models.CharField(max_length=32, default=_token, editable=False)
    # Entry conditions.
    min_rated_matches = models.PositiveIntegerField(_("rated matches played, at least"), default=0)
    min_account_days = models.PositiveIntegerField(_("account age in days, at least"), default=0)
    shared_addresses = models.BooleanField(
        _("players from one address may share a table"), default=False
    )
    state = models.CharField(max_length=12, choices=State.choices, default=State.REGISTERING)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("tournament")
        verbose_name_plural = _("tournaments")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class Entry(models.Model):
    """A player registered for a tournament (``withdrawn_at``: no longer in it)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Where they registered from: accounts of one address share no table unless allowed.
    address = models.CharField(max_length=64, blank=True)
    registered_at = models.DateTimeField(auto_now_add=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("entry")
        verbose_name_plural = _("entries")
        constraints = [
            models.UniqueConstraint(fields=["tournament", "user"], name="one_entry_per_player")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.tournament_id}"


class NoShow(models.Model):
    """A registered player who did not take their seat in a round's ready window: a bot played
    for them. Each keeps them out of registering for a while (``tournaments.actions``:
    24 hours, doubling with each one since their last match played to its end, up to 30 days)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField()

    class Meta:
        verbose_name = _("no-show")
        verbose_name_plural = _("no-shows")
        indexes = [models.Index(fields=["user", "at"])]

    def __str__(self) -> str:
        return f"{self.user_id} missed {self.tournament_id}"
