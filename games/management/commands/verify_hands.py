"""Replay hands from their seeds and move logs and compare with what is stored.

Exits non-zero when any hand differs, or when a revealed seed does not match its commitment.
Safe while the site runs: a hand that moves while it is checked is checked again
(``audit.verify_settled``).
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.audit import verify_settled
from games.models import Hand


class Command(BaseCommand):
    help = "Replay every hand (or --hand N) from its seed and moves and check it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hand", type=int, action="append", help="a hand id (repeatable)")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.order_by("id")
        if options["hand"]:
            hands = hands.filter(id__in=options["hand"])
        checked = bad = moving = 0
        for hand_id in hands.values_list("id", flat=True).iterator(chunk_size=200):
            # Each hand read with its moves as one settled state: a hand being played while
            # it is checked is read again, never reported for a move made meanwhile.
            problems = verify_settled(hand_id)
            if problems is None:
                moving += 1
                self.stdout.write(f"hand {hand_id}: still being played, not checked")
                continue
            checked += 1
            if problems:
                bad += 1
                for problem in problems:
                    self.stderr.write(f"hand {hand_id}: {problem}")
        if bad:
            raise CommandError(f"{bad} of {checked} hands differ")
        note = f" ({moving} being played, not checked)" if moving else ""
        self.stdout.write(f"{checked} hands verified{note}")
