"""The lobby: the list of tables, "players online", "New table", "Play now", the
pre-match seat controls, the one-live-table rule, the lobby socket, and refusals of bad input.

Pages are read as a browser would: the HTML is parsed and elements are found by the markup's
ids, classes and ``data-*`` attributes, and forms are posted with the values their markup
holds.
"""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import Callable
from datetime import timedelta
from html import escape
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import actions, engine, policy, reads
from games.catalog import ensure_variants
from games.engine.variants import OPTIONS, PLAYERS
from games.errors import GameError
from games.models import Hand, LobbyPresence, Match, Participant, Presence, Seat, Table
from tests.markup import Node, form_values, parse
from tests.play import play_match_with_bots, seed_of
from tests.sockets import PATIENCE, QueryCounter, cookie_for, lobby_sockets
from tests.users import SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

HTMX = {"HX-Request": "true"}

REFUSED_ELSEWHERE = (
    "You already have a seat at another table. Leave it (or finish its match) first."
)
NOT_HOST = "Only the table's host may do that."
NOT_FILLED = "Every seat needs a player or a bot before the match starts."
IN_PROGRESS = "A match is being played at this table."
NO_SUCH_SEAT = "There is no such seat at this table."
NO_SUCH_BOT = "There is no bot of that level."


# ----------------------------------------------------------------------------- reading HTML
def lobby_rows(page: Node) -> dict[int, Node]:
    """The lobby's table list, by table id."""
    listing = page.one(id="lobby-tables")
    return {int(li.attrs["data-table"]): li for li in listing.all("li", class_="lobby-table")}


def seats_shown(row: Node) -> dict[int, str]:
    return {int(li.attrs["data-seat"]): li.text() for li in row.all("li", class_="seat")}


def options_shown(row: Node) -> dict[str, str]:
    return {li.attrs["data-option"]: li.text() for li in row.all("li", data_option=True)}


def flashed(client: Client, response: HttpResponse) -> list[str]:
    """Follow a plain form's redirect as a browser does: the messages the next page shows."""
    assert response.status_code == 302, response.status_code
    page = client.get(response["Location"])
    assert page.status_code == 200
    shown = parse(page.content).all("ul", class_="messages")
    return [li.text() for ul in shown for li in ul.all("li")]


# ----------------------------------------------------------------------------- fixtures
def seats_state(table_id: int) -> list[tuple[int, int | None, str]]:
    return list(
        Seat.objects.filter(table_id=table_id)
        .order_by("position")
        .values_list("position", "user_id", "bot_level")
    )


def home(client: Client) -> Node:
    response = client.get(reverse("lobby"))
    assert response.status_code == 200
    return parse(response.content)


def new_table_form(client: Client, variant: str) -> Node:
    """The "New table" form for ``variant``, as htmx fetches it when the variant changes."""
    response = client.get(reverse("new_table"), {"variant": variant}, headers=HTMX)
    assert response.status_code == 200
    return parse(response.content).one("form", id="new-table")


def post_new_table(
    client: Client, variant: str, changes: dict[str, Any], **kwargs: Any
) -> HttpResponse:
    """Fill the form as a player would: the markup's values, with ``changes`` (True ticks a
    box, False clears it, anything else is typed or chosen)."""
    data = form_values(new_table_form(client, variant))
    for key, value in changes.items():
        if value is True:
            data[key] = "on"
        elif value is False:
            data.pop(key, None)
        else:
            data[key] = str(value)
    return client.post(reverse("new_table"), data, **kwargs)


# ----------------------------------------------------------------------------- the list
def test_it_lists_open_and_playing_public_tables_with_their_options_and_seats() -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    okey51 = actions.open_table(
        variant="okey51",
        user=alice,
        name="Tuesday 51",
        options={"doubling": False, "hands": 3, "partners": True, "timer": 60},
    )
    actions.add_bot(okey51, 1, "strong", by=alice)
    gobek = actions.play_now(bob, "gobek17").table
    classic = actions.open_table(
        variant="classic",
        user=carol,
        options={"scoring": "plus_minus", "hands": 7, "timer": 0},
        players=3,
    )
    finished = actions.create_table(variant="duz", created_by=None, name="Old table")
    Table.objects.filter(pk=finished.pk).update(status=Table.Status.FINISHED)

    rows = lobby_rows(home(Client()))

    assert set(rows) == {okey51.pk, gobek.pk, classic.pk}
    row = rows[okey51.pk]
    assert row.one("a", class_="table-name").text() == "Tuesday 51"
    assert row.one("a", class_="table-name").attrs["href"] == reverse("table", args=[okey51.pk])
    assert row.one("span", class_="variant").text() == "Okey 51"
    assert row.one("span", class_="status").text() == "open"
    assert options_shown(row) == {
        "doubling": "no doubling",
        "hands": "3 hands",
        "partners": "partners (2 against 2)",
        "timer": "60 s per move",
    }
    # Partners sit across: seats 0 and 2 are one team.
    assert seats_shown(row) == {
        0: "alice (team 1)",
        1: "Bot (strong) (team 2)",
        2: "empty (team 1)",
        3: "empty (team 2)",
    }
    row = rows[gobek.pk]
    assert row.one("span", class_="status").text() == "playing"
    assert options_shown(row) == {
        "hands": "1 hand",
        "give_back_penalty": "no give-back penalty",
        "timer": "30 s per move",
    }
    assert seats_shown(row) == {0: "bob", 1: "Bot (strong)", 2: "Bot (strong)", 3: "Bot (strong)"}
    row = rows[classic.pk]
    assert options_shown(row) == {
        "scoring": "plus/minus scoring",
        "hands": "7 hands",
        "timer": "no move timer",
    }
    assert "3 players" in row.one("ul", class_="table-options").text()
    assert seats_shown(row) == {0: "carol", 1: "empty", 2: "empty"}
    assert not any(r.all(data_private=True) for r in rows.values())


def test_it_lists_a_private_table_only_to_its_creator_and_players_with_its_invite_link(
    signed_in: SignedIn,
) -> None:
    owner, guest, stranger = make_user("owner"), make_user("guest"), make_user("stranger")
    private = actions.open_table(variant="duz", user=owner, name="Family", is_private=True)
    public = actions.create_table(variant="okey51", created_by=None, name="Everyone")
    invite = f"http://testserver/tables/{private.pk}/?invite={private.invite_token}"

    for viewer in (Client(), signed_in(stranger)):
        rows = lobby_rows(home(viewer))
        assert set(rows) == {public.pk}
        assert "Family" not in viewer.get(reverse("lobby")).content.decode()

    rows = lobby_rows(home(signed_in(owner)))
    assert set(rows) == {private.pk, public.pk}
    assert rows[private.pk].one(data_private=True).text() == "private"
    assert rows[private.pk].one("input", data_invite=True).attrs["value"] == invite
    assert not rows[public.pk].all(data_private=True)
    assert not rows[public.pk].all(data_invite=True)

    # The link works: whoever holds it may see the table and sit; then it is listed to them.
    assert signed_in(guest).get(reverse("table", args=[private.pk])).status_code == 404
    assert signed_in(guest).get(invite.removeprefix("http://testserver")).status_code == 200
    response = signed_in(guest).post(
        reverse("table_sit", args=[private.pk]),
        {"position": "2", "invite": private.invite_token},
    )
    assert response.status_code == 302
    assert Seat.objects.get(table=private, position=2).user == guest
    rows = lobby_rows(home(signed_in(guest)))
    assert set(rows) == {private.pk, public.pk}
    assert rows[private.pk].all(data_private=True)
    assert rows[private.pk].one("input", data_invite=True).attrs["value"] == invite
    assert set(lobby_rows(home(signed_in(stranger)))) == {public.pk}


