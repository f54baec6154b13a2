"""Guests: "Play as a guest" (header, log-in and sign-up pages, the lobby's Play-now buttons),
and keeping a guest account under a name of one's own."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.models import Profile
from games.models import Hand, Match, Participant, Seat, Table
from tests.users import PASSWORD, SignedIn, make_user

from .helpers import form_values, parse

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

User = get_user_model()


def the_guest() -> Any:
    return User.objects.get(profile__is_guest=True)


def guest_client(**post: str) -> tuple[Client, Any]:
    """A new guest; at a practice table of ``variant`` (three bots, its first hand dealt) when
    given (the lobby's "Practice with bots" buttons)."""
    client = Client()
    response = client.post(reverse("practice" if "variant" in post else "guest"), post)
    assert response.status_code == 302
    return client, the_guest()


# ----------------------------------------------------------------------------- becoming a guest
def test_it_makes_a_guest_with_a_generated_name_and_no_password() -> None:
    client = Client()

    response = client.post(reverse("guest"))

    assert response.status_code == 302 and response["Location"] == reverse("lobby")
    guest = the_guest()
    assert re.fullmatch(r"guest-[a-z0-9]{6}", guest.username)
    assert not guest.has_usable_password()
    assert Profile.objects.get(user=guest).is_guest
    page = parse(client.get("/").content)
    assert page.one(class_="who").text() == f"Signed in as {guest.username}"
    assert page.one("a", data_action="keep-account").attrs["href"] == reverse("keep_account")


def test_each_guest_gets_a_name_of_their_own() -> None:
    for _ in range(5):
        Client().post(reverse("guest"))
    names = list(User.objects.values_list("username", flat=True))
    assert len(names) == len(set(names)) == 5


def test_guest_names_are_generated_again_when_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    from accounts import views

    make_user("guest-aaaaaa")
    names = iter(["guest-aaaaaa", "guest-bbbbbb"])
    monkeypatch.setattr(views, "_guest_name", lambda: next(names))

    Client().post(reverse("guest"))

    assert the_guest().username == "guest-bbbbbb"


@pytest.mark.parametrize(
    ("next_url", "lands"),
    [
        ("/rules/", "/rules/"),
        ("https://evil.example.org/", "/"),
        ("//evil.example.org/", "/"),
        ("/accounts/login/?next=/rules/", "/"),
        ("/accounts/signup/", "/"),
        ("", "/"),
    ],
)
def test_a_new_guest_goes_back_to_a_safe_next_page(next_url: str, lands: str) -> None:
    response = Client().post(reverse("guest"), {"next": next_url})
    assert response.status_code == 302 and response["Location"] == lands


def test_a_signed_in_player_is_not_turned_into_a_guest(signed_in: SignedIn) -> None:
    player = make_user("ayse")
    client = signed_in(player)

    response = client.post(reverse("guest"), {"next": "/rules/"})

    assert response["Location"] == "/rules/"
    assert User.objects.count() == 1 and not Profile.objects.filter(is_guest=True).exists()


def test_the_guest_view_takes_posts_only() -> None:
    assert Client().get(reverse("guest")).status_code == 405
    assert not User.objects.exists()


def test_anonymous_pages_offer_play_as_a_guest() -> None:
    client = Client()
    for url, next_value in (
        ("/rules/", "/rules/"),
        (f"{reverse('login')}?next=/rules/", "/rules/"),
        (f"{reverse('signup')}?next=/rules/", "/rules/"),
    ):
        page = parse(client.get(url).content)
        forms = [f for f in page.all("form") if f.attrs.get("action") == reverse("guest")]
        assert forms, url
        for form in forms:
            assert form.one("button", data_action="guest").text() == "Play as a guest"
            assert form_values(form)["next"] == next_value, url
            assert "csrfmiddlewaretoken" in form_values(form)


def test_signed_in_players_see_no_guest_button_and_players_no_keep_link(
    signed_in: SignedIn,
) -> None:
    page = parse(signed_in(make_user("ayse")).get("/").content)
    assert not [f for f in page.all("form") if f.attrs.get("action") == reverse("guest")]
    assert not page.all("a", data_action="keep-account")


# ----------------------------------------------------------------------------- Play now as a guest
def test_the_lobby_practice_buttons_make_an_anonymous_visitor_a_guest_at_a_table() -> None:
    client = Client(enforce_csrf_checks=True)
    page = parse(client.get("/").content)
    form = next(f for f in page.all("form") if f.all(data_action="practice"))
    button = form.one("button", data_action="practice", data_variant="duz")
    assert button.attrs["formaction"] == reverse("practice")
    hint = page.one("section", class_="play-now").text()
    assert "You will play as a guest" in hint

    response = client.post(
        button.attrs["formaction"],
        {**form_values(form), button.attrs["name"]: button.attrs["value"]},
    )

    guest = the_guest()
    table = Table.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    assert table.variant.key == "duz" and table.created_by == guest
    assert table.status == Table.Status.PLAYING
    assert [(s.position, s.user_id, s.bot_level) for s in table.seats.order_by("position")] == [
        (0, guest.pk, ""),
        (1, None, "strong"),
        (2, None, "strong"),
        (3, None, "strong"),
    ]
    hand = Hand.objects.get(match__table=table)
    assert hand.status == Hand.Status.PLAYING
    page = client.get(response["Location"]).content.decode()
    assert 'id="rack-area"' in page and 'data-seat="0"' in page


def test_signed_in_play_now_buttons_post_to_play_now(signed_in: SignedIn) -> None:
    page = parse(signed_in(make_user("ayse")).get("/").content)
    form = next(f for f in page.all("form") if f.all(data_action="play-now"))
    assert form.attrs["action"] == reverse("play_now")
    for button in form.all("button", data_action="play-now"):
        assert "formaction" not in button.attrs


def test_play_now_as_a_guest_over_htmx_redirects_the_page() -> None:
    response = Client().post(
        reverse("play_now"), {"variant": "okey51"}, headers={"HX-Request": "true"}
    )
    table = Table.objects.get()
    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("table", args=[table.pk])


def test_a_guest_for_a_variant_that_does_not_exist_is_not_made() -> None:
    client = Client()
    response = client.post(reverse("play_now"), {"variant": "chess"}, follow=True)
    assert response.redirect_chain == [(reverse("lobby"), 302)]
    assert "There is no such variant." in response.content.decode()
    assert not User.objects.exists() and not Table.objects.exists()


# ----------------------------------------------------------------------------- keeping the account
def keep(client: Client, **fields: str) -> Any:
    data = {"username": "elif", "email": "", "password1": PASSWORD, "password2": PASSWORD}
    return client.post(reverse("keep_account"), {**data, **fields})


def test_a_guest_keeps_the_same_account_with_its_seat_and_hands() -> None:
    client, guest = guest_client(variant="okey51")
    seat = Seat.objects.get(user=guest)
    hands = list(Participant.objects.filter(user=guest).values_list("pk", flat=True))
    assert hands
    form = parse(client.get(reverse("keep_account")).content).one("form", data_form="keep-account")
    assert form_values(form)["username"] == ""  # not the generated name

    response = keep(client, email="elif@example.org")

    assert response.status_code == 302 and response["Location"] == "/players/elif/"
    kept = User.objects.get(pk=guest.pk)
    assert kept.username == "elif" and kept.email == "elif@example.org"
    assert kept.check_password(PASSWORD)
    assert not Profile.objects.get(user=kept).is_guest
    assert User.objects.count() == 1
    assert Seat.objects.get(pk=seat.pk).user_id == guest.pk
    assert list(Participant.objects.filter(user=guest).values_list("pk", flat=True)) == hands
    # Still signed in (the session follows the new password), and no longer a guest.
    page = parse(client.get(response["Location"]).content)
    assert page.one(class_="who").text() == "Signed in as elif"
    assert not page.all("a", data_action="keep-account")
    flashed = page.one(class_="messages").text()
    assert flashed == "The account is yours: from now on, log in as elif."
    client.post(reverse("logout"))
    assert Client().login(username="elif", password=PASSWORD)


@pytest.mark.parametrize(
    ("fields", "field", "error"),
    [
        ({"username": "Ayse"}, "username", "A user with that username already exists."),
        ({"username": "guest-mine"}, "username", "kept for guests"),
        ({"username": "bad name!"}, "username", "Enter a valid username."),
        ({"password1": "1234", "password2": "1234"}, "password2", "too short"),
        ({"password2": "another-password-42"}, "password2", "didn’t match"),
        ({"email": "not-an-address"}, "email", "Enter a valid email address."),
    ],
)
def test_keeping_the_account_checks_name_and_password(
    fields: dict[str, str], field: str, error: str
) -> None:
    make_user("ayse")
    client, guest = guest_client()

    response = keep(client, **fields)

    assert response.status_code == 200
    assert error in " ".join(response.context["form"].errors[field])
    guest.refresh_from_db()
    assert guest.username.startswith("guest-") and not guest.has_usable_password()
    assert Profile.objects.get(user=guest).is_guest


def test_only_guests_keep_an_account(signed_in: SignedIn) -> None:
    response = Client().get(reverse("keep_account"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    player = make_user("ayse")
    client = signed_in(player)
    response = keep(client, username="other")
    assert response.status_code == 302 and response["Location"] == "/players/ayse/"
    player.refresh_from_db()
    assert player.username == "ayse" and player.check_password(PASSWORD) is True


def test_a_guest_match_history_stays_with_the_kept_account() -> None:
    client, guest = guest_client(variant="duz")
    match = Match.objects.get()
    keep(client)
    page = parse(client.get("/players/elif/").content)
    row = page.one("tr", data_match=str(match.pk))
    assert "Düz Okey" in row.text() and "playing" in row.text()
    links = {a.attrs["href"] for a in row.all("a")}
    assert reverse("table", args=[match.table_id]) in links
    assert reverse("match", args=[match.pk]) in links
