"""A match: several hands at one table, the starter moving on, running totals, the end."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import scoring
from .hand import Hand
from .tiles import new_seed
from .variants import check_table


class Match:
    """The rules of one match, and where it stands: ``scores`` are the running totals before
    the next hand, ``dealt`` the hands dealt so far, ``over`` and ``winners`` as the last
    recorded hand left them.

    A match kept elsewhere (a site's rows) is taken up where it stands: ``scores`` the totals
    after its first ``dealt`` hands (the start scores when None).
    """

    def __init__(
        self,
        variant: str,
        options: Mapping[str, Any] | None = None,
        players: int = 4,
        *,
        scores: Sequence[int] | None = None,
        dealt: int = 0,
        voided: int = 0,
    ):
        self.variant = variant
        self.options = check_table(variant, options, players)
        self.players = players
        self.start_scores = scoring.start_scores(variant, self.options, players)
        self.scores = list(scores) if scores is not None else list(self.start_scores)
        self.dealt = dealt
        # Void hands among those dealt (okey101): they count for nothing, and the hand after
        # one has the same starter.
        self.voided = voided
        self.current: Hand | None = None
        self.over = False
        self.winners: list[int] = []

    @property
    def planned_hands(self) -> int | None:
        """How many hands the match lasts, when that is its end (:func:`scoring.planned_hands`)."""
        return scoring.planned_hands(self.variant, self.options)

    def starter(self, number: int) -> int:
        """Hand 1's starter is seat 0; the starter moves on one seat each hand, except after a
        void hand (its starter starts again): ``number`` counts every hand dealt, the void
        ones of :attr:`voided` among them."""
        return (number - 1 - self.voided) % self.players

    def deal_hand(self, seed: str | None = None, *, starter: int | None = None) -> Hand:
        """Deal the next hand (number ``dealt + 1``) from ``seed`` (a fresh secret one by
        default) with the running totals. ``starter``: the seat a record says started it, when
        dealing a recorded hand again (else :meth:`starter`)."""
        if self.over:
            raise ValueError("the match is over")
        if self.current is not None and not self.current.over:
            raise ValueError("the current hand is still being played")
        number = self.dealt + 1
        hand = Hand.from_seed(
            self.variant,
            new_seed() if seed is None else seed,
            self.options,
            players=self.players,
            starter=self.starter(number) if starter is None else starter,
            scores=self.scores,
            number=number,
            voided=self.voided,
        )
        self.current = hand
        self.dealt = number
        return hand

    def record(self, hand: Hand | None = None) -> None:
        """Take a finished hand's totals into the match (the current hand by default): the new
        running totals, whether the match is over and who won (:attr:`Hand.result`)."""
        hand = hand if hand is not None else self.current
        if hand is None or not hand.over:
            raise ValueError("no finished hand to record")
        self.scores = list(hand.result["scores"])
        if hand.result["ending"] == "void":
            self.voided += 1
        self.over = bool(hand.result["match_over"])
        self.winners = list(hand.result["winners"])

    def ranking(self, totals: Sequence[int] | None = None) -> list[int]:
        """The seats from best to worst by ``totals`` (the running totals by default)."""
        return scoring.ranking(self.variant, self.scores if totals is None else totals)

    def totals_after(self, hand_scores: Iterable[Sequence[int]]) -> list[list[int]]:
        """The running totals after each of the hands scored ``hand_scores`` in turn, from the
        start scores."""
        totals = list(self.start_scores)
        out = []
        for scores in hand_scores:
            totals = [t + s for t, s in zip(totals, scores, strict=False)]
            out.append(list(totals))
        return out
