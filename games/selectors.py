"""Read-only queries for pages (the HackSoftware split: services write, selectors read)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from games.models import Hand, Match, Seat, Table


def public_tables() -> QuerySet[Table]:
    """Tables anyone may see in the lobby, newest first, with their seats."""
    return (
        Table.objects.filter(is_private=False)
        .exclude(status=Table.Status.FINISHED)
        .select_related("variant")
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("user")))
    )


def table_with_seats(table_id: int) -> Table:
    return (
        Table.objects.select_related("variant")
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("user")))
        .get(pk=table_id)
    )


def current_hand(table: Table) -> Hand | None:
    """The hand being played at the table, if any."""
    return (
        Hand.objects.filter(match__table=table, status=Hand.Status.PLAYING)
        .select_related("match")
        .first()
    )


def latest_match(table: Table) -> Match | None:
    return Match.objects.filter(table=table).order_by("-started_at").first()
