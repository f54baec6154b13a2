"""A table's live socket: presence for the away rule, and a fresh fragment on every change."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from games import actions, engine, reads
from games import frames as fragments
from games.catalog import ensure_variants
from games.live import loop_reads, state_cache
from games.live.table_socket import TableConsumer
from games.models import Hand, Presence, Seat, Table
from tests.play import seed_of
from tests.sockets import (
    Players,
    QueryCounter,
    TableSockets,
    cookie_for,
    drain,
    socket,
    version_of,
)
from tests.users import make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def player_and_three_bots(transactional_db: None) -> Players:
    """A duz table of one player (seat 0) and three greedy bots, their match started."""
    ensure_variants()
    user = make_user("clock-player")
    table = actions.create_table(variant="duz", created_by=user)
    actions.sit(table, user, 0)
    for position in (1, 2, 3):
        actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(43))
    return Players(table.pk, [user], [cookie_for(user)], match.hands.get())


@pytest.fixture
def watcher_cookies(transactional_db: None) -> list[str]:
    """Two signed-in spectators."""
    return [cookie_for(make_user(f"watcher-{n}")) for n in (1, 2)]


@pytest.fixture
async def loop_reads_stopped() -> AsyncIterator[None]:
    """The event loop's reads stop once the test's sockets have closed (name it before
    ``table_socket``: fixtures close in reverse order)."""
    yield
    await loop_reads.stop()


@pytest.mark.players("duz", seed=41)
async def test_it_tracks_presence_and_pushes_each_move(
    players: Players, table_socket: TableSockets
) -> None:
    table_id, users = players.table_id, players.users
    my_tile = engine.format_tile(players.hand.engine_hand().racks[1][0])
    ws = await table_socket(table_id, players.cookies[1], first_frame=False)
    html = await ws.receive_from()
    assert 'id="table-live"' in html and 'hx-swap-oob="true"' in html
    assert f'data-tile="{my_tile}"' in html.split('class="rack"')[1].split("rack-tools")[0]
    assert players.hand.seed not in html
    assert version_of(html) == 0
    rows = await database_sync_to_async(list)(
        Presence.objects.filter(seat__table_id=table_id).values_list("seat__position", "user")
    )
    assert rows == [(1, users[1].pk)]

    def move() -> None:
        hand = reads.current_hand(Table.objects.get(pk=table_id))
        assert hand is not None
        tile = engine.format_tile(hand.engine_hand().racks[0][0])
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0])

    await database_sync_to_async(move)()
    # (A frame for the player's own arrival, "here", may come first: the table as it was.)
    versions = [version_of(await ws.receive_from())]
    while versions[-1] == 0 and len(versions) < 3:
        versions.append(version_of(await ws.receive_from()))
    assert versions[-1] == 1, versions
    await ws.disconnect()
    seat = await database_sync_to_async(Seat.objects.get)(table_id=table_id, position=1)
    assert seat.last_seen is not None
    assert not await database_sync_to_async(Presence.objects.filter(seat=seat).exists)()


async def test_it_refuses_a_private_table_without_the_invite(
    private_table: Table, table_socket: TableSockets
) -> None:
    ws = socket(private_table.pk)
    connected, _ = await ws.connect()
    assert not connected
    await ws.disconnect()
    await table_socket(private_table.pk, query=f"invite={private_table.invite_token}")


@pytest.mark.slow
@pytest.mark.players("okey51", seed=42)
async def test_an_idle_socket_never_queries_the_database(
    players: Players, table_socket: TableSockets
) -> None:
    ws = await table_socket(players.table_id, players.cookies[1], first_frame=False)
    assert version_of(await ws.receive_from()) == 0
    await drain(ws, 0.5)  # the frame for this socket's own presence
    with QueryCounter() as counter:
        assert await ws.receive_nothing(timeout=3)
    assert counter.statements == []


@pytest.mark.players("okey101", seed=45)
async def test_a_ping_is_answered_pong_and_touches_no_database(
    players: Players, table_socket: TableSockets
) -> None:
    """The page's heartbeat: a ping after a silence gets "pong" at once, read from nothing."""
    ws = await table_socket(players.table_id, players.cookies[0])
    await drain(ws, 0.5)
    with QueryCounter() as counter:
        await ws.send_json_to({"type": "ping"})
        assert await ws.receive_from() == "pong"
    assert counter.statements == []


