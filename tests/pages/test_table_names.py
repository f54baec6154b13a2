"""Table names follow the name policy's cleaning (accounts/names.py): the "New table" form and
every writer of a table (``actions.create_table``, ``actions.update_table``, so the admin and
the commands too) drop direction overrides and invisible characters."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from games import actions, reads
from games.models import Table
from tests.markup import form_values, parse
from tests.users import client_for, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

SPOOF = "\u202enimda"  # reads "admin"
HTMX = {"HX-Request": "true"}


def post_new_table(name: str) -> Table:
    client = client_for(make_user("host"))
    response = client.get(reverse("new_table"), {"variant": "duz"}, headers=HTMX)
    data = form_values(parse(response.content).one("form", id="new-table"))
    response = client.post(reverse("new_table"), {**data, "name": name})
    assert response.status_code == 302, response.content
    return Table.objects.get()


def test_the_new_table_form_drops_overrides_and_invisible_characters() -> None:
    table = post_new_table(SPOOF + " \u200bmasa\u2066\t 1 ")
    assert table.name == "nimda masa 1"
    assert reads.lobby_tables(None)[0]["name"] == "nimda masa 1"


def test_a_table_name_with_nothing_visible_gets_the_default_name() -> None:
    table = post_new_table("\u202e\u200b\u2067 ")
    # Unnamed: called after its variant in the reader's language.
    assert table.name == "" and table.shown_name == "Düz Okey table"
    with translation.override("tr"):
        assert Table.objects.get(pk=table.pk).shown_name == "Düz Okey masası"
        assert reads.lobby_tables(None)[0]["name"] == "Düz Okey masası"


def test_every_writer_of_a_table_name_cleans_it() -> None:
    table = actions.create_table(variant="okey51", created_by=None, name=SPOOF)
    assert table.name == "nimda"
    staff = make_user("boss", staff=True)
    table = actions.update_table(table.pk, by=staff, name="\u2067Evening\u00ad game\u2069")
    assert Table.objects.get(pk=table.pk).name == "Evening game"
    table = actions.update_table(table.pk, by=staff, name="\u202e\u200b")
    assert Table.objects.get(pk=table.pk).shown_name == "Okey 51 table"


@pytest.mark.parametrize("language", ["en", "tr"])
def test_an_unnamed_tables_hand_and_match_pages_call_it_by_its_variant(language: str) -> None:
    """A "Play now" table has no name of its own: its replay, deal check and match pages
    call it what its page does ("Düz Okey table"), never "Hand 1 at"."""
    from tests.play import played_out

    table, _users, match = played_out("duz", {}, 1)
    Table.objects.filter(pk=table.pk).update(name="")
    hand = match.hands.order_by("number").first()
    with translation.override(language):
        shown = Table.objects.get(pk=table.pk).shown_name
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    for url in (
        reverse("hand_replay", args=[hand.pk]),
        reverse("hand_verify", args=[hand.pk]),
        reverse("match", args=[hand.match_id]),
    ):
        page = parse(client.get(url).content)
        heading = page.one("h1").text()
        assert shown in heading, (url, heading)
        assert heading.count("masas") <= 1, heading  # "Düz Okey masası masasında"
        if "verify" not in url:
            assert shown in page.all("title")[0].text(), url