@pytest.mark.parametrize("viewer", ["anonymous", "player"])
def test_the_lobby_reads_its_list_and_the_players_online_in_one_statement(
    viewer: str, django_assert_num_queries: Any
) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    user: Any = alice if viewer == "player" else None
    with django_assert_num_queries(1):
        empty = reads.lobby_context(user)
    assert (empty["tables"], empty["online"]) == ([], 0)

    mine = actions.open_table(variant="okey51", user=alice, is_private=True)
    actions.add_bot(mine, 2, "strong", by=alice)
    theirs = actions.play_now(bob, "duz").table
    seatless = actions.create_table(variant="classic", created_by=None)
    Seat.objects.filter(table=seatless).delete()  # a table is listed even without seats
    actions.lobby_socket_opened(bob, "lobby-bob")
    with django_assert_num_queries(1):
        context = reads.lobby_context(user)

    listed = [t["id"] for t in context["tables"]]
    expected = [seatless.pk, theirs.pk, mine.pk] if user else [seatless.pk, theirs.pk]
    assert listed == expected  # newest first; a private table only to its own
    assert context["online"] == 1
    tables = {t["id"]: t for t in context["tables"]}
    assert tables[seatless.pk]["seats"] == []
    assert [s["label"] for s in tables[theirs.pk]["seats"]] == ["bob"] + ["Bot (strong)"] * 3
    assert tables[theirs.pk]["status"] == "playing"
    if user:
        assert [s["label"] for s in tables[mine.pk]["seats"]] == ["alice", "", "Bot (strong)", ""]
        assert tables[mine.pk]["mine"] and tables[mine.pk]["invite_url"]
        assert context["live_seat"]["table_id"] == mine.pk


def test_it_counts_the_players_online_from_lobby_and_table_sockets() -> None:
    lobby_only, two_tabs, seated, gone = (make_user(n) for n in ("l", "t", "s", "g"))
    table = actions.open_table(variant="duz", user=seated)
    actions.lobby_socket_opened(lobby_only, "lobby-1")
    actions.lobby_socket_opened(two_tabs, "lobby-2")
    actions.lobby_socket_opened(two_tabs, "lobby-3")  # one player, two lobby tabs
    actions.lobby_socket_opened(seated, "lobby-4")  # in the lobby and at their table
    actions.socket_opened(table.seats.get(position=0), seated, "table-1")
    actions.lobby_socket_opened(gone, "lobby-5")
    stale = timezone.now() - timedelta(seconds=Presence.FRESH + 1)
    LobbyPresence.objects.filter(channel_name="lobby-5").update(seen_at=stale)

    assert reads.online_count() == 3
    assert home(Client()).one(id="lobby-online").text() == "3 players online"

    actions.lobby_socket_closed("lobby-1")
    actions.lobby_socket_closed("lobby-2")
    actions.lobby_socket_closed("lobby-4")
    assert home(Client()).one(id="lobby-online").text() == "2 players online"
    actions.socket_closed("table-1")
    assert home(Client()).one(id="lobby-online").text() == "1 player online"


# ----------------------------------------------------------------------------- "New table"
@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_the_new_table_form_offers_exactly_the_engines_options(
    variant: str, signed_in: SignedIn
) -> None:
    form = new_table_form(signed_in(make_user("host")), variant)

    assert form.attrs["data-variant"] == variant
    picker = form.one("select", name="variant")
    assert [o.attrs["value"] for o in picker.all("option")] == list(engine.VARIANTS)
    assert [o.attrs["value"] for o in picker.all("option", selected=True)] == [variant]
    several = len(PLAYERS[variant]) > 1
    shown = [p.attrs["data-option"] for p in form.all("p", data_option=True)]
    assert shown == [*OPTIONS[variant], *(["players"] if several else [])]
    for key, choice in OPTIONS[variant].items():
        label = form.one("label", for_=f"id_{key}").text()
        assert label and label != key, f"{key} has no label of its own"
        if isinstance(choice.default, bool):
            box = form.one("input", name=key)
            assert box.attrs["type"] == "checkbox"
            assert ("checked" in box.attrs) == choice.default, key
        elif choice.allowed is not None:
            select = form.one("select", name=key)
            assert [o.attrs["value"] for o in select.all("option")] == [
                str(a) for a in choice.allowed
            ], key
            chosen = [o.attrs["value"] for o in select.all("option", selected=True)]
            assert chosen == [str(choice.default)], key
        else:
            number = form.one("input", name=key)
            assert number.attrs["type"] == "number"
            assert (number.attrs["min"], number.attrs["max"]) == (str(choice.low), str(choice.high))
            assert number.attrs["value"] == str(choice.default)
    if several:
        select = form.one("select", name="players")
        assert [o.attrs["value"] for o in select.all("option")] == [
            str(n) for n in PLAYERS[variant]
        ]
    else:
        assert not form.all(name="players")
    assert form.one("input", name="is_private").attrs["type"] == "checkbox"
    assert form.one("input", name="auto_start").attrs["type"] == "checkbox"


def test_the_home_page_holds_the_new_table_form_for_signed_in_players_only(
    signed_in: SignedIn,
) -> None:
    page = home(signed_in(make_user("host")))
    form = page.one("form", id="new-table")
    assert form.attrs["action"] == reverse("new_table")
    assert form.all(data_action="create-table")

    page = home(Client())
    assert not page.all("form", id="new-table")
    login = page.one("a", href=f"{reverse('login')}?next={reverse('lobby')}")
    assert "Log in to open a table" in login.text()
    response = Client().post(reverse("new_table"), {"variant": "duz"})
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={reverse('lobby')}"
    assert not Table.objects.exists()


