"""Delete guest accounts nobody has used for a while (``--days``, default 30).

A guest counts as unused since their last log-in (else since the account was made). A guest
is kept, however old, while they hold a seat at any table, or played a hand of a match that
counts (a finished one): results and histories must not lose a player. ``--dry-run`` says
what would go without deleting anything.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from games.models import Match, Participant, Seat


def old_guests(days: int, now: Any = None) -> Any:
    """The guest users unused for ``days`` days (protected or not)."""
    cutoff = (now or timezone.now()) - timedelta(days=days)
    return (
        get_user_model()
        .objects.filter(profile__is_guest=True)
        .annotate(last_used=Coalesce("last_login", "date_joined"))
        .filter(last_used__lt=cutoff)
    )


def protected() -> Q:
    """Users who hold a seat, or played in a finished match."""
    seat = Seat.objects.filter(user_id=OuterRef("pk"))
    counted = Participant.objects.filter(
        user_id=OuterRef("pk"), hand__match__status=Match.Status.FINISHED
    )
    return Q(Exists(seat)) | Q(Exists(counted))


class Command(BaseCommand):
    help = "Delete guest accounts unused for --days days (never one with a seat or a result)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--days", type=int, default=30, help="unused for this many days (default 30)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be deleted; delete nothing"
        )

    def handle(self, *args: Any, days: int, dry_run: bool, **options: Any) -> None:
        if days < 0:
            self.stderr.write("--days must be 0 or more")
            raise SystemExit(2)
        with transaction.atomic():
            old = old_guests(days)
            kept = old.filter(protected()).count()
            doomed = old.exclude(protected())
            ids = list(doomed.values_list("pk", flat=True))
            if not dry_run and ids:
                get_user_model().objects.filter(pk__in=ids).delete()
        verb = "Would delete" if dry_run else "Deleted"
        self.stdout.write(
            f"{verb} {len(ids)} guest account(s) unused for {days} days; "
            f"kept {kept} that hold a seat or played a finished match."
        )
