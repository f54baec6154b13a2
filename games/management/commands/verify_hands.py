"""Replay hands from their seeds and move logs and compare with what is stored.

Exits non-zero when any hand differs, or when a revealed seed does not match its commitment.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.audit import verify_hand
from games.models import Hand


class Command(BaseCommand):
    help = "Replay every hand (or --hand N) from its seed and moves and check it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hand", type=int, action="append", help="a hand id (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.select_related("match__table__variant").order_by("id")
        if options["hand"]:
            hands = hands.filter(id__in=options["hand"])
        checked = bad = 0
        for hand in hands.iterator(chunk_size=200):
            checked += 1
            problems = verify_hand(hand)
            if problems:
                bad += 1
                for problem in problems:
                    self.stderr.write(f"hand {hand.id}: {problem}")
        if bad:
            raise CommandError(f"{bad} of {checked} hands differ")
        self.stdout.write(f"{checked} hands verified")
