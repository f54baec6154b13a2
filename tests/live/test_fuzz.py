"""Fuzzed input: Hypothesis-generated socket messages and HTTP posts, every one of which the
site must refuse. Malformed and deeply nested JSON, unknown and missing types, wrong types,
huge and negative numbers, tiles not on the rack, moves out of turn and from a spectator,
stale versions and oversized payloads: each gets a clear refusal (never a 500, never an
uncaught exception in the log), the hand's state and version stay as they were, and the
sockets stay open: after the fuzzing, a real move is accepted and reaches everyone."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection, connections
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games import actions, chat, engine, limits, protocol
from games.engine.hand import ACTIONS
from games.engine.tiles import NAMES, parse_tile
from games.models import ChatMessage, ChatMute, Hand, Move
from tests.play import seed_of, user_table
from tests.sockets import cookie_for, socket
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)

KNOWN_TYPES = ("refresh", "move", "arrange", "ready", "rematch", "hide", "chat", "mute", "unmute")
REFUSAL = re.compile(r'<p id="(?:move-error|lobby-status)"[^>]*data-error="([^"]*)"[^>]*>([^<]*)<')
VERSION = re.compile(r'data-version="(\d+)"')
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same inputs in every run, so that a failure can be run again
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ----------------------------------------------------------------------------- strategies
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
# Numbers no id or version can be, and things that are not numbers.
NUMBERS = st.one_of(
    st.integers(min_value=2**62, max_value=2**80),
    st.integers(max_value=-1),
    st.sampled_from([0, 999999, 10**30, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=True),
    st.booleans(),
    st.text(max_size=6),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


def _names_a_tile(text: Any) -> str | None:
    """The tile ``text`` names, as the engine reads it (None: no tile)."""
    if not isinstance(text, str):
        return None
    try:
        return engine.format_tile(parse_tile(text))
    except Exception:
        return None


def nested(depth: int, opener: str) -> str:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return '{"type": "move", "hand": 1, "move": ' + opener * depth + "0" + closer * depth + "}"


def raw_frames() -> st.SearchStrategy[str | bytes]:
    """Frames that are not a JSON object with a known type, or too large to read."""
    too_long = st.integers(limits.MAX_MESSAGE_LENGTH + 1, 3 * limits.MAX_MESSAGE_LENGTH)
    return st.one_of(
        st.text(max_size=60).filter(lambda t: not t.strip().startswith("{")),  # not an object
        st.builds(lambda b: '{"type": "mo' + b, st.text(max_size=20)),  # cut short
        st.builds(nested, st.integers(900, 4000), st.sampled_from(["[", '{"a":'])),
        st.builds(lambda n: "x" * n, too_long),
        st.builds(lambda n: json.dumps({"type": "chat", "text": "y" * n}), too_long),
        st.builds(json.dumps, JUNK.filter(lambda j: not isinstance(j, dict))),
        st.builds(  # an object without a type, or of a type nobody knows
            json.dumps,
            st.dictionaries(st.text(max_size=6), JUNK, max_size=3).filter(
                lambda d: d.get("type") not in KNOWN_TYPES
            ),
        ),
        st.binary(max_size=40),  # the protocol is text
    )


def messages(
    hand_id: int, foreign_tiles: list[str], own_id: int, spectator: bool
) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects of the protocol's types with something wrong in each (for ``spectator``,
    also what only a seat may ask)."""
    tiles = (st.sampled_from(foreign_tiles) | st.text(max_size=4) | JUNK).filter(
        lambda t: not _names_a_tile(t) or _names_a_tile(t) in foreign_tiles
    )
    hands = st.just(hand_id) | NUMBERS
    move = st.one_of(
        st.fixed_dictionaries(
            {"do": st.sampled_from(ACTIONS)},
            optional={
                "tile": tiles,
                "tiles": st.lists(tiles, max_size=4),
                "melds": st.lists(st.lists(tiles, max_size=4), max_size=3) | JUNK,
                "pairs": st.lists(st.lists(tiles, max_size=3), max_size=3) | JUNK,
                "meld": NUMBERS,
                "onto": NUMBERS,
                "end": JUNK,
                "groups": JUNK,
                "layout": st.lists(tiles, max_size=20) | JUNK,
            },
        ),
        st.fixed_dictionaries({"do": st.text(max_size=8).filter(lambda d: d not in ACTIONS)}),
        JUNK,
    )
    # A version the hand is not at (it is at 0), or none.
    versions = st.none() | st.integers(1, 60) | NUMBERS.filter(lambda v: v != 0 or v is False)
    move_ids = st.none() | st.text(max_size=80) | JUNK
    chat_text = st.one_of(
        st.builds(lambda n: "z" * n, st.integers(chat.MAX_LENGTH + 1, 2 * chat.MAX_TYPED)),
        st.sampled_from(["", "   ", "\n\t", "\u200b\u202e"]),
        JUNK.filter(lambda j: bool(j) and not isinstance(j, str)),
    )
    someone = NUMBERS | st.just(own_id)  # nobody who exists, or oneself
    options = [
        st.fixed_dictionaries(
            {"type": st.just("move"), "hand": hands, "move": move},
            optional={"expected_version": versions, "client_move_id": move_ids},
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("arrange"),
                "hand": hands,
                # A rack has 32 slots: of those, tiles that are not all the rack's.
                "layout": st.lists(tiles | st.none(), min_size=32, max_size=32)
                | st.lists(tiles | st.none(), max_size=40)
                | JUNK,
            }
        ),
        st.fixed_dictionaries({"type": st.sampled_from(["ready", "rematch"])}),
        st.fixed_dictionaries({"type": st.just("chat"), "text": chat_text}),
        st.fixed_dictionaries(
            {
                "type": st.just("chat"),
                "canned": st.text(max_size=10).filter(lambda k: k not in chat.CANNED) | JUNK,
            }
        ),
        st.fixed_dictionaries(
            {"type": st.just("chat"), "text": st.just("hi"), "canned": st.just("hello")}
        ),
        st.fixed_dictionaries({"type": st.sampled_from(["mute", "unmute"]), "user": someone}),
    ]
    if spectator:
        options.append(st.fixed_dictionaries({"type": st.just("hide")}))
    return st.one_of(*options)


