"""End-of-hand tables, match outcomes and the match-level rules (start scores, planned hands,
who ranks first, running totals) for every variant (RULES.md §2-7), each asking the variant's rules
(games/engine/variants/).

``hand_scores`` returns what each seat scored this hand, penalties during the hand included:
``classic`` as the change to the running score (finisher 0, others -2 ...), the other variants as
penalty points (finisher negative, lower is better).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .variants import is_open_variant, rules_for, team_of

if TYPE_CHECKING:
    from .hand import Hand


def finish_worth(variant: str, options: Mapping[str, Any], kind: str) -> int:
    """What each other seat loses when a closed hand ends in a finish of ``kind`` (normal,
    pairs, colour), before a thrown wild okey doubles it: the points of countdown ``classic``,
    the units of plus/minus (only a pairs finish doubles), and 1 elsewhere (``duz``'s loss is
    the rack, whatever the finish)."""
    return rules_for(variant).finish_worth(options, kind)


def start_score(variant: str, options: Mapping[str, Any]) -> int:
    """Running score before the first hand: ``start_score`` in countdown classic, else 0."""
    return rules_for(variant).start_score(options)


def start_scores(variant: str, options: Mapping[str, Any], players: int) -> list[int]:
    """Every seat's running score before the first hand (:func:`start_score` each)."""
    return [start_score(variant, options)] * players


def planned_hands(variant: str, options: Mapping[str, Any]) -> int | None:
    """How many hands the match lasts when its length is a number of hands (option ``hands``);
    None when it is not: countdown classic ends when a score falls to zero, a duz match is the
    one hand."""
    return rules_for(variant).planned_hands(options)


def idle_options(variant: str, options: Mapping[str, Any]) -> frozenset[str]:
    """The options that make no difference under the others: ``hands`` in countdown classic
    (the match ends at zero), ``start_score`` in plus/minus classic (everyone starts at 0)."""
    return rules_for(variant).idle_options(options)


def higher_is_better(variant: str) -> bool:
    """Classic counts points (the highest total wins); the other variants count penalty points
    (the lowest total wins)."""
    return rules_for(variant).higher_is_better


def leaders(variant: str, totals: Sequence[int]) -> list[int]:
    """The indices of the best of ``totals`` (several when they are equal)."""
    best = max(totals) if higher_is_better(variant) else min(totals)
    return [k for k, total in enumerate(totals) if total == best]


def ranking(variant: str, totals: Sequence[int]) -> list[int]:
    """The seats from the best total to the worst; equal totals keep their seat order."""
    return sorted(range(len(totals)), key=totals.__getitem__, reverse=higher_is_better(variant))


def team_scores(scores: Sequence[int]) -> list[int]:
    """The two sides' totals with partners: seats 0 and 2, then seats 1 and 3."""
    return [scores[0] + scores[2], scores[1] + scores[3]]


def running_scores(view: Mapping[str, Any]) -> list[int]:
    """Each seat's running total as a hand's view shows it (:meth:`Hand.public_view`): the
    totals before the hand plus, in the open variants, the penalties scored in it so far (in
    the closed variants they count when the hand ends); the hand's final scores once it is
    over."""
    if view["over"]:
        return list(view["result"]["scores"])
    totals = list(view["scores_before"])
    if is_open_variant(view["variant"]):
        for p in view["penalties"]:
            totals[p["seat"]] += p["points"]
    return totals


def multiplier(variant: str, doublings: Sequence[str]) -> int:
    """The product of the doublings (:meth:`Rules.multiplier`)."""
    return rules_for(variant).multiplier(doublings)


def hand_scores(hand: Hand) -> list[int]:
    """What each seat scored this hand: the variant's end-of-hand table plus the penalties
    during the hand."""
    base = hand.rules.base_scores(hand)
    return [b + p for b, p in zip(base, hand.penalty_sums(), strict=True)]


def score_parts(hand: Hand) -> list[list[dict[str, Any]]]:
    """Each seat's score of a finished hand in parts (:meth:`Rules.score_parts`: the end of
    the hand), then one ``penalty`` part per reason it was penalised for during the hand, with
    its ``reason``, ``count`` and ``points``. A seat's parts add up to its hand score."""
    parts = [list(p) for p in hand.rules.score_parts(hand)]
    for seat, mine in enumerate(parts):
        by_reason: dict[str, dict[str, Any]] = {}
        for p in hand.penalties:
            if p["seat"] != seat:
                continue
            found = by_reason.setdefault(
                p["reason"], {"item": "penalty", "reason": p["reason"], "count": 0, "points": 0}
            )
            found["count"] += 1
            found["points"] += int(p["points"])
        mine.extend(by_reason.values())
    return parts


def match_outcome(hand: Hand, scores: Sequence[int]) -> tuple[bool, list[int]]:
    """(is the game over after this hand, the winning seats)."""
    rules = hand.rules
    decided = rules.decisive_winners(hand)
    if decided is not None:
        return True, decided
    if not rules.match_over(hand, scores):
        return False, []
    if hand.options.get("partners"):
        best = leaders(hand.variant, team_scores(scores))
        return True, [s for s in range(hand.players) if team_of(s, hand.options) in best]
    return True, leaders(hand.variant, scores)
