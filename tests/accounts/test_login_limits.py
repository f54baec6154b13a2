"""Failed log-ins are limited in Django's cache: 5 per account name and 20 per address in 15
minutes; over either, the form refuses without checking the password."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts import limits

from .helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_hashing(settings: Any) -> None:
    # Dozens of failed log-ins: the default hasher's slowness is not what is tested here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


TOO_MANY = "Too many failed log-ins. Try again in 15 minutes."
WRONG = "Please enter a correct username and password."


def attempt(username: str, password: str, address: str = "10.0.0.1") -> Any:
    return Client().post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def errors(response: Any) -> str:
    assert response.status_code == 200, response.status_code
    return " ".join(response.context["form"].non_field_errors())


def test_five_failures_lock_the_account_name_even_with_the_right_password() -> None:
    make_user("elif")
    for n in range(5):
        assert WRONG in errors(attempt("elif", f"wrong-{n}", address=f"10.0.1.{n}"))

    refused = attempt("elif", PASSWORD, address="10.0.2.1")

    assert errors(refused) == TOO_MANY
    assert "_auth_user_id" not in refused.wsgi_request.session
    # Another spelling of the name shares the count; other accounts are not affected.
    assert errors(attempt(" ELIF ", PASSWORD, address="10.0.2.2")) == TOO_MANY
    make_user("can")
    assert attempt("can", PASSWORD).status_code == 302


def test_a_locked_form_does_not_even_check_the_password() -> None:
    make_user("elif")
    for _ in range(5):
        attempt("elif", "wrong")
    with mock.patch("django.contrib.auth.forms.authenticate") as authenticate:
        assert errors(attempt("elif", PASSWORD)) == TOO_MANY
    authenticate.assert_not_called()


def test_twenty_failures_lock_the_address() -> None:
    make_user("elif")
    for n in range(20):
        assert WRONG in errors(attempt(f"someone-{n}", "wrong", address="10.9.9.9"))

    assert errors(attempt("elif", PASSWORD, address="10.9.9.9")) == TOO_MANY
    assert attempt("elif", PASSWORD, address="10.9.9.10").status_code == 302


def test_four_failures_then_success_clears_the_account_count() -> None:
    make_user("elif")
    for _ in range(4):
        attempt("elif", "wrong")
    assert attempt("elif", PASSWORD).status_code == 302
    for _ in range(4):
        attempt("elif", "wrong")
    # 8 failures in all, never 5 in a row since the success: still allowed.
    assert attempt("elif", PASSWORD).status_code == 302
    assert limits.LOGIN_PER_ACCOUNT.count("elif") == 0


def test_the_window_ends() -> None:
    make_user("elif")
    for _ in range(5):
        attempt("elif", "wrong")
    assert errors(attempt("elif", PASSWORD)) == TOO_MANY
    cache.delete(limits.LOGIN_PER_ACCOUNT.key("elif"))  # as the 15 minutes running out would
    assert attempt("elif", PASSWORD).status_code == 302


def test_the_limiter_counts_in_a_window(monkeypatch: pytest.MonkeyPatch) -> None:
    limiter = limits.Limiter("test", limit=2, window=60)
    calls: list[tuple[str, Any]] = []
    real_add = cache.add

    def add(key: str, value: Any, timeout: Any = None) -> bool:
        calls.append((key, timeout))
        return real_add(key, value, timeout=timeout)

    monkeypatch.setattr(cache, "add", add)
    assert not limiter.exceeded("x")
    assert limiter.hit("x") == 1
    assert limiter.hit("x") == 2
    assert limiter.exceeded("x") and not limiter.exceeded("y")
    assert calls and all(timeout == 60 for _, timeout in calls)
    limiter.reset("x")
    assert limiter.count("x") == 0


def test_the_cache_starts_empty_in_every_test() -> None:
    # The suite's autouse fixture (tests/conftest.py) clears it, so counts never leak.
    assert limits.LOGIN_PER_ADDRESS.count("10.9.9.9") == 0
    limits.LOGIN_PER_ADDRESS.hit("10.9.9.9")
