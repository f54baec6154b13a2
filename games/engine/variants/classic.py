"""``classic``: closed hand, a 20-point countdown or plus/minus scoring (RULES.md §2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .rules import ASSISTED, BOOL, TIMER, Choice, Rules

if TYPE_CHECKING:
    from ..hand import Hand

# What each other seat loses in countdown scoring, by the finish's kind.
LOSS = {"normal": 2, "okey": 2, "pairs": 4, "colour": 8}


class Classic(Rules):
    key = "classic"
    players = (2, 3, 4)
    options = {
        "scoring": Choice("countdown", ("countdown", "plus_minus")),
        "start_score": Choice(20, None, 1, 1000),
        "hands": Choice(10, None, 1, 100),
        "wrap_13_1": Choice(True, BOOL),
        "assisted": ASSISTED,
        "timer": TIMER,
    }
    quick_options = ("scoring", "assisted")
    indicator_show = True
    special_finishes = True
    higher_is_better = True

    @staticmethod
    def countdown(options: Mapping[str, Any]) -> bool:
        return bool(options.get("scoring", "countdown") == "countdown")

    def finish(self, hand: Hand, seat: int, t: int, kind: str) -> tuple[str, list[str]]:
        if hand.is_wild(t):
            return ("okey" if kind == "normal" else kind), ["okey"]
        return kind, []

    def finish_worth(self, options: Mapping[str, Any], kind: str) -> int:
        if not self.countdown(options):
            return 2 if kind == "pairs" else 1
        return LOSS["colour" if kind == "sequential_colour" else kind]

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        r = hand.result
        n = hand.players
        if r["ending"] != "finish":
            return [[] for _ in range(n)]
        finisher, kind = r["finisher"], r["kind"]
        out: list[list[dict[str, Any]]] = []
        if not self.countdown(hand.options):
            unit = self.finish_worth(hand.options, kind)
            for s in range(n):
                if s != finisher:
                    out.append([{"item": "lost_to_finish", "kind": kind, "points": -unit}])
                    continue
                parts = [{"item": "finished", "kind": kind, "points": unit}]
                if r.get("drew_last_tile"):
                    parts.append({"item": "last_tile", "points": 1})
                out.append(parts)
            return out
        if kind == "sequential_colour":
            # 004: the game is won at once; everyone else's score drops to zero.
            penalties = hand.penalty_sums()
            return [
                []
                if s == finisher
                else [
                    {
                        "item": "sequential_colour",
                        "points": -(hand.scores_before[s] + penalties[s]),
                    }
                ]
                for s in range(n)
            ]
        worth, m = self.finish_worth(hand.options, kind), r["multiplier"]
        lost = {"item": "lost_to_finish", "kind": kind, "multiplier": m, "points": -worth * m}
        return [[] if s == finisher else [dict(lost)] for s in range(n)]

    def start_score(self, options: Mapping[str, Any]) -> int:
        return int(options.get("start_score", 20)) if self.countdown(options) else 0

    def planned_hands(self, options: Mapping[str, Any]) -> int | None:
        # A countdown ends when a score falls to zero, not after a number of hands.
        return None if self.countdown(options) else int(options.get("hands", 1))

    def idle_options(self, options: Mapping[str, Any]) -> frozenset[str]:
        return frozenset({"hands"} if self.countdown(options) else {"start_score"})

    def match_over(self, hand: Hand, scores: Sequence[int]) -> bool:
        if self.countdown(hand.options):
            return any(s <= 0 for s in scores)
        return super().match_over(hand, scores)

    def decisive_winners(self, hand: Hand) -> list[int] | None:
        if hand.result.get("kind") == "sequential_colour":
            return [hand.result["finisher"]]
        return None


RULES = Classic()
