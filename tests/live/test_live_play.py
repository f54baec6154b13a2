"""Live play over the table socket (and its HTTP twin): moves as JSON, private frames per seat,
refusals to the mover alone, and a rack arrangement that survives every update."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from games import actions, engine
from games.engine import layout as rack_layout
from games.models import Hand, Participant
from tests.play import rack_of_rows, refused_opening, seed_of, user_table
from tests.sockets import Players, TableSockets, cookie_for, drain, receive_until, version_of
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)


def rack_of(html: str) -> list[str]:
    part = html.split('id="rack-area"')[1].split("rack-tools")[0]
    return re.findall(r'data-tile="([^"]+)"', part)


@pytest.mark.slow
@pytest.mark.players("duz", seed=101, present=True)
async def test_it_plays_a_move_sent_as_json_and_tells_each_seat_its_own_rack(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, hand_id, cookies = players.table_id, players.hand.pk, players.cookies
    racks = [players.hand.view_for(s)["rack"] for s in range(4)]
    sockets = [
        await table_socket(table_id, cookie, first_frame=False) for cookie in [*cookies[:2], ""]
    ]
    first = [await ws.receive_from() for ws in sockets]
    assert Counter(rack_of(first[0])) == Counter(racks[0])
    assert Counter(rack_of(first[1])) == Counter(racks[1])
    assert 'id="rack-area"' not in first[2]  # a spectator has no rack
    await drain(sockets[0])
    await drain(sockets[1])
    await drain(sockets[2])
    tile = racks[0][0]
    await sockets[0].send_to(
        text_data=json.dumps(
            {
                "type": "move",
                "hand": hand_id,
                "move": {"do": "discard", "tile": tile},
                "expected_version": 0,
                "client_move_id": "abc-1",
            }
        )
    )
    after = [await ws.receive_from() for ws in sockets]
    assert [version_of(f) for f in after] == [1, 1, 1]
    mover = after[0]
    assert Counter(rack_of(mover)) == Counter(racks[0]) - Counter([tile])
    # Seat 1's rack did not change: its arrangement is not sent again (it stays as is).
    assert 'id="rack-area"' not in after[1]
    assert 'data-legal="draw take"' in after[1]  # seat 1 is on turn now
    assert 'id="rack-area"' not in after[2]
    for ws in sockets:
        await ws.disconnect()
    moves = await database_sync_to_async(lambda: list(Hand.objects.get(pk=hand_id).moves.all()))()
    assert [(m.seat, m.action, m.client_move_id) for m in moves] == [
        (0, {"do": "discard", "tile": tile}, "abc-1")
    ]


@pytest.mark.slow
@pytest.mark.players("duz", seed=102, present=True)
async def test_it_refuses_bad_moves_to_the_mover_alone_and_changes_nothing(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, hand, cookies = players.table_id, players.hand, players.cookies
    hand_id, not_mine = hand.pk, hand.view_for(1)["rack"][0]
    mover = await table_socket(table_id, cookies[0])
    other = await table_socket(table_id, cookies[1])
    for ws in (mover, other):  # the frames of each other's arrival too, on a loaded machine
        await drain(ws, 1.0)
    bad = [
        "not json",
        json.dumps([1, 2]),
        json.dumps({"type": "move", "hand": hand_id, "move": {"do": "fly"}}),
        json.dumps({"type": "move", "hand": hand_id, "move": {"do": "draw"}}),  # has a tile
        json.dumps(
            {
                "type": "move",
                "hand": hand_id,
                "move": {"do": "discard", "tile": not_mine},
                "expected_version": 0,
            }
        ),
        json.dumps(
            {
                "type": "move",
                "hand": hand_id,
                "move": {"do": "discard", "tile": hand.view_for(0)["rack"][0]},
                "expected_version": 7,
            }
        ),
        json.dumps({"type": "move", "hand": "x", "move": {"do": "draw"}}),
    ]
    codes = []
    for text in bad:
        await mover.send_to(text_data=text)
        frames = await drain(mover, 0.5)
        errors = [f for f in frames if 'id="move-error"' in f]
        assert errors, text
        codes.append(re.search(r'data-error="([^"]+)"', errors[0]).group(1))  # type: ignore[union-attr]
    assert codes == [
        "bad_move",
        "bad_move",
        "bad_move",
        "already_drew",
        "tile_not_in_rack",
        "stale_version",
        "bad_move",
    ]
    assert await drain(other, 0.3) == []  # nobody else hears of it
    await mover.disconnect()
    await other.disconnect()
    hand = await database_sync_to_async(Hand.objects.get)(pk=hand_id)
    assert hand.version == 0
    assert not await database_sync_to_async(hand.moves.exists)()


@pytest.mark.slow
@pytest.mark.players("duz", seed=103, present=True)
async def test_it_keeps_a_rack_arrangement_across_a_reconnect(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, hand_id, cookies = players.table_id, players.hand.pk, players.cookies
    rack = players.hand.view_for(2)["rack"]
    arranged: list[str | None] = [None] * rack_layout.SLOTS
    for i, code in enumerate(reversed(rack)):
        arranged[2 * i if i < 8 else 16 + (i - 8)] = code  # gaps between tiles on row one
    ws = await table_socket(table_id, cookies[2])
    await drain(ws)
    message = {"type": "arrange", "hand": hand_id, "layout": arranged}
    await ws.send_to(text_data=json.dumps(message))
    # Accepted quietly: no refusal and no rack sent back. A table frame may still arrive
    # on a loaded machine (the table's own updates around the socket's opening).
    quiet = await drain(ws, 0.5)
    assert not [f for f in quiet if 'id="move-error"' in f or 'id="rack-area"' in f], quiet
    forged = {"type": "arrange", "hand": hand_id, "layout": ["R1"] + arranged[1:]}
    await ws.send_to(text_data=json.dumps(forged))
    frames = await drain(ws, 0.5)
    assert any('data-error="bad_layout"' in f for f in frames)
    await ws.disconnect()
    stored = await database_sync_to_async(
        lambda: Participant.objects.get(hand_id=hand_id, position=2).layout
    )()
    assert stored == arranged
    again = await table_socket(table_id, cookies[2], first_frame=False)
    html = await again.receive_from()
    slots = re.findall(
        r'<div class="slot">(?:<span class="tile[^"]*" data-tile="([^"]+)")?',
        html.split('id="rack-area"')[1],
    )
    assert [s or None for s in slots] == arranged


def test_it_takes_moves_over_http_too(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(104)).hands.get()
    tile = hand.view_for(0)["rack"][0]
    url = reverse("table_move", args=[table.pk])
    payload = {
        "type": "move",
        "hand": hand.pk,
        "move": {"do": "discard", "tile": tile},
        "expected_version": 0,
    }
    stranger = Client()
    assert stranger.post(url, {"payload": json.dumps(payload)}).status_code == 403
    client = signed_in(users[0])
    refused = client.post(url, {"payload": json.dumps({**payload, "expected_version": 3})})
    assert 'data-error="stale_version"' in refused.content.decode()
    done = client.post(url, {"payload": json.dumps(payload)}).content.decode()
    assert 'data-version="1"' in done
    assert Counter(rack_of(done)) == Counter(hand.view_for(0)["rack"]) - Counter([tile])
    hand.refresh_from_db()
    assert hand.version == 1


def finishing_hand(seed: int) -> tuple[Hand, list[Any], list[str]]:
    """A classic hand whose starter holds a finish: R1-R5, B5-B7, K9-K11, Y4-B4-K4 and Y13."""
    table, users = user_table("classic")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(seed)).hands.get()
    melds = [["R1", "R2", "R3", "R4", "R5"], ["B5", "B6", "B7"], ["K9", "K10", "K11"]]
    melds.append(["Y4", "B4", "K4"])
    state = dict(hand.state)
    racks = [list(r) for r in state["racks"]]
    racks[0] = [engine.parse_tile(t) for g in melds for t in g] + [engine.parse_tile("Y13")]
    state["racks"] = racks
    Hand.objects.filter(pk=hand.pk).update(state=state)
    hand.refresh_from_db()
    return hand, users, [t for g in melds for t in g]


def test_it_finishes_with_the_groups_arranged_on_the_rack() -> None:
    hand, users, kept = finishing_hand(105)
    lay: list[str | None] = []
    for group in (kept[:5], kept[5:8], kept[8:11]):
        lay += [*group, None]
    lay += [None] * (rack_layout.ROW_SLOTS - len(lay))  # the last group on the second row
    lay += kept[11:] + ["Y13"]
    lay += [None] * (rack_layout.SLOTS - len(lay))
    played = actions.submit(hand, 0, {"do": "finish", "tile": "Y13", "layout": lay}, by=users[0])
    assert played.events[-1]["type"] == "hand_over" and played.events[-1]["finisher"] == 0
    assert played.move.action["groups"] == [kept[:5], kept[5:8], kept[8:11], kept[11:]]


def test_it_finishes_with_the_solver_when_the_rack_is_not_arranged() -> None:
    hand, users, kept = finishing_hand(106)
    lay = list(reversed(kept)) + ["Y13"] + [None] * (rack_layout.SLOTS - 15)  # no gaps
    played = actions.submit(hand, 0, {"do": "finish", "tile": "Y13", "layout": lay}, by=users[0])
    assert played.events[-1]["type"] == "hand_over"
    assert "groups" not in played.move.action  # the solver found the grouping


def test_it_refuses_a_finish_that_is_none_and_changes_nothing() -> None:
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(107)).hands.get()
    tile = hand.view_for(0)["rack"][0]
    with pytest.raises(actions.GameError) as exc:
        actions.submit(hand, 0, {"do": "finish", "tile": tile}, by=users[0])
    assert exc.value.code == "not_a_finish"
    hand.refresh_from_db()
    assert hand.version == 0


def test_it_opens_with_the_selected_tiles_grouped_as_on_the_rack() -> None:
    melds = [["R10", "R11", "R12", "R13"], ["K13", "B13", "Y13"], ["B9", "B10", "B11"]]
    hand, users, lay = rack_of_rows("okey51", 108, [*melds, ["Y1", "K2"]])
    selected = [t for g in melds for t in g]
    played = actions.submit(
        hand.pk, 0, {"do": "open", "tiles": selected, "layout": lay}, by=users[0]
    )
    assert played.move.action == {"do": "open", "melds": melds}
    assert played.events[0]["type"] == "open" and played.events[0]["total"] >= 101


@pytest.mark.parametrize("variant", ["okey51", "gobek17", "okey101"])
def test_the_tiles_opened_are_those_in_the_chosen_slots_when_another_copy_stands_first(
    variant: str,
) -> None:
    """Two copies of R13: one ends a run kept on the rack, the other is in the set opened."""
    kept = ["R9", "R10", "R11", "R12", "R13"]
    melds = [["Y13", "K13", "B13", "R13"], ["B9", "B10", "B11"], ["K10", "K11", "K12"]]
    hand, users, lay = rack_of_rows(variant, 108, [kept, *melds[:2]], [melds[2], ["Y1", "K2"]])
    slots = [i for i in [*range(6, 15), *range(16, 19)] if lay[i] is not None]
    assert [lay[i] for i in slots] == [t for g in melds for t in g]
    played = actions.submit(hand.pk, 0, {"do": "open", "slots": slots, "layout": lay}, by=users[0])
    assert played.move.action == {"do": "open", "melds": melds}
    after = Hand.objects.get(pk=hand.pk)
    assert sorted(after.view_for(0)["rack"]) == sorted([*kept, "Y1", "K2"])
    # A slot that is empty, or chosen twice, is refused and changes nothing.
    for bad in ([5], [20, 20]):
        with pytest.raises(actions.GameError) as exc:
            actions.submit(after.pk, 0, {"do": "lay", "slots": bad}, by=users[0])
        assert exc.value.code == "bad_move"
    assert Hand.objects.get(pk=hand.pk).version == after.version


def shown_layout(hand_id: int, seat: int) -> list[str | None]:
    """The seat's stand as its page draws it: the stored layout fitted to the rack now."""
    stored = Participant.objects.get(hand_id=hand_id, position=seat).layout
    return rack_layout.reconcile(stored, Hand.objects.get(pk=hand_id).view_for(seat)["rack"])


