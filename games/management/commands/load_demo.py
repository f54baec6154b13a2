"""Load the demo data: an admin account and a few players. Safe to run again and again.

Accounts that exist already are left as they are (their passwords are not reset). The four
variants are made sure of, and each keeps one open demo table (three bots and a free seat; the
match starts when someone sits down).

The ``admin``/``admin`` superuser is created only while ``DEBUG`` is on (``make run``): with
``DEBUG`` off the command still loads the players and tables but refuses to create a superuser
with a well-known password. Create a real one there with ``manage.py createsuperuser``.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from games import actions
from games.catalog import ensure_variants
from games.models import Table, Variant

# (username, password, is_superuser). The README lists the same accounts.
DEMO_ACCOUNTS = [
    ("admin", "admin", True),
    ("ayse", "okey1234", False),
    ("mehmet", "okey1234", False),
    ("can", "okey1234", False),
    ("deniz", "okey1234", False),
]


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
        ensure_variants()
        # Each variant keeps one open demo table: three greedy bots and a free seat, starting
        # by itself when someone sits down (a player holds one live table at a time, so no
        # demo player is seated for them).
        for variant in Variant.objects.all():
            name = f"Demo {variant.name}"
            if Table.objects.filter(variant=variant, name=name, status=Table.Status.OPEN).exists():
                continue
            table = actions.create_table(
                variant=variant, created_by=None, name=name, auto_start=True
            )
            for position in range(1, table.players):
                actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
            self.stdout.write(f"created table {table.name!r}")
