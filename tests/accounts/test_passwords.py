"""Passwords: reset by e-mail (through the console backend, as in development) and change;
sign-up's optional e-mail address."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from tests.users import PASSWORD, SignedIn, make_user

from .helpers import parse

pytestmark = pytest.mark.django_db

User = get_user_model()
NEW_PASSWORD = "a-brand-new-rack-77"
CONSOLE = "django.core.mail.backends.console.EmailBackend"


def test_the_log_in_page_links_to_the_password_reset() -> None:
    page = parse(Client().get(reverse("login")).content)
    link = page.one("a", data_action="forgot-password")
    assert link.attrs["href"] == reverse("password_reset")
    assert link.text() == "Forgot your password?"


@override_settings(EMAIL_BACKEND=CONSOLE, DEFAULT_FROM_EMAIL="okey@example.org")
def test_a_password_is_reset_through_the_link_in_the_e_mail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = make_user("elif")
    User.objects.filter(pk=user.pk).update(email="elif@example.org")
    client = Client()
    assert "Reset your password" in client.get(reverse("password_reset")).content.decode()

    response = client.post(reverse("password_reset"), {"email": "elif@example.org"})

    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_done")
    assert "Check your e-mail" in client.get(response["Location"]).content.decode()
    mail = capsys.readouterr().out
    assert "Subject: Reset your Okey password on testserver" in mail
    assert "From: okey@example.org" in mail and "To: elif@example.org" in mail
    assert "Your username is elif." in mail
    links = re.findall(r"http://testserver/accounts/reset/[\w-]+/[\w-]+/", mail)
    assert len(links) == 1

    # The link: Django swaps the token for a session marker and redirects to the form.
    response = client.get(links[0].removeprefix("http://testserver"))
    assert response.status_code == 302
    form_url = response["Location"]
    assert "Choose a new password" in client.get(form_url).content.decode()
    response = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_complete")
    assert "Your new password is set." in client.get(response["Location"]).content.decode()

    fresh = Client()
    response = fresh.post(reverse("login"), {"username": "elif", "password": NEW_PASSWORD})
    assert response.status_code == 302
    assert "Signed in as elif" in fresh.get("/").content.decode()
    assert not Client().login(username="elif", password=PASSWORD)
    # The link works once.
    used = client.get(links[0].removeprefix("http://testserver"), follow=True)
    assert "This link does not work any more" in used.content.decode()


@override_settings(EMAIL_BACKEND=CONSOLE)
def test_no_mail_goes_to_an_unknown_address_or_a_guest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = Client()
    client.post(reverse("guest"))
    guest = User.objects.get()
    User.objects.filter(pk=guest.pk).update(email="guest@example.org")
    for address in ("nobody@example.org", "guest@example.org"):
        response = Client().post(reverse("password_reset"), {"email": address})
        assert response["Location"] == reverse("password_reset_done")
    assert "Subject:" not in capsys.readouterr().out


def test_a_player_changes_their_password_and_stays_signed_in(signed_in: SignedIn) -> None:
    user = make_user("elif")
    client = signed_in(user)
    page = client.get(reverse("password_change"))
    assert page.status_code == 200 and "Change password" in page.content.decode()

    refused = client.post(
        reverse("password_change"),
        {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert refused.status_code == 200 and refused.context["form"].errors["old_password"]

    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("password_change_done")
    done = client.get(response["Location"]).content.decode()
    assert "Your password is changed." in done and "Signed in as elif" in done
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_changing_a_password_needs_a_log_in() -> None:
    response = Client().get(reverse("password_change"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={reverse('password_change')}"


def test_the_password_pages_are_ours(signed_in: SignedIn) -> None:
    client = signed_in(make_user("elif"))
    for name in ("password_change", "password_change_done"):
        page = parse(client.get(reverse(name)).content)
        assert page.one("header", class_="site-header")  # base.html, not the admin's
    anonymous = Client()
    for name in ("password_reset", "password_reset_done", "password_reset_complete"):
        page = parse(anonymous.get(reverse(name)).content)
        assert page.one("header", class_="site-header")
    invalid = anonymous.get(reverse("password_reset_confirm", args=["MQ", "set-password"]))
    assert "This link does not work any more" in invalid.content.decode()


def test_sign_up_takes_an_optional_e_mail_address() -> None:
    client = Client()
    form = parse(client.get(reverse("signup")).content)
    assert form.one("input", name="email")
    response = client.post(
        reverse("signup"),
        {
            "username": "elif",
            "email": "elif@example.org",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert response.status_code == 302
    assert User.objects.get(username="elif").email == "elif@example.org"
    response = Client().post(
        reverse("signup"), {"username": "can", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302 and User.objects.get(username="can").email == ""


def test_sign_up_keeps_guest_names_for_guests() -> None:
    response = Client().post(
        reverse("signup"),
        {"username": "guest-abc123", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 200
    assert "kept for guests" in " ".join(response.context["form"].errors["username"])
    assert not User.objects.exists()
