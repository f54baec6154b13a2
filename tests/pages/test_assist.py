"""Assisted tables (RULES.md §6): the seated player's page and socket frames mark feedable rack
tiles and the workable discard, sort the rack into melds and offer a one-tap opening and
one-tap feeding, all played through the services; unassisted tables and spectators get none
of it."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse

from games import actions, engine
from games.engine import layout as rack_layout
from games.models import Hand, Table
from tests.engine.test_assist import hand_with
from tests.markup import allowed, assert_hidden
from tests.play import connect, seed_of, user_table
from tests.sockets import Players, TableSockets, cookie_for, drain, version_of
from tests.users import SignedIn, client_for

pytestmark = pytest.mark.django_db(transaction=True)

# Seat 0 (the starter, okey Y6) can open with R9-R12, K13 B13 Y13, B5-B8: 107.
OPENER = "R9 R10 R11 R12 K13 B13 Y13 B5 B6 B7 B8 K2 R3 K7 B1".split()
# Opened without B8 (99), meld ids 0, 1, 2; B8 then feeds meld 2.
SMALLER = [["R9", "R10", "R11", "R12"], ["K13", "B13", "Y13"], ["B5", "B6", "B7"]]
# Seat 1: R13 fits meld 0 and 1, B4 meld 2; B9 only once B8 is on meld 2; K5 K6 take K7.
FEEDER = "R13 B4 B9 K5 K6 Y2 Y9 Y11 R5 K9 Y3 K1 R2 Y8".split()


def rigged(assisted: bool, seed: int) -> tuple[Table, list[Any], Hand]:
    """An okey51 table of four players whose first hand deals seats 0 and 1 the racks above."""
    return dealt_with("okey51", {"assisted": assisted}, {0: OPENER, 1: FEEDER}, seed)


def dealt_with(
    variant: str,
    options: dict[str, Any],
    racks: dict[int, list[str]],
    seed: int,
    sockets: bool = True,
) -> tuple[Table, list[Any], Hand]:
    """A table of four players whose first hand deals these seats these racks (the rest from
    the box: ``tests.engine.test_assist.hand_with``); ``sockets``: each player has one open."""
    table, users = user_table(variant, options)
    if sockets:
        connect(table, users)
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(seed)).hands.get()
    assert hand.starter == 0
    eng = hand_with(variant, racks, table.options, seed=hand.seed)
    Hand.objects.filter(pk=hand.pk).update(state=actions.matches.snapshot(eng))
    hand.refresh_from_db()
    return table, users, hand


def page(table: Table, user: Any = None) -> str:
    return client_for(user).get(reverse("table", args=[table.pk])).content.decode()


def attr(text: str, selector: str, name: str) -> Any:
    """The JSON in attribute ``name`` of the element whose tag holds ``selector``."""
    tag = re.search(r"<[^>]*" + re.escape(selector) + r"[^>]*>", text)
    assert tag, selector
    value = re.search(name + r'="([^"]*)"', tag.group(0))
    assert value, (name, tag.group(0))
    return json.loads(html.unescape(value.group(1)))


def rack_tiles(text: str) -> list[tuple[str, bool]]:
    """The rack's tiles as (code, marked feedable)."""
    part = text.split('id="rack-area"')[1].split("rack-tools")[0]
    return [
        (code, "feedable" in classes.split())
        for classes, code in re.findall(r'<span class="tile ([^"]*)" data-tile="([^"]+)"', part)
    ]


def feed_buttons(text: str) -> list[tuple[str, str, int]]:
    return [
        (do, tile, int(meld))
        for do, tile, meld in re.findall(
            r'data-action="feed" data-do="(\w+)" data-feed="(\w+)" data-meld="(\d+)"', text
        )
    ]


HELP = ("open-suggested", "feedable", "data-assist-feedable", "workable")


def test_the_one_tap_opening_opens_through_the_service() -> None:
    table, users, hand = rigged(True, 601)
    text = page(table, users[0])
    view = hand.view_for(0)
    suggested = attr(text, 'data-action="open-suggested"', "data-open")
    assert suggested == engine.assist(view)["opening"]["move"]
    button = re.search(r'<button[^>]*data-action="open-suggested"[^>]*>([^<]*)</button>', text)
    assert button and "disabled" not in button.group(0) and button.group(1) == "Open: 107"
    # "Arrange runs and sets" carries the solver's layout: the three melds, then the rest.
    layout = attr(text, 'data-sort="melds"', "data-layout")
    assert rack_layout.check(layout, view["rack"]) == layout
    assert [sorted(g) for g in rack_layout.groups(layout)[:3]] == [
        sorted(g) for g in engine.assist(view)["opening"]["groups"]
    ]
    # The page sends exactly what table.js sends for the button: the move plus the layout.
    played = actions.submit(hand, 0, {**suggested, "layout": layout}, by=users[0])
    assert played.events[0]["type"] == "open" and played.events[0]["total"] == 107
    hand.refresh_from_db()
    assert hand.public_view()["opened"][0] == "melds"
    after = page(table, users[0])
    assert "open-suggested" not in after  # opened: nothing more to suggest


def test_a_feedable_tile_is_marked_and_fed_with_one_tap() -> None:
    table, users, hand = rigged(True, 602)
    actions.play(hand, 0, {"do": "open", "melds": SMALLER}, by=users[0])
    text = page(table, users[0])
    marked = {code for code, feedable in rack_tiles(text) if feedable}
    assert marked == {"B8"}
    assert 'data-assist-feedable="B8"' in text
    assert feed_buttons(text) == [("add", "B8", 2)]
    do, tile, meld = feed_buttons(text)[0]
    played = actions.submit(hand, 0, {"do": do, "tile": tile, "meld": meld}, by=users[0])
    assert played.events[0] == {"type": "add", "seat": 0, "meld": 2, "tile": "B8", "end": "high"}
    after = page(table, users[0])
    assert feed_buttons(after) == [] and not any(f for _, f in rack_tiles(after))


