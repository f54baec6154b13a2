"""Spectators: anyone who may see a table may watch it live; the lobby and the table say how
many watch; a spectator's frames hold only what is public; a seated player may hide the hand
being played from spectators until it ends."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import actions, engine, reads
from games.errors import GameError, NotAllowed
from games.models import Hand, Presence, Watcher
from tests.markup import allowed, shown
from tests.play import playing_table, random_move
from tests.sockets import (
    Players,
    TableSockets,
    board_at,
    cookie_for,
    drain,
    players_at_table,
    receive_until,
    version_of,
)
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def watching_badge(html: str) -> int | None:
    found = re.search(r'id="watchers"[^>]*data-watching="(\d+)"', html)
    return int(found.group(1)) if found else None


def badges(frames: list[str]) -> list[int]:
    """The watching counts the frames show (a frame of another kind, such as the heartbeat's
    presence update, has none)."""
    return [b for b in map(watching_badge, frames) if b is not None]


@pytest.fixture
def fan_cookie(transactional_db: None) -> str:
    """A signed-in spectator's."""
    return cookie_for(make_user("fan"))


@pytest.fixture
def hand_of_the_variant(variant: str, transactional_db: None) -> Players:
    """Four players (each with a table socket open) at a table of the test's ``variant``,
    its first hand being played (as ``tests.play.playing_table(variant, 7)`` makes it)."""
    return players_at_table(variant, seed=907, present=True)


@pytest.fixture
def discards_on_the_table(transactional_db: None) -> Players:
    """Four players (each with a table socket open) six random moves into a duz hand
    (as ``tests.play.playing_table("duz", 3)`` makes it)."""
    players = players_at_table("duz", seed=903, present=True)
    hand, rng = players.hand, random.Random(5)
    for _ in range(6):
        hand.refresh_from_db()
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=players.users[seat])
    return players


# ----------------------------------------------------------------------------- counting
@pytest.mark.slow
@pytest.mark.players("duz", seed=901, present=True)  # as tests.play.playing_table() makes it
async def test_it_counts_spectators_live_on_the_table_and_in_the_lobby(
    players: Players, fan_cookie: str, table_socket: TableSockets
) -> None:
    table_id = players.table_id
    player = await table_socket(table_id, players.cookies[0])
    await drain(player)
    fan = await table_socket(table_id, fan_cookie)
    assert badges(await drain(player)) == [1]
    anonymous = await table_socket(table_id)
    assert badges(await drain(player)) == [2]
    await drain(fan)
    # Every page and the lobby count them; the seated player's own socket is not counted.
    assert await database_sync_to_async(reads.watching)([table_id]) == {table_id: 2}

    def pages() -> tuple[str, str]:
        table_page = Client().get(reverse("table", args=[table_id])).content.decode()
        return table_page, Client().get(reverse("lobby")).content.decode()

    table_page, lobby = await database_sync_to_async(pages)()
    assert watching_badge(table_page) == 2
    assert "2 watching" in table_page
    row = lobby.split(f'data-table="{table_id}"')[1].split("</li>\n      ")[0]
    assert 'data-watching="2"' in row and "2 watching" in row
    assert 'data-action="watch"' in row
    await anonymous.disconnect()
    assert badges(await drain(player)) == [1]
    await fan.disconnect()
    assert badges(await drain(player)) == [0]
    await player.disconnect()
    assert await database_sync_to_async(Watcher.objects.count)() == 0


def test_it_counts_only_fresh_rows_and_never_a_seated_player() -> None:
    table, users, _hand = playing_table()
    fan = make_user("fan")
    actions.watcher_opened(table.pk, fan, "w-fresh")
    actions.watcher_opened(table.pk, None, "w-anonymous")
    actions.watcher_opened(table.pk, users[1], "w-seated")  # sat down with a spectator tab
    actions.watcher_opened(table.pk, None, "w-stale")
    old = timezone.now() - timedelta(seconds=Presence.FRESH + 5)
    Watcher.objects.filter(channel_name="w-stale").update(seen_at=old)
    assert reads.watching([table.pk]) == {table.pk: 2}
    assert lobby_watching(table.pk) == 2  # the lobby's list counts as the table does
    # The heartbeat of the process that holds the stale socket brings it back.
    actions.sockets_alive([], [], ["w-stale"])
    assert reads.watching([table.pk]) == {table.pk: 3}
    assert lobby_watching(table.pk) == 3
    actions.watcher_closed("w-fresh")
    actions.watcher_closed("w-unknown")  # closing twice, or a row already gone: nothing
    assert reads.watching([table.pk]) == {table.pk: 2}
    assert lobby_watching(table.pk) == 2


def lobby_watching(table_id: int) -> int:
    [listed] = [t for t in reads.lobby_tables(AnonymousUser()) if t["id"] == table_id]
    return int(listed["watching"])


