"""A table socket on the Redis layer survives a quiet spell and still gets the next move.

channels-redis waits for messages with a blocking pop (BZPOPMIN, up to 5 s). redis-py 8 gives
every socket a 5 s read timeout by default, so after 5 quiet seconds the pop raised
TimeoutError, the consumer died and daphne closed the WebSocket (1011)
(django/channels_redis#422, redis/redis-py#4091). The settings give the layer's Redis sockets a
longer timeout; this test runs the real thing: Chromium on a table page served by daphne, the
test process playing a move through the Redis layer after 12 idle seconds.

Skipped without REDIS_URL (loudly); failed instead under CI=true.
"""

import re
import time
from typing import Any

from tests.live_daphne import DaphneServer, in_thread

IDLE_SECONDS = 12
# The move must reach the socket through the layer well before the socket's own 2 s database
# check could matter much; 3 s leaves room for a slow machine.
DELIVERY_SECONDS = 3.0


def start_bot_match() -> tuple[int, int]:
    """A table of four players (no move timer) with hand 1 dealt: (table id, hand version).
    Players, not bots, so that the server's clock leaves the hand alone: only the test moves."""
    from games import actions
    from games.models import Hand
    from tests.play import user_table

    table, _users = user_table("classic", {"timer": 0})
    match = actions.start_match(table, by=actions.SYSTEM)
    hand = Hand.objects.get(match=match, status=Hand.Status.PLAYING)
    return table.pk, hand.version


def play_one_move(table_id: int) -> int:
    """Play one legal move for the seat on turn, as its player; returns the new version."""
    from games import actions
    from games.engine.selfplay import candidate_moves
    from games.models import Hand, Seat

    hand = Hand.objects.get(match__table_id=table_id, status=Hand.Status.PLAYING)
    eng = hand.engine_hand()
    seat = eng.turn
    player = Seat.objects.get(table_id=table_id, position=seat).user
    for move in candidate_moves(eng.view(seat)):
        if hand.engine_hand().play(seat, move).ok:  # tried on a copy first
            played = actions.play(hand, seat, move, by=player, expected_version=hand.version)
            return int(played.version)
    raise AssertionError("no legal move")


def version_of(frame: str) -> int | None:
    found = re.search(r'id="table-live"[^>]*data-version="(\d+)"', frame)
    return int(found.group(1)) if found else None


def test_an_idle_table_socket_still_gets_the_next_move(
    redis_layer: None, daphne_live_server: DaphneServer, chromium_page: Any
) -> None:
    page = chromium_page
    table_id, version = in_thread(start_bot_match)
    sockets: list[Any] = []
    frames: list[tuple[float, Any, str]] = []  # (when, socket, payload)
    closed: list[Any] = []

    def on_socket(ws: Any) -> None:
        sockets.append(ws)
        ws.on("framereceived", lambda payload: frames.append((time.monotonic(), ws, payload)))
        ws.on("close", lambda _ws: closed.append(ws))

    page.on("websocket", on_socket)
    page.goto(f"{daphne_live_server.url}/tables/{table_id}/")

    # The socket opens and sends the table as it is.
    page.wait_for_function("() => document.querySelector('#table-live') !== null")
    deadline = time.monotonic() + 10
    while not frames and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert frames, "the table socket sent nothing on connect"
    socket = frames[0][1]
    assert socket.url == f"{daphne_live_server.ws_url}/ws/tables/{table_id}/"
    assert version_of(frames[0][2]) == version

    page.wait_for_timeout(IDLE_SECONDS * 1000)  # quiet: longer than the layer's 5 s pop

    new_version = in_thread(play_one_move, table_id)
    moved_at = time.monotonic()
    assert new_version == version + 1

    def delivered() -> list[tuple[float, Any, str]]:
        return [f for f in frames if f[1] is socket and version_of(f[2]) == new_version]

    while not delivered() and time.monotonic() < moved_at + DELIVERY_SECONDS:
        page.wait_for_timeout(50)
    server_log = daphne_live_server.output_of_this_test()
    assert delivered(), (
        f"the socket opened {IDLE_SECONDS} s before the move got no frame at version "
        f"{new_version} within {DELIVERY_SECONDS} s; sockets opened: {len(sockets)}, "
        f"closed: {len(closed)}; server output:\n{server_log}"
    )
    assert delivered()[0][0] - moved_at <= DELIVERY_SECONDS
    # The same socket all along: it was never dropped and reopened.
    assert [s.url for s in sockets] == [socket.url], server_log
    assert not closed and not socket.is_closed(), server_log
    assert not daphne_live_server.errors(), server_log
