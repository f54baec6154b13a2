"""A server process killed in the middle of a hand (SIGKILL: no close, no clean-up) and started
again at the same address: the players' pages reconnect by themselves (the ws extension, and
``static/js/table.js`` asks for the table again), the hand goes on at the version the
database holds, and no move a page saw acknowledged is missing from the log.

And Redis failing under the channel layer (a restart without persistence takes the groups of
every socket with it, and the messages meanwhile): once it answers again the layer puts its
sockets back in their groups and tells each to send its view afresh.

The faults as a whole (a server killed, Redis stopped for 10 s, PostgreSQL restarted) run on
private servers in ``bench/faults.py``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from games import actions, audit, engine
from games.actions import events
from games.catalog import ensure_variants
from games.engine.tiles import physical_tiles
from games.models import Hand, Move, Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import seed_of
from tests.users import make_user

if TYPE_CHECKING:
    from tests.sockets import Players, TableSockets


# What each page sent and received, in order: the moves it sent (their id, hand and the
# version they were made at), the boards it was sent (hand, version), the refusals (the move
# id they answer) and its socket's opens and closes.
SOCKET_LOG = """
window.__okeyLog = [];
(function () {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    try {
      const m = JSON.parse(data);
      if (m.type === "move") {
        window.__okeyLog.push(["sent", m.client_move_id, m.hand, m.expected_version]);
      }
    } catch (e) { /* not JSON: not ours */ }
    return send.call(this, data);
  };
})();
document.addEventListener("htmx:wsBeforeMessage", (e) => {
  const m = String(e.detail.message);
  const live = /<div id="table-live"[^>]*>/.exec(m);
  if (live) {
    const hand = /data-hand="(\\d*)"/.exec(live[0]);
    const version = /data-version="(\\d+)"/.exec(live[0]);
    window.__okeyLog.push(["board", hand ? Number(hand[1]) : null, Number(version[1])]);
  }
  const refused = /id="move-error"[^>]*data-move-id="([^"]*)"/.exec(m);
  if (refused) window.__okeyLog.push(["refused", refused[1]]);
});
document.addEventListener("htmx:wsOpen", () => window.__okeyLog.push(["open"]));
document.addEventListener("htmx:wsClose", () => window.__okeyLog.push(["close"]));
"""


def socket_log(page: Any) -> list[list[Any]]:
    return list(page.evaluate("() => window.__okeyLog"))


def opens(page: Any) -> int:
    return sum(1 for entry in socket_log(page) if entry[0] == "open")


def closes(page: Any) -> int:
    return sum(1 for entry in socket_log(page) if entry[0] == "close")


def acknowledged(log: list[list[Any]]) -> set[str]:
    """The moves this page saw acknowledged: a board of the same hand at a later version came
    after the move was sent, and no refusal of it."""
    sent: dict[str, tuple[int, int]] = {}
    refused: set[str] = set()
    acked: set[str] = set()
    for entry in log:
        if entry[0] == "sent":
            sent[entry[1]] = (entry[2], entry[3])
        elif entry[0] == "refused":
            refused.add(entry[1])
        elif entry[0] == "board":
            for move_id, (hand, version) in sent.items():
                if entry[1] == hand and entry[2] > version and move_id not in refused:
                    acked.add(move_id)
    return acked


def setup_table(seed: str) -> tuple[Table, list[Any], Hand]:
    """Two players (seats 0 and 1) and two bots (2 and 3), no move timer, a hand dealt."""

    def make() -> tuple[Table, list[Any], Hand]:
        ensure_variants()
        table = actions.create_table(variant="classic", created_by=None, options={"timer": 0})
        users = []
        for position in (0, 1):
            user = make_user(f"fault-{position}")
            actions.sit(table, user, position)
            users.append(user)
        for position in (2, 3):
            actions.add_bot(table, position, "random", by=actions.SYSTEM)
        match = actions.start_match(table, by=actions.SYSTEM, seed=seed)
        return table, users, match.hands.get()

    return in_thread(make)  # type: ignore[no-any-return]


def play_turn(page: Any) -> None:
    """The seat's whole turn the plain way: draw if it must, then discard."""
    assert ui.simple_turn(page), ui.state(page)
    if ui.state(page)["phase"] == "discard" and ui.state(page)["turn"] == ui.state(page)["seat"]:
        assert ui.simple_turn(page), ui.state(page)


def settled(hand_id: int, players: tuple[int, ...] = (0, 1)) -> Hand:
    """The hand once it waits for a player (the bots do not move then) or is over, read from the
    database: a page can still show a player's turn that the server has already moved past, and
    the bots' moves after it would land behind the checks' backs."""
    deadline = time.monotonic() + 30
    while True:
        current = Hand.objects.get(pk=hand_id)
        if current.status != Hand.Status.PLAYING or current.turn in players:
            return current
        assert time.monotonic() < deadline, (current.version, current.turn)
        time.sleep(0.1)


