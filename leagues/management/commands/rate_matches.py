"""Rate every finished match not rated yet and count it in its season (idempotent: a match
is rated once, ``leagues.ratings``; running the command again does nothing new)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games.models import Match
from leagues import hooks
from leagues.models import RatedMatch


class Command(BaseCommand):
    help = "Rate the finished matches not rated yet (oldest first) and count them in seasons."

    def handle(self, *args: Any, **options: Any) -> None:
        pending = list(
            Match.objects.filter(status=Match.Status.FINISHED, rated__isnull=True)
            .order_by("finished_at", "pk")
            .values_list("pk", flat=True)
        )
        for pk in pending:
            hooks.match_over(pk)
        rated = RatedMatch.objects.filter(match_id__in=pending, rated=True).count()
        self.stdout.write(f"{len(pending)} matches looked at, {rated} rated")