# ----------------------------------------------------------------------------- hidden information
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "okey51"])
async def test_a_spectators_every_frame_holds_no_rack_tile(
    variant: str, hand_of_the_variant: Players, table_socket: TableSockets
) -> None:
    """A whole hand played with a spectator watching: each of its frames shows no tile
    beyond the public ones of the state it shows (so no rack and no pile), and no seed
    before the end."""
    users, hand_id = hand_of_the_variant.users, hand_of_the_variant.hand.pk
    publics: dict[int, dict[str, Any]] = {}
    seeds: dict[int, str] = {}

    def step(rng: random.Random) -> int | None:
        """Notes the hand as it is and plays a random move: the version it made, or None once
        the hand is over."""
        hand = Hand.objects.get(pk=hand_id)
        publics[hand.version] = hand.public_view()
        seeds[hand.version] = hand.seed
        if hand.status != Hand.Status.PLAYING:
            return None
        made = hand.version + 1
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=users[seat])
        return made

    spectator = await table_socket(hand_of_the_variant.table_id, first_frame=False)
    frames: list[str] = []
    rng = random.Random(3)
    for _ in range(400):
        version = await database_sync_to_async(step)(rng)
        if version is None:
            break
        frames += await receive_until(spectator, board_at(hand_id, version))
    await spectator.disconnect()
    # Frames of this hand only: the next one may be dealt once it ends (the clock of a
    # live-server test's daphne, on the same test database, deals it), at version 0 again.
    boards = [f for f in frames if 'id="table-live"' in f and f'data-hand="{hand_id}"' in f]
    assert len(boards) > 20
    checked = 0
    for frame in boards:
        assert 'id="rack-area"' not in frame and "aria-pressed" not in frame
        version = version_of(frame)
        public = publics[version]
        if public["over"]:
            continue  # the racks are shown face up at the end
        assert seeds[version] not in frame
        extra = shown(frame) - allowed(public)
        assert not extra, f"version {version}: tiles beyond the public ones: {dict(extra)}"
        checked += 1
    assert checked > 20


# ----------------------------------------------------------------------------- hiding a hand
@pytest.mark.slow
async def test_a_seated_player_hides_the_hand_from_spectators_until_it_ends(
    discards_on_the_table: Players, table_socket: TableSockets
) -> None:
    table_id, users = discards_on_the_table.table_id, discards_on_the_table.users
    player = await table_socket(table_id, discards_on_the_table.cookies[2], first_frame=False)
    spectator = await table_socket(table_id, first_frame=False)
    before = [f for f in await drain(spectator) if 'id="table-live"' in f][-1]
    assert 'class="discards"' in before and "data-veiled" not in before
    first = [f for f in await drain(player) if 'id="table-live"' in f][-1]
    assert 'data-action="hide"' in first

    await player.send_json_to({"type": "hide"})
    seen_by_player = [f for f in await drain(player) if 'id="table-live"' in f][-1]
    veiled = [f for f in await drain(spectator) if 'id="table-live"' in f][-1]
    # The spectator sees the seats, not the board: no tile, no discard, no event.
    assert "data-veiled" in veiled
    assert "data-tile" not in veiled and 'class="event-log"' not in veiled
    assert 'class="discards"' not in veiled
    for u in users:
        assert u.get_username() in veiled
    # The players still play on the whole board, and are told it is hidden.
    assert 'class="discards"' in seen_by_player and "data-hidden" in seen_by_player
    assert 'data-action="hide"' not in seen_by_player

    def page() -> str:
        return Client().get(reverse("table", args=[table_id])).content.decode()

    assert "data-veiled" in await database_sync_to_async(page)()

    def finish() -> None:
        hand = Hand.objects.get(match__table_id=table_id, status=Hand.Status.PLAYING)
        actions.end_match(hand.match, by=actions.SYSTEM)

    await database_sync_to_async(finish)()
    after = [f for f in await drain(spectator) if 'id="table-live"' in f][-1]
    assert "data-veiled" not in after and 'class="discards"' in after


def test_only_a_seated_player_may_hide_and_only_a_hand_being_played() -> None:
    table, users, hand = playing_table()
    fan = make_user("fan")
    with pytest.raises(NotAllowed) as refused:
        actions.hide_from_spectators(table.pk, fan)
    assert refused.value.code == "not_seated"
    with pytest.raises(NotAllowed):
        actions.hide_from_spectators(table.pk, None)
    hand.refresh_from_db()
    assert not hand.hidden
    actions.hide_from_spectators(table.pk, users[0])
    actions.hide_from_spectators(table.pk, users[1])  # already hidden: nothing more
    hand.refresh_from_db()
    assert hand.hidden and hand.version == 0
    actions.end_match(hand.match, by=actions.SYSTEM)
    with pytest.raises(GameError) as over:
        actions.hide_from_spectators(table.pk, users[0])
    assert over.value.code == "no_hand"


def test_the_hide_request_over_http(signed_in: SignedIn) -> None:
    table, users, hand = playing_table()
    client = signed_in(users[3])
    url = reverse("table_move", args=[table.pk])
    response = client.post(url, {"payload": '{"type": "hide"}'})
    assert response.status_code == 200 and "data-hidden" in response.content.decode()
    hand.refresh_from_db()
    assert hand.hidden
    # The next hand is shown to spectators again.
    spectator_page = Client().get(reverse("table", args=[table.pk])).content.decode()
    assert "data-veiled" in spectator_page
    assert engine.format_tile(hand.engine_hand().indicator) not in re.sub(
        r"<[^>]+>", " ", spectator_page.split('id="table-live"')[1]
    )