@pytest.mark.parametrize(
    ("variant", "changes", "players", "listed"),
    [
        (
            "okey51",
            {"doubling": False, "hands": 3, "partners": True, "assisted": True, "timer": 60},
            4,
            {
                "doubling": "no doubling",
                "hands": "3 hands",
                "partners": "partners (2 against 2)",
                "assisted": "assisted",
                "timer": "60 s per move",
            },
        ),
        (
            "gobek17",
            {"hands": 5, "give_back_penalty": 500, "wrap_13_1": True, "timer": 0},
            4,
            {
                "hands": "5 hands",
                "give_back_penalty": "give-back penalty 500",
                "timer": "no move timer",
            },
        ),
        (
            "classic",
            {"scoring": "plus_minus", "hands": 7, "players": 3, "timer": 15},
            3,
            {"scoring": "plus/minus scoring", "hands": "7 hands", "timer": "15 s per move"},
        ),
        (
            "classic",
            {"scoring": "countdown", "start_score": 50, "wrap_13_1": False},
            4,
            {
                "scoring": "countdown scoring",
                "start_score": "from 50 points",
                "timer": "30 s per move",
            },
        ),
        # Another variant's option (doubling) is not duz's: the form leaves it out.
        (
            "duz",
            {"assisted": True, "doubling": True},
            4,
            {"assisted": "assisted", "timer": "30 s per move"},
        ),
    ],
)
def test_it_opens_a_table_with_the_options_chosen_and_seats_its_creator(
    variant: str,
    changes: dict[str, Any],
    players: int,
    listed: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    signed_in: SignedIn,
) -> None:
    host = make_user("host")
    client = signed_in(host)
    checked: list[tuple[str, dict[str, Any]]] = []
    real = engine.validate_options

    def spy(key: str, options: Any) -> dict[str, Any]:
        checked.append((key, dict(options or {})))
        return real(key, options)

    monkeypatch.setattr(engine, "validate_options", spy)

    response = post_new_table(client, variant, {"name": "Evening game", **changes})

    table = Table.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    # An option the rules ignore under the others (hands under a countdown) is not taken.
    idle = engine.idle_options(variant, {**engine.default_options(variant), **changes})
    options = {k: v for k, v in changes.items() if k in OPTIONS[variant] and k not in idle}
    assert table.options == real(variant, options)
    assert table.variant.key == variant and table.name == "Evening game"
    assert table.players == players and table.move_timer == table.options["timer"]
    assert table.created_by == host and not table.is_private and not table.auto_start
    assert seats_state(table.pk)[0] == (0, host.pk, "")
    assert Seat.objects.filter(table=table, user__isnull=True, bot_level="").count() == players - 1
    # The form asked the engine about exactly what was posted.
    posted = {**engine.default_options(variant), **options}
    assert checked[0] == (variant, {k: v for k, v in posted.items() if k not in idle})
    rows = lobby_rows(home(client))
    assert options_shown(rows[table.pk]) == listed


def _engine_refusal(variant: str, changes: dict[str, Any]) -> str:
    options = {**engine.default_options(variant), **changes}
    players = options.pop("players", max(PLAYERS[variant]))
    try:
        engine.validate_options(variant, options)
        engine.variants.check_players(variant, players)
    except engine.OptionsError as exc:
        return str(exc)
    raise AssertionError(f"the engine accepts {changes}")


@pytest.mark.parametrize(
    ("variant", "changes"),
    [
        ("okey51", {"hands": 2}),
        ("classic", {"start_score": 0}),
        ("classic", {"start_score": 1001}),
        ("classic", {"scoring": "golf"}),
        ("classic", {"players": 5}),
        ("gobek17", {"give_back_penalty": 250}),
        ("gobek17", {"hands": 21}),
        ("duz", {"timer": 45}),
    ],
)
@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_it_refuses_options_the_engine_does_not_allow(
    variant: str, changes: dict[str, Any], htmx: bool, signed_in: SignedIn
) -> None:
    client = signed_in(make_user("host"))
    reason = _engine_refusal(variant, changes)

    response = post_new_table(client, variant, changes, headers=HTMX if htmx else {})

    assert response.status_code == 200
    assert "HX-Redirect" not in response
    form = parse(response.content).one("form", id="new-table")
    # The field refused says why beside it, in the reader's words; the engine's own message
    # (English, with option keys) is for developers and never shown.
    key = next(iter(changes))
    field = form.one("p", data_option=key)
    assert "has-error" in field.attrs["class"].split()
    assert field.one("span", class_="error").text()
    assert escape(reason) not in response.content.decode()
    assert not form.all("ul", class_="errors")
    if form.all("input", name=key):  # a typed number is kept, so it can be corrected
        assert form_values(form)[key] == str(changes[key])
    assert not Table.objects.exists() and not Seat.objects.exists()


def test_an_option_out_of_range_says_so_beside_it_in_the_readers_language(
    signed_in: SignedIn,
) -> None:
    client = signed_in(make_user("host", language="tr"))
    response = post_new_table(client, "classic", {"scoring": "countdown", "start_score": -5})
    form = parse(response.content).one("form", id="new-table")
    field = form.one("p", data_option="start_score")
    assert "has-error" in field.attrs["class"].split()
    assert "eşit" in field.one("span", class_="error").text()  # Django's Turkish
    assert not form.all("ul", class_="errors")
    assert not Table.objects.exists()


def test_an_option_the_scoring_ignores_is_hidden_and_never_refused(signed_in: SignedIn) -> None:
    """Under a countdown the match ends when a score reaches zero: the number of hands is not
    used, so the form hides it (and shows it for plus/minus) and takes no value for it."""
    client = signed_in(make_user("host"))
    form = parse(client.get(reverse("new_table"), {"variant": "classic"}, headers=HTMX).content)
    hands = form.one("p", data_option="hands")
    assert hands.attrs["data-idle-when"] == "scoring=countdown"
    assert "hidden" in hands.attrs
    assert "hidden" not in form.one("p", data_option="start_score").attrs
    response = post_new_table(client, "classic", {"scoring": "countdown", "hands": 0})
    assert response.status_code == 302
    assert Table.objects.get().options["hands"] == engine.default_options("classic")["hands"]
    response = post_new_table(client, "classic", {"scoring": "plus_minus", "hands": 0})
    field = parse(response.content).one("p", data_option="hands")
    assert "hidden" not in field.attrs and "has-error" in field.attrs["class"].split()
    assert Table.objects.count() == 1
    # A form sent back with an error keeps the hidden field usable: the page shows it again
    # when the scoring changes, and a value typed there then counts.
    response = post_new_table(client, "classic", {"scoring": "countdown", "start_score": 0})
    hands = parse(response.content).one("p", data_option="hands")
    assert "hidden" in hands.attrs and "disabled" not in hands.one("input").attrs


def test_it_refuses_a_value_that_is_not_a_number(signed_in: SignedIn) -> None:
    client = signed_in(make_user("host"))
    response = post_new_table(client, "classic", {"start_score": "lots"})
    field = parse(response.content).one("p", data_option="start_score")
    assert field.one("span", class_="error").text() == "Enter a whole number."
    assert not Table.objects.exists()


