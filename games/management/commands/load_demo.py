"""Load the demo data: an admin account and a few players. Safe to run again and again.

Accounts that exist already are left as they are (their passwords are not reset).
Later issues add the variants and open tables here.
"""

from typing import Any

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


class Command(BaseCommand):
    help = "Create the demo accounts (admin/admin and four players); idempotent."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
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
