"""Signing in with a username and password, as Django's ``ModelBackend`` does, with the one
read every page and socket makes (the user a session names) written out.

Composed by the ORM, ``User.objects.get(pk=...)`` cost three times the statement itself
(0.67 ms against 0.20 ms on PostgreSQL, docs/PERFORMANCE.md). The user is made from the row
with the fields' own converters, as a queryset makes it (``okeysite.sql.Columns``).
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connections, router
from django.http import HttpRequest

from okeysite.sql import Columns

# The dotted path Django keeps in a session signed in through this backend.
PATH = "accounts.backends.AccountBackend"

_statements: dict[tuple[type[Any], str], tuple[str, Columns]] = {}


def _statement(model: type[Any], using: str) -> tuple[str, Columns]:
    found = _statements.get((model, using))
    if found is None:
        qn = connections[using].ops.quote_name
        columns = Columns(model, "u", using)
        sql = (
            f"SELECT {columns.sql} FROM {qn(model._meta.db_table)} u"
            f" WHERE u.{qn(model._meta.pk.column)} = %s"
        )
        found = _statements[(model, using)] = (sql, columns)
    return found


class AccountBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        """The active user ``user_id`` (a session's), or ``None``."""
        model = get_user_model()
        using = router.db_for_read(model)
        sql, columns = _statement(model, using)
        with connections[using].cursor() as cursor:
            cursor.execute(sql, [user_id])
            row = cursor.fetchone()
        if row is None:
            return None
        user = columns.make(row, 0)
        return user if self.user_can_authenticate(user) else None


class LoginLimitsBackend(AxesStandaloneBackend):
    """django-axes's backend, first in ``AUTHENTICATION_BACKENDS``: an ``authenticate`` call for
    a client over the log-in limits (``accounts.limits``) stops here, whichever form made it.

    A call without a request (the test client's ``login``, a shell) has no address to count
    by: it goes on to the next backend instead of failing, so that it authenticates as Django's
    own backend would. Every log-in form of the site passes its request."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)  # type: ignore[no-any-return]
