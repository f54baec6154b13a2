"""A match: several hands at one table, the starter moving on, running totals, the end."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import scoring
from .hand import Hand
from .tiles import deal, new_seed
from .variants import check_players, validate_options


class Match:
    """Hands in order; ``scores`` are the running totals before the current hand."""

    def __init__(self, variant: str, options: Mapping[str, Any] | None = None, players: int = 4):
        self.variant = variant
        self.options = validate_options(variant, options)
        check_players(variant, players)
        self.players = players
        self.scores = [scoring.start_score(variant, self.options)] * players
        self.hands: list[Hand] = []
        self.over = False
        self.winners: list[int] = []

    @property
    def current(self) -> Hand | None:
        return self.hands[-1] if self.hands else None

    def next_starter(self) -> int:
        """Hand 1's starter is seat 0; the starter moves on one seat each hand."""
        return len(self.hands) % self.players

    def deal_hand(self, seed: str | None = None) -> Hand:
        """Deal the next hand from ``seed`` (a fresh secret one by default)."""
        if self.over:
            raise ValueError("the match is over")
        if self.current is not None and not self.current.over:
            raise ValueError("the current hand is still being played")
        seed = seed or new_seed()
        hand = Hand.from_deal(
            self.variant,
            deal(seed, self.players),
            self.options,
            starter=self.next_starter(),
            scores=self.scores,
            number=len(self.hands) + 1,
            seed=seed,
        )
        self.hands.append(hand)
        return hand

    def record(self) -> None:
        """Take the finished current hand's totals into the match."""
        hand = self.current
        if hand is None or not hand.over:
            raise ValueError("no finished hand to record")
        self.scores = list(hand.result["scores"])
        self.over = bool(hand.result["match_over"])
        self.winners = list(hand.result["winners"])