def test_a_killed_server_started_again_the_pages_reconnect_and_the_hand_goes_on(
    own_server: DaphneServer, chromium: Any
) -> None:
    table, users, hand = setup_table(seed_of(20))
    pages = []
    for user in users:
        page = ui.signed_in_page(chromium, own_server, user)
        page.add_init_script(SOCKET_LOG)
        ui.open_table(page, own_server, table.pk)
        pages.append(page)
    seat = {int(ui.state(p)["seat"]): p for p in pages}
    assert set(seat) == {0, 1}
    starter = int(ui.state(pages[0])["turn"])
    assert starter == 0, ui.state(pages[0])  # the first hand starts at seat 0

    # Seat 0 throws its 15th tile, seat 1 draws: seat 1 is to discard when the server dies.
    assert ui.simple_turn(seat[0])
    # Seat 1 plays once its own page has the discard (a push, which can trail seat 0's page).
    ui.wait_version(seat[1], 1)
    assert ui.simple_turn(seat[1])
    for page in pages:
        ui.wait_version(page, 2)
    before = Hand.objects.get(pk=hand.pk)
    assert before.version == 2 and before.turn == 1, (before.version, before.turn)

    assert own_server.process is not None
    own_server.process.send_signal(signal.SIGKILL)
    own_server.process.wait(timeout=10)
    for page in pages:
        page.wait_for_function("() => window.__okeyLog.some(e => e[0] === 'close')")
    assert Hand.objects.get(pk=hand.pk).version == 2  # nothing moved while it was down
    page_opens = [opens(p) for p in pages]

    errors = own_server.errors()  # what the first process logged before it died
    port = own_server.port
    own_server.log_path = own_server.log_path.with_name("daphne-2.log")
    own_server.start(own_server.database_name)
    assert own_server.port == port  # the pages' address

    # Each page reconnects by itself (the ws extension retries with a backoff) and asks for
    # the table again: the hand at the version the database holds.
    for page, opened in zip(pages, page_opens, strict=True):
        page.wait_for_function(
            "n => window.__okeyLog.filter(e => e[0] === 'open').length > n",
            arg=opened,
            timeout=60_000,
        )
        page.wait_for_function(  # a board sent on the new socket
            "() => { const o = window.__okeyLog.map(e => e[0]).lastIndexOf('open');"
            " return window.__okeyLog.slice(o).some(e => e[0] === 'board'); }",
            timeout=15_000,
        )
        assert ui.version(page) == 2, ui.state(page)
        assert ui.state(page)["turn"] == "1"

    # The hand goes on: seat 1's discard after the restart is taken and shown on both pages,
    # the bots play, and both players go on playing.
    assert ui.simple_turn(seat[1])
    for page in pages:
        ui.wait_version(page, 3)
    for _ in range(3):
        ui.wait_version(seat[0], ui.version(seat[0]))
        seat[0].wait_for_function(
            "() => { const d = document.querySelector('#table-live').dataset;"
            " return d.turn === d.seat || d.phase === 'over'; }",
            timeout=30_000,
        )
        if ui.state(seat[0])["phase"] == "over":
            break
        play_turn(seat[0])
        seat[1].wait_for_function(
            "() => { const d = document.querySelector('#table-live').dataset;"
            " return d.turn === d.seat || d.phase === 'over'; }",
            timeout=30_000,
        )
        if ui.state(seat[1])["phase"] == "over":
            break
        play_turn(seat[1])

    final = settled(hand.pk)
    assert final.version > 3
    for page in pages:
        ui.wait_version(page, final.version)
        assert page.okey_errors == [], page.okey_errors

    # No acknowledged move is missing, every Move row of the players is one the pages sent,
    # the log replays to the stored hand, and every tile is still there.
    acked: set[str] = set()
    sent: set[str] = set()
    for page in pages:
        log = socket_log(page)
        acked |= acknowledged(log)
        sent |= {entry[1] for entry in log if entry[0] == "sent"}
    logged = set(
        Move.objects.filter(hand=final, client_move_id__in=sent).values_list(
            "client_move_id", flat=True
        )
    )
    assert acked, "the pages saw no move acknowledged"
    assert acked <= logged, f"acknowledged but not in the log: {sorted(acked - logged)}"
    human_moves = Move.objects.filter(hand=final, seat__in=(0, 1)).count()
    assert human_moves == len(logged)
    assert audit.verify_hand(final) == []
    assert engine.Hand.from_state(final.state).every_tile() == Counter(physical_tiles())
    assert errors + own_server.errors() == []


