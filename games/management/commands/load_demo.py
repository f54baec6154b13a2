"""Load the demo data: an admin account and a few players. Safe to run again and again.

Accounts that exist already are left as they are (their passwords are not reset). The four
variants are made sure of, and each gets one open demo table (a demo player seated, three
bots) if it has no table yet: one player per table, since a player sits at one live table.

The ``admin``/``admin`` superuser is created only while ``DEBUG`` is on (``make run``): with
``DEBUG`` off the command still loads the players and tables but refuses to create a superuser
with a well-known password. Create a real one there with ``manage.py createsuperuser``.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

# (username, password, is_superuser). The README lists the same accounts.
DEMO_ACCOUNTS = [
    ("admin", "admin", True),
    ("ayse", "okey1234", False),
    ("mehmet", "okey1234", False),
    ("can", "okey1234", False),
    ("deniz", "okey1234", False),
]
DEMO_PLAYERS = [name for name, _password, is_superuser in DEMO_ACCOUNTS if not is_superuser]


class Command(BaseCommand):
    help = (
        "Create the demo accounts (four players, and admin/admin while DEBUG is on) and one demo "
        "table per variant; idempotent."
    )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        for username, password, is_superuser in DEMO_ACCOUNTS:
            if is_superuser and not settings.DEBUG:
                self.stderr.write(
                    f"refused to create the superuser {username!r} with the demo password "
                    f"{password!r}: DEBUG is off. Run `manage.py createsuperuser` to make an "
                    "administrator with a password of your own."
                )
                continue
            user, created = User.objects.get_or_create(
                username=username,
                defaults={"is_staff": is_superuser, "is_superuser": is_superuser},
            )
            if created:
                user.set_password(password)
                user.save(update_fields=["password"])
                self.stdout.write(f"created {username!r} (password {password!r})")
            else:
                self.stdout.write(f"kept {username!r} (already there)")
        self._tables()

    def _tables(self) -> None:
        from games import services
        from games.catalog import ensure_variants
        from games.models import Table, Variant

        ensure_variants()
        # One demo player per table: a player holds a seat at one live table at a time.
        players = list(get_user_model().objects.filter(username__in=DEMO_PLAYERS))
        players.sort(key=lambda u: DEMO_PLAYERS.index(u.username))
        for n, variant in enumerate(Variant.objects.all()):
            if Table.objects.filter(variant=variant).exists():
                continue
            host = players[n % len(players)]
            table = services.create_table(
                variant=variant, created_by=host, name=f"Demo {variant.name}"
            )
            try:
                services.sit(table, host, 0)
            except services.GameError:  # they sit elsewhere already: a bot takes the seat
                services.add_bot(table, 0, "greedy", by=services.SYSTEM)
            for position in range(1, table.players):
                services.add_bot(table, position, "greedy", by=services.SYSTEM)
            self.stdout.write(f"created table {table.name!r}")
