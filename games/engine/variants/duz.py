"""``duz``: Düz Okey, a closed hand of one deal scored by what the losers hold (RULES.md §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..solver import least_leftover
from .rules import ASSISTED, BOOL, TIMER, Choice, Rules

if TYPE_CHECKING:
    from ..hand import Hand


class Duz(Rules):
    key = "duz"
    options = {
        "wrap_13_1": Choice(True, BOOL),
        "assisted": ASSISTED,
        "timer": TIMER,
    }
    has_pairs = False
    leftover_scores = True

    def finish(self, hand: Hand, seat: int, t: int, kind: str) -> tuple[str, list[str]]:
        return ("okey" if hand.is_wild(t) else kind), []

    def base_scores(self, hand: Hand) -> list[int]:
        r = hand.result
        if r["ending"] != "finish":
            return [0] * hand.players
        return [
            0 if s == r["finisher"] else least_leftover(hand.racks[s], hand.okey, hand.wrap)
            for s in range(hand.players)
        ]

    def planned_hands(self, options: Mapping[str, Any]) -> int | None:
        return None  # the match is the one hand

    def decisive_winners(self, hand: Hand) -> list[int] | None:
        # A dry wall ends the match with nobody winning.
        return [] if hand.result["ending"] != "finish" else None


RULES = Duz()