def test_a_ping_over_http_is_refused(signed_in: Any) -> None:
    """The heartbeat is the socket's alone: the HTTP fallback does not take it."""
    ensure_variants()
    table = actions.create_table(variant="classic", created_by=None)
    answer = signed_in().post(f"/tables/{table.pk}/move/", {"payload": '{"type": "ping"}'})
    assert 'data-error="bad_move"' in answer.content.decode()


async def test_the_clock_in_the_server_pushes_bot_moves_without_polling(
    settings: Any, player_and_three_bots: Players, table_socket: TableSockets
) -> None:
    """Without Redis the clock runs on the server's loop (games.live.server_tasks): the bots'
    moves reach the socket through the in-memory layer, with no socket reading the database.
    The clock does not poll for them either: each move wakes it (events.CLOCK_GROUP), so the
    bots play at once though its passes are a minute apart. (``table_socket`` stops the
    clock with the server's other tasks.)"""
    settings.CLOCK_IN_SERVER = True
    settings.BOT_DELAY_SECONDS = 0.0
    settings.CLOCK_INTERVAL_SECONDS = 60.0
    hand = player_and_three_bots.hand
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    ws = await table_socket(
        player_and_three_bots.table_id, player_and_three_bots.cookies[0], first_frame=False
    )
    assert version_of(await ws.receive_from()) == 0
    await drain(ws)  # the frame for this socket's own presence
    await ws.send_json_to(
        {
            "type": "move",
            "hand": hand.pk,
            "move": {"do": "discard", "tile": tile},
            "expected_version": 0,
            "client_move_id": "m1",
        }
    )
    versions = [version_of(await ws.receive_from())]
    # The three bots each draw and discard: six more versions, pushed as they commit
    # (a frame shows the state when it is rendered, so it may skip a version).
    while versions[-1] < 7:
        versions.append(version_of(await ws.receive_from()))
    assert versions == sorted(versions) and versions[0] >= 1
    played = await database_sync_to_async(Hand.objects.get)(pk=hand.pk)
    assert played.turn == 0 and played.version >= 7


@pytest.mark.players("duz", seed=44)
async def test_it_closes_quietly_when_its_table_is_deleted(
    players: Players, table_socket: TableSockets
) -> None:
    """A table removed while someone watches (the admin): the socket closes, no error."""
    ws = await table_socket(players.table_id, players.cookies[1])
    await database_sync_to_async(Table.objects.filter(pk=players.table_id).delete)()
    await ws.send_json_to({"type": "refresh"})
    closed = await ws.receive_output()
    while closed["type"] != "websocket.close":
        closed = await ws.receive_output()
    assert closed["code"] == 4404


async def test_a_frame_for_a_socket_whose_client_just_left_is_dropped_quietly() -> None:
    """daphne raises (and logs as an error) when a consumer sends on a connection its client
    has already closed: a group message that arrived before the close. The consumers drop
    such a frame; any other error still raises."""
    from games.live.lobby_socket import LobbyConsumer
    from games.live.server_tasks import ClientGone

    for consumer_class in (TableConsumer, LobbyConsumer):
        consumer = consumer_class()

        async def gone(message: dict[str, Any]) -> None:
            raise ClientGone("Attempt to send on a closed protocol")

        consumer.base_send = gone
        await consumer.send(text_data="<p>late</p>")  # no error

        async def broken(message: dict[str, Any]) -> None:
            raise ValueError("something else")

        consumer.base_send = broken
        with pytest.raises(ValueError):
            await consumer.send(text_data="<p>late</p>")


