"""A client's messages: declared once (``games.protocol``), carried out once
(``actions.perform``), the same over the socket and over HTTP; and the seat messages they
carry: sit, leave (a bot takes the seat during a match) and "I'm back"."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import timezone, translation

from games import actions, protocol, reads
from games.catalog import ensure_variants
from games.errors import GameError
from games.models import Abandonment, Hand, Match, Participant, Seat, Table
from tests.play import play_hand, playing_table, seed_of, user_table
from tests.sockets import TableSockets, cookie_for, drain, live_frames
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db


# ----------------------------------------------------------------------------- the protocol
@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ({"type": "refresh"}, protocol.Refresh),
        ({"type": "move", "hand": 3, "move": {"do": "draw"}}, protocol.Move),
        (
            {"type": "move", "hand": 3, "move": {}, "expected_version": 2, "client_move_id": "a"},
            protocol.Move,
        ),
        ({"type": "move", "hand": 3, "move": {}, "expected_version": None}, protocol.Move),
        ({"type": "arrange", "hand": 3, "layout": ["r1", None]}, protocol.Arrange),
        ({"type": "sit"}, protocol.Sit),
        ({"type": "sit", "position": 2}, protocol.Sit),
        ({"type": "leave"}, protocol.Leave),
        ({"type": "back"}, protocol.Back),
        ({"type": "chat", "text": "hi"}, protocol.Chat),
        ({"type": "mute", "user": 4}, protocol.Mute),
    ],
)
def test_each_declared_message_is_read_as_its_kind(data: dict[str, Any], kind: type) -> None:
    message = protocol.parse(data)
    assert type(message) is kind
    for name, value in data.items():
        if name != "type":
            assert getattr(message, name) == value


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (None, "bad_move"),
        ([1, 2], "bad_move"),
        ({}, "bad_move"),
        ({"type": "fly"}, "bad_move"),
        ({"type": 3}, "bad_move"),
        ({"type": "move", "move": {"do": "draw"}}, "bad_move"),  # which hand?
        ({"type": "move", "hand": "3", "move": {}}, "bad_move"),
        ({"type": "move", "hand": True, "move": {}}, "bad_move"),
        ({"type": "move", "hand": 3, "move": "draw"}, "bad_move"),
        ({"type": "move", "hand": 3, "move": {}, "expected_version": "0"}, "bad_move"),
        ({"type": "move", "hand": 3, "move": {}, "client_move_id": "x" * 65}, "bad_move"),
        ({"type": "move", "hand": 3, "move": {}, "speed": "fast"}, "bad_move"),
        ({"type": "arrange", "hand": 3, "layout": "r1 r2"}, "bad_move"),
        ({"type": "sit", "position": "1"}, "bad_move"),
        ({"type": "leave", "now": True}, "bad_move"),
        ({"type": "chat", "text": 5}, "bad_chat"),
        ({"type": "mute", "user": "x"}, "bad_chat"),
        ({"type": "mute"}, "bad_chat"),
    ],
)
def test_anything_else_is_refused_with_its_familys_code(data: Any, code: str) -> None:
    with pytest.raises(GameError) as exc:
        protocol.parse(data)
    assert exc.value.code == code


def test_an_endpoint_takes_only_its_own_messages() -> None:
    with pytest.raises(GameError) as exc:
        protocol.parse({"type": "move", "hand": 1, "move": {}}, protocol.CHAT)
    assert exc.value.code == "bad_chat"
    with pytest.raises(GameError) as exc:
        protocol.parse({"type": "chat", "text": "hi"}, {"move", "ready"})
    assert exc.value.code == "bad_move"


def test_every_declared_message_is_carried_out() -> None:
    """A message the protocol declares and ``perform`` does not know would be refused as the
    server's mistake: every declared kind has its action."""
    source = open(actions.requests.__file__).read()  # noqa: SIM115, PTH123
    for cls in protocol.MESSAGES.values():
        assert f"case protocol.{cls.__name__}()" in source, cls