# ----------------------------------------------------------------------------- a loop
class Loop:
    """An event loop in its own thread, so that the sockets stay open across Hypothesis's
    examples (which run one by one in the test's thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, make: Callable[[], Coroutine[Any, Any, Any]], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(timeout)

    def close(self) -> None:
        # The reads' worker threads end, and their database connections with them
        # (PostgreSQL will not drop a test database in use).
        self.run(self.loop.shutdown_default_executor)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


async def refusal_on(ws: WebsocketCommunicator) -> tuple[str, str]:
    """The next refusal the socket receives (frames before it, the table's, are skipped)."""
    while True:
        frame = await ws.receive_from()
        found = REFUSAL.search(frame)
        if found:
            return found.group(1), found.group(2)


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [(r.name, r.getMessage(), r.exc_info) for r in errors]


def hand_as_it_was(hand_id: int, before: tuple[Any, ...]) -> None:
    hand = Hand.objects.get(pk=hand_id)
    assert (hand.version, hand.state, hand.status, hand.hidden) == before
    assert not Move.objects.filter(hand_id=hand_id).exists()
    assert not ChatMessage.objects.exists() and not ChatMute.objects.exists()


# ----------------------------------------------------------------------------- sockets
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["duz", "okey51"])  # a closed and an open table
@pytest.mark.usefixtures("unmetered_sockets")
def test_fuzzed_socket_messages_are_refused_and_the_sockets_stay_usable(
    variant: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    table, users = user_table(variant)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(71))
    hand = match.hands.get()
    eng = hand.engine_hand()
    turn = eng.turn
    other = (turn + 1) % table.players
    rack = {engine.format_tile(t) for t in eng.racks[turn]}
    foreign = [name for name in NAMES if name not in rack]
    before = (hand.version, hand.state, hand.status, hand.hidden)
    cookies = {turn: cookie_for(users[turn]), other: cookie_for(users[other])}
    connection.close()  # the sockets' threads use their own connections

    loop = Loop()
    sockets: dict[str, WebsocketCommunicator] = {}

    async def open_all() -> None:
        for name, cookie in (("turn", cookies[turn]), ("other", cookies[other]), ("watch", "")):
            ws = socket(table.pk, cookie)
            connected, _ = await ws.connect()
            assert connected
            sockets[name] = ws

    loop.run(open_all)
    tried: dict[str, int] = {}
    try:
        by_socket = {
            "turn": messages(hand.pk, foreign, users[turn].pk, spectator=False),
            "other": messages(hand.pk, list(NAMES), users[other].pk, spectator=False),
            "watch": messages(hand.pk, list(NAMES), -1, spectator=True),
        }

        @FUZZ
        @given(data=st.data())
        def send_one(data: st.DataObject) -> None:
            who = data.draw(st.sampled_from(sorted(sockets)), label="socket")
            frame = data.draw(
                raw_frames() | by_socket[who].map(json.dumps) | by_socket[who], label="frame"
            )
            if isinstance(frame, dict):  # an object with an extra field nobody reads
                frame = json.dumps({**frame, data.draw(st.text(max_size=5)): 1})
            ws = sockets[who]

            async def exchange() -> tuple[str, str]:
                # As the server hands a frame on (send_to refuses an empty one).
                key = "bytes" if isinstance(frame, bytes) else "text"
                await ws.send_input({"type": "websocket.receive", key: frame})
                return await refusal_on(ws)

            code, text = loop.run(exchange)
            assert code and code != "server_error", (who, frame)
            assert text.strip(), (who, frame)
            tried[code] = tried.get(code, 0) + 1

        send_one()
        hand_as_it_was(hand.pk, before)
        no_errors_logged(caplog)
        assert len(tried) >= 10, tried  # the refusals were of many kinds

        # Every socket still works: a real move by the seat on turn reaches all three.
        tile = engine.format_tile(eng.racks[turn][0])
        move = {"do": "discard", "tile": tile}

        async def play_and_see() -> list[int]:
            await sockets["turn"].send_to(
                text_data=json.dumps(
                    {"type": "move", "hand": hand.pk, "move": move, "expected_version": 0}
                )
            )
            seen = []
            for ws in sockets.values():
                version = 0
                while version < 1:
                    frame = await ws.receive_from()
                    found = VERSION.search(frame)
                    version = int(found.group(1)) if found else version
                seen.append(version)
            return seen

        assert loop.run(play_and_see) == [1, 1, 1]
        assert Hand.objects.get(pk=hand.pk).version == 1
    finally:

        async def close_all() -> None:
            for ws in sockets.values():
                await ws.disconnect()
            # The sockets' database thread lets go of its connection (PostgreSQL will not
            # drop a test database in use).
            await database_sync_to_async(connections.close_all)()

        loop.run(close_all)
        loop.close()
    no_errors_logged(caplog)