async def test_after_redis_loses_its_groups_the_layer_rejoins_them_and_tells_its_sockets(
    redis_layer: Any,
) -> None:
    """A socket of this process waits in its group; Redis then restarts without persistence
    (its group is gone, the connection under the layer's pop drops). The layer's reader puts
    the socket back in its group as soon as Redis answers, and sends it ``layer.resumed`` so
    that it sends its viewer the table as it is now (whatever was published meanwhile was
    lost); the next group message reaches it again."""
    from django.conf import settings

    layer = type(redis_layer)(**dict(settings.CHANNEL_LAYERS["default"].get("CONFIG", {})))
    group = "table-faults-test"
    try:
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        waiting = asyncio.ensure_future(layer.receive(channel))
        await asyncio.sleep(0.2)  # the layer's reader waits in Redis for the process's messages

        # Redis restarts: the group is gone and the connections drop, the pop's among them.
        redis = layer.connection(layer.consistent_hash(group))
        await redis.delete(layer._group_key(group))
        await redis.connection_pool.disconnect(inuse_connections=True)

        assert await asyncio.wait_for(waiting, 10) == {"type": "layer.resumed"}
        await layer.group_send(group, {"type": "table.changed", "table": 1})
        assert await asyncio.wait_for(layer.receive(channel), 5) == {
            "type": "table.changed",
            "table": 1,
        }
        await layer.group_discard(group, channel)
    finally:
        await asyncio.wait_for(layer.flush(), 15)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.players("duz", seed=43)
async def test_a_table_socket_told_the_layer_resumed_sends_the_table_as_it_is_now(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """A move committed while Redis was down (its message lost): the socket shows it once the
    layer says Redis answers again."""
    from channels.db import database_sync_to_async
    from channels.layers import get_channel_layer

    from games.models import Presence
    from tests.sockets import drain, version_of

    table_id, starter = players.table_id, players.users[0]
    ws = await table_socket(table_id, players.cookies[1], first_frame=False)
    first = [await ws.receive_from()]  # the table, on connect
    assert version_of((first + await drain(ws))[-1]) == 0

    def lost_move() -> None:
        hand = Hand.objects.get(match__table_id=table_id)
        tile = engine.format_tile(hand.engine_hand().racks[0][0])
        monkeypatch.setattr(events, "to_table", lambda *args, **kwargs: None)
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=starter)
        monkeypatch.undo()

    await database_sync_to_async(lost_move)()
    assert await drain(ws) == []  # nothing told this socket
    channel = await database_sync_to_async(
        lambda: Presence.objects.get(seat__table_id=table_id).channel_name
    )()
    await get_channel_layer().send(channel, {"type": "layer.resumed"})
    frames = [await ws.receive_from()]
    frames += await drain(ws, timeout=1.0)
    assert version_of(frames[-1]) == 1, frames


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.players("duz", seed=44)
async def test_a_move_while_the_database_is_down_is_refused_in_words_and_answers_the_move(
    monkeypatch: pytest.MonkeyPatch, players: Players, table_socket: TableSockets
) -> None:
    """PostgreSQL restarting: the move's query fails. The mover is told, with the move's id
    (so the page knows that move was answered), that the server could not reach its database;
    the socket stays open and the same move goes through once the database is back."""
    from django.db import OperationalError

    from tests.sockets import drain, version_of

    hand_id = players.hand.pk
    tile = engine.format_tile(players.hand.engine_hand().racks[0][0])
    ws = await table_socket(players.table_id, players.cookies[0], first_frame=False)
    await ws.receive_from()  # the table, on connect
    await drain(ws)
    # The socket carries a move out through actions.perform (games/actions/requests.py).
    from games.actions import requests

    submit = requests.submit

    def down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(requests, "submit", down)
    move = {
        "type": "move",
        "hand": hand_id,
        "move": {"do": "discard", "tile": tile},
        "expected_version": 0,
        "client_move_id": "down-1",
    }
    await ws.send_json_to(move)
    frames = [await ws.receive_from()]
    frames += await drain(ws, timeout=0.5)
    assert len(frames) == 1, frames
    assert 'data-error="unavailable"' in frames[0] and 'data-move-id="down-1"' in frames[0]
    assert "database" in frames[0]

    monkeypatch.setattr(requests, "submit", submit)
    await ws.send_json_to({**move, "client_move_id": "down-2"})
    frames = [await ws.receive_from()]
    frames += await drain(ws, timeout=1.0)
    assert version_of(frames[-1]) == 1, frames