def test_another_seat_sees_its_marks_and_the_workable_discard_but_no_feed_before_opening() -> None:
    table, users, hand = rigged(True, 603)
    actions.play(hand, 0, {"do": "open", "melds": SMALLER}, by=users[0])
    actions.play(hand, 0, {"do": "discard", "tile": "K7"}, by=users[0])
    text = page(table, users[1])
    assert {code for code, feedable in rack_tiles(text) if feedable} == {"R13", "B4"}
    spot = re.search(r'<div class="discard-spot[^"]*"[^>]*data-seat="0"[^>]*>', text)
    assert spot and "workable" in spot.group(0) and 'data-workable="K7"' in spot.group(0)
    assert feed_buttons(text) == []  # seat 1 has not opened: feeding is not legal yet
    assert "open-suggested" not in text  # no melds nor pairs to open with
    # The help shows no tile that seat may not see.
    hand.refresh_from_db()
    assert_hidden(text, hand, allowed(hand.public_view(), hand.view_for(1)["rack"]))
    # Once seat 1 has drawn, that discard can no longer be taken: it is no longer marked.
    actions.play(hand, 1, {"do": "draw"}, by=users[1])
    assert "workable" not in page(table, users[1])


def test_unassisted_tables_and_spectators_get_no_help() -> None:
    table, users, hand = rigged(False, 604)
    actions.play(hand, 0, {"do": "open", "melds": SMALLER}, by=users[0])
    for text in (page(table, users[0]), page(table)):
        for mark in HELP:
            assert mark not in text, mark
        assert feed_buttons(text) == []
    assisted, users, hand = rigged(True, 605)
    actions.play(hand, 0, {"do": "open", "melds": SMALLER}, by=users[0])
    actions.play(hand, 0, {"do": "discard", "tile": "K7"}, by=users[0])
    assert "workable" in page(assisted, users[1])
    spectator = page(assisted)
    for mark in HELP:
        assert mark not in spectator, mark


@pytest.fixture
def assisted_table(transactional_db: None) -> Players:
    """An assisted table dealt the racks above (``rigged``)."""
    table, users, hand = rigged(True, 606)
    return Players(table.pk, users, [cookie_for(u) for u in users], hand)


@pytest.fixture
def unassisted_table(transactional_db: None) -> Players:
    """A table without help dealt the same racks (``rigged``)."""
    table, users, hand = rigged(False, 607)
    return Players(table.pk, users, [cookie_for(u) for u in users], hand)


@pytest.mark.slow
async def test_the_socket_opens_with_one_tap_and_keeps_the_marks_fresh(
    assisted_table: Players, table_socket: TableSockets
) -> None:
    table_id, cookies = assisted_table.table_id, assisted_table.cookies
    hand_id = assisted_table.hand.pk
    opener = await table_socket(table_id, cookies[0], first_frame=False)
    feeder = await table_socket(table_id, cookies[1])
    first = await opener.receive_from()
    await drain(opener)
    await drain(feeder)
    suggested = attr(first, 'data-action="open-suggested"', "data-open")
    layout = attr(first, 'data-sort="melds"', "data-layout")
    # What table.js sends for the one-tap opening.
    message = {
        "type": "move",
        "hand": hand_id,
        "move": {**suggested, "layout": layout},
        "expected_version": version_of(first),
        "client_move_id": "assist-open-1",
    }
    await opener.send_to(text_data=json.dumps(message))
    frames = await drain(opener, 0.5)
    assert frames and version_of(frames[-1]) == 1
    assert "open-suggested" not in frames[-1]
    seen = await drain(feeder, 0.5)
    # Seat 1's rack did not change, so its rack is not re-sent; the board carries its marks.
    assert seen and 'id="rack-area"' not in seen[-1]
    assert 'data-assist-feedable="R13 B4 B9"' in seen[-1]  # B8 went onto the B run
    for ws in (opener, feeder):
        await ws.disconnect()
    hand = await database_sync_to_async(Hand.objects.get)(pk=hand_id)
    assert hand.public_view()["opened"][0] == "melds"
    assert [m.client_move_id for m in await database_sync_to_async(list)(hand.moves.all())] == [
        "assist-open-1"
    ]


async def test_an_unassisted_socket_sends_no_help(
    unassisted_table: Players, table_socket: TableSockets
) -> None:
    ws = await table_socket(
        unassisted_table.table_id, unassisted_table.cookies[0], first_frame=False
    )
    frame = await ws.receive_from()
    await ws.disconnect()
    assert 'id="rack-area"' in frame
    for mark in HELP:
        assert mark not in frame, mark


def test_the_help_speaks_turkish(signed_in: SignedIn) -> None:
    from pathlib import Path

    po = Path(__file__).resolve().parents[2] / "locale" / "tr" / "LC_MESSAGES" / "django.po"
    mo = po.with_suffix(".mo")
    if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
        pytest.skip("the Turkish catalogue is not compiled (make compiles it with msgfmt)")
    table, users, hand = rigged(True, 608)
    client = signed_in(users[0], headers={"accept-language": "tr"})
    text = client.get(reverse("table", args=[table.pk])).content.decode()
    assert ">Aç: 107</button>" in text and "Perleri diz" in text
    actions.play(hand, 0, {"do": "open", "melds": SMALLER}, by=users[0])
    text = client.get(reverse("table", args=[table.pk])).content.decode()
    assert 'aria-label="B8 taşını bu pere işle"' in text