# ----------------------------------------------------------------------------- leave and back
def running(players: int = 2) -> tuple[Table, list[Any], Match]:
    """A running classic match: ``players`` people on the first seats, easy bots after."""
    ensure_variants()
    users = [make_user(f"p{i}") for i in range(players)]
    table = actions.open_table(variant="classic", user=users[0])
    for i, user in enumerate(users[1:], 1):
        actions.sit(table, user, i)
    for position in range(players, 4):
        actions.add_bot(table, position, "greedy", by=users[0])
    match = actions.start_match(table.pk, by=users[0], seed=seed_of(5))
    return Table.objects.get(pk=table.pk), users, match


def test_leaving_before_a_match_frees_the_seat() -> None:
    ensure_variants()
    host, guest = make_user("host"), make_user("guest")
    table = actions.open_table(variant="duz", user=host)
    actions.sit(table, guest, 1)
    actions.leave_table(table, guest)
    assert Seat.objects.get(table=table, position=1).is_empty
    assert not Abandonment.objects.exists()


def test_leaving_during_a_match_hands_the_seat_to_a_bot_and_records_it() -> None:
    table, (leaver, stayer), match = running()
    hand = match.hands.get()
    actions.leave_table(table, leaver)
    seat = Seat.objects.get(table=table, position=0)
    assert seat.user_id is None and seat.bot_level == "greedy" and not seat.away
    left = Abandonment.objects.get(user=leaver)
    assert left.match_id == match.pk and left.position == 0
    # The hand being played keeps them as its participant, up to where they left.
    assert Participant.objects.get(hand=hand, position=0).left_at == hand.version
    # The match goes on, and the leaver may sit (or play now) elsewhere at once.
    assert Match.objects.get(pk=match.pk).status == Match.Status.PLAYING
    assert actions.seats.live_elsewhere(leaver) is None
    other = actions.open_table(variant="duz", user=leaver)
    assert other.seats.get(position=0).user_id == leaver.pk


def test_the_log_names_a_player_who_left_where_they_left_and_their_moves_by_their_name() -> None:
    table, users, hand = playing_table("duz")
    rng = random.Random(4)
    hand = play_hand(hand, users, rng, moves=6)
    leaver = (hand.turn + 2) % 4  # the next two turns are people's
    name = users[leaver].username
    actions.leave_table(table, users[leaver])
    lines = reads.table_context(table.pk, users[hand.turn])["log"]
    assert lines[-1] == f"{name} left; a bot plays the seat."
    # Their moves before it keep their name: the seat's bot did not play them.
    assert any(line.startswith(f"{name} ") for line in lines[:-1])
    assert not any(line.startswith("Bot") for line in lines)
    hand = play_hand(hand, users, rng, moves=2)
    lines = reads.table_context(table.pk, users[hand.turn])["log"]
    assert lines[-3] == f"{name} left; a bot plays the seat."
    with translation.override("tr"):
        lines = reads.table_context(table.pk, users[hand.turn])["log"]
        assert lines[-3] == f"{name} ayrıldı; yerine bir bot oynuyor."
    # The next hand's log starts without it.
    Seat.objects.filter(table=table).update(left_hand=hand.pk + 1)
    assert not any("left" in line for line in reads.table_context(table.pk, users[0])["log"])


def test_a_player_who_leaves_between_hands_is_named_after_the_hand_just_over() -> None:
    table, users, match = running(4)
    leaver, stayer = users[0], users[1]
    hand = play_hand(match.hands.get(), users, random.Random(1))
    assert hand.status != Hand.Status.PLAYING
    assert Match.objects.get(pk=match.pk).status == Match.Status.PLAYING
    actions.leave_table(table, leaver)
    lines = reads.table_context(table.pk, stayer)["log"]
    assert lines[-1] == f"{leaver.username} left; a bot plays the seat.", lines


def test_when_the_last_person_leaves_the_match_ends_and_the_table_closes() -> None:
    table, (first, second), match = running()
    actions.leave_table(table, first)
    actions.leave_table(table, second)
    assert Match.objects.get(pk=match.pk).status == Match.Status.ABANDONED
    assert Table.objects.get(pk=table.pk).status == Table.Status.FINISHED
    assert not Hand.objects.filter(match=match, status=Hand.Status.PLAYING).exists()
    assert Abandonment.objects.count() == 2


