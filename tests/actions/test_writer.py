"""The move service: the only writer of game state."""

from __future__ import annotations

import io
import random
import threading
import time
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from games import actions, audit, engine
from games.models import Hand, Match, Move, Seat, Table, Variant
from tests.play import (
    bot_table,
    play_match_with_bots,
    random_move,
    seed_of,
    store_random_hand,
    user_table,
)
from tests.threads import at_once, codes
from tests.users import make_user

VARIANTS = ["classic", "duz", "okey51", "gobek17", "okey101"]
pytestmark = pytest.mark.django_db


def test_it_creates_the_five_variants_with_valid_options() -> None:
    assert sorted(Variant.objects.values_list("key", flat=True)) == sorted(VARIANTS)
    for v in Variant.objects.all():
        assert engine.validate_options(v.key, v.default_options) == v.default_options


def test_it_refuses_bad_table_options() -> None:
    with pytest.raises(actions.GameError) as exc:
        actions.create_table(variant="okey51", created_by=None, options={"hands": 2})
    assert exc.value.code == "bad_options"
    with pytest.raises(actions.GameError):
        actions.create_table(variant="duz", created_by=None, options={"partners": True})


@pytest.mark.parametrize("variant", VARIANTS)
def test_it_plays_a_hand_like_the_engine_alone(variant: str) -> None:
    table = bot_table(variant)
    seed = seed_of(hash(variant) % 1000)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed)
    hand = match.hands.get()
    alone = engine.Hand.from_seed(variant, seed, table.options)
    rng = random.Random(7)
    while True:
        hand.refresh_from_db()
        if hand.status != Hand.Status.PLAYING:
            break
        seat, move = random_move(hand, rng)
        played = actions.play(hand, seat, move, by=actions.BOT, expected_version=hand.version)
        assert alone.play(seat, move).events == played.events
    assert hand.hand_scores == alone.result["hand_scores"]
    assert hand.state == {k: v for k, v in alone.to_state().items() if k != "log"}
    assert list(hand.moves.values_list("number", flat=True)) == list(range(1, hand.version + 1))
    assert hand.revealed_seed == seed
    match.refresh_from_db()
    assert match.totals == alone.result["scores"]


@pytest.mark.slow
def test_it_plays_a_match_over_several_hands_and_rotates_the_starter() -> None:
    table = bot_table("okey51", {"hands": 3})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1))
    play_match_with_bots(match, random.Random(3))
    match.refresh_from_db()
    hands = list(match.hands.order_by("number"))
    assert [h.number for h in hands] == [1, 2, 3]
    assert [h.starter for h in hands] == [0, 1, 2]
    assert match.status == Match.Status.FINISHED
    assert match.totals == hands[-1].state["result"]["scores"]
    assert match.winners and set(match.ranking) == {0, 1, 2, 3}
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED
    call_command("verify_hands")


def test_it_refuses_stale_versions_and_repeats_a_client_move_id() -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(2))
    hand = match.hands.get()
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    move = {"do": "discard", "tile": tile}
    first = actions.play(hand, 0, move, by=users[0], expected_version=0, client_move_id="a1")
    assert first.version == 1
    again = actions.play(hand, 0, move, by=users[0], expected_version=0, client_move_id="a1")
    assert again.repeated and again.move.pk == first.move.pk
    assert Move.objects.filter(hand=hand).count() == 1
    with pytest.raises(actions.GameError) as exc:  # someone else's id reveals nothing
        actions.play(hand, 1, {"do": "draw"}, by=users[1], client_move_id="a1")
    assert exc.value.code == "bad_move"
    with pytest.raises(actions.StaleVersion):
        actions.play(hand, 1, {"do": "draw"}, by=users[1], expected_version=0)
    hand.refresh_from_db()
    assert hand.version == 1