def test_the_variant_picker_fetches_that_variants_options_keeping_the_name(
    signed_in: SignedIn,
) -> None:
    client = signed_in(make_user("host"))
    response = client.get(
        reverse("new_table"),
        {"variant": "gobek17", "name": "Quick one", "is_private": "on"},
        headers=HTMX,
    )
    page = response.content.decode()
    assert "<html" not in page  # a fragment for htmx to swap, not a page
    form = parse(page).one("form", id="new-table")
    assert form.attrs["data-variant"] == "gobek17"
    assert form.one("input", name="name").attrs["value"] == "Quick one"
    assert "checked" in form.one("input", name="is_private").attrs
    picker = form.one("select", name="variant")
    assert picker.attrs["hx-get"] == reverse("new_table")
    assert picker.attrs["hx-target"] == "#new-table"


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_a_private_table_gets_an_invite_link_to_copy(htmx: bool, signed_in: SignedIn) -> None:
    host, friend = make_user("host"), make_user("friend")
    client = signed_in(host)

    response = post_new_table(client, "okey51", {"is_private": True}, headers=HTMX if htmx else {})

    table = Table.objects.get()
    assert table.is_private
    link = f"{reverse('table', args=[table.pk])}?invite={table.invite_token}"
    if htmx:
        assert response.status_code == 204 and response["HX-Redirect"] == link
    else:
        assert response.status_code == 302 and response["Location"] == link
    controls = parse(client.get(reverse("table_controls", args=[table.pk])).content)
    assert controls.one("input", data_invite=True).attrs["value"] == f"http://testserver{link}"
    # The friend follows the link and sits down with it.
    friend_client = signed_in(friend)
    assert friend_client.get(link).status_code == 200
    controls = parse(
        friend_client.get(
            reverse("table_controls", args=[table.pk]), {"invite": table.invite_token}
        ).content
    )
    sit = controls.one("button", data_action="sit", data_seat="1").attrs
    assert sit["type"] == "submit"
    form = next(f for f in controls.all("form") if f.all(data_action="sit", data_seat="1"))
    friend_client.post(form.attrs["action"], form_values(form))
    assert Seat.objects.get(table=table, position=1).user == friend


# ----------------------------------------------------------------------------- seat controls
@pytest.fixture
def table_of_alice() -> tuple[Table, Any, Any]:
    alice, bob = make_user("alice"), make_user("bob")
    return actions.open_table(variant="okey51", user=alice), alice, bob


def controls_of(client: Client, table: Table) -> Node:
    response = client.get(reverse("table_controls", args=[table.pk]))
    assert response.status_code == 200
    return parse(response.content).one(id="seat-controls")


def post(client: Client, name: str, table_id: int, htmx: bool = False, **data: str) -> Any:
    return client.post(reverse(name, args=[table_id]), data, headers=HTMX if htmx else {})


def test_a_player_sits_in_the_seat_they_choose_and_stands_up(
    table_of_alice: Any, signed_in: SignedIn
) -> None:
    table, alice, bob = table_of_alice
    client = signed_in(bob)
    controls = controls_of(client, table)
    assert {b.attrs["data-seat"] for b in controls.all("button", data_action="sit")} == {
        "1",
        "2",
        "3",
    }

    response = post(client, "table_sit", table.pk, position="2")

    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    assert flashed(client, response) == []
    assert seats_state(table.pk) == [
        (0, alice.pk, ""),
        (1, None, ""),
        (2, bob.pk, ""),
        (3, None, ""),
    ]
    controls = controls_of(client, table)
    mine = controls.one("li", class_="mine")
    assert mine.attrs["data-seat"] == "2" and "bob (you)" in mine.text()
    assert mine.all("button", data_action="stand")
    assert not controls.all("button", data_action="sit")  # one seat per player

    response = post(client, "table_stand", table.pk)

    assert response.status_code == 302
    assert seats_state(table.pk)[2] == (2, None, "")
    assert reads.live_seat(bob) is None


def test_the_htmx_path_answers_with_the_fresh_controls(
    table_of_alice: Any, signed_in: SignedIn
) -> None:
    table, alice, bob = table_of_alice
    client = signed_in(bob)

    response = post(client, "table_sit", table.pk, htmx=True, position="3")

    assert response.status_code == 200
    controls = parse(response.content).one(id="seat-controls")
    assert controls.one("li", class_="mine").attrs["data-seat"] == "3"
    assert not controls.all(data_error=True)
    response = post(client, "table_stand", table.pk, htmx=True)
    controls = parse(response.content).one(id="seat-controls")
    assert not controls.all("li", class_="mine")
    assert seats_state(table.pk)[3] == (3, None, "")


@pytest.mark.parametrize("level", [v for v in Seat.Bot.values if v])
def test_the_host_seats_a_bot_of_a_chosen_level_and_removes_it(
    table_of_alice: Any, level: str, signed_in: SignedIn
) -> None:
    table, alice, _bob = table_of_alice
    client = signed_in(alice)
    controls = controls_of(client, table)
    add = next(f for f in controls.all("form") if f.all(data_action="add-bot", data_seat="1"))
    options = add.one("select", name="level").all("option")
    assert [(o.attrs["value"], o.text()) for o in options] == [
        ("random", "random"),
        ("greedy", "easy"),
        ("strong", "strong"),
        ("expert", "expert"),
    ]
    data = {**form_values(add), "level": level}

    response = client.post(add.attrs["action"], data)

    assert response.status_code == 302
    assert seats_state(table.pk)[1] == (1, None, level)
    controls = controls_of(client, table)
    seat = controls.one("li", data_seat="1")
    assert str(Seat.Bot(level).label) in seat.text()
    remove = next(f for f in controls.all("form") if f.all(data_action="remove-bot"))
    response = client.post(remove.attrs["action"], form_values(remove))
    assert response.status_code == 302
    assert seats_state(table.pk)[1] == (1, None, "")


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_only_the_creator_starts_the_match_and_only_once_every_seat_is_filled(
    table_of_alice: Any, htmx: bool, signed_in: SignedIn
) -> None:
    table, alice, bob = table_of_alice
    host, guest = signed_in(alice), signed_in(bob)

    def refusal(client: Client, name: str, **data: str) -> str:
        before = seats_state(table.pk)
        response = post(client, name, table.pk, htmx=htmx, **data)
        assert seats_state(table.pk) == before
        if htmx:
            assert response.status_code == 200
            return parse(response.content).one(data_error=True).text()
        assert response.status_code == 302
        assert response["Location"] == reverse("table", args=[table.pk])
        [message] = flashed(client, response)
        return message

    start = controls_of(host, table).one("button", data_action="start")
    assert "disabled" in start.attrs
    assert refusal(host, "table_start") == NOT_FILLED
    post(guest, "table_sit", table.pk, htmx=htmx, position="1")
    post(host, "table_add_bot", table.pk, htmx=htmx, position="2", level="greedy")
    assert refusal(host, "table_start") == NOT_FILLED
    post(host, "table_add_bot", table.pk, htmx=htmx, position="3", level="strong")
    assert not controls_of(guest, table).all("button", data_action="start")
    assert refusal(guest, "table_start") == NOT_HOST
    assert refusal(guest, "table_add_bot", position="3", level="strong") == NOT_HOST
    assert not Match.objects.exists()
    assert "disabled" not in controls_of(host, table).one("button", data_action="start").attrs

    response = post(host, "table_start", table.pk, htmx=htmx)

    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    match = Match.objects.get(table=table)
    assert match.hands.get().number == 1
    if htmx:
        assert parse(response.content).one(id="seat-controls").attrs["data-status"] == "playing"
    else:
        assert response["Location"] == reverse("table", args=[table.pk]) and not flashed(
            host, response
        )
    assert refusal(host, "table_start") == IN_PROGRESS
    assert refusal(host, "table_remove_bot", position="3") == IN_PROGRESS
    assert refusal(signed_in(make_user("late")), "table_sit", position="3") == IN_PROGRESS


