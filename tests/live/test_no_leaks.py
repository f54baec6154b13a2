"""Every frame, every page: whole hands of every variant played through the real stack (a daphne
process, real WebSocket clients, real HTTP fetches with session cookies), with everything each
observer receives recorded and checked against the hand's true state at its version.

The observers of each table: its four seated players; a signed-in spectator; an anonymous
visitor; a player of an earlier match at the table, who has left; and one of the four, whom
staff take off their seat mid-hand (``actions.remove_player``) and who keeps their socket and
goes on fetching the hand's replay. Each seat plays the engine's bot's move chosen from its own
view, sent over its own socket; the removed player's seat is played by the server's clock. A
seat hides the hand from spectators at the start of one hand, midway through two, and never in
the last.

Until the hand ends, no text contains another seat's tile, a pile tile, or the seed
(``tests/live/leak_check.py`` says exactly how it is checked); a spectator of a hidden hand sees no
board. A check that could never fail proves nothing: every observer must have received boards
at many versions, their own rack must have been compared, and the checker must flag leaks made
from the hand's own data.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from games import actions, engine
from games.engine.bots import choose_moves
from games.models import Hand, Participant, Seat, Table
from tests.live.leak_check import Observer, Truth, check, drawn_rack_frame, parse, truth_of
from tests.live_daphne import DaphneServer
from tests.play import seed_of, store_random_hand, user_table
from tests.sockets import cookie_for
from tests.users import make_user

pytestmark = pytest.mark.timeout(240)

# variant -> (the version at which seat 0 hides the hand, None: never; the version at which
# staff take seat 3's player off it)
PLAN: dict[str, tuple[int | None, int]] = {
    "classic": (24, 10),
    "duz": (None, 14),
    "okey51": (0, 12),
    "gobek17": (30, 16),
    "okey101": (20, 14),
}
FETCH_EVERY = 16  # versions between two rounds of page fetches by every observer
WAIT = 20.0
VERSION = re.compile(r'data-version="(\d+)"')


# ----------------------------------------------------------------------------- clients
@dataclass
class Record:
    observer: str
    source: str  # "ws", or the URL fetched
    text: str
    fetched_at: int | None  # the hand's version when fetched (None: a socket frame)
    status: int = 200
    about_the_hand: bool = True  # False: a page of the earlier match (its own hand, over)


class Socket:
    """A table socket whose every frame is kept, read by a thread of its own; the versions its
    boards showed are waited for on a condition, not by polling."""

    def __init__(self, server: DaphneServer, table_id: int, cookie: str) -> None:
        self.frames: list[str] = []
        self.seen: set[int] = set()  # the versions of the boards among the frames
        self.arrived = threading.Condition()
        self.close_code: int | None = None
        self.ws = connect(
            f"{server.ws_url}/ws/tables/{table_id}/",
            origin=server.url,  # type: ignore[arg-type]
            additional_headers={"Cookie": cookie} if cookie else None,
            proxy=None,
            max_size=None,
            open_timeout=15,
            legacy=True,  # a plain connection, closed by close()
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for message in self.ws:
                text = message if isinstance(message, str) else message.decode()
                with self.arrived:
                    self.frames.append(text)
                    self.seen.update(int(v) for v in VERSION.findall(text))
                    self.arrived.notify_all()
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code

    def send(self, data: dict[str, Any]) -> None:
        self.ws.send(json.dumps(data))

    def wait_until(self, shown: Any, what: str, timeout: float = WAIT) -> None:
        """Until ``shown(versions seen)`` holds."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: shown(self.seen), timeout):
                raise AssertionError(f"no frame {what}; got {sorted(self.seen)[-10:]}")

    def wait_version(self, version: int, timeout: float = WAIT) -> None:
        self.wait_until(lambda seen: version in seen, f"at version {version}", timeout)

    def close(self) -> None:
        self.ws.close()
        self.thread.join(timeout=10)