def test_it_refuses_forged_seats_and_illegal_moves_without_writing() -> None:
    table, users = user_table("okey51")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(4))
    hand = match.hands.get()
    state = hand.state
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    with pytest.raises(actions.GameError) as exc:
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[1])
    assert exc.value.code == "not_your_seat"
    with pytest.raises(actions.GameError) as exc:
        actions.play(hand, 0, {"do": "draw"}, by=users[0])
    assert exc.value.code == "already_drew"
    with pytest.raises(actions.GameError) as exc:
        actions.play(hand, 0, {"do": "discard", "tile": "R99"}, by=users[0])
    assert exc.value.code == "bad_tile"
    with pytest.raises(actions.GameError) as exc:
        actions.play(hand, 0, {"do": "draw"}, by=actions.CLOCK)
    assert exc.value.code == "not_your_seat"
    with pytest.raises(actions.GameError) as exc:
        actions.play(hand, 0, {"do": "draw"}, by=actions.BOT)
    assert exc.value.code == "not_your_seat"
    for seat, move, kwargs, code in [
        ("0", {"do": "draw"}, {}, "bad_seat"),
        (9, {"do": "draw"}, {}, "bad_seat"),
        (0, ["draw"], {}, "bad_move"),
        (0, {"do": "draw"}, {"expected_version": "0"}, "bad_move"),
        (0, {"do": "draw"}, {"client_move_id": "x" * 65}, "bad_move"),
    ]:
        with pytest.raises(actions.GameError) as exc:
            actions.play(hand, seat, move, by=users[0], **kwargs)  # type: ignore[arg-type]
        assert exc.value.code == code
    hand.refresh_from_db()
    assert hand.version == 0 and hand.state == state and not hand.moves.exists()


def test_it_answers_a_repeated_client_move_id_even_when_the_move_is_legal_again() -> None:
    """A move sent again without a version, at a moment it could be played again, is the first
    move's answer, never a second move (the unique client_move_id, not a lookup, catches it)."""
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(3)).hands.get()
    eng = hand.engine_hand()
    actions.play(
        hand, 0, {"do": "discard", "tile": engine.format_tile(eng.racks[0][0])}, by=users[0]
    )
    first = actions.play(hand, 1, {"do": "draw"}, by=users[1], client_move_id="d1")
    hand.refresh_from_db()
    tile = engine.format_tile(hand.engine_hand().racks[1][0])
    actions.play(hand, 1, {"do": "discard", "tile": tile}, by=users[1])
    for seat in (2, 3, 0):
        actions.play(hand, seat, {"do": "draw"}, by=users[seat])
        hand.refresh_from_db()
        tile = engine.format_tile(hand.engine_hand().racks[seat][0])
        actions.play(hand, seat, {"do": "discard", "tile": tile}, by=users[seat])
    version = Hand.objects.get(pk=hand.pk).version
    again = actions.play(hand, 1, {"do": "draw"}, by=users[1], client_move_id="d1")
    assert again.repeated and again.move.pk == first.move.pk
    assert Hand.objects.get(pk=hand.pk).version == version
    assert Move.objects.filter(hand=hand, client_move_id="d1").count() == 1


def test_it_plays_a_move_in_one_read_and_one_write() -> None:
    """The move's round trips: the locked read (hand, table id and timer, the seat), then the
    Move row and the hand's snapshot, in one statement on PostgreSQL (two elsewhere); nothing
    else (besides the transaction's BEGIN and COMMIT)."""
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(4)).hands.get()
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    with CaptureQueriesContext(connection) as queries:
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0], client_move_id="q1")
    statements = [
        q["sql"].split()[0].upper()
        for q in queries.captured_queries
        if q["sql"].split()[0].upper() not in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE")
    ]
    if connection.vendor == "postgresql":
        assert statements == ["SELECT", "WITH"], queries.captured_queries
    else:
        assert statements == ["SELECT", "INSERT", "UPDATE"], queries.captured_queries


def test_it_writes_the_move_and_the_hand_as_saved_rows() -> None:
    """The written-out write stores what saving the rows would: every column of the Move
    row, and the hand's new snapshot, version, turn, deadline and update time."""
    table, users = user_table("duz")
    Table.objects.filter(pk=table.pk).update(move_timer=30)
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(4)).hands.get()
    before = Hand.objects.get(pk=hand.pk)
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    played = actions.play(
        hand, 0, {"do": "discard", "tile": tile}, by=users[0], client_move_id="w1"
    )
    row = Move.objects.get(hand=hand, number=1)
    assert played.move.pk == row.pk and not played.move._state.adding
    assert (row.seat, row.action, row.by, row.user_id) == (
        0,
        {"do": "discard", "tile": tile},
        "user",
        users[0].pk,
    )
    assert (row.events, row.bot_level, row.client_move_id) == (played.events, "", "w1")
    assert row.created_at == played.move.created_at is not None
    after = Hand.objects.get(pk=hand.pk)
    eng = before.engine_hand()
    eng.play(0, {"do": "discard", "tile": tile})
    assert after.state == actions.matches.snapshot(eng)
    assert (after.version, after.turn, after.turn_index) == (1, eng.turn, eng.turn_index)
    assert after.updated_at > before.updated_at
    assert after.deadline is not None and after.deadline > after.updated_at
    assert after.status == Hand.Status.PLAYING


