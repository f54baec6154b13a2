"""Check hands' deals from their seeds, as the page /hands/<id>/verify/ does: one line per check.

    python manage.py verify_deal HAND_ID [HAND_ID ...]

Exits non-zero when a hand is missing or any check fails. The seed is never printed (a live
hand's seed stays secret; a finished hand's is on its page).
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.audit import deal_checks
from games.models import Hand


class Command(BaseCommand):
    help = "Check each hand's deal: commitment, re-deal from the seed, replayed moves, result."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("hand_ids", nargs="+", type=int, metavar="HAND_ID")

    def handle(self, *args: Any, **options: Any) -> None:
        failed = 0
        for hand_id in options["hand_ids"]:
            hand = Hand.objects.select_related("match__table__variant").filter(pk=hand_id).first()
            if hand is None:
                failed += 1
                self.stderr.write(f"hand {hand_id}: no such hand")
                continue
            self.stdout.write(f"hand {hand_id}: commitment {hand.commitment} ({hand.status})")
            for check in deal_checks(hand):
                line = f"hand {hand_id}: {check.key}: {'passed' if check.ok else 'FAILED'}"
                line += f" - {check.label}"
                if check.detail and not check.ok:
                    line += f" ({check.detail})"
                if check.ok:
                    self.stdout.write(line)
                else:
                    failed += 1
                    self.stderr.write(line)
        if failed:
            raise CommandError(f"{failed} check(s) failed")