@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_a_full_table_with_auto_start_starts_by_itself(htmx: bool, signed_in: SignedIn) -> None:
    host, bob, carol = make_user("host"), make_user("bob"), make_user("carol")
    client = signed_in(host)
    post_new_table(client, "gobek17", {"auto_start": True})
    table = Table.objects.get()
    assert table.auto_start
    hint = controls_of(client, table).one("p", class_="hint").text()
    assert "starts by itself" in hint

    post(signed_in(bob), "table_sit", table.pk, htmx=htmx, position="1")
    post(client, "table_add_bot", table.pk, htmx=htmx, position="2", level="random")
    table.refresh_from_db()
    assert table.status == Table.Status.OPEN and not Match.objects.exists()
    response = post(signed_in(carol), "table_sit", table.pk, htmx=htmx, position="3")

    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    hand = Hand.objects.get(match__table=table)
    assert hand.number == 1 and hand.status == Hand.Status.PLAYING
    assert list(
        Participant.objects.filter(hand=hand)
        .order_by("position")
        .values_list("user_id", "bot_level")
    ) == [(host.pk, ""), (bob.pk, ""), (None, "random"), (carol.pk, "")]
    if htmx:
        assert parse(response.content).one(id="seat-controls").attrs["data-status"] == "playing"


def test_a_full_table_without_auto_start_waits_for_its_host(signed_in: SignedIn) -> None:
    host = make_user("host")
    client = signed_in(host)
    post_new_table(client, "duz", {})
    table = Table.objects.get()
    for position in (1, 2, 3):
        post(client, "table_add_bot", table.pk, position=str(position), level="greedy")
    table.refresh_from_db()
    assert table.status == Table.Status.OPEN and not Match.objects.exists()
    assert (
        controls_of(client, table).one("button", data_action="start").attrs.get("disabled") is None
    )


# ----------------------------------------------------------------------------- "Play now"
def play_now_form(page: Node) -> Node:
    return next(f for f in page.all("form") if f.all(data_action="play-now"))


def test_the_home_page_has_one_play_now_button_per_variant() -> None:
    page = home(Client())
    form = play_now_form(page)
    assert form.attrs["method"] == "post" and form.attrs["action"] == reverse("play_now")
    buttons = form.all("button", data_action="play-now")
    assert [b.attrs["data-variant"] for b in buttons] == list(engine.VARIANTS)
    for button in buttons:
        assert button.attrs["name"] == "variant"
        assert button.attrs["value"] == button.attrs["data-variant"]
        assert button.text()
    assert "log in first" in page.one("section", class_="play-now").text()


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_practice_seats_you_with_three_strong_bots_and_deals_at_once(
    variant: str, signed_in: SignedIn
) -> None:
    player = make_user("player")
    client = signed_in(player, enforce_csrf_checks=True)
    form = play_now_form(home(client))
    button = form.one("button", data_action="practice", data_variant=variant)
    data = {**form_values(form), button.attrs["name"]: button.attrs["value"]}

    response = client.post(button.attrs["formaction"], data)

    table = Table.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    assert table.variant.key == variant and table.created_by == player
    assert table.status == Table.Status.PLAYING and table.players == 4
    assert table.options == engine.default_options(variant)
    assert seats_state(table.pk) == [
        (0, player.pk, ""),
        (1, None, "strong"),
        (2, None, "strong"),
        (3, None, "strong"),
    ]
    match = Match.objects.get(table=table)
    assert match.status == Match.Status.PLAYING
    hand = match.hands.get()
    assert hand.number == 1 and hand.version == 0 and hand.status == Hand.Status.PLAYING
    assert len(hand.view_for(0)["rack"]) >= 14
    page = client.get(response["Location"]).content.decode()
    assert 'id="rack-area"' in page
    assert reads.live_seat(player)["table_id"] == table.pk  # type: ignore[index]


def test_play_now_over_htmx_redirects_the_page(signed_in: SignedIn) -> None:
    client = signed_in(make_user("player"))
    response = client.post(reverse("play_now"), {"variant": "duz"}, headers=HTMX)
    table = Table.objects.get()
    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("table", args=[table.pk])


def test_play_now_seats_an_anonymous_visitor_as_a_new_guest() -> None:
    client = Client()
    response = client.post(reverse("play_now"), {"variant": "okey51"})
    table = Table.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[table.pk])
    guest = table.seats.get(position=0).user
    assert guest is not None and guest.profile.is_guest
    assert client.session["_auth_user_id"] == str(guest.pk)


def play_now_level_options(page: Node) -> list[tuple[str, str, bool]]:
    select = play_now_form(page).one("select", name="level")
    return [(o.attrs["value"], o.text(), "selected" in o.attrs) for o in select.all("option")]


def test_practice_offers_the_bot_levels_and_remembers_the_one_chosen(signed_in: SignedIn) -> None:
    player = make_user("player")
    client = signed_in(player, enforce_csrf_checks=True)
    assert play_now_level_options(home(client)) == [
        ("greedy", "easy", False),
        ("strong", "strong", True),
        ("expert", "expert", False),
    ]
    form = play_now_form(home(client))
    button = form.one("button", data_action="practice", data_variant="okey51")
    data = {**form_values(form), "variant": "okey51", "level": "expert"}
    response = client.post(button.attrs["formaction"], data)
    table = Table.objects.get()
    assert response["Location"] == reverse("table", args=[table.pk])
    assert [level for _, _, level in seats_state(table.pk)] == ["", "expert", "expert", "expert"]
    # The lobby and the table say which level sits where.
    table_page = client.get(response["Location"]).content.decode()
    assert table_page.count("(expert)") >= 3
    lobby = parse(client.get(reverse("lobby")).content)
    row = lobby.one("li", data_table=str(table.pk))
    assert row.text().count("Bot (expert)") == 3
    # Chosen once, offered first next time (the player's profile keeps it).
    assert [v for v, _, selected in play_now_level_options(home(client)) if selected] == ["expert"]
    assert player.profile.play_now_level == "expert"


def test_play_now_refuses_a_level_it_does_not_offer_and_changes_nothing(
    signed_in: SignedIn,
) -> None:
    client = signed_in(make_user("player"))
    for level in ("random", "godlike"):
        response = client.post(reverse("play_now"), {"variant": "duz", "level": level}, follow=True)
        assert "There is no such bot level." in response.content.decode()
    assert not Table.objects.exists()
    with pytest.raises(GameError):
        actions.play_now(make_user("other"), "duz", level="random")
    assert not Table.objects.exists()


def test_play_now_refuses_a_variant_that_does_not_exist(signed_in: SignedIn) -> None:
    client = signed_in(make_user("player"))
    response = client.post(reverse("play_now"), {"variant": "chess"}, follow=True)
    assert response.redirect_chain == [(reverse("lobby"), 302)]
    assert (
        parse(response.content).one("ul", class_="messages").text() == "There is no such variant."
    )
    assert not Table.objects.exists()