def test_leaving_twice_or_without_a_seat_is_refused_and_changes_nothing() -> None:
    table, (leaver, _stayer), _match = running()
    actions.leave_table(table, leaver)
    with pytest.raises(GameError) as exc:
        actions.leave_table(table, leaver)
    assert exc.value.code == "not_seated"
    assert Abandonment.objects.count() == 1


def test_im_back_takes_the_seat_back_from_the_stand_in() -> None:
    table, (sleeper, _other), _match = running()
    Seat.objects.filter(table=table, position=0).update(away=True, timeouts_in_a_row=2)
    actions.come_back(table, sleeper)
    seat = Seat.objects.get(table=table, position=0)
    assert not seat.away and seat.timeouts_in_a_row == 0


# ----------------------------------------------------------------------------- one path for both
def test_the_http_fallback_carries_leave_and_back_as_the_socket_does(signed_in: SignedIn) -> None:
    table, (sleeper, _other), _match = running()
    client = signed_in(sleeper)
    url = reverse("table_move", args=[table.pk])
    Seat.objects.filter(table=table, position=0).update(away=True)
    response = client.post(url, {"payload": json.dumps({"type": "back"})})
    assert response.status_code == 200 and 'id="table-live"' in response.content.decode()
    assert not Seat.objects.get(table=table, position=0).away
    response = client.post(url, {"payload": json.dumps({"type": "back", "soon": 1})})
    assert 'data-error="bad_move"' in response.content.decode()
    response = client.post(url, {"payload": json.dumps({"type": "leave"})})
    assert response.status_code == 200
    assert Seat.objects.get(table=table, position=0).bot_level == "greedy"
    assert Abandonment.objects.filter(user=sleeper).exists()


@pytest.fixture
def a_free_seat(transactional_db: None) -> int:
    """A classic table that starts once full: its host on seat 0, seat 1 free, greedy bots on
    seats 2 and 3. Its id."""
    ensure_variants()
    host = make_user("host")
    table = actions.open_table(variant="classic", user=host, auto_start=True)
    for position in (2, 3):
        actions.add_bot(table, position, "greedy", by=host)
    return table.pk


@pytest.fixture
def watcher_cookie(transactional_db: None) -> str:
    return cookie_for(make_user("watcher"))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_a_spectators_socket_sits_and_its_next_move_is_the_seats(
    a_free_seat: int, watcher_cookie: str, table_socket: TableSockets
) -> None:
    """A spectator sits through their own socket: the socket becomes the seat's at once (the
    next frame has the rack, and a move is played, not refused as another's)."""
    table_id = a_free_seat
    ws = await table_socket(table_id, watcher_cookie)
    await drain(ws)
    await ws.send_to(text_data=json.dumps({"type": "sit", "position": 1}))
    frames = live_frames(await drain(ws, 1.0))
    assert frames and 'data-seat="1"' in frames[-1]
    assert any('id="rack-area"' in f and "data-tile" in f for f in await drain(ws, 0.5) + frames)

    def seat_and_hand() -> tuple[bool, int]:
        seat = Seat.objects.get(table_id=table_id, position=1)
        here = seat.presences.exists()
        return here, Hand.objects.get(match__table_id=table_id).pk

    here, hand_id = await database_sync_to_async(seat_and_hand)()
    assert here  # counted at the seat, not as watching
    arrange = {"type": "arrange", "hand": hand_id, "layout": []}
    await ws.send_to(text_data=json.dumps(arrange))
    codes = [f for f in await drain(ws) if 'id="move-error"' in f]
    # Refused for its layout (the seat's to arrange), never as another seat's.
    assert codes and 'data-error="bad_layout"' in codes[0]


