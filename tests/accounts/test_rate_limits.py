"""Per address, django-ratelimit (accounts.limits) caps what costs the site or others something
each time: new guests (20 an hour: a shared Wi-Fi's players), sign-ups (5 an hour) and
password-reset mails (5 an hour per address, 3 an hour per e-mail address). Over a limit: a
clear refusal, HTTP 429, nothing made or sent; past the guests' limit, a sign-up form."""

from __future__ import annotations

import time
import zlib
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import Profile
from games.models import Table
from tests.users import PASSWORD, SignedIn, make_user

pytestmark = pytest.mark.django_db

User = get_user_model()
TOO_MANY_GUESTS = "Too many new guests from your address. Try again in an hour"
TOO_MANY_SIGNUPS = "Too many new accounts from your address. Try again in an hour."
TOO_MANY_RESETS = "Too many password-reset mails asked for. Try again in an hour."


def guests() -> int:
    return Profile.objects.filter(is_guest=True).count()


def new_guest(address: str = "10.0.0.1", **post: str) -> Any:
    """A new guest, from the lobby's Play-now buttons when ``variant`` is given."""
    where = reverse("play_now" if "variant" in post else "guest")
    return Client().post(where, post, REMOTE_ADDR=address)


def an_hour_later(monkeypatch: pytest.MonkeyPatch) -> None:
    later = time.time() + 3601
    monkeypatch.setattr("django_ratelimit.core.time.time", lambda: later)


def test_an_address_makes_at_most_twenty_guests_an_hour(monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in range(20):
        assert new_guest().status_code == 302
    assert guests() == 20

    refused = new_guest()

    assert refused.status_code == 429
    assert TOO_MANY_GUESTS in refused.content.decode()
    assert "_auth_user_id" not in refused.wsgi_request.session
    assert guests() == 20
    # Another address is not affected; the same one may again an hour later.
    assert new_guest(address="10.0.0.2").status_code == 302
    an_hour_later(monkeypatch)
    assert new_guest().status_code == 302
    assert guests() == 22


def test_past_the_guests_limit_one_step_signs_up_and_goes_on(variants: None) -> None:
    """Over the limit the page is not a dead end: a sign-up form on it (a name and a
    password) makes the account, signs the player in and goes back where they were."""
    for _ in range(20):
        new_guest()
    client = Client(REMOTE_ADDR="10.0.0.1")
    refused = client.post(reverse("play_now"), {"variant": "okey51"}, REMOTE_ADDR="10.0.0.1")
    page = refused.content.decode()
    assert refused.status_code == 429
    for field in ('name="username"', 'name="password1"', 'name="password2"'):
        assert field in page, field
    assert 'name="next" value="/"' in page
    signed = client.post(
        reverse("signup"),
        {"username": "wifi-player", "password1": PASSWORD, "password2": PASSWORD, "next": "/"},
        REMOTE_ADDR="10.0.0.1",
    )
    assert signed.status_code == 302 and signed["Location"] == "/"
    assert User.objects.filter(username="wifi-player").exists()
    assert client.get("/").wsgi_request.user.get_username() == "wifi-player"


def test_the_play_now_buttons_make_no_guest_over_the_limit(variants: None) -> None:
    for _ in range(20):
        new_guest()

    refused = new_guest(variant="okey51")

    assert refused.status_code == 429
    assert TOO_MANY_GUESTS in refused.content.decode()
    assert guests() == 20
    assert not Table.objects.exists()


def test_a_signed_in_player_pressing_play_now_is_not_counted(
    variants: None, signed_in: SignedIn
) -> None:
    for _ in range(20):
        new_guest()
    client = signed_in(make_user("elif"), REMOTE_ADDR="10.0.0.1")

    response = client.post(reverse("play_now"), {"variant": "duz"})
    assert response.status_code == 302 and response["Location"].startswith("/tables/")


def sign_up(name: str, address: str = "10.0.0.1", password: str = PASSWORD) -> Any:
    return Client().post(
        reverse("signup"),
        {"username": name, "password1": PASSWORD, "password2": password},
        REMOTE_ADDR=address,
    )


def test_an_address_makes_at_most_five_accounts_an_hour() -> None:
    # A form sent back with mistakes makes nothing and is not counted.
    for n in range(3):
        assert sign_up(f"typo{n}", password="not-the-same").status_code == 200
    for n in range(5):
        assert sign_up(f"player{n}").status_code == 302

    refused = sign_up("player5")

    assert refused.status_code == 429
    assert TOO_MANY_SIGNUPS in refused.content.decode()
    assert not User.objects.filter(username="player5").exists()
    assert User.objects.count() == 5
    assert sign_up("player5", address="10.0.0.2").status_code == 302


def reset(email: str, address: str = "10.0.0.1") -> Any:
    return Client().post(reverse("password_reset"), {"email": email}, REMOTE_ADDR=address)


@pytest.fixture
def outbox(settings: Any) -> list[Any]:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    return mail.outbox


def test_an_address_asks_for_at_most_five_reset_mails_an_hour(outbox: list[Any]) -> None:
    for n in range(5):
        user = make_user(f"player{n}")
        User.objects.filter(pk=user.pk).update(email=f"player{n}@example.org")
        assert reset(f"player{n}@example.org").status_code == 302
    assert len(outbox) == 5
    make_user("elif")
    User.objects.filter(username="elif").update(email="elif@example.org")

    refused = reset("elif@example.org")

    assert refused.status_code == 429
    assert TOO_MANY_RESETS in refused.content.decode()
    assert len(outbox) == 5
    assert reset("elif@example.org", address="10.0.0.2").status_code == 302
    assert len(outbox) == 6


def test_one_mailbox_gets_at_most_three_reset_mails_an_hour(outbox: list[Any]) -> None:
    make_user("elif")
    User.objects.filter(username="elif").update(email="elif@example.org")
    for n in range(3):
        assert reset("elif@example.org", address=f"10.0.1.{n}").status_code == 302

    refused = reset(" ELIF@example.org", address="10.0.2.1")

    assert refused.status_code == 429
    assert TOO_MANY_RESETS in refused.content.decode()
    assert len(outbox) == 3


def test_an_hourly_window_holds_still_through_a_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key's window ends at its own moment of the hour (tests/conftest.py holds it still
    within a test): a test crossing that moment would see its count start again."""
    from django_ratelimit import core

    now = time.time()

    def natural_end(address: str) -> int:
        end = int(now) - int(now) % 3600 + zlib.crc32(address.encode()) % 3600
        return end if end > now else end + 3600

    # An address whose window would end within the next few minutes.
    address = next(
        a for a in (f"192.0.2.{n}" for n in range(256)) if 60 < natural_end(a) - now < 3000
    )
    before = core._get_window(address, 3600)
    crossed = natural_end(address) + 1
    monkeypatch.setattr("django_ratelimit.core.time.time", lambda: crossed)
    assert core._get_window(address, 3600) == before