# ----------------------------------------------------------------------------- HTTP
@pytest.mark.slow
@pytest.mark.parametrize("variant", ["duz", "okey51"])
def test_fuzzed_http_posts_are_refused_without_a_500(
    variant: str, caplog: pytest.LogCaptureFixture, signed_in: SignedIn
) -> None:
    caplog.set_level(logging.WARNING)
    table, users = user_table(variant)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(72))
    hand = match.hands.get()
    eng = hand.engine_hand()
    turn = eng.turn
    rack = {engine.format_tile(t) for t in eng.racks[turn]}
    foreign = [name for name in NAMES if name not in rack]
    before = (hand.version, hand.state, hand.status, hand.hidden)
    clients = {
        name: signed_in(user, raise_request_exception=False)
        for name, user in (("turn", users[turn]), ("other", users[(turn + 1) % 4]), ("anon", None))
    }
    move_url = reverse("table_move", args=[table.pk])
    chat_url = reverse("table_chat", args=[table.pk])
    tried: dict[int, int] = {}

    @FUZZ
    @given(data=st.data())
    def post_one(data: st.DataObject) -> None:
        who = data.draw(st.sampled_from(sorted(clients)), label="client")
        own = users[turn].pk if who == "turn" else -1
        body = messages(hand.pk, foreign if who == "turn" else list(NAMES), own, who == "anon")
        payload = data.draw(
            raw_frames().filter(lambda f: isinstance(f, str)) | body.map(json.dumps),
            label="payload",
        )
        url = data.draw(st.sampled_from([move_url, chat_url]), label="url")
        form = {"payload": payload}
        if data.draw(st.booleans(), label="as a form") and url == chat_url:
            form = {"text": payload, "canned": "nope"}  # text and a phrase: never both
        response = clients[who].post(url, form)
        if response.status_code == 400:  # a character nobody types: refused before the view
            assert any(protocol.unreadable(v) for v in form.values()), (who, url, form)
            tried[400] = tried.get(400, 0) + 1
            return
        assert response.status_code in (200, 403), (who, url, form, response.status_code)
        found = REFUSAL.search(response.content.decode())
        assert found and found.group(1) != "server_error", (who, url, form)
        assert found.group(2).strip()
        tried[response.status_code] = tried.get(response.status_code, 0) + 1

    post_one()
    hand_as_it_was(hand.pk, before)
    no_errors_logged(caplog)
    # The same endpoints take a real move after all that.
    tile = engine.format_tile(eng.racks[turn][0])
    payload = {"type": "move", "hand": hand.pk, "move": {"do": "discard", "tile": tile}}
    response = clients["turn"].post(move_url, {"payload": json.dumps(payload)})
    assert response.status_code == 200 and 'data-version="1"' in response.content.decode()
