"""The profile page (/players/<username>/): what it shows the owner, other players and
visitors, the owner's edits, the match history; display names across the site; the admin."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Profile, display_name
from games import actions, reads
from games.pages.profiles import RECENT_MATCHES, recent_matches
from tests.users import SignedIn, make_user

from .helpers import finish, form_values, parse, played_match

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

User = get_user_model()


def profile_page(client: Client, username: str) -> Any:
    response = client.get(reverse("profile", args=[username]))
    assert response.status_code == 200
    return parse(response.content)


def facts(page: Any) -> dict[str, str]:
    dl = page.one("dl", class_="profile-facts")
    return {dd.attrs["data-field"]: dd.text() for dd in dl.all("dd", data_field=True)}


# ----------------------------------------------------------------------------- display names
def test_display_name_falls_back_to_the_username() -> None:
    plain = make_user("ayse")
    named = make_user("mehmet", display_name="Memo")
    blank = make_user("can", display_name="")
    assert display_name(plain) == "ayse"
    assert display_name(named) == "Memo"
    assert display_name(blank) == "can"
    assert display_name(None) == ""


def test_profile_of_makes_one_profile_per_user() -> None:
    user = make_user("ayse")
    first = Profile.of(user)
    assert Profile.of(user) == first and Profile.objects.count() == 1
    assert not first.is_guest and first.display_name == "" and first.language == ""


# ----------------------------------------------------------------------------- the page
def test_an_unknown_player_is_not_found() -> None:
    assert Client().get(reverse("profile", args=["nobody"])).status_code == 404


def test_visitors_see_the_profile_without_the_form(signed_in: SignedIn) -> None:
    make_user("elif", display_name="Elif K", language="tr")
    for client in (Client(), signed_in(make_user("other"))):
        page = profile_page(client, "elif")
        assert page.one("h1").text() == "Elif K"
        assert facts(page)["language"] == "Turkish"
        assert facts(page)["joined"]
        assert "guest" not in facts(page)
        assert not page.all("form", data_form="profile")
        assert not page.all("a", data_action="change-password")
        assert "No matches yet." in page.text()


def test_a_guest_profile_says_guest() -> None:
    client = Client()
    client.post(reverse("guest"))
    guest = User.objects.get()
    page = profile_page(Client(), guest.username)
    assert facts(page)["guest"] == "Guest"
    assert facts(page)["language"] == "As the browser says"
    own = profile_page(client, guest.username)
    assert own.one("form", data_form="profile")
    assert not own.all("a", data_action="change-password")  # no password yet: keep it first


def test_the_owner_edits_display_name_and_language(signed_in: SignedIn) -> None:
    user = make_user("elif")
    client = signed_in(user)
    page = profile_page(client, "elif")
    form = page.one("form", data_form="profile")
    assert form_values(form)["display_name"] == "elif"
    link = page.one("a", data_action="change-password")
    assert link.attrs["href"] == reverse("password_change")

    response = client.post(
        form.attrs["action"],
        {**form_values(form), "display_name": "  Elif Kaya  ", "language": "tr"},
    )

    assert response.status_code == 302 and response["Location"] == "/players/elif/"
    profile = Profile.objects.get(user=user)
    assert profile.display_name == "Elif Kaya" and profile.language == "tr"
    assert client.session["language"] == "tr"
    page = client.get("/players/elif/")
    assert '<html lang="tr">' in page.content.decode()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"display_name": "   ", "language": ""}, "display_name"),
        ({"display_name": "x" * 41, "language": ""}, "display_name"),
        ({"display_name": "Elif", "language": "xx"}, "language"),
    ],
)
def test_the_profile_form_refuses_bad_values(
    data: dict[str, str], field: str, signed_in: SignedIn
) -> None:
    user = make_user("elif", display_name="Elif", language="tr")
    client = signed_in(user)
    response = client.post("/players/elif/", data)
    assert response.status_code == 200
    assert response.context["form"].errors[field]
    profile = Profile.objects.get(user=user)
    assert (profile.display_name, profile.language) == ("Elif", "tr")


def test_only_the_owner_may_post_the_form(signed_in: SignedIn) -> None:
    make_user("elif", display_name="Elif")
    for client in (Client(), signed_in(make_user("other"))):
        response = client.post("/players/elif/", {"display_name": "Hacked", "language": ""})
        assert response.status_code == 403
    assert Profile.objects.get(user__username="elif").display_name == "Elif"


def test_the_header_links_to_the_own_profile(signed_in: SignedIn) -> None:
    user = make_user("elif", display_name="Elif K")
    page = parse(signed_in(user).get("/").content)
    who = page.one("a", class_="who")
    assert who.attrs["href"] == "/players/elif/"
    assert who.text() == "Signed in as Elif K"


# ----------------------------------------------------------------------------- match history
def test_the_history_lists_matches_with_total_winners_and_link() -> None:
    player = make_user("elif", display_name="Elif K")
    done = finish(played_match(player, "okey51", seed=1), [120, 40, 80, 60], [1, 0])
    playing = played_match(player, "duz", seed=2)

    page = profile_page(Client(), "elif")

    rows = page.one("table", class_="matches").all("tr", data_match=True)
    assert [r.attrs["data-match"] for r in rows] == [str(playing.pk), str(done.pk)]
    cells = [td.text() for td in rows[1].all("td")]
    assert cells[1] == "Okey 51"
    assert cells[2] == done.table.shown_name
    assert cells[3] == "finished" and cells[4] == "120"
    assert cells[5] == "Bot 2 (strong), Elif K"  # bots numbered by seat, as at the table
    assert (
        rows[1].one("a", href=reverse("table", args=[done.table_id])).text()
        == done.table.shown_name
    )
    assert rows[1].one("a", data_action="match").attrs["href"] == reverse("match", args=[done.pk])
    cells = [td.text() for td in rows[0].all("td")]
    assert cells[1] == "Düz Okey" and cells[3] == "playing" and cells[4] == "" and cells[5] == ""


def test_a_private_table_is_hidden_from_those_who_may_not_see_it(signed_in: SignedIn) -> None:
    host, player = make_user("host"), make_user("elif")
    table = actions.open_table(variant="okey51", user=host, name="Secret room", is_private=True)
    actions.sit(table, player, 1, invite=table.invite_token)
    for position in (2, 3):
        actions.add_bot(table, position, "random", by=host)
    match = actions.start_match(table, by=host)

    for viewer in (Client(), signed_in(make_user("stranger"))):
        row = profile_page(viewer, "elif").one("tr", data_match=str(match.pk))
        assert "Secret room" not in row.text() and not row.all("a")
        assert "private table" in row.text() and "Okey 51" in row.text()
    for viewer in (signed_in(player), signed_in(host)):
        row = profile_page(viewer, "elif").one("tr", data_match=str(match.pk))
        assert row.one("a", href=reverse("table", args=[table.pk])).text() == "Secret room"
        assert row.one("a", data_action="match").attrs["href"] == reverse("match", args=[match.pk])


def test_the_history_keeps_the_last_matches_only() -> None:
    player = make_user("elif")
    matches = []
    for seed in (1, 2, 3):
        match = played_match(player, seed=seed)
        finish(match, [0, 0, 0, 0], [0])
        matches.append(match)
    assert RECENT_MATCHES == 20
    shown = recent_matches(player, None, limit=2)
    assert [m["id"] for m in shown] == [matches[2].pk, matches[1].pk]
    assert shown[0]["total"] == 0 and shown[0]["winners"] == ["elif"]
    with CaptureQueriesContext(connection) as queries:
        recent_matches(player, None)
    assert len(queries) == 3


# ----------------------------------------------------------------------------- names elsewhere
def test_the_lobby_and_the_table_show_display_names() -> None:
    player = make_user("elif", display_name="Elif K")
    match = played_match(player, "okey51")
    tables = reads.lobby_tables(None)
    assert tables[0]["seats"][0]["name"] == "Elif K"
    assert reads.seat_controls(match.table_id, None)["seats"][0]["name"] == "Elif K"
    context = reads.table_context(match.table_id, None)
    assert context["seats"][0]["display"] == "Elif K"
    page = Client().get(reverse("table", args=[match.table_id])).content.decode()
    assert "Elif K" in page


def test_display_names_cost_no_query_per_seat() -> None:
    first = played_match(make_user("p0"), seed=1)

    def lobby_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            reads.lobby_tables(None)
        return len(queries)

    def table_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            reads.table_context(first.table_id, None)
        return len(queries)

    lobby_before, table_before = lobby_queries(), table_queries()
    # More tables with more people (some with profiles, some without): the same queries.
    for n in range(1, 4):
        user = make_user(f"p{n}", display_name=f"Player {n}") if n % 2 else make_user(f"p{n}")
        played_match(user, seed=n + 1)
    table = first.table
    for position, bot in ((1, "q1"), (2, "q2")):
        other = make_user(bot, display_name=bot.upper())
        table.seats.filter(position=position).update(bot_level="", user=other)
    assert lobby_queries() == lobby_before
    assert table_queries() == table_before


# ----------------------------------------------------------------------------- the admin
def test_the_admin_shows_profiles_and_the_profile_on_the_user_page(signed_in: SignedIn) -> None:
    admin = make_user("boss", superuser=True)
    user = make_user("elif", display_name="Elif K", is_guest=True)
    client = signed_in(admin)
    listing = client.get("/admin/accounts/profile/").content.decode()
    assert "Elif K" in listing
    change = client.get(f"/admin/auth/user/{user.pk}/change/").content.decode()
    assert 'name="profile-0-display_name"' in change and "Elif K" in change