class Fetcher:
    """Pages fetched as a browser would, over one kept-alive connection (each request with
    its observer's cookie)."""

    def __init__(self, server: DaphneServer) -> None:
        self.server = server
        self.connection: http.client.HTTPConnection | None = None

    def fetch(self, path: str, cookie: str, fragment: bool = False) -> tuple[int, str]:
        headers = {"Cookie": cookie} if cookie else {}
        if fragment:
            headers["HX-Request"] = "true"
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    self.server.host, self.server.port, timeout=15
                )
            try:
                self.connection.request("GET", path, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read().decode()
            except (http.client.HTTPException, ConnectionError):
                self.close()  # the server closed a kept connection: once more, on a new one
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


# ----------------------------------------------------------------------------- the table
@dataclass
class Viewer:
    observer: Observer
    cookie: str
    socket: Socket | None = None


@dataclass
class Game:
    server: DaphneServer
    table: Table
    users: list[Any]
    hand_id: int
    match_id: int
    earlier_hand_id: int
    viewers: list[Viewer]
    fetcher: Fetcher
    records: list[Record] = field(default_factory=list)
    hidden_from: int | None = None
    left_at: int | None = None

    def hand(self) -> Hand:
        return Hand.objects.get(pk=self.hand_id)

    def fetch_round(self, version: int, everything: bool) -> None:
        """Every observer fetches the table, the hand's replay at its latest step, and the
        fragments those pages ask for; with ``everything``, the other pages too (the replay's
        start among them: its board is the deal, the same each time)."""
        t, h, m = self.table.pk, self.hand_id, self.match_id
        paths = [f"/tables/{t}/", f"/hands/{h}/step/{version}/"]
        if everything:
            paths += [
                f"/hands/{h}/",
                "/",
                f"/tables/{t}/controls/",
                f"/matches/{m}/",
                f"/matches/{m}.json",
                f"/hands/{h}/verify/",
                f"/hands/{h}/scenario.json",
                f"/hands/{self.earlier_hand_id}/",
            ]
        for viewer in self.viewers:
            name = viewer.observer.name
            for path in paths:
                fragment = "/step/" in path
                status, body = self.fetcher.fetch(path, viewer.cookie, fragment)
                about = not path.startswith(f"/hands/{self.earlier_hand_id}/")
                self.records.append(Record(name, path, body, version, status, about))
                if not about or status != 200:
                    continue
                # The fragments the page would load (htmx's hx-get): a replay's neighbouring
                # step (its Previous button, or Next at the deal: its other buttons ask for
                # steps that other rounds fetch), the first three of another page.
                urls = re.findall(r'hx-get="([^"]+)"', body)[:3]
                if "/hands/" in path:
                    urls = re.findall(r'hx-get="([^"]+)" data-replay="(?:prev|next)"', body)[:1]
                for url in urls:
                    url = url.replace("&amp;", "&")
                    status, part = self.fetcher.fetch(url, viewer.cookie, fragment=True)
                    self.records.append(Record(name, url, part, version, status))


def setup_game(server: DaphneServer, variant: str, n: int) -> Game:
    table, users = user_table(variant, {"timer": 0})
    spectator = make_user(f"{variant}-watcher-{table.pk}")
    former = make_user(f"{variant}-former-{table.pk}")
    # An earlier match at this table, played by ``former`` at seat 0 (who has left since).
    earlier = store_random_hand(table, seed_of(700 + n), 700 + n)
    for p in range(table.players):
        Participant.objects.create(
            hand=earlier,
            position=p,
            user=former if p == 0 else None,
            bot_level="" if p == 0 else "random",
        )
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(800 + n))
    hand = match.hands.get()
    viewers = [Viewer(Observer(f"seat {p}", seat=p), cookie_for(u)) for p, u in enumerate(users)]
    viewers += [
        Viewer(Observer("spectator"), cookie_for(spectator)),
        Viewer(Observer("anonymous"), ""),
        Viewer(Observer("former player"), cookie_for(former)),
    ]
    game = Game(server, table, users, hand.pk, match.pk, earlier.pk, viewers, Fetcher(server))
    for viewer in viewers:
        viewer.socket = Socket(server, table.pk, viewer.cookie)
    for viewer in viewers:
        assert viewer.socket is not None
        viewer.socket.wait_version(0)
    return game


def bot_move(hand: Hand, seat: int, rng: random.Random) -> dict[str, Any]:
    """The engine's bot's move for ``seat``, chosen from that seat's own view."""
    for move in choose_moves(hand.view_for(seat), "strong", rng):
        if engine.Hand.from_state(hand.state).play(seat, move).ok:
            return move
    raise AssertionError(f"the bot found no move for seat {seat} at {hand.version}")


def wait_past(game: Game, version: int) -> Hand:
    """The hand once it has moved past ``version``: seat 0's socket (never removed) is told of
    every change after it commits."""
    socket = game.viewers[0].socket
    assert socket is not None
    socket.wait_until(lambda seen: max(seen) > version, f"past version {version}")
    return game.hand()