# ----------------------------------------------------------------------------- one live table
@pytest.mark.slow
def test_a_player_sits_at_one_live_table_at_a_time(signed_in: SignedIn) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    first = actions.open_table(variant="okey51", user=alice, name="First")
    other = actions.open_table(variant="duz", user=bob, name="Other")
    client = signed_in(alice)
    before = (seats_state(first.pk), seats_state(other.pk), Table.objects.count())

    response = post(client, "table_sit", other.pk, position="1")
    assert flashed(client, response) == [REFUSED_ELSEWHERE]
    response = post(client, "table_sit", other.pk, htmx=True, position="1")
    assert parse(response.content).one(data_error=True).text() == REFUSED_ELSEWHERE
    response = post_new_table(client, "classic", {})
    assert parse(response.content).one("ul", class_="errors").text() == REFUSED_ELSEWHERE
    response = client.post(reverse("play_now"), {"variant": "gobek17"}, follow=True)
    assert response.redirect_chain == [(reverse("lobby"), 302)]
    page = parse(response.content)
    # Play now's refusal says where her seat is, with the link to it.
    refused = page.one("ul", class_="messages")
    assert refused.text() == f"{REFUSED_ELSEWHERE} Return to your table: First"
    assert refused.one("a", data_action="return-to-table").attrs["href"] == reverse(
        "table", args=[first.pk]
    )
    assert (seats_state(first.pk), seats_state(other.pk), Table.objects.count()) == before

    # The lobby offers the way back, at the top of "Play now".
    back = page.one(id="lobby-return").one("a", data_action="return-to-table")
    assert back.attrs["href"] == reverse("table", args=[first.pk])
    assert back.text() == "Return to your table: First"
    assert page.one("section", class_="play-now").one(id="lobby-return")
    theirs = home(signed_in(bob)).one(id="lobby-return").one("a", data_action="return-to-table")
    assert theirs.attrs["href"] == reverse("table", args=[other.pk])

    # Still live while its match is played, even after standing up (a bot keeps the seat).
    for position in (1, 2, 3):
        actions.add_bot(first, position, "greedy", by=alice)
    match = actions.start_match(first, by=alice, seed=seed_of(91))
    post(client, "table_stand", first.pk)
    assert Seat.objects.get(table=first, position=0).away
    assert flashed(client, post(client, "table_sit", other.pk, position="1")) == [REFUSED_ELSEWHERE]
    assert home(client).one(id="lobby-return").all(data_action="return-to-table")

    # Once the match is over the table is no longer live: she may sit elsewhere.
    play_match_with_bots(match, random.Random(4))
    first.refresh_from_db()
    assert first.status == Table.Status.FINISHED
    assert not home(client).one(id="lobby-return").all(data_action="return-to-table")
    response = post(client, "table_sit", other.pk, position="1")
    assert flashed(client, response) == []
    assert Seat.objects.get(table=other, position=1).user == alice


def test_a_table_whose_options_allow_it_lets_its_players_sit_elsewhere_too(
    signed_in: SignedIn,
) -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    first = actions.open_table(variant="okey51", user=alice, name="First")
    roomy = actions.open_table(variant="duz", user=bob, name="Roomy", other_tables=True)
    strict = actions.open_table(variant="classic", user=carol, name="Strict")
    client = signed_in(alice)
    # Seated at First, she may still sit at Roomy (its option), but not at Strict.
    assert flashed(client, post(client, "table_sit", roomy.pk, position="1")) == []
    assert Seat.objects.get(table=roomy, position=1).user == alice
    assert flashed(client, post(client, "table_sit", strict.pk, position="1")) == [
        REFUSED_ELSEWHERE
    ]
    # A seat at Roomy does not hold her back either: once she leaves First she may sit at Strict.
    post(client, "table_stand", first.pk)
    assert flashed(client, post(client, "table_sit", strict.pk, position="1")) == []
    # The form offers the option, and the lobby marks such tables.
    response = post_new_table(signed_in(make_user("dave")), "duz", {"other_tables": True})
    assert response.status_code == 302
    assert Table.objects.get(created_by__username="dave").other_tables
    assert home(client).all(data_other_tables=True)


def test_standing_up_before_the_match_frees_a_player_to_open_another_table(
    signed_in: SignedIn,
) -> None:
    alice = make_user("alice")
    client = signed_in(alice)
    first = actions.open_table(variant="okey51", user=alice)
    assert post_new_table(client, "duz", {}).status_code == 200  # refused
    post(client, "table_stand", first.pk)
    response = post_new_table(client, "duz", {})
    assert response.status_code == 302
    assert reads.live_seat(alice)["table_id"] == Table.objects.get(variant__key="duz").pk  # type: ignore[index]


def test_a_rematch_does_not_seat_again_a_player_who_sat_down_elsewhere(signed_in: SignedIn) -> None:
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    first = actions.open_table(variant="okey51", user=alice, name="First")
    actions.sit(first, bob, 1)
    for position in (2, 3):
        actions.add_bot(first, position, "random", by=alice)
    match = actions.start_match(first, by=alice, seed=seed_of(93))
    actions.stand(first, alice)  # away: bots play both seats to the end
    actions.stand(first, bob)
    play_match_with_bots(match, random.Random(6))
    first.refresh_from_db()
    assert first.status == Table.Status.FINISHED
    # The match is over, so its table is not live: alice may sit down at another one.
    other = actions.open_table(variant="duz", user=carol)
    client = signed_in(alice)
    assert flashed(client, post(client, "table_sit", other.pk)) == []
    assert Seat.objects.get(table=other, position=1).user == alice

    with pytest.raises(actions.GameError) as refused:
        actions.rematch(first, by=bob)

    assert refused.value.code == "player_elsewhere"
    first.refresh_from_db()
    assert first.status == Table.Status.FINISHED and Match.objects.filter(table=first).count() == 1
    live = Seat.objects.filter(user=alice, table__status__in=policy.LIVE_STATUSES)
    assert list(live.values_list("table_id", flat=True)) == [other.pk]


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("position", ["abc", "7", "-1", "1.5", "٣٣"])
@pytest.mark.parametrize("htmx", [False, True], ids=["plain", "htmx"])
def test_a_forged_seat_position_is_refused(
    table_of_alice: Any, position: str, htmx: bool, signed_in: SignedIn
) -> None:
    table, alice, bob = table_of_alice
    before = seats_state(table.pk)
    cases = [
        (signed_in(bob), "table_sit", {"position": position}),
        (signed_in(alice), "table_add_bot", {"position": position, "level": "greedy"}),
        (signed_in(alice), "table_remove_bot", {"position": position}),
    ]
    for client, name, data in cases:
        response = post(client, name, table.pk, htmx=htmx, **data)
        if htmx:
            assert parse(response.content).one(data_error=True).text() == NO_SUCH_SEAT, name
        else:
            assert flashed(client, response) == [NO_SUCH_SEAT], name
        assert seats_state(table.pk) == before, name