@pytest.mark.parametrize(
    "made_by",
    [
        "kept",
        "thread",
        pytest.param(
            "loop",
            marks=pytest.mark.skipif(
                connection.vendor != "postgresql", reason="reads on the loop: PostgreSQL"
            ),
        ),
    ],
)
@pytest.mark.slow
@pytest.mark.players("duz", seed=43)
async def test_a_change_is_made_once_and_each_view_rendered_once(
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    made_by: str,
    players: Players,
    watcher_cookies: list[str],
    loop_reads_stopped: None,
    table_socket: TableSockets,
) -> None:
    """Four seats (one of them in two tabs) and two spectators at a table: after a move, this
    process makes the table's state once and renders five views (four seats, one spectators'
    view), and every socket still gets its own view (its rack, never another's). ``made_by``:
    the state the process holds brought forward by the move, without a read ("kept"), or,
    where it holds none young enough, a read in a thread or on the event loop
    (games.live.loop_reads)."""
    on_loop = made_by == "loop"
    settings.DB_LOOP_READS = on_loop
    if made_by != "kept":
        monkeypatch.setattr(state_cache, "KEEP_SECONDS", 0.0)

    table_id, cookies, users = players.table_id, players.cookies, players.users
    everyone = [await table_socket(table_id, c) for c in [*cookies, cookies[2], *watcher_cookies]]
    for ws in everyone:
        await drain(ws)
    state_reads: list[int] = []
    contexts: list[Any] = []
    real_state, real_context = reads.table_state, reads.table_context

    def counting_state(*args: Any, **kwargs: Any) -> Any:
        state_reads.append(1)
        return real_state(*args, **kwargs)

    def counting_context(*args: Any, **kwargs: Any) -> Any:
        contexts.append(args[1])
        return real_context(*args, **kwargs)

    monkeypatch.setattr(reads, "table_state", counting_state)
    advances: list[int] = []
    real_advance = reads.state_after_move

    def counting_advance(*args: Any, **kwargs: Any) -> Any:
        state = real_advance(*args, **kwargs)
        advances.append(int(state is not None))
        return state

    monkeypatch.setattr(reads, "state_after_move", counting_advance)
    loop_reads_done: list[int] = []
    real_loop_state = loop_reads.table_state

    async def counting_loop_state(*args: Any, **kwargs: Any) -> Any:
        state = await real_loop_state(*args, **kwargs)
        if state is not None:
            loop_reads_done.append(1)
        return state

    monkeypatch.setattr(loop_reads, "table_state", counting_loop_state)
    if on_loop:
        assert await loop_reads.open_pool()
    monkeypatch.setattr(reads, "table_context", counting_context)
    racks_rendered: list[object] = []
    real_rack = fragments.rack

    def counting_rack(context: Any) -> str:
        racks_rendered.append(context["my_seat"])
        return real_rack(context)

    monkeypatch.setattr(fragments, "rack", counting_rack)

    def move() -> None:
        hand = Hand.objects.get(match__table_id=table_id)
        tile = engine.format_tile(hand.engine_hand().racks[0][0])
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0])

    await database_sync_to_async(move)()
    frames = [await drain(ws) for ws in everyone]
    assert all(len(f) == 1 and version_of(f[0]) == 1 for f in frames), frames
    made = len(state_reads) + len(loop_reads_done) + sum(advances)
    assert made == 1, "made once per change, not per socket"
    assert len(loop_reads_done) == int(on_loop)
    assert advances == ([1] if made_by == "kept" else [])
    assert len(contexts) == 5, contexts
    # Seat 0 discarded: its rack changed, so its frame carries the rack; nobody else's.
    assert 'id="rack-area"' in frames[0][0]
    assert all('id="rack-area"' not in f[0] for f in frames[1:])
    assert racks_rendered == [0], "a rack that is not sent is not rendered"
    assert frames[4] == frames[2]  # seat 2's two tabs
    for spectator in frames[5:]:
        assert spectator[0] == frames[5][0]
        assert 'data-seat=""' in spectator[0] and 'class="rack"' not in spectator[0]


def rack_order(frame: str) -> list[str]:
    """The tiles of the rack fragment in ``frame``, slot by slot."""
    start = frame.index('id="rack-area"')
    rack = frame[start : frame.index("rack-tools", start)]
    return re.findall(r'data-tile="([^"]+)"', rack)


