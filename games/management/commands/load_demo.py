"""Load the demo data: an admin account and a few players. Safe to run again and again.

Accounts that exist already are left as they are (their passwords are not reset). The four
variants are made sure of, and each keeps one open demo table (three bots and a free seat; the
match starts when someone sits down).

The accounts are created only while ``DEBUG`` is on (``make run``): their passwords are
published in the README, so on a site with ``DEBUG`` off anyone could sign in as them (as
``admin``, as a superuser). There the command loads the tables only, says it made no account,
and names any demo account that still has its published password (made earlier with
``DEBUG`` on). Create a real administrator there with ``manage.py createsuperuser``.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
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
        "Create one demo table per variant and, while DEBUG is on, the demo accounts "
        "(admin/admin and four players); idempotent."
    )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        if settings.DEBUG:
            self._accounts()
        else:
            self._no_accounts()
        self._tables()

    def _accounts(self) -> None:
        User = get_user_model()
        for username, password, is_superuser in DEMO_ACCOUNTS:
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

    def _no_accounts(self) -> None:
        names = ", ".join(repr(username) for username, _, _ in DEMO_ACCOUNTS)
        self.stderr.write(
            f"DEBUG is off: created no demo account ({names}): their passwords are published "
            "in the README. Run `manage.py createsuperuser` to make an administrator with a "
            "password of your own; players sign up on the site."
        )
        existing = {
            user.username: user
            for user in get_user_model().objects.filter(
                username__in=[username for username, _, _ in DEMO_ACCOUNTS]
            )
        }
        for username, password, _ in DEMO_ACCOUNTS:
            user = existing.get(username)
            # The hasher's function, not user.check_password: that one re-hashes and saves.
            if user is not None and check_password(password, user.password):
                self.stderr.write(
                    f"{username!r} still has the published password {password!r}: change it "
                    f"(`manage.py changepassword {username}`) or delete the account."
                )

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
            self.stdout.write(f"created table {table.shown_name!r}")