def play_hand(game: Game, variant: str, staff: Any) -> None:
    hide_at, remove_at = PLAN[variant]
    removed = 3
    rng = random.Random(variant)
    hand = game.hand()
    last_round = -FETCH_EVERY
    while hand.status == Hand.Status.PLAYING:
        v = hand.version
        # While a player is on turn the version holds still (the clock plays only the seat of
        # the removed player): the pages fetched then show that version.
        users_turn = hand.turn != removed or game.left_at is None
        if hand.turn != removed and v >= remove_at and game.left_at is None:
            actions.remove_player(Seat.objects.get(table=game.table, position=removed), by=staff)
            row = Participant.objects.get(hand_id=game.hand_id, position=removed)
            assert row.left_at == v, (row.left_at, v)
            game.left_at = v
            game.viewers[removed].observer.left_at = v
            game.fetch_round(v, everything=True)
            last_round = v
        if users_turn and hide_at is not None and v >= hide_at and game.hidden_from is None:
            socket = game.viewers[0].socket
            assert socket is not None
            socket.send({"type": "hide"})
            deadline = time.monotonic() + WAIT
            while not game.hand().hidden:
                assert time.monotonic() < deadline, "the hand was not hidden"
                time.sleep(0.01)
            assert game.hand().version == v
            game.hidden_from = v
            game.fetch_round(v, everything=False)
            last_round = v
        if users_turn and v - last_round >= FETCH_EVERY:
            game.fetch_round(v, everything=(v // FETCH_EVERY) % 3 == 0)
            last_round = v
        if hand.turn == removed and game.left_at is not None:
            hand = wait_past(game, v)  # the server's clock plays the seat now
            continue
        socket = game.viewers[hand.turn].socket
        assert socket is not None
        move = bot_move(hand, hand.turn, rng)
        socket.send(
            {
                "type": "move",
                "hand": game.hand_id,
                "move": move,
                "expected_version": v,
                "client_move_id": uuid.uuid4().hex,
            }
        )
        hand = wait_past(game, v)
    assert game.left_at is not None, "the hand ended before the removal"
    final = hand.version
    for viewer in game.viewers:
        assert viewer.socket is not None
        viewer.socket.wait_version(final)
    game.fetch_round(final, everything=False)  # over: everything is public now
    for viewer in game.viewers:
        assert viewer.socket is not None
        viewer.socket.close()
        name = viewer.observer.name
        game.records += [Record(name, "ws", f, None) for f in viewer.socket.frames]


# ----------------------------------------------------------------------------- checks
def check_records(game: Game, truth: Truth) -> None:
    problems = []
    boards: dict[str, set[int]] = {}
    own_racks: Counter[str] = Counter()
    public_or_veiled: Counter[str] = Counter()
    veiled: Counter[str] = Counter()
    observers = {v.observer.name: v.observer for v in game.viewers}
    for record in game.records:
        observer = observers[record.observer]
        if not record.about_the_hand:
            # A page of the earlier match: its hand is over and public; this hand's seed is not.
            if truth.seed.lower() in record.text.lower():
                problems.append(f"{record.observer} {record.source}: the seed")
            continue
        assert record.status < 500, (record.source, record.status, record.text[:500])
        report = check(record.text, observer, truth, record.fetched_at)
        problems += [f"{record.observer} {record.source}: {p}" for p in report.problems]
        if report.version is not None and report.version < truth.final:
            boards.setdefault(record.observer, set()).add(report.version)
        own_racks[record.observer] += report.own_rack_checked
        public_or_veiled[record.observer] += report.public_checked or report.veiled
        veiled[record.observer] += report.veiled
    assert not problems, "\n".join(problems[:30])

    # Sanity: each observer received boards at many versions, and the checks did compare.
    many = min(15, truth.final // 4)
    for name, observer in observers.items():
        frames = [r for r in game.records if r.observer == name and r.source == "ws"]
        pages = [r for r in game.records if r.observer == name and r.source != "ws"]
        assert frames and pages, name
        assert len(boards.get(name, ())) >= many, (name, sorted(boards.get(name, ())), many)
        assert public_or_veiled[name] >= many, (name, public_or_veiled[name])
        if observer.seat is not None:
            assert own_racks[name] >= (3 if observer.left_at is not None else many), name
        if observer.seat is None and truth.hidden_from is not None:
            assert veiled[name] >= 3, (name, veiled[name])
    removed = next(o for o in observers.values() if o.left_at is not None)
    assert veiled[removed.name] >= (3 if truth.hidden_from is not None else 0)

    # The removed player replays the hand up to their removal, and no further, while it lasts.
    left_at = removed.left_at
    assert left_at is not None
    after = [
        r
        for r in game.records
        if r.observer == removed.name
        and re.fullmatch(rf"/hands/{game.hand_id}/(step/\d+/)?", r.source)
        and r.fetched_at is not None
        and left_at < r.fetched_at < truth.final
    ]
    assert after, "the removed player fetched no replay after the removal"
    for r in after:
        replay = parse(r.text).replay
        if r.status == 200 and replay is not None:
            assert int(replay["data-last"]) == left_at, (r.source, replay)
            assert int(replay["data-step"]) <= left_at, (r.source, replay)
        else:
            assert r.status == 404 and f"/step/{r.fetched_at}/" in r.source, (r.source, r.status)


def check_the_checker(game: Game, truth: Truth) -> None:
    """The checker flags leaks built from this hand's own data, and passes the honest frame."""
    v = min(truth.final - 2, max(game.left_at or 0, 5) + 3)
    rack = truth.racks[v][1]
    frame = drawn_rack_frame(rack, v, truth.hand_id)
    assert not check(frame, Observer("seat 1", seat=1), truth, None).problems
    assert check(frame, Observer("seat 2", seat=2), truth, None).problems
    assert check(frame, Observer("spectator"), truth, None).problems
    # A removed player's own old seat, drawn after their removal.
    assert game.left_at is not None and game.left_at + 1 < truth.final
    late = drawn_rack_frame(truth.racks[game.left_at + 1][3], game.left_at + 1, truth.hand_id)
    assert check(late, Observer("removed", seat=3, left_at=game.left_at), truth, None).problems
    # Real frames and pages of seat 1's, with its rack, given to seat 2 or a spectator.
    for kind in ('id="rack-area"', 'class="replay-rack'):
        texts = [
            r.text
            for r in game.records
            if r.observer == "seat 1"
            and kind in r.text
            and (check(r.text, Observer("seat 1", seat=1), truth, r.fetched_at).own_rack_checked)
            and (r.fetched_at is None or r.fetched_at < truth.final)
        ]
        assert texts, kind
        for other in (Observer("seat 2", seat=2), Observer("spectator")):
            assert check(texts[len(texts) // 2], other, truth, None).problems, (kind, other)
    # A real frame of the spectator's, with a pile or rack tile, or the seed, slipped in.
    frames = [
        r.text
        for r in game.records
        if r.observer == "spectator" and r.source == "ws" and 'id="table-live"' in r.text
    ]
    for text in frames:
        report = check(text, Observer("spectator"), truth, None)
        if report.version is None or report.version >= truth.final - 1:
            continue
        u = report.version
        secret = sorted(truth.secret_codes(u, Observer("spectator")))
        assert secret, u
        for leak in (
            f'<span data-next="{secret[0]}"></span>',
            f'<p class="x"><span class="tile" data-tile="{secret[0]}"></span></p>',
            f"<p>{truth.seed}</p>",
            f"<p>{int(truth.seed, 16)}</p>",
        ):
            assert check(text + leak, Observer("spectator"), truth, None).problems, leak
        # Honest frames pass; a spectator's frame given to a hidden hand's spectator does not.
        assert not report.problems
        if not report.veiled and any(parse(text).tiles):
            hidden = Truth(**{**truth.__dict__, "hidden_from": u - 1})
            assert check(text, Observer("spectator"), hidden, None).problems
        break
    else:
        raise AssertionError("no spectator frame to test the checker on")


@pytest.mark.parametrize("variant", list(PLAN))
def test_no_observer_sees_a_hidden_tile_or_the_seed(
    daphne_live_server: DaphneServer, variant: str
) -> None:
    staff = make_user(f"staff-{variant}", staff=True)
    game = setup_game(daphne_live_server, variant, list(PLAN).index(variant))
    try:
        play_hand(game, variant, staff)
    finally:
        game.fetcher.close()
        for viewer in game.viewers:
            if viewer.socket is not None:
                viewer.socket.close()
    hand = game.hand()
    assert hand.status != Hand.Status.PLAYING
    truth = truth_of(hand)
    truth.hidden_from = game.hidden_from
    try:
        check_records(game, truth)
        check_the_checker(game, truth)
    finally:
        parse.cache_clear()  # its keys are this hand's pages: not kept for the next test
    assert not daphne_live_server.errors(), daphne_live_server.errors()