async def one_frame_each(sockets: list[Any], version: int) -> list[list[str]]:
    """Every socket's frames after a change: one each, at ``version``."""
    frames = [await drain(ws) for ws in sockets]
    assert all(len(f) == 1 and version_of(f[0]) == version for f in frames), frames
    return frames


def counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often this process reads a table (in a thread) and brings one forward."""
    counts = {"reads": 0, "advances": 0}
    real_state, real_advance = reads.table_state, reads.state_after_move

    def counting_state(*args: Any, **kwargs: Any) -> Any:
        counts["reads"] += 1
        return real_state(*args, **kwargs)

    def counting_advance(*args: Any, **kwargs: Any) -> Any:
        state = real_advance(*args, **kwargs)
        counts["advances"] += state is not None
        return state

    monkeypatch.setattr(reads, "table_state", counting_state)
    monkeypatch.setattr(reads, "state_after_move", counting_advance)
    return counts


@pytest.mark.slow
@pytest.mark.players("duz", seed=44)
async def test_a_movers_arrangement_survives_a_move_brought_forward_without_a_read(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """A player arranges their rack over the socket (stored, not announced) and discards:
    their frame comes from the state the process held, brought forward by the move, and its
    rack is in their arrangement, the discarded tile gone."""
    hand_id, rack = players.hand.pk, players.hand.view_for(0)["rack"]
    sockets = [await table_socket(players.table_id, c) for c in players.cookies]
    for ws in sockets:
        await drain(ws)
    counts = counting(monkeypatch)
    arranged = [*reversed(rack), *[None] * (32 - len(rack))]
    arranged[20], arranged[0] = arranged[0], None  # a gap, and a tile on the second row
    await sockets[0].send_json_to({"type": "arrange", "hand": hand_id, "layout": arranged})
    assert await drain(sockets[0]) == []  # stored, nothing to tell
    gone = rack[3]
    await sockets[0].send_json_to(
        {
            "type": "move",
            "hand": hand_id,
            "move": {"do": "discard", "tile": gone},
            "expected_version": 0,
        }
    )
    frames = await one_frame_each(sockets, version=1)
    assert counts == {"reads": 0, "advances": 1}
    expected = list(arranged)
    expected[expected.index(gone)] = None
    assert rack_order(frames[0][0]) == [t for t in expected if t is not None]
    assert all('id="rack-area"' not in f[0] for f in frames[1:])


@pytest.mark.slow
@pytest.mark.players("duz", seed=45)
async def test_a_rack_that_must_be_sent_from_a_state_brought_forward_is_read_afresh(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """A socket whose rack is to go out with a move's frame (here: one that has not sent it,
    as after a frame that failed) while another seat moved: the state brought forward does
    not know how this seat arranged its rack since it was read, so the socket reads the
    table for its frame, and the rack is in the seat's stored arrangement."""
    users, hand = players.users, players.hand
    sockets = [await table_socket(players.table_id, c) for c in players.cookies]
    for ws in sockets:
        await drain(ws)
    rack = hand.view_for(2)["rack"]
    arranged = [*[None] * (32 - len(rack)), *rack]

    def arrange_and_move() -> None:
        actions.arrange(hand.pk, 2, arranged, by=users[2])
        tile = hand.view_for(0)["rack"][0]
        actions.play(hand.pk, 0, {"do": "discard", "tile": tile}, by=users[0])

    real_moved = TableConsumer.hand_moved

    async def forgetting(self: Any, event: dict[str, Any]) -> None:
        if self.position == 2:
            self.sent_rack = None
        await real_moved(self, event)

    monkeypatch.setattr(TableConsumer, "hand_moved", forgetting)
    counts = counting(monkeypatch)
    await database_sync_to_async(arrange_and_move)()
    frames = await one_frame_each(sockets, version=1)
    assert counts == {"reads": 1, "advances": 1}, "brought forward, and seat 2 read"
    assert rack_order(frames[2][0]) == rack
    assert 'id="rack-area"' in frames[0][0] and 'id="rack-area"' not in frames[1][0]


