"""Changes to who may see what are versioned like moves: a socket that missed the message of
such a change (a full channel, a Redis hiccup) is put right by the next move's message, and a
frame that merges several changes never merges one of them away."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse

from games import actions, engine
from games.live.table_socket import TableConsumer
from games.models import Hand, Seat
from games.pages import history
from tests.play import random_move, seed_of, user_table
from tests.sockets import (
    Loss,
    Players,
    TableSockets,
    drain,
    live_frames,
    loss,  # noqa: F401 - the fixture
    version_of,
)
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)


def play_one(table_id: int, users: list[Any], rng: random.Random) -> int:
    hand = Hand.objects.get(match__table_id=table_id, status=Hand.Status.PLAYING)
    seat, move = random_move(hand, rng)
    return actions.play(hand, seat, move, by=users[seat]).version


@pytest.mark.slow
@pytest.mark.players("duz", seed=921, present=True)  # as tests.play.playing_table makes it
async def test_a_lost_hide_message_is_made_good_by_the_next_move(
    loss: Loss,  # noqa: F811 - the fixture
    players: Players,
    table_socket: TableSockets,
) -> None:
    rng = random.Random(11)
    table_id, users = players.table_id, players.users
    player = await table_socket(table_id, players.cookies[0])
    spectator = await table_socket(table_id)
    await drain(player)
    await drain(spectator)
    # A few moves, each brought forward from the state the process keeps.
    for _ in range(3):
        await database_sync_to_async(play_one)(table_id, users, rng)
    seen = live_frames(await drain(spectator))
    assert seen and 'class="discards"' in seen[-1] and "data-veiled" not in seen[-1]

    loss.armed = True
    await database_sync_to_async(actions.hide_from_spectators)(table_id, users[0])
    assert [m["type"] for m in loss.lost] == ["table.changed"]
    assert live_frames(await drain(spectator)) == []  # the hide's message never came

    version = await database_sync_to_async(play_one)(table_id, users, rng)
    frames = live_frames(await drain(spectator))
    assert frames and version_of(frames[-1]) == version
    assert "data-veiled" in frames[-1]
    assert "data-tile" not in frames[-1] and 'class="discards"' not in frames[-1]


async def test_a_change_merged_into_a_move_frame_is_read_not_brought_forward() -> None:
    """A frame that merges a seat's change (its message: no ``apply`` part) with a later move
    reads the table: the move's part alone would carry the kept state past the change."""
    consumer = TableConsumer()
    consumer.table_id = 1
    sent: list[dict[str, Any]] = []
    gate = asyncio.Event()

    async def send_table(change: str | None, event: dict[str, Any]) -> None:
        sent.append({**event, "sent_as": change})
        await gate.wait()

    consumer._send_table = send_table  # type: ignore[method-assign]
    apply = {"action": {"do": "discard", "tile": "R5"}, "visibility": 0}
    consumer._changed({"type": "hand.moved", "change": "a", "version": 1, "apply": apply})
    await asyncio.sleep(0)  # the first frame is being made
    consumer._changed({"type": "table.changed", "change": "b"})
    consumer._changed({"type": "hand.moved", "change": "c", "version": 2, "apply": apply})
    gate.set()
    assert consumer.sending is not None
    await consumer.sending
    assert [e["version"] for e in sent] == [1, 2]
    assert "apply" in sent[0] and sent[0]["sent_as"] == "a"
    assert "apply" not in sent[1] and sent[1]["sent_as"] != "c"

    # Moves alone still merge into the latest move's frame, brought forward.
    sent.clear()
    gate.clear()
    consumer._changed({"type": "hand.moved", "change": "d", "version": 3, "apply": apply})
    await asyncio.sleep(0)
    consumer._changed({"type": "hand.moved", "change": "e", "version": 4, "apply": apply})
    consumer._changed({"type": "hand.moved", "change": "f", "version": 5, "apply": apply})
    gate.set()
    await consumer.sending
    assert [(e["version"], e["sent_as"], "apply" in e) for e in sent] == [
        (3, "d", True),
        (5, "f", True),
    ]


# ----------------------------------------------------------------------------- a removed player
def rebuild_up_to(hand: Hand, n: int) -> engine.Hand:
    return history.rebuild(hand, history.recorded_moves(hand, n))


def test_a_player_removed_mid_hand_replays_it_only_up_to_their_removal(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(77))
    rng = random.Random(3)
    for _ in range(5):
        play_one(table.pk, users, rng)
    removed = users[1]
    actions.remove_player(table.seats.get(position=1), by=actions.SYSTEM)
    hand = match.hands.get()
    at_removal = hand.version
    for _ in range(6):  # the stand-in bot plays the seat on
        hand.refresh_from_db()
        if hand.status != Hand.Status.PLAYING:
            break
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=actions.BOT if seat == 1 else users[seat])
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.version > at_removal
    rack_now = [engine.format_tile(t) for t in hand.engine_hand().racks[1]]

    client = signed_in(removed)
    page = client.get(reverse("hand_replay", args=[hand.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert reverse("hand_step", args=[hand.pk, at_removal]) in html
    assert reverse("hand_step", args=[hand.pk, at_removal + 1]) not in html
    assert client.get(reverse("hand_step", args=[hand.pk, at_removal + 1])).status_code == 404
    last = client.get(reverse("hand_step", args=[hand.pk, at_removal])).content.decode()
    rack_html = last.split('data-rack="1"', 1)[1].split("</div>", 1)[0]
    shown = sorted(re.findall(r'data-tile="([^"]+)"', rack_html))
    at_that_move = rebuild_up_to(hand, at_removal).racks[1]
    assert shown == sorted(engine.format_tile(t) for t in at_that_move)
    assert shown != sorted(rack_now), "the seat's rack has changed since the removal"

    # A player still seated replays up to the hand's current version.
    other = signed_in(users[0])
    html = other.get(reverse("hand_replay", args=[hand.pk])).content.decode()
    assert reverse("hand_step", args=[hand.pk, hand.version]) in html

    # Once the hand is over, the removed player replays all of it.
    actions.end_match(match, by=actions.SYSTEM)
    assert client.get(reverse("hand_step", args=[hand.pk, hand.version])).status_code == 200


@pytest.mark.players("classic", seed=922, present=True)  # as tests.play.playing_table makes it
async def test_a_removed_players_socket_loses_the_rack_at_the_next_move_even_if_told_nothing(
    loss: Loss,  # noqa: F811 - the fixture
    players: Players,
    table_socket: TableSockets,
) -> None:
    rng = random.Random(8)
    table_id, users = players.table_id, players.users
    removed = await table_socket(table_id, players.cookies[1])
    await drain(removed)
    for _ in range(2):
        await database_sync_to_async(play_one)(table_id, users, rng)
    await drain(removed)

    def remove() -> None:
        actions.remove_player(Seat.objects.get(table_id=table_id, position=1), by=actions.SYSTEM)

    loss.armed = True
    await database_sync_to_async(remove)()
    assert loss.lost  # the removal's message never came

    def move() -> int:
        hand = Hand.objects.get(match__table_id=table_id, status=Hand.Status.PLAYING)
        seat, action = random_move(hand, rng)
        by = actions.BOT if seat == 1 else users[seat]
        return actions.play(hand, seat, action, by=by).version

    version = await database_sync_to_async(move)()
    frames = live_frames(await drain(removed))
    assert frames and version_of(frames[-1]) == version
    # The rack leaves the page: #rack-area comes empty.
    assert 'class="rack"' not in frames[-1]
    assert "data-tile" not in frames[-1].partition('id="rack-area"')[2]
