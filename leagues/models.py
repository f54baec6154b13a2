"""Leagues and their seasons. Tables may belong to a season; standings come with the league
issue, which builds on these rows."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q


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
    """One season of a league, between two dates."""

    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="seasons")
    name = models.CharField(max_length=80)
    starts_on = models.DateField()
    ends_on = models.DateField()

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