@pytest.mark.slow
@pytest.mark.players("duz", seed=46)
async def test_seats_are_read_again_in_the_background_while_moves_are_brought_forward(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """A player's server process died (their presence row goes stale, nobody is told): while
    moves are brought forward without a read, the table's seats are read again off the
    move's frame once they are ``REFRESH_SECONDS`` old, and the next move's frame shows the
    player gone; a state whose seats are ``KEEP_SECONDS`` old is read afresh."""
    table_id, users, hand_id = players.table_id, players.users, players.hand.pk
    sockets = [await table_socket(table_id, c) for c in players.cookies[:3]]

    def connect() -> None:
        seat = Seat.objects.get(table_id=table_id, position=3)
        actions.socket_opened(seat, users[3], "a-socket-of-a-server-that-died")

    def go_stale() -> None:
        old = Presence.objects.get(channel_name="a-socket-of-a-server-that-died")
        old.seen_at = old.seen_at - timedelta(seconds=Presence.FRESH + 1)
        old.save(update_fields=["seen_at"])

    def move(seat: int, do: str) -> None:
        hand = Hand.objects.get(pk=hand_id)
        extra = {"tile": hand.view_for(seat)["rack"][0]} if do == "discard" else {}
        actions.play(hand, seat, {"do": do, **extra}, by=users[seat])

    for ws in sockets:
        await drain(ws)
    await database_sync_to_async(connect)()
    frames = [await drain(ws) for ws in sockets]
    assert frames[1] and frames[1][-1].count('class="badge here"') == 4  # read as they came
    await database_sync_to_async(go_stale)()
    counts = counting(monkeypatch)
    seat_reads: list[int] = []
    real_seats = reads.table_and_seats

    def counting_seats(*args: Any, **kwargs: Any) -> Any:
        seat_reads.append(1)
        return real_seats(*args, **kwargs)

    monkeypatch.setattr(reads, "table_and_seats", counting_seats)
    monkeypatch.setattr(state_cache, "REFRESH_SECONDS", 0.0)
    await database_sync_to_async(move)(0, "discard")
    (frame,) = await drain(sockets[1])
    assert frame.count('class="badge here"') == 4, "brought forward: the seats as read"
    assert counts == {"reads": 0, "advances": 1} and seat_reads == [1]
    await database_sync_to_async(move)(1, "draw")
    (frame,) = await drain(sockets[1])
    assert frame.count('class="badge here"') == 3, "the seats read in the background"
    assert counts == {"reads": 0, "advances": 2}
    monkeypatch.setattr(state_cache, "KEEP_SECONDS", 0.0)
    await database_sync_to_async(move)(1, "discard")
    (frame,) = await drain(sockets[1])
    assert counts == {"reads": 1, "advances": 2}, "too old to bring forward: read"


@pytest.mark.slow
@pytest.mark.players("duz", seed=47)
async def test_a_players_new_display_name_shows_at_their_table_at_once(
    players: Players, table_socket: TableSockets
) -> None:
    """A name is not part of a move: a seated player who renames themselves is announced to
    their table (and so a server that brings the table's state forward by moves reads it)."""
    from accounts.models import Profile

    sockets = [await table_socket(players.table_id, c) for c in players.cookies[:2]]
    for ws in sockets:
        await drain(ws)

    def rename() -> None:
        profile = Profile.of(players.users[1])
        profile.display_name = "Zeynep Kaya"
        profile.save()

    await database_sync_to_async(rename)()
    frames = [await drain(ws) for ws in sockets]
    assert all(f and "Zeynep Kaya" in f[-1] for f in frames), frames


def test_a_socket_opening_for_a_seat_whose_table_was_just_deleted_is_no_error() -> None:
    """A page reconnecting while its table is deleted (the admin, the tests' flush) may be
    admitted a moment before its seat goes: counting it then finds no seat, and says
    nothing (the socket's first frame finds no table and closes it)."""
    ensure_variants()
    user = make_user("late-reconnect")
    table = actions.create_table(variant="duz", created_by=None)
    actions.sit(table, user, 0)
    seat_id = Seat.objects.get(table=table, position=0).pk
    Table.objects.filter(pk=table.pk).delete()
    actions.socket_opened(seat_id, user, "gone-channel")
    assert not Presence.objects.filter(channel_name="gone-channel").exists()
