"""A table's state brought forward by a move (``reads.state_after_move``, what a server
process does with a ``hand.moved`` message instead of reading the table): move by move over
whole hands of every variant, the same state as a read of the table after the move, and the
same page for every viewer."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone, translation

from games import actions, frames, reads
from games.actions import broadcast
from games.models import Hand, Presence, Seat
from tests.play import connect, random_move, seed_of, user_table

pytestmark = pytest.mark.django_db(transaction=True)


def fields(obj: Any, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        f.attname: getattr(obj, f.attname)
        for f in type(obj)._meta.concrete_fields
        if f.attname not in leave_out
    }


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The table messages the services publish after commit."""
    sent: list[dict[str, Any]] = []
    real = broadcast.send

    def recording(group: str, message: dict[str, Any]) -> None:
        sent.append(message)
        real(group, message)

    monkeypatch.setattr(broadcast, "send", recording)
    return sent


def a_table(variant: str, players: int) -> tuple[Any, list[Any]]:
    """A table whose players all have a socket open."""
    table, users = user_table(variant, players=players)
    connect(table, users)
    return table, users


def pages(state: reads.TableState, table_id: int, viewers: list[Any]) -> list[Any]:
    """Each viewer's context and live fragment from ``state`` (the rack apart)."""
    shown = []
    for viewer in viewers:
        with translation.override("en"):
            context = reads.table_context(table_id, viewer, state=state)
            live = frames.live(context)
        shown.append((context, live))
    return shown


def assert_same(kept: reads.TableState, read: reads.TableState, mover: int) -> None:
    assert fields(kept.table) == fields(read.table)
    assert [fields(s) for s in kept.seats] == [fields(s) for s in read.seats]
    assert kept.hand is not None and read.hand is not None
    # The row's snapshot is not brought forward: the engine hand is.
    assert fields(kept.hand, ("state",)) == fields(read.hand, ("state",))
    assert "state" not in kept.hand.__dict__
    assert fields(kept.match) == fields(read.match)
    assert kept.engine_hand is not None and read.engine_hand is not None
    assert kept.engine_hand.to_state() | {"log": []} == read.engine_hand.to_state()
    for name in ("public", "log_moves", "openings", "finish"):
        assert getattr(kept, name) == getattr(read, name), name
    # The mover's layout is the one stored; the others may have been arranged since.
    assert kept.layouts.get(mover) == read.layouts.get(mover)
    assert kept.stale_layouts == frozenset(range(len(kept.seats))) - {mover}


VARIANTS = [
    ("classic", 4),
    ("duz", 4),
    ("okey51", 4),
    ("gobek17", 4),
    ("okey101", 4),
    ("classic", 2),
    ("classic", 3),
]


@pytest.mark.slow
@pytest.mark.parametrize("variant, players", VARIANTS)
def test_a_state_brought_forward_is_the_state_read_move_by_move(
    published: list[dict[str, Any]], variant: str, players: int
) -> None:
    """A whole hand of random legal moves (openings, lays and adds in the open variants),
    racks arranged by hand now and then: after each move that may be brought forward, the
    state brought forward from the one before (itself brought forward, as a server process
    does for move after move) is the state read, field for field, and shows every seat and a
    spectator the same page."""
    table, users = a_table(variant, players)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(2024))
    rng = random.Random(f"{variant}{players}")
    viewers = [*users, AnonymousUser()]
    state = reads.table_state(table.pk)
    brought: list[str] = []
    for _ in range(400):
        hand = match.hands.get()
        if hand.status != Hand.Status.PLAYING:
            break
        # The players' servers beat (a hand on PostgreSQL outlasts Presence.FRESH): "here"
        # stays what both the kept and the read state say.
        Presence.objects.filter(seat__table=table).update(seen_at=timezone.now())
        seat, move = random_move(hand, rng)
        if rng.random() < 0.2:  # the mover arranged their rack (stored, not announced)
            rack = hand.view_for(seat)["rack"]
            rng.shuffle(rack)
            actions.arrange(hand.pk, seat, [*rack, *[None] * (32 - len(rack))], by=users[seat])
        published.clear()
        actions.play(hand, seat, move, by=users[seat])
        (message,) = [m for m in published if m["type"] == "hand.moved"]
        read = reads.table_state(table.pk)
        assert read.hand is not None
        if "apply" not in message:
            assert read.hand.status != Hand.Status.PLAYING  # only a hand's end is left out
            break
        kept = reads.state_after_move(
            state, message["hand"], message["version"], message["seat"], message["apply"]
        )
        assert kept is not None, message
        assert_same(kept, read, seat)
        assert pages(kept, table.pk, viewers) == pages(read, table.pk, viewers)
        with translation.override("en"):
            mover = reads.table_context(table.pk, users[seat], state=kept)
            assert frames.rack(mover) == frames.rack(
                reads.table_context(table.pk, users[seat], state=read)
            )
        brought.append(message["apply"]["action"]["do"])
        state = kept
    assert len(brought) >= 20
    if variant in ("okey51", "gobek17"):
        assert "open" in brought, brought
    assert match.hands.get().status != Hand.Status.PLAYING, "the hand is played to its end"


def test_a_state_is_not_brought_forward_over_a_gap_or_from_another_hand(
    published: list[dict[str, Any]],
) -> None:
    table, users = a_table("duz", 4)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(7))
    state = reads.table_state(table.pk)
    rng = random.Random(7)
    messages = []
    for _ in range(2):
        hand = match.hands.get()
        seat, move = random_move(hand, rng)
        published.clear()
        actions.play(hand, seat, move, by=users[seat])
        messages.append(next(m for m in published if m["type"] == "hand.moved"))
    first, second = messages

    def forward(message: dict[str, Any], **changed: Any) -> Any:
        m = {**message, **changed}
        return reads.state_after_move(state, m["hand"], m["version"], m["seat"], m["apply"])

    assert forward(first) is not None
    assert forward(second) is None, "a move missed in between: read"
    assert forward(first, hand=first["hand"] + 1) is None, "another hand: read"
    assert forward(first, seat=(first["seat"] + 1) % 4) is None, "a move the engine refuses"
    finish = {**first["apply"], "action": {"do": "finish", "tile": "r1"}}
    assert forward(first, apply=finish) is None
    # The state it came from is left as it was (frames may be rendering it).
    assert state.hand is not None and state.hand.version == 0
    assert state.engine_hand is not None and state.engine_hand.log == []


def test_a_move_that_changes_a_seat_or_ends_the_hand_says_read_the_table(
    published: list[dict[str, Any]],
) -> None:
    """A player back from away (their seat row changes with the move) and the hand's last move
    (the match's totals, the next hand) change more than the hand: their messages carry no
    ``apply``, so every process reads the table."""
    table, users = a_table("duz", 4)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(8))
    hand = match.hands.get()
    seat, move = random_move(hand, random.Random(8))
    Seat.objects.filter(table=table, position=seat).update(away=True)
    published.clear()
    actions.play(hand, seat, move, by=users[seat])
    (message,) = [m for m in published if m["type"] == "hand.moved"]
    assert "apply" not in message
    assert not Seat.objects.get(table=table, position=seat).away
