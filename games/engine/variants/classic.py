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

    def base_scores(self, hand: Hand) -> list[int]:
        r = hand.result
        n = hand.players
        if r["ending"] != "finish":
            return [0] * n
        finisher, kind = r["finisher"], r["kind"]
        if not self.countdown(hand.options):
            unit = self.finish_worth(hand.options, kind)
            bonus = 1 if r.get("drew_last_tile") else 0
            return [unit + bonus if s == finisher else -unit for s in range(n)]
        if kind == "sequential_colour":
            # 004: the game is won at once; everyone else's score drops to zero.
            penalties = hand.penalty_sums()
            return [
                0 if s == finisher else -(hand.scores_before[s] + penalties[s]) for s in range(n)
            ]
        loss = self.finish_worth(hand.options, kind) * r["multiplier"]
        return [0 if s == finisher else -loss for s in range(n)]

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
