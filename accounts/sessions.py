"""Sessions in the database, as Django keeps them, with the one read that every page and
every socket makes (the session by its key) written out.

Composed by the ORM, ``Session.objects.get(session_key=..., expire_date__gt=now)`` cost four
times the statement itself (0.70 ms against 0.16 ms on PostgreSQL, docs/PERFORMANCE.md).
Everything else (saving, expiring, the admin, ``clearsessions``) is Django's database
session engine, on the same table: ``SESSION_ENGINE = "accounts.sessions"``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

_statements: dict[tuple[type[Any], str], str] = {}


def _statement(model: type[Any], using: str) -> str:
    found = _statements.get((model, using))
    if found is None:
        qn = connections[using].ops.quote_name
        meta = model._meta
        found = _statements[(model, using)] = (
            f"SELECT {qn(meta.get_field('session_data').column)} FROM {qn(meta.db_table)}"
            f" WHERE {qn(meta.get_field('session_key').column)} = %s"
            f" AND {qn(meta.get_field('expire_date').column)} > %s"
        )
    return found


class SessionStore(db.SessionStore):
    def load(self) -> dict[str, Any]:
        """The session's data; an unknown or expired key reads as a new, empty session (as
        Django's ``db.SessionStore.load``)."""
        model = self.model
        using = router.db_for_read(model, instance=None)
        connection = connections[using]
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(_statement(model, using), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return {}
        return self.decode(row[0])  # type: ignore[no-any-return]
