"""The lobby's "Play now" (seated with other people) and "Practice with bots" (three bots at
once) buttons, the waiting panel of a forming table, its "Start now with bots", and the
refusal of a player who left matches often, in English and in Turkish."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import actions, engine
from games.models import Abandonment, Match, Table
from tests.markup import Node, form_values, parse
from tests.play import bot_table, seed_of
from tests.test_translations import compiled  # noqa: F401  (a fixture)
from tests.users import SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

HTMX = {"HX-Request": "true"}


def page_of(client: Client, url: str) -> Node:
    response = client.get(url)
    assert response.status_code == 200
    return parse(response.content)


def controls(client: Client, table: Table) -> Node:
    return page_of(client, reverse("table_controls", args=[table.pk])).one(id="seat-controls")


# ----------------------------------------------------------------------------- the lobby
def test_each_variant_has_a_play_now_and_a_practice_button() -> None:
    page = page_of(Client(), reverse("lobby"))
    section = page.one("section", class_="play-now")
    form = section.one("form")
    assert form.attrs["action"] == reverse("play_now") and form.attrs["method"] == "post"
    rows = section.all("li", class_="play-now-variant")
    assert [r.attrs["data-variant"] for r in rows] == list(engine.VARIANTS)
    for row in rows:
        key = row.attrs["data-variant"]
        play = row.one("button", data_action="play-now")
        practice = row.one("button", data_action="practice")
        for button in (play, practice):
            assert button.attrs["data-variant"] == key
            assert (button.attrs["name"], button.attrs["value"]) == ("variant", key)
        assert play.text() == "Play now" and "formaction" not in play.attrs
        assert practice.text() == "Practice with bots"
        assert practice.attrs["formaction"] == reverse("practice")
    text = section.text()
    wait = settings.QUICK_PLAY_WAIT_SECONDS
    assert f"bots of your level take the seats still empty after {wait} s" in text
    assert "Practice with bots: you and three bots" in text
    assert form.one("select", name="level")


def test_play_now_seats_an_anonymous_visitor_as_a_guest_at_a_forming_table() -> None:
    client = Client(enforce_csrf_checks=True)
    form = page_of(client, reverse("lobby")).one("section", class_="play-now").one("form")
    button = form.one("button", data_action="play-now", data_variant="classic")

    response = client.post(
        form.attrs["action"], {**form_values(form), "variant": "classic", "level": "greedy"}
    )

    table = Table.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    assert button.attrs["value"] == "classic"
    guest = table.seats.get(position=0).user
    assert guest is not None and guest.profile.is_guest
    assert guest.profile.play_now_level == "greedy"
    assert table.quick and table.status == Table.Status.OPEN and table.fill_level == "greedy"
    assert not Match.objects.exists()
    # A second visitor lands at the same table, by htmx too.
    other = Client()
    again = other.post(reverse("play_now"), {"variant": "classic"}, headers=HTMX)
    assert again.status_code == 204 and again["HX-Redirect"] == reverse("table", args=[table.pk])
    assert Table.objects.count() == 1 and table.seats.filter(user__isnull=False).count() == 2


def test_practice_still_starts_at_once_with_three_bots(signed_in: SignedIn) -> None:
    client = signed_in(make_user("ayse"))
    response = client.post(reverse("practice"), {"variant": "duz", "level": "expert"})
    table = Table.objects.get()
    assert response["Location"] == reverse("table", args=[table.pk])
    assert not table.quick and table.status == Table.Status.PLAYING
    assert list(table.seats.values_list("bot_level", flat=True)) == ["", *["expert"] * 3]
    assert client.get(reverse("practice")).status_code == 405


# ----------------------------------------------------------------------------- the waiting panel
def test_the_waiting_panel_shows_who_sat_down_and_the_seconds_left(signed_in: SignedIn) -> None:
    ayse = make_user("ayse", display_name="Ayşe")
    can = make_user("can")
    table = actions.quick_play(ayse, "classic", level="expert")
    actions.quick_play(can, "classic")

    panel_of_ayse = controls(signed_in(ayse), table)
    wait = panel_of_ayse.one(data_quick=True)
    assert wait.one("h2").text() == "Waiting for players: 2 of 4 seated"
    seconds = wait.one("span", data_quick_wait=True).text()
    assert seconds.endswith(" s")
    assert 0 < int(seconds.removesuffix(" s")) <= settings.QUICK_PLAY_WAIT_SECONDS
    assert wait.one("p", class_="quick-fill").text() == (
        f"Bots (expert) take the empty seats in {seconds}."
    )
    # The page's countdown (table.js) ticks it from the time the bots come.
    fill_at = Table.objects.get(pk=table.pk).fill_at
    assert fill_at is not None
    counting = wait.one(class_="countdown")
    assert counting.attrs["data-deadline"] == wait.attrs["data-fill-at"]
    assert counting.attrs["data-deadline"] == fill_at.isoformat(timespec="milliseconds")
    assert counting.one(class_="countdown-label") is not None
    occupants = [li.one(class_="occupant").text() for li in panel_of_ayse.all("li", class_="seat")]
    assert occupants == ["Ayşe (you)", "can", "empty", "empty"]
    assert panel_of_ayse.all("button", data_action="start-with-bots")
    assert panel_of_ayse.all("button", data_action="stand")
    # Nobody hosts it: no bots seated by hand, no "Start the match".
    for hook in ("add-bot", "remove-bot", "start"):
        assert not panel_of_ayse.all(data_action=hook), hook

    # Someone looking on may sit down, but not start it.
    onlooker = controls(signed_in(make_user("deniz")), table)
    assert onlooker.one(data_quick=True)
    assert onlooker.all("button", data_action="sit")
    assert not onlooker.all(data_action="start-with-bots")


def test_a_forming_table_nobody_waits_at_says_it_closes_not_that_bots_come(
    signed_in: SignedIn,
) -> None:
    """The last person stood up: at the countdown's end the clock closes the table (no bots
    for nobody), and the panel says so instead of counting down to bots."""
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "classic")
    actions.stand(table, ayse)
    wait = controls(signed_in(ayse), table).one(data_quick=True)
    assert wait.one("p", data_quick_empty=True).text() == (
        "Nobody is seated: the table closes unless someone sits down."
    )
    assert not wait.all(data_quick_wait=True) and not wait.all(class_="countdown")
    actions.fill_with_bots(table.pk, now=timezone.now() + timedelta(minutes=5))
    assert Table.objects.get(pk=table.pk).status == Table.Status.FINISHED


def test_start_now_with_bots_starts_the_match_and_the_bots_are_labelled(
    signed_in: SignedIn,
) -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "classic", level="expert")
    client = signed_in(ayse)
    url = reverse("table_start_with_bots", args=[table.pk])

    refused = signed_in(make_user("bob")).post(url, headers=HTMX)
    assert refused.status_code == 200
    assert parse(refused.content).one(data_error=True).text() == "You have no seat at this table."
    assert Table.objects.get(pk=table.pk).status == Table.Status.OPEN

    response = client.post(url, headers=HTMX)

    assert response.status_code == 200
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    assert not parse(response.content).all(data_quick=True)
    row = page_of(client, reverse("lobby")).one("li", data_table=str(table.pk))
    assert [li.text() for li in row.all("li", class_="seat")] == [
        "ayse",
        "Bot (expert)",
        "Bot (expert)",
        "Bot (expert)",
    ]
    assert client.get(reverse("table", args=[table.pk])).content.decode().count("(expert)") >= 3
    # Again, as a plain form: back to the table with the refusal.
    again = client.post(url, follow=True)
    assert again.redirect_chain == [(reverse("table", args=[table.pk]), 302)]
    assert "This table is no longer waiting for players." in again.content.decode()


def test_a_forming_tables_waiting_panel_speaks_turkish(
    compiled: None,  # noqa: F811
    signed_in: SignedIn,
) -> None:
    ayse = make_user("ayse")
    table = actions.quick_play(ayse, "duz", level="greedy")
    actions.quick_play(make_user("can"), "duz")
    panel = controls(signed_in(ayse, language="tr"), table).one(data_quick=True)
    assert panel.one("h2").text() == "Oyuncular bekleniyor: 2 / 4 koltuk dolu"
    seconds = panel.one("span", data_quick_wait=True).text()
    assert seconds.endswith(" sn")
    assert panel.one("p", class_="quick-fill").text() == (
        f"Boş koltuklara {seconds} sonra botlar (kolay) oturacak."
    )
    assert panel.one("button", data_action="start-with-bots").text() == "Botlarla hemen başla"
    lobby = parse(signed_in(language="tr").get(reverse("lobby")).content)
    lobby = lobby.one("section", class_="play-now")
    assert lobby.one("button", data_action="play-now", data_variant="duz").text() == "Hemen oyna"
    practice = lobby.one("button", data_action="practice", data_variant="duz")
    assert practice.text() == "Botlarla alıştırma"


# ----------------------------------------------------------------------------- leaving often
def left_three_matches(user: Any, latest_minutes_ago: float) -> None:
    now = timezone.now()
    for n, minutes in enumerate((120, 60, latest_minutes_ago)):
        match = actions.start_match(
            bot_table("duz", level="greedy"), by=actions.SYSTEM, seed=seed_of(500 + n)
        )
        Abandonment.objects.create(
            user=user, match=match, position=0, at=now - timedelta(minutes=minutes)
        )


@pytest.mark.parametrize(
    ("language", "words"),
    [
        (
            "en",
            "You left too many matches lately: tables with other players are closed to you for "
            "7 more minutes. Practice with bots stays open.",
        ),
        (
            "tr",
            "Son zamanlarda çok fazla maçtan ayrıldın: başka oyuncuların olduğu masalar 7 dakika "
            "daha sana kapalı. Botlarla alıştırma açık.",
        ),
    ],
)
def test_a_player_who_left_often_is_told_why_and_for_how_long(
    compiled: None,  # noqa: F811
    language: str,
    words: str,
    signed_in: SignedIn,
) -> None:
    ayse = make_user("ayse")
    left_three_matches(ayse, latest_minutes_ago=3.5)  # 6.5 minutes left: "7 minutes"
    client = signed_in(ayse, language="tr") if language == "tr" else signed_in(ayse)
    tables = Table.objects.count()

    response = client.post(reverse("play_now"), {"variant": "classic"}, follow=True)

    assert response.redirect_chain == [(reverse("lobby"), 302)]
    page = parse(response.content)
    assert page.one("ul", class_="messages").text() == words
    assert Table.objects.count() == tables
    assert not ayse.seats.exists()


def test_the_last_minute_is_said_as_one_minute(signed_in: SignedIn) -> None:
    ayse = make_user("ayse")
    left_three_matches(ayse, latest_minutes_ago=9.8)
    response = signed_in(ayse).post(reverse("play_now"), {"variant": "classic"}, follow=True)
    messages = parse(response.content).one("ul", class_="messages").text()
    assert "closed to you for 1 more minute." in messages


def test_the_options_chosen_before_sitting_down_make_the_table_and_are_remembered(
    signed_in: SignedIn,
) -> None:
    """The lobby offers each variant's quick options (101: hands, doubling, partners,
    assisted); practice and Play now make their table with the ones posted, and the lobby
    offers them first next time. A value that is not the option's is the default."""
    player = make_user("chooser")
    client = signed_in(player)
    lobby = client.get(reverse("lobby")).content.decode()
    for name in ("hands", "doubling", "partners", "assisted"):
        assert f'name="opt-okey101-{name}"' in lobby, name
    assert 'name="opt-classic-scoring"' in lobby
    posted = {"variant": "okey101", "opt-okey101-hands": "5", "opt-okey101-partners": "1"}
    client.post(reverse("practice"), {**posted, "opt-okey101-doubling": "maybe"})
    table = Table.objects.get(seats__user=player)
    assert (table.options["hands"], table.options["partners"]) == (5, True)
    assert table.options["doubling"] is False  # not a value of it: the default
    assert Match.objects.get(table=table).hands_planned == 5
    again = parse(client.get(reverse("lobby")).content.decode())
    hands = again.one("select", name="opt-okey101-hands")
    assert hands.one("option", selected=True).attrs["value"] == "5"
