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

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        r = hand.result
        if r["ending"] != "finish":
            return [[] for _ in range(hand.players)]
        out: list[list[dict[str, Any]]] = []
        for s in range(hand.players):
            if s == r["finisher"]:
                out.append([])
                continue
            left = least_leftover(hand.racks[s], hand.okey, hand.wrap)
            out.append([{"item": "tiles_left", "sum": left, "points": left}])
        return out

    def planned_hands(self, options: Mapping[str, Any]) -> int | None:
        return None  # the match is the one hand

    def decisive_winners(self, hand: Hand) -> list[int] | None:
        # A dry wall ends the match with nobody winning.
        return [] if hand.result["ending"] != "finish" else None


RULES = Duz()
