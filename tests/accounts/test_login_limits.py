"""Failed log-ins are limited by django-axes (accounts.limits), on the site's log-in and the
admin's alike, in 15-minute windows: 5 per account name at one address, 20 per address, and
20 per account name across addresses, except at an address that logged into that account
lately. So a stranger cannot lock an owner out; over a limit, the password is not even
checked."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from axes.models import AccessAttempt, AccessLog
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.users import PASSWORD, make_user

pytestmark = pytest.mark.django_db


TOO_MANY = "Too many failed log-ins. Try again in 15 minutes."
WRONG = "Please enter a correct username and password."
OWNERS_ADDRESS = "10.0.0.5"


def attempt(username: str, password: str, address: str = "10.0.0.1") -> Any:
    return Client().post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def errors(response: Any) -> str:
    assert response.status_code == 200, response.status_code
    return " ".join(response.context["form"].non_field_errors())


def logged_in(response: Any) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


def test_five_failures_lock_the_account_at_that_address_even_with_the_right_password() -> None:
    make_user("elif")
    for n in range(4):
        assert WRONG in errors(attempt("elif", f"wrong-{n}"))
    # The failure that reaches the limit says both.
    fifth = errors(attempt("elif", "wrong-4"))
    assert WRONG in fifth and TOO_MANY in fifth

    refused = attempt("elif", PASSWORD)

    assert errors(refused) == TOO_MANY
    assert "_auth_user_id" not in refused.wsgi_request.session
    # Another spelling of the name shares the count; other accounts are not affected.
    assert errors(attempt(" ELIF ", PASSWORD)) == TOO_MANY
    make_user("can")
    assert logged_in(attempt("can", PASSWORD))


def test_a_stranger_cannot_lock_the_owner_out() -> None:
    make_user("deniz")
    assert logged_in(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS))
    # A stranger, from one address, tries the public name in another spelling.
    for n in range(8):
        attempt("Deniz ", f"guess-{n}", address="10.6.6.6")
    assert errors(attempt("deniz", PASSWORD, address="10.6.6.6")) == TOO_MANY

    # The owner logs in from their own address, and from a new one.
    assert logged_in(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS))
    assert logged_in(attempt("deniz", PASSWORD, address="10.0.0.99"))


def test_guesses_from_many_addresses_lock_the_account_except_where_its_owner_logged_in() -> None:
    make_user("deniz")
    assert logged_in(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS))
    # 20 guesses from five addresses, each staying under its own limit of 5.
    for n in range(20):
        assert WRONG in errors(attempt("deniz", f"guess-{n}", address=f"10.7.0.{n % 5}"))

    assert errors(attempt("deniz", PASSWORD, address="10.8.0.1")) == TOO_MANY
    assert logged_in(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS))


def test_a_log_in_long_ago_does_not_exempt_an_address() -> None:
    make_user("deniz")
    assert logged_in(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS))
    AccessLog.objects.update(attempt_time=timezone.now() - timedelta(days=31))
    for n in range(20):
        attempt("deniz", f"guess-{n}", address=f"10.7.0.{n % 5}")

    assert errors(attempt("deniz", PASSWORD, address=OWNERS_ADDRESS)) == TOO_MANY


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
    assert logged_in(attempt("elif", PASSWORD, address="10.9.9.10"))


def test_four_failures_then_success_clears_that_addresss_count() -> None:
    make_user("elif")
    for _ in range(4):
        attempt("elif", "wrong")
    assert logged_in(attempt("elif", PASSWORD))
    for _ in range(4):
        attempt("elif", "wrong")
    # 8 failures in all, never 5 in a row since the success: still allowed.
    assert logged_in(attempt("elif", PASSWORD))
    assert not AccessAttempt.objects.filter(username="elif", ip_address="10.0.0.1").exists()


def test_the_lock_ends_15_minutes_after_the_last_failure() -> None:
    make_user("elif")
    for _ in range(5):
        attempt("elif", "wrong")
    assert errors(attempt("elif", PASSWORD)) == TOO_MANY
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=14))
    assert errors(attempt("elif", PASSWORD)) == TOO_MANY
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert logged_in(attempt("elif", PASSWORD))


# ----------------------------------------------------------------------------- the admin
def admin_attempt(username: str, password: str, address: str = "10.0.0.1") -> Any:
    return Client().post(
        reverse("admin:login"),
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=address,
    )


def test_the_admins_log_in_has_the_same_limits() -> None:
    make_user("boss", superuser=True)
    for n in range(30):
        response = admin_attempt("boss", f"wrong-{n}")
        assert response.status_code == 200

    refused = admin_attempt("boss", PASSWORD)

    assert refused.status_code == 200
    assert TOO_MANY in refused.content.decode()
    assert "_auth_user_id" not in refused.wsgi_request.session
    # Five failed tries, the limit: the other 25 were refused unchecked.
    assert sum(AccessAttempt.objects.values_list("failures_since_start", flat=True)) == 5
    # Failures on the site's log-in count for the admin's, and the other way round.
    assert errors(attempt("boss", PASSWORD)) == TOO_MANY
    make_user("elif", staff=True)
    for _ in range(5):
        attempt("elif", "wrong", address="10.0.0.2")
    assert TOO_MANY in admin_attempt("elif", PASSWORD, address="10.0.0.2").content.decode()
    # From another address the admin logs in.
    assert admin_attempt("boss", PASSWORD, address="10.0.0.3").status_code == 302
