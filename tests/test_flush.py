"""The suite's own harness: a test database's flush that loses a deadlock to a test server is
tried again (tests/conftest.py, ``_flush_tries_again_after_a_deadlock``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import OperationalError, connection

from tests.users import make_user


@pytest.mark.django_db(transaction=True)
def test_a_flush_that_loses_a_deadlock_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    make_user("ayse")
    flush_sql, failures = connection.ops.execute_sql_flush, []

    def deadlock_once(sql: Any) -> None:
        if not failures:
            failures.append(1)
            raise OperationalError("deadlock detected")
        flush_sql(sql)

    monkeypatch.setattr(connection.ops, "execute_sql_flush", deadlock_once)
    call_command("flush", verbosity=0, interactive=False)
    assert failures == [1]
    assert not get_user_model().objects.exists()