def test_a_seat_its_player_left_is_free_to_a_person_between_hands_only() -> None:
    table, (leaver, _stayer), match = running()
    actions.leave_table(table, leaver)
    newcomer = make_user("newcomer")
    with pytest.raises(GameError) as exc:
        actions.sit(table, newcomer)  # mid-hand: the bot plays on
    assert exc.value.code == "match_in_progress"
    hand = match.hands.get()
    Hand.objects.filter(pk=hand.pk).update(status=Hand.Status.FINISHED)
    Match.objects.filter(pk=match.pk).update(next_hand_at=timezone.now())
    seat = actions.sit(table, newcomer)
    assert seat.position == 0 and seat.user_id == newcomer.pk
    assert not seat.bot_level and not seat.stand_in
    # The next hand is theirs to play; the seats nobody left stay closed.
    dealt = actions.deal_next_hand(match.pk, force=True)
    assert dealt is not None
    assert Participant.objects.get(hand=dealt, position=0).user_id == newcomer.pk
    Match.objects.filter(pk=match.pk).update(next_hand_at=timezone.now())
    with pytest.raises(GameError) as exc:
        actions.sit(table, make_user("late"))
    assert exc.value.code == "match_in_progress"


def test_nobody_who_played_in_a_match_takes_another_of_its_seats() -> None:
    """The voiding attack: between hands, a losing player leaves, a friend at the table leaves
    too, and the first sits down on the friend's seat. Holding two sides would make the match
    count for nobody (and shed the last place leaving costs): it is refused, and changes
    nothing; someone new may take either seat."""
    table, users, match = running(4)
    loser, friend = users[0], users[1]
    Match.objects.filter(pk=match.pk).update(next_hand_at=timezone.now())
    Hand.objects.filter(match=match).update(status=Hand.Status.FINISHED)
    actions.leave_table(table, loser)
    actions.leave_table(table, friend)
    for user, position in ((loser, 1), (loser, 0), (friend, 0), (friend, 1)):
        with pytest.raises(GameError) as exc:
            actions.sit(table, user, position)
        assert exc.value.code == "played_this_match"
        assert actions.seats.vacated_seats(table, list(table.seats.all())) == {0, 1}
    assert actions.sit(table, make_user("newcomer"), 1).position == 1


def test_between_hands_a_spectator_is_offered_the_seat_its_player_left(signed_in: SignedIn) -> None:
    table, (leaver, _stayer), match = running()
    actions.leave_table(table, leaver)
    watcher = signed_in(make_user("watcher"))
    page = watcher.get(reverse("table", args=[table.pk])).content.decode()
    assert 'data-action="sit"' not in page  # not mid-hand
    Hand.objects.filter(match=match).update(status=Hand.Status.FINISHED)
    Match.objects.filter(pk=match.pk).update(next_hand_at=timezone.now())
    page = watcher.get(reverse("table", args=[table.pk])).content.decode()
    assert page.count('data-action="sit"') == 1 and 'data-seat="0"' in page


# ----------------------------------------------------------------------------- other tables' hands
def test_a_hand_of_another_table_is_answered_as_a_missing_one(signed_in: SignedIn) -> None:
    """Seated at one's own table, naming another table's hand (private and live, finished,
    or with its version) gets exactly the answer a hand id that no hand has gets."""
    mine, (me, _other), _match = running()
    private, users = user_table("classic")
    Table.objects.filter(pk=private.pk).update(is_private=True)
    live = actions.start_match(private, by=actions.SYSTEM, seed=seed_of(9)).hands.get()
    finished, _ = user_table("duz")
    over = actions.start_match(finished, by=actions.SYSTEM, seed=seed_of(10)).hands.get()
    Hand.objects.filter(pk=over.pk).update(status=Hand.Status.FINISHED)
    missing = Hand.objects.order_by("-pk").first().pk + 1000  # type: ignore[union-attr]
    client = signed_in(me)
    url = reverse("table_move", args=[mine.pk])

    def answer(payload: dict[str, Any]) -> tuple[int, str]:
        response = client.post(url, {"payload": json.dumps(payload)})
        return response.status_code, response.content.decode()

    for move in ({"do": "draw"}, {"do": "finish", "tile": "R1"}, {"do": "open", "tiles": ["R1"]}):
        answers = set()
        for hand in (live.pk, over.pk, missing):
            for version in ({}, {"expected_version": 0}, {"expected_version": 5}):
                answers.add(answer({"type": "move", "hand": hand, "move": move, **version}))
            answers.add(answer({"type": "arrange", "hand": hand, "layout": []}))
        assert len(answers) == 1, answers
        status, html = answers.pop()
        assert status == 200 and 'data-error="no_hand"' in html
    assert Hand.objects.get(pk=live.pk).version == 0