def test_a_bot_level_that_does_not_exist_is_refused(
    table_of_alice: Any, signed_in: SignedIn
) -> None:
    table, alice, _bob = table_of_alice
    client = signed_in(alice)
    for level in ("grandmaster", "", "STRONG"):
        response = post(client, "table_add_bot", table.pk, position="1", level=level)
        assert flashed(client, response) == [NO_SUCH_BOT], level
        response = post(client, "table_add_bot", table.pk, htmx=True, position="1", level=level)
        assert parse(response.content).one(data_error=True).text() == NO_SUCH_BOT, level
    assert seats_state(table.pk)[1] == (1, None, "")


@pytest.mark.parametrize(
    "name", ["table_sit", "table_stand", "table_add_bot", "table_remove_bot", "table_start"]
)
def test_a_table_that_does_not_exist_is_not_found(name: str, signed_in: SignedIn) -> None:
    client = signed_in(make_user("player"))
    missing = (Table.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    for htmx in (False, True):
        response = post(client, name, missing, htmx=htmx, position="0", level="greedy")
        assert response.status_code == 404
    assert client.get(reverse("table_controls", args=[missing])).status_code == 404
    assert not Table.objects.exists() and not Seat.objects.exists()


@pytest.mark.parametrize(
    "name", ["table_sit", "table_stand", "table_add_bot", "table_remove_bot", "table_start"]
)
def test_a_get_on_a_post_only_endpoint_is_refused(
    table_of_alice: Any, name: str, signed_in: SignedIn
) -> None:
    table, alice, _bob = table_of_alice
    before = seats_state(table.pk)
    response = signed_in(alice).get(
        reverse(name, args=[table.pk]), {"position": "1", "level": "greedy"}
    )
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert seats_state(table.pk) == before


def test_the_lobby_endpoints_refuse_the_wrong_method(signed_in: SignedIn) -> None:
    client = signed_in(make_user("player"))
    response = client.get(reverse("play_now"), {"variant": "duz"})
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert client.post(reverse("lobby")).status_code == 405
    assert client.put(reverse("new_table")).status_code == 405
    assert not Table.objects.exists()


def test_a_private_tables_controls_need_its_invite(signed_in: SignedIn) -> None:
    owner, stranger = make_user("owner"), make_user("stranger")
    table = actions.open_table(variant="duz", user=owner, is_private=True)
    client = signed_in(stranger)
    assert client.get(reverse("table_controls", args=[table.pk])).status_code == 404
    response = post(client, "table_sit", table.pk, position="1")
    # Without the invite the table is no table: 404, and no message says otherwise.
    assert response.status_code == 404
    assert not list(get_messages(response.wsgi_request))  # type: ignore[attr-defined]
    assert seats_state(table.pk)[1] == (1, None, "")


# ----------------------------------------------------------------------------- demo data
def demo_tables() -> dict[str, Table]:
    """The open demo table of each variant, by variant key."""
    tables = Table.objects.filter(name__startswith="Demo ", status=Table.Status.OPEN)
    found = {t.variant.key: t for t in tables.select_related("variant")}
    assert len(found) == tables.count(), "two open demo tables of one variant"
    return found


def test_the_demo_data_loads_and_keeps_the_one_live_table_rule(
    settings: Any, signed_in: SignedIn
) -> None:
    from games.management.commands.load_demo import DEMO_ACCOUNTS

    settings.DEBUG = True  # load_demo makes the demo accounts only in development
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())  # again: nothing doubles

    tables = demo_tables()
    assert sorted(tables) == sorted(engine.VARIANTS)
    assert Table.objects.count() == len(engine.VARIANTS)
    for t in tables.values():
        assert t.name == f"Demo {t.variant.name}" and t.auto_start
        # Seat 0 is left free for a visitor; no demo account holds a seat anywhere.
        assert seats_state(t.pk) == [
            (0, None, ""),
            (1, None, "greedy"),
            (2, None, "greedy"),
            (3, None, "greedy"),
        ]
    assert set(lobby_rows(home(Client()))) == {t.pk for t in tables.values()}

    players = [name for name, _pw, is_superuser in DEMO_ACCOUNTS if not is_superuser]
    ayse, mehmet = (get_user_model().objects.get(username=n) for n in players[:2])
    client = signed_in(ayse)
    response = post(client, "table_sit", tables["okey51"].pk, position="0")
    assert flashed(client, response) == []
    tables["okey51"].refresh_from_db()
    assert tables["okey51"].status == Table.Status.PLAYING  # full: it started by itself
    response = post(client, "table_sit", tables["duz"].pk, position="0")
    assert flashed(client, response) == [REFUSED_ELSEWHERE]
    back = home(client).one(id="lobby-return").one("a", data_action="return-to-table")
    assert back.attrs["href"] == reverse("table", args=[tables["okey51"].pk])
    actions.sit(tables["duz"], mehmet, 0)

    # Loading again replaces the demo tables now in play with fresh open ones.
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    fresh = demo_tables()
    assert sorted(fresh) == sorted(engine.VARIANTS)
    assert Table.objects.count() == len(engine.VARIANTS) + 2
    assert fresh["okey51"].pk != tables["okey51"].pk and fresh["gobek17"] == tables["gobek17"]
    for name in players:
        live_seats = Seat.objects.filter(
            user__username=name, table__status__in=policy.LIVE_STATUSES
        )
        assert live_seats.count() == (1 if name in ("ayse", "mehmet") else 0), name


# ----------------------------------------------------------------------------- the lobby socket
async def frame_where(ws: WebsocketCommunicator, wanted: Callable[[Node], bool]) -> Node:
    """The next frame that satisfies ``wanted`` (earlier ones are skipped)."""
    seen = []
    try:
        async with asyncio.timeout(PATIENCE):
            while True:
                frame = parse(await ws.receive_from())
                if wanted(frame):
                    return frame
                seen.append(frame.text()[:200])
    except TimeoutError:
        raise AssertionError(f"no such frame in {PATIENCE} s; frames seen: {seen}") from None


async def quiet(ws: WebsocketCommunicator, seconds: float = 0.6) -> list[str]:
    frames = []
    while not await ws.receive_nothing(timeout=seconds):
        frames.append(await ws.receive_from())
    return frames


# What the lobby tells a visitor who has not signed in (not "a guest": no account is theirs yet).
NOT_SIGNED_IN = "You are not signed in: Play now seats you as a guest."


def online(frame: Node) -> str:
    return frame.one(id="lobby-online").text()


@pytest.fixture
def table_already_here(transactional_db: None) -> int:
    """A duz table nobody has sat at: its id."""
    ensure_variants()
    return actions.create_table(variant="duz", created_by=None, name="Already here").pk


@pytest.fixture
def bob(transactional_db: None) -> Any:
    return make_user("bob")


@pytest.fixture
def owner_other_and_carol(transactional_db: None) -> tuple[Any, Any, Any, str, str]:
    """Three players, and the cookies of the first two."""
    ensure_variants()
    owner, other, carol = make_user("owner"), make_user("other"), make_user("carol")
    return owner, other, carol, cookie_for(owner), cookie_for(other)


@pytest.fixture
def cookies_of_alice_and_bob(transactional_db: None) -> tuple[str, str]:
    alice, bob = make_user("alice"), make_user("bob")
    return cookie_for(alice), cookie_for(bob)


