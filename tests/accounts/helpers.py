"""Helpers for the account tests."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from games import actions
from games.models import Match, Table
from tests.markup import form_values, parse  # noqa: F401  (re-exported)
from tests.play import seed_of


def finish(match: Match, totals: list[int], winners: list[int]) -> Match:
    """Mark ``match`` over with these totals and winners (as actions.matches.close_hand would)."""
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.FINISHED, totals=totals, winners=winners, finished_at=timezone.now()
    )
    Table.objects.filter(pk=match.table_id).update(status=Table.Status.FINISHED)
    match.refresh_from_db()
    return match


def played_match(user: Any, variant: str = "okey51", seed: int = 1) -> Match:
    """A Play-now match of ``user`` (seat 0, three strong bots), its first hand dealt."""
    return actions.play_now(user, variant, seed=seed_of(seed))