@pytest.mark.parametrize("variant", ["classic", "duz", "okey51", "gobek17", "okey101"])
def test_the_tile_thrown_is_the_copy_in_the_chosen_slot(variant: str) -> None:
    """A loose R5 stands before a run R5-R6-R7 kept on the rack: throwing the loose one leaves
    the run whole on the stand."""
    hand, users, lay = rack_of_rows(
        variant, 109, [["R5"], ["R5", "R6", "R7"], ["B1", "B2", "B3"]], [["K9", "K10"], ["Y2"]]
    )
    assert lay[0] == lay[2] == "R5"
    # A slot that does not hold the tile named, or holds nothing, is refused and changes nothing.
    for bad in ({"tile": "R5", "slot": 3}, {"tile": "R5", "slot": 1}, {"tile": "R5", "slot": 99}):
        with pytest.raises(actions.GameError) as exc:
            actions.submit(hand.pk, 0, {"do": "discard", **bad}, by=users[0])
        assert exc.value.code == "bad_move"
    assert Hand.objects.get(pk=hand.pk).version == 0
    actions.submit(hand.pk, 0, {"do": "discard", "tile": "R5", "slot": 0}, by=users[0])
    shown = shown_layout(hand.pk, 0)
    assert shown[0] is None and shown[2:5] == ["R5", "R6", "R7"]