def test_it_publishes_only_after_commit(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    table, users = user_table("classic")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(5))
    hand = match.hands.get()
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0])
    assert len(callbacks) == 1


def test_it_locks_only_the_hand_row() -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(6))
    hand = match.hands.get()
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    with CaptureQueriesContext(connection) as queries:
        actions.play(hand, 0, {"do": "discard", "tile": tile}, by=users[0])
    if connection.vendor == "postgresql":
        locks = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
        assert locks and all('FOR UPDATE OF "games_hand"' in q for q in locks), locks
    else:
        # SQLite has no row locks: every write transaction takes the database's write lock
        # when it begins (IMMEDIATE), which serialises moves (see the concurrency test below).
        assert connection.vendor == "sqlite"
        assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    hand.refresh_from_db()
    assert hand.version == 1


@pytest.mark.django_db(transaction=True)
def test_it_does_not_make_one_table_wait_for_another() -> None:
    """A slow move held open at table A does not delay a move at table B of the same variant."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time by design; row locks are PostgreSQL's")
    table_a, users_a = user_table("duz")
    table_b, users_b = user_table("duz")
    hand_a = actions.start_match(table_a, by=actions.SYSTEM, seed=seed_of(60)).hands.get()
    hand_b = actions.start_match(table_b, by=actions.SYSTEM, seed=seed_of(61)).hands.get()
    inside, release = threading.Event(), threading.Event()
    real_play = engine.Hand.play

    def slow_play(self: engine.Hand, seat: int, move: dict[str, object]) -> engine.MoveResult:
        if threading.current_thread().name == "slow-move":
            inside.set()  # table A's hand row is locked now
            release.wait(timeout=15)
        return real_play(self, seat, move)

    def move_at_a() -> None:
        try:
            tile = engine.format_tile(hand_a.engine_hand().racks[0][0])
            actions.play(hand_a.pk, 0, {"do": "discard", "tile": tile}, by=users_a[0])
        finally:
            connections.close_all()

    engine.Hand.play = slow_play  # type: ignore[method-assign]
    slow = threading.Thread(target=move_at_a, name="slow-move")
    try:
        slow.start()
        assert inside.wait(timeout=10)
        started = time.monotonic()
        tile = engine.format_tile(hand_b.engine_hand().racks[0][0])
        with connection.cursor() as cursor:  # fail fast instead of hanging if B waits on A
            cursor.execute("SET lock_timeout = '5s'")
        played = actions.play(hand_b.pk, 0, {"do": "discard", "tile": tile}, by=users_b[0])
        waited = time.monotonic() - started
        assert not release.is_set() and slow.is_alive()  # A still holds its lock
    finally:
        release.set()
        slow.join(timeout=20)
        engine.Hand.play = real_play  # type: ignore[method-assign]
    assert played.version == 1
    assert waited < 2, f"the move at table B waited {waited:.1f} s for table A"
    hand_a.refresh_from_db()
    assert hand_a.version == 1


@pytest.mark.slow
def test_it_verifies_random_hands_of_every_variant_and_catches_tampering() -> None:
    tables = {v: bot_table(v) for v in VARIANTS}
    hands = [
        store_random_hand(tables[VARIANTS[i % len(VARIANTS)]], seed_of(1000 + i), i)
        for i in range(12 * len(VARIANTS))
    ]
    call_command("verify_hands")
    victim = hands[5]
    move = victim.moves.order_by("number")[1]
    move.action = {"do": "draw"} if move.action.get("do") != "draw" else {"do": "take"}
    move.save()
    with pytest.raises(Exception, match="differ"):
        call_command("verify_hands")
    assert audit.verify_hand(victim)
    move.delete()
    other = hands[7]
    other.seed = seed_of(99999)
    other.save()
    problems = audit.verify_hand(other)
    assert any("commitment" in p for p in problems)


def test_it_sits_stands_and_starts_only_when_full() -> None:
    table, users = user_table("okey51")
    actions.stand(table, users[3])
    with pytest.raises(actions.GameError) as exc:
        actions.start_match(table, by=actions.SYSTEM)
    assert exc.value.code == "seats_not_filled"
    actions.add_bot(table, 3, "greedy", by=actions.SYSTEM)
    match = actions.start_match(table, by=actions.SYSTEM)
    with pytest.raises(actions.GameError):
        actions.start_match(table, by=actions.SYSTEM)
    actions.stand(table, users[0])
    assert Seat.objects.get(table=table, position=0).away
    actions.sit(table, users[0])
    assert not Seat.objects.get(table=table, position=0).away
    actions.end_match(match, by=actions.SYSTEM)
    match.refresh_from_db()
    assert match.status == Match.Status.ABANDONED


@pytest.mark.django_db(transaction=True)
def test_it_applies_exactly_one_of_two_simultaneous_moves() -> None:
    # PostgreSQL: the hand's row lock; SQLite: the write lock its IMMEDIATE transactions take.
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(8))
    hand = match.hands.get()
    for attempt in range(50):
        hand.refresh_from_db()
        eng = hand.engine_hand()
        seat = eng.turn
        if eng.has_tile:
            move = {"do": "discard", "tile": engine.format_tile(eng.racks[seat][0])}
        else:
            move = {"do": "draw"}

        def submit(move: dict[str, object] = move, seat: int = seat) -> None:
            actions.play(hand.pk, seat, move, by=users[seat], expected_version=hand.version)

        outcomes = codes(at_once([submit, submit]))
        assert outcomes == ["ok", "stale_version"], (attempt, outcomes)
        hand.refresh_from_db()
        if hand.status != Hand.Status.PLAYING:
            break
    numbers = list(hand.moves.values_list("number", flat=True))
    assert numbers == list(range(1, len(numbers) + 1))


def test_it_records_who_held_each_seat_in_every_hand() -> None:
    table, users = user_table("okey51", {"hands": 3})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(90))
    first = match.hands.get()
    assert [(p.position, p.user_id, p.bot_level) for p in first.participants.all()] == [
        (p, users[p].pk, "") for p in range(4)
    ]
    staff = make_user("staff", staff=True)
    actions.remove_player(Seat.objects.get(table=table, position=3), by=staff)
    # Play hand 1 to its end: the bot seat plays as a bot, with its level on each move.
    rng = random.Random(5)
    while True:
        first.refresh_from_db()
        if first.status != Hand.Status.PLAYING:
            break
        seat, move = random_move(first, rng)
        by = actions.BOT if seat == 3 else users[seat]
        actions.play(first, seat, move, by=by, level="greedy" if seat == 3 else "")
    assert first.participants.get(position=3).user == users[3]  # dealt to the player
    bot_moves = first.moves.filter(seat=3)
    assert bot_moves.exists()
    assert set(bot_moves.values_list("by", "user", "bot_level")) == {("bot", None, "greedy")}
    human = first.moves.filter(seat=0).first()
    assert human is not None and human.by == "user" and human.user == users[0]
    assert not match.hands.filter(number=2).exists()  # the scoreboard's pause comes first
    second = actions.deal_next_hand(match)
    assert second is not None and second.number == 2
    assert [(p.user_id, p.bot_level) for p in second.participants.order_by("position")] == [
        (users[0].pk, ""),
        (users[1].pk, ""),
        (users[2].pk, ""),
        (None, "greedy"),
    ]


def test_it_stores_the_engines_normalised_move_as_the_one_log() -> None:
    table, users = user_table("duz")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(91)).hands.get()
    tile = engine.format_tile(hand.engine_hand().racks[0][0])
    raw = {"do": "discard", "tile": tile, "note": "junk from the client", "groups": None}
    actions.play(hand, 0, raw, by=users[0])
    hand.refresh_from_db()
    assert hand.moves.get().action == {"do": "discard", "tile": tile}
    assert "log" not in hand.state  # the Move rows are the log; the snapshot holds none
    assert not audit.verify_hand(hand)


def test_verify_hands_while_a_hand_is_being_played_reports_no_false_difference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A move committed between the read of a hand and the read of its moves made the audit
    see one move more than the hand's version. The hand is read and checked again instead."""
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(31))
    hand = match.hands.get()
    played = []
    verify = audit.verify_hand

    def a_move_meanwhile(stale: Any) -> list[str]:
        if not played:  # the first check reads the hand, then a move commits
            h = Hand.objects.get(pk=stale.pk)
            tile = engine.format_tile(h.engine_hand().racks[h.turn][0])
            played.append(
                actions.play(h, h.turn, {"do": "discard", "tile": tile}, by=users[h.turn])
            )
        return verify(stale)

    monkeypatch.setattr(audit, "verify_hand", a_move_meanwhile)
    out = io.StringIO()
    call_command("verify_hands", "--hand", str(hand.pk), stdout=out)
    assert played and "1 hands verified" in out.getvalue()
    # The stale read alone would have seen the move as a difference.
    assert any("version 0 but 1 moves" in p for p in verify(hand))
