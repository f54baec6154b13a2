"""Sessions (``accounts.sessions``) and the user a session names (``accounts.backends``):
Django's database sessions and ``ModelBackend``, each read by a written-out statement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.backends import AccountBackend
from accounts.sessions import SessionStore
from tests.users import SignedIn

pytestmark = pytest.mark.django_db


def test_it_is_the_sites_session_engine() -> None:
    assert settings.SESSION_ENGINE == "accounts.sessions"


def test_it_reads_a_session_by_its_key_in_one_statement() -> None:
    kept = SessionStore()
    kept["language"] = "tr"
    kept["account"] = {"user": 7, "name": "Ayşe", "guest": False}
    kept.create()

    read = SessionStore(kept.session_key)
    with CaptureQueriesContext(connection) as queries:
        assert read["language"] == "tr"
        assert read["account"] == {"user": 7, "name": "Ayşe", "guest": False}
    assert len(queries) == 1
    assert read.session_key == kept.session_key


@pytest.mark.parametrize("case", ["expired", "unknown", "tampered"])
def test_an_expired_unknown_or_tampered_session_reads_as_a_new_empty_one(case: str) -> None:
    kept = SessionStore()
    kept["language"] = "tr"
    kept.create()
    key = kept.session_key
    if case == "expired":
        Session.objects.filter(pk=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    elif case == "unknown":
        key = "x" * 32
    else:
        Session.objects.filter(pk=key).update(session_data="not-signed:by-us")

    read = SessionStore(key)
    assert read.load() == {}
    assert "language" not in read
    if case != "tampered":  # a tampered row's key is kept, as Django's own store keeps it
        assert read.session_key is None


def test_a_player_stays_signed_in_across_pages_and_is_out_after_logging_out(
    django_user_model: Any,
) -> None:
    django_user_model.objects.create_user("ayse", password="a-long-password-1")
    client = Client()
    response = client.post(reverse("login"), {"username": "ayse", "password": "a-long-password-1"})
    assert response.status_code == 302
    assert client.get(reverse("lobby")).context["user"].get_username() == "ayse"
    client.post(reverse("logout"))
    assert not client.get(reverse("lobby")).context["user"].is_authenticated


def test_the_user_a_session_names_is_read_in_one_statement_as_the_orm_reads_them(
    django_user_model: Any,
) -> None:
    # django-axes's backend first (it never returns a user), then the one sessions name.
    assert settings.AUTHENTICATION_BACKENDS == [
        "accounts.backends.LoginLimitsBackend",
        "accounts.backends.AccountBackend",
    ]
    made = django_user_model.objects.create_user("ayse", password="x", email="a@example.test")
    django_user_model.objects.filter(pk=made.pk).update(last_login=timezone.now())
    expected = django_user_model.objects.get(pk=made.pk)

    with CaptureQueriesContext(connection) as queries:
        user = AccountBackend().get_user(made.pk)
    assert len(queries) == 1
    assert isinstance(user, django_user_model)
    for field in django_user_model._meta.concrete_fields:
        assert getattr(user, field.attname) == getattr(expected, field.attname), field.name
    assert user.is_active is True and user.last_login.tzinfo is not None
    assert user._state.adding is False and user._state.db == "default"


def test_no_user_for_an_unknown_id_or_an_inactive_account(django_user_model: Any) -> None:
    gone = django_user_model.objects.create_user("gone", password="x", is_active=False)
    assert AccountBackend().get_user(gone.pk) is None
    assert AccountBackend().get_user(gone.pk + 1000) is None


def test_a_page_reads_the_session_and_its_user_once_each(
    django_user_model: Any, signed_in: SignedIn
) -> None:
    ayse = django_user_model.objects.create_user("ayse", password="x")
    client = signed_in(ayse)
    client.get(reverse("lobby"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("lobby")).status_code == 200
    session = [q for q in queries if "django_session" in q["sql"]]
    users = [q for q in queries if 'FROM "auth_user"' in q["sql"]]
    assert len(session) == 1 and len(users) == 1