@pytest.mark.parametrize("variant", ["okey51", "gobek17", "okey101"])
def test_the_tile_added_is_the_copy_in_the_chosen_slot(variant: str) -> None:
    """A loose K9 stands before a run K7-K8-K9 kept on the rack: adding the loose one to the
    opened K10-K12 leaves the kept run whole."""
    opened = [["Y13", "K13", "B13", "R13"], ["B9", "B10", "B11"], ["K10", "K11", "K12"]]
    hand, users, lay = rack_of_rows(
        variant, 110, [["K9"], ["K7", "K8", "K9"], opened[0]], [*opened[1:], ["Y1", "Y3"]]
    )
    slots = [i for i, t in enumerate(lay) if i > 5 and t is not None and t not in ("Y1", "Y3")]
    played = actions.submit(hand.pk, 0, {"do": "open", "slots": slots}, by=users[0])
    run = played.events[0]["melds"][2]
    actions.submit(
        hand.pk, 0, {"do": "add", "tile": "K9", "slot": 0, "meld": run["id"]}, by=users[0]
    )
    shown = shown_layout(hand.pk, 0)
    assert shown[0] is None and shown[2:5] == ["K7", "K8", "K9"]


def test_a_finish_throws_the_copy_in_the_chosen_slot() -> None:
    """B5 twice: one starts the run B5-B7, the other stands alone at the end and is thrown; the
    finish is the rack's own grouping."""
    groups = [["R1", "R2", "R3", "R4", "R5"], ["B5", "B6", "B7"], ["K9", "K10", "K11"]]
    hand, users, lay = rack_of_rows("classic", 111, groups, [["Y4", "B4", "K4"], ["B5"]])
    slot = lay.index("B5", rack_layout.ROW_SLOTS)
    played = actions.submit(
        hand.pk, 0, {"do": "finish", "tile": "B5", "slot": slot, "layout": lay}, by=users[0]
    )
    assert played.events[-1]["type"] == "hand_over"
    assert played.move.action["groups"] == [*groups, ["Y4", "B4", "K4"]]


