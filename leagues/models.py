"""Leagues and their seasons, season members and standings, and the players' ratings.

Tables may belong to a season (``Table.season``). Ratings (``leagues.ratings``) and standings
(``leagues.standings``) read who played a match from its ``Participant`` rows, never from the
seats, and are updated once per match after it ends (``leagues.hooks``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from games import engine


class League(models.Model):
    """A league an organiser runs from the admin, for one variant."""

    name = models.CharField(max_length=80, unique=True)
    variant = models.ForeignKey("games.Variant", on_delete=models.PROTECT, related_name="leagues")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Season(models.Model):
    """One season of a league, between two dates, and how its standings count."""

    class Counting(models.TextChoices):
        POINTS = "points", _("total points")
        WINS = "wins", _("match wins")
        RATING = "rating", _("rating")

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="seasons")
    name = models.CharField(max_length=80)
    starts_on = models.DateField()
    ends_on = models.DateField()
    counting = models.CharField(
        max_length=10,
        choices=Counting.choices,
        default=Counting.POINTS,
        help_text=_("what ranks the members in the standings"),
    )
    allow_bots = models.BooleanField(
        default=False, help_text=_("matches with a bot count in the standings")
    )
    count_abandoned = models.BooleanField(
        default=False, help_text=_("abandoned matches count, as they stood when stopped")
    )
    open_to_join = models.BooleanField(
        default=False, help_text=_("signed-in players may join the season themselves")
    )
    # The rules every table of the season plays by (engine options of the league's variant,
    # e.g. {"hands": 5}); they win over a table's own choices.
    table_options = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("the table options every table of this season plays with"),
    )

    class Meta:
        ordering = ["league", "-starts_on"]
        constraints = [
            models.UniqueConstraint(fields=["league", "name"], name="unique_season_name"),
            models.CheckConstraint(
                condition=Q(ends_on__gte=F("starts_on")), name="season_ends_after_it_starts"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.league} · {self.name}"

    def clean(self) -> None:
        if self.starts_on and self.ends_on and self.ends_on < self.starts_on:
            raise ValidationError({"ends_on": "a season ends on or after the day it starts"})
        if self.league_id:
            try:
                self.table_options = checked_table_options(self.league.variant, self.table_options)
            except (engine.OptionsError, TypeError) as exc:
                raise ValidationError({"table_options": str(exc)}) from exc


def checked_table_options(variant: Any, options: Any) -> dict[str, Any]:
    """``options`` checked by the engine against ``variant`` (its defaults filled in for the
    check); the keys given are kept, in the engine's normal form."""
    if not isinstance(options, dict):
        raise TypeError('the table options are a JSON object, e.g. {"hands": 5}')
    checked = engine.validate_options(variant.key, {**variant.default_options, **options})
    return {key: checked[key] for key in options}


class SeasonMember(models.Model):
    """A player taking part in a season: only matches between members count."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="season_memberships"
    )
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["season", "joined_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["season", "user"], name="unique_season_member"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.season}"


class Standing(models.Model):
    """A member's stored line in a season's standings, kept up to date as matches end
    (``leagues.standings.count_match``) and rewritten by ``leagues.standings.recompute``."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="standings")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField(default=0)
    played = models.PositiveIntegerField(default=0)
    won = models.PositiveIntegerField(default=0)
    drawn = models.PositiveIntegerField(default=0)
    points = models.IntegerField(default=0)
    # The member's rating ordinal for the league's variant (None: not rated yet).
    rating = models.FloatField(null=True, blank=True)
    # The last five results, oldest first: W (won), D (drawn: a shared win), L (lost).
    form = models.CharField(max_length=5, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["season", "rank", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["season", "user"], name="unique_standing"),
        ]

    def __str__(self) -> str:
        return f"{self.rank}. {self.user} in {self.season}"


class SeasonMatch(models.Model):
    """A match counted in a season's stored standings: the row makes counting happen once."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="counted")
    match = models.ForeignKey("games.Match", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["season", "match"], name="unique_season_match"),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} in season {self.season_id}"


class Rating(models.Model):
    """A player's OpenSkill (Plackett-Luce) rating in one variant."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    variant = models.ForeignKey("games.Variant", on_delete=models.CASCADE, related_name="+")
    mu = models.FloatField()
    sigma = models.FloatField()
    # mu - 3 sigma: the conservative estimate the leaderboard sorts by.
    ordinal = models.FloatField(db_index=True)
    matches = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["variant", "-ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["user", "variant"], name="one_rating_per_variant"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.variant_id}: {self.ordinal:.2f}"


class RatedMatch(models.Model):
    """A finished match the ratings have taken in, once (``rated``: False when it was looked
    at and not rated, ``reason`` says why). Inserted in the same transaction as the updates."""

    class Reason(models.TextChoices):
        RATED = "", _("rated")
        TOO_FEW = "too_few", _("fewer than two rated players on different sides")
        EARLY_LEAVE = "early_leave", _("a player left before the match really began")
        TWO_SIDES = "two_sides", _("a player held two sides")
        NOT_FINISHED = "not_finished", _("not played to its end")

    match = models.OneToOneField("games.Match", on_delete=models.CASCADE, related_name="rated")
    rated = models.BooleanField(default=True)
    reason = models.CharField(max_length=20, choices=Reason.choices, default="", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"match {self.match_id} ({'rated' if self.rated else 'not rated'})"


class RatingChange(models.Model):
    """One player's rating before and after one match: the rating history."""

    match = models.ForeignKey("games.Match", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_changes"
    )
    variant = models.ForeignKey("games.Variant", on_delete=models.CASCADE, related_name="+")
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    ordinal_before = models.FloatField()
    ordinal = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["match", "user"], name="one_rating_change_per_match"),
        ]

    def __str__(self) -> str:
        return f"{self.user} after match {self.match_id}: {self.ordinal:.2f}"


class EarlyLeavePair(models.Model):
    """How often ``leaver`` left a match before it really began while ``other`` played in it
    (``leagues.ratings.EARLY_LEAVE_MOVES``): such a match is rated for nobody, but the same two
    accounts meeting again and again this way is how a second account farms or voids ratings.
    Staff see the pairs flagged (``times`` at least ``FLAG_AFTER``) in the admin."""

    FLAG_AFTER = 2

    leaver = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    other = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    times = models.PositiveIntegerField(default=0)
    last_match = models.ForeignKey(
        "games.Match", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-times", "-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["leaver", "other"], name="one_early_leave_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.leaver_id} left early against {self.other_id} ({self.times}×)"

    @property
    def flagged(self) -> bool:
        return self.times >= self.FLAG_AFTER
