"""okey101's void hand through the site: the fourth pairs opening ends the hand void, the
totals stay, the match goes on, and the next hand (numbered on) has the same starter and still
counts as the match's first."""

from __future__ import annotations

from typing import Any

import pytest

from games import actions, engine
from games.models import Hand, Match
from tests.play import seed_of, user_table

pytestmark = pytest.mark.django_db

RACKS = [
    "R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K13 K12",
    "K1 K1 K2 K2 K3 K3 K4 K4 K6 K6 Y13",
    "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y6 Y6 R13",
    "B1 B1 B2 B2 B3 B3 B6 B6 B7 B7 R12",
]


def test_a_void_hand_leaves_the_totals_and_the_next_hand_keeps_the_starter() -> None:
    table, users = user_table("okey101", {"timer": 0, "hands": 1})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(3))
    hand = match.hands.get()
    # The hand as dealt is replaced by one where every seat holds five pairs.
    racks = [[engine.parse_tile(t) for t in r.split()] for r in RACKS]
    designed = engine.Hand.new(
        "okey101",
        racks,
        [engine.parse_tile(t) for t in ("R7", "K7", "Y7", "R8")],
        engine.parse_tile("B4"),
        table.options,
        seed=hand.seed,
    )
    Hand.objects.filter(pk=hand.pk).update(state=actions.matches.snapshot(designed))
    for seat in range(4):
        hand.refresh_from_db()
        view = hand.engine_hand().view(seat)
        if seat:
            play(hand, seat, {"do": "draw"}, users)
        rack = view["rack"]
        pairs = [[rack[i], rack[i + 1]] for i in range(0, 10, 2)]
        play(hand, seat, {"do": "open", "pairs": pairs}, users)
        if seat < 3:
            play(hand, seat, {"do": "discard", "tile": rack[10]}, users)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.FINISHED and hand.ending == "void"
    assert hand.hand_scores == [0, 0, 0, 0]
    match.refresh_from_db()
    assert match.status == Match.Status.PLAYING and match.totals == [0, 0, 0, 0]
    again = actions.deal_next_hand(match, force=True)
    assert again is not None
    assert again.number == 2 and again.starter == hand.starter
    assert again.engine_hand().voided == 1


def play(hand: Hand, seat: int, move: dict[str, Any], users: list[Any]) -> None:
    hand.refresh_from_db()
    actions.play(hand, seat, move, by=users[seat], expected_version=hand.version)