def test_a_refused_opening_names_the_group_that_failed_and_why(signed_in: SignedIn) -> None:
    answer = refused_opening(signed_in)
    assert "Red 5, red 6, red 8 is not a run or a set: " in answer
    assert "the numbers of a run follow each other, each once." in answer


async def test_weigh_tells_the_seat_what_its_stand_and_selection_are_worth(
    table_socket: TableSockets,
) -> None:
    """The page asks ("weigh"); the seat's socket alone answers #rack-weight: the selected
    tiles against the bar, and every group standing on the stand, valid or not."""
    hand, users, lay = await database_sync_to_async(rack_of_rows)(
        "okey101",
        113,
        [["R10", "R11", "R12", "R13"], ["Y13", "K13", "B13"], ["R5", "R6", "R8"]],
        [["K2", "K2"], ["B1"]],
    )
    table_id = await database_sync_to_async(lambda: hand.match.table_id)()
    seat = await table_socket(table_id, await database_sync_to_async(cookie_for)(users[0]))
    watcher = await table_socket(table_id, "")
    weigh = {"type": "weigh", "hand": hand.pk, "layout": lay, "slots": [0, 1, 2, 3, 5, 6, 7]}
    await seat.send_json_to(weigh)
    answer = (await receive_until(seat, lambda f: 'id="rack-weight"' in f))[-1]
    assert ">85 / 101</p>" in answer and "reached" not in answer
    stand = json.loads(html.unescape(re.search(r'data-stand="([^"]*)"', answer).group(1)))
    assert stand == [
        {"slots": [0, 1, 2, 3], "valid": True},
        {"slots": [5, 6, 7], "valid": True},
        {"slots": [9, 10, 11], "valid": False},
        {"slots": [16, 17], "valid": True},
    ]
    # Pairs count as pairs; a spectator asking gets nothing; a stand that is not the rack's
    # is answered with nothing (the page asks again with its own).
    await seat.send_json_to({**weigh, "slots": [16, 17]})
    answer = (await receive_until(seat, lambda f: 'id="rack-weight"' in f))[-1]
    assert ">1 / 5 pairs</p>" in answer
    await watcher.send_json_to(weigh)
    await seat.send_json_to({**weigh, "layout": ["R1"] + lay[1:]})
    assert not [f for f in await drain(watcher, 0.5) if "rack-weight" in f]
    assert not [f for f in await drain(seat, 0.5) if "rack-weight" in f]