@pytest.fixture
def host_of_an_open_table(transactional_db: None) -> str:
    """The cookie of a player who has opened an okey51 table."""
    ensure_variants()
    user = make_user("idle")
    actions.open_table(variant="okey51", user=user)
    return cookie_for(user)


@pytest.fixture
def a_match_the_bots_finish(transactional_db: None) -> tuple[int, int, str]:
    """An okey51 table of one hand: its host stood up (a bot plays the seat) after the
    match started, so that three random bots and a stand-in finish it alone. The table's
    id, the match's, and the host's cookie."""
    ensure_variants()
    player = make_user("player")
    table = actions.open_table(variant="okey51", user=player, options={"hands": 1})
    for position in (1, 2, 3):
        actions.add_bot(table, position, "random", by=player)
    match = actions.start_match(table, by=player, seed=seed_of(92))
    actions.stand(table, player)  # away: a bot plays the seat, so the bots finish alone
    return table.pk, match.pk, cookie_for(player)


@pytest.mark.django_db(transaction=True)
async def test_the_lobby_socket_sends_the_list_and_a_new_one_when_a_table_opens(
    table_already_here: int, bob: Any
) -> None:
    old_id = table_already_here
    async with lobby_sockets("") as [(ws, first)]:
        page = parse(first)
        assert page.one(id="lobby-status").text() == NOT_SIGNED_IN
        assert set(lobby_rows(page)) == {old_id}
        assert online(page) == "0 players online"

        table = await database_sync_to_async(actions.open_table)(
            variant="okey51", user=bob, name="Bob's table"
        )

        frame = await frame_where(ws, lambda f: table.pk in lobby_rows(f))
        assert set(lobby_rows(frame)) == {table.pk, old_id}
        row = lobby_rows(frame)[table.pk]
        assert row.one("a", class_="table-name").text() == "Bob's table"
        assert seats_shown(row)[0] == "bob"
        # Every part swaps in by id.
        for part in ("lobby-online", "lobby-return", "lobby-tables"):
            assert frame.one(id=part).attrs["hx-swap-oob"] == "true"

        await database_sync_to_async(actions.add_bot)(table.pk, 2, "strong", by=bob)
        await frame_where(ws, lambda f: seats_shown(lobby_rows(f)[table.pk])[2] == "Bot (strong)")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_the_lobby_socket_renders_each_viewers_own_list(
    owner_other_and_carol: tuple[Any, Any, Any, str, str],
) -> None:
    owner, other, carol, owner_cookie, other_cookie = owner_other_and_carol
    async with lobby_sockets(owner_cookie, other_cookie) as [(mine, _a), (theirs, _b)]:
        await quiet(mine)
        await quiet(theirs)

        private = await database_sync_to_async(actions.open_table)(
            variant="gobek17", user=owner, name="Secret", is_private=True
        )

        frame = await frame_where(mine, lambda f: private.pk in lobby_rows(f))
        row = lobby_rows(frame)[private.pk]
        assert row.all(data_private=True)
        link = f"http://localhost:8000/tables/{private.pk}/?invite={private.invite_token}"
        assert row.one("input", data_invite=True).attrs["value"] == link
        back = frame.one(id="lobby-return").one("a", data_action="return-to-table")
        assert back.attrs["href"] == reverse("table", args=[private.pk])
        # The other viewer's list did not change: their socket stays silent.
        assert await theirs.receive_nothing(timeout=1)

        public = await database_sync_to_async(actions.open_table)(variant="duz", user=carol)
        frame = await frame_where(theirs, lambda f: public.pk in lobby_rows(f))
        assert set(lobby_rows(frame)) == {public.pk}
        assert not frame.one(id="lobby-return").all("a")
        frame = await frame_where(mine, lambda f: public.pk in lobby_rows(f))
        assert set(lobby_rows(frame)) == {public.pk, private.pk}


@pytest.mark.django_db(transaction=True)
async def test_the_lobby_socket_counts_players_coming_and_going(
    cookies_of_alice_and_bob: tuple[str, str],
) -> None:
    alice_cookie, bob_cookie = cookies_of_alice_and_bob
    async with lobby_sockets(alice_cookie) as [(ws, first)]:
        page = parse(first)
        assert page.one(id="lobby-status").text() == "You are in the lobby as alice."
        assert online(page) == "1 player online"
        async with lobby_sockets(bob_cookie, "") as [(_bob, bob_first), (_guest, guest_first)]:
            assert online(parse(bob_first)) == "2 players online"
            assert online(parse(guest_first)) == "2 players online"  # guests are not counted
            await frame_where(ws, lambda f: online(f) == "2 players online")
            rows = await database_sync_to_async(list)(
                LobbyPresence.objects.values_list("user__username", flat=True)
            )
            assert sorted(rows) == ["alice", "bob"]
        await frame_where(ws, lambda f: online(f) == "1 player online")
    users = await database_sync_to_async(LobbyPresence.objects.count)()
    assert users == 0


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_an_idle_lobby_socket_makes_no_database_queries(host_of_an_open_table: str) -> None:
    async with lobby_sockets(host_of_an_open_table, "") as [(ws, first), (guest, _g)]:
        assert lobby_rows(parse(first))
        await asyncio.sleep(0.5)  # the re-render for the socket's own arrival
        await quiet(ws)
        await quiet(guest)
        # The process's presence heartbeat (every Presence.HEARTBEAT seconds, for all of its
        # sockets at once: a write and the count of players online) is not the socket's work:
        # the window starts just after a beat, and is shorter than the beat's period.
        beat_seen = False
        for _ in range(int(Presence.HEARTBEAT / 0.1) + 50):
            with QueryCounter() as beat:
                await asyncio.sleep(0.1)
            if any("online_users" in sql for sql in beat.statements):
                beat_seen = True
            elif beat_seen and not beat.statements:
                break
        assert beat_seen, "no presence heartbeat in this process"
        assert Presence.HEARTBEAT > 3
        with QueryCounter() as idle:
            assert await ws.receive_nothing(timeout=3)
            assert await guest.receive_nothing(timeout=0.1)
        assert idle.statements == []
        # The counter does see the socket's own work (in its worker thread): a refresh asked
        # for by the client reads the database.
        with QueryCounter() as asked:
            await ws.send_to(text_data="refresh")
            assert lobby_rows(parse(await ws.receive_from()))
        assert asked.statements


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_the_lobby_socket_drops_a_table_whose_match_has_ended(
    a_match_the_bots_finish: tuple[int, int, str],
) -> None:
    table_id, match_id, cookie = a_match_the_bots_finish
    async with lobby_sockets(cookie) as [(ws, first)]:
        page = parse(first)
        assert table_id in lobby_rows(page)
        assert page.one(id="lobby-return").all("a", data_action="return-to-table")
        await quiet(ws)

        def finish() -> None:
            play_match_with_bots(Match.objects.get(pk=match_id), random.Random(5))
            assert Table.objects.get(pk=table_id).status == Table.Status.FINISHED

        await database_sync_to_async(finish)()

        frame = await frame_where(ws, lambda f: table_id not in lobby_rows(f))
        assert not frame.one(id="lobby-return").all("a")
