"""End-of-hand tables, match outcomes and the match-level rules (start scores, planned hands,
who ranks first, running totals) for the four variants (RULES.md §2-5).

``hand_scores`` returns what each seat scored this hand, penalties during the hand included:
``classic`` as the change to the running score (finisher 0, others -2 ...), the other variants as
penalty points (finisher negative, lower is better).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .solver import least_leftover
from .tiles import FAKE, number_of
from .variants import CLASSIC, DUZ, GOBEK17, OKEY51, OPEN_VARIANTS, team_of

if TYPE_CHECKING:
    from .hand import Hand

CLASSIC_LOSS = {"normal": 2, "okey": 2, "pairs": 4, "colour": 8}


def _countdown(variant: str, options: Mapping[str, Any]) -> bool:
    return variant == CLASSIC and options.get("scoring", "countdown") == "countdown"


def finish_worth(variant: str, options: Mapping[str, Any], kind: str) -> int:
    """What each other seat loses when a closed hand ends in a finish of ``kind`` (normal,
    pairs, colour), before a thrown wild okey doubles it: the points of countdown ``classic``,
    the units of plus/minus (only a pairs finish doubles), and 1 in ``duz`` (whose loss is the
    rack, whatever the finish)."""
    if variant != CLASSIC:
        return 1
    if not _countdown(variant, options):
        return 2 if kind == "pairs" else 1
    return CLASSIC_LOSS["colour" if kind == "sequential_colour" else kind]


def start_score(variant: str, options: Mapping[str, Any]) -> int:
    """Running score before the first hand: ``start_score`` in countdown classic, else 0."""
    if _countdown(variant, options):
        return int(options.get("start_score", 20))
    return 0


def start_scores(variant: str, options: Mapping[str, Any], players: int) -> list[int]:
    """Every seat's running score before the first hand (:func:`start_score` each)."""
    return [start_score(variant, options)] * players


def planned_hands(variant: str, options: Mapping[str, Any]) -> int | None:
    """How many hands the match lasts when its length is a number of hands (option ``hands``:
    plus/minus classic, okey51, gobek17); None when it is not: countdown classic ends when a
    score falls to zero, a duz match is the one hand."""
    if variant == DUZ or _countdown(variant, options):
        return None
    return int(options.get("hands", 1))


def idle_options(variant: str, options: Mapping[str, Any]) -> frozenset[str]:
    """The options that make no difference under the others: ``hands`` in countdown classic
    (the match ends at zero), ``start_score`` in plus/minus classic (everyone starts at 0)."""
    if variant != CLASSIC:
        return frozenset()
    return frozenset({"hands"} if _countdown(variant, options) else {"start_score"})


def higher_is_better(variant: str) -> bool:
    """Classic counts points (the highest total wins); the other variants count penalty points
    (the lowest total wins)."""
    return variant == CLASSIC


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
    if view["variant"] in OPEN_VARIANTS:
        for p in view["penalties"]:
            totals[p["seat"]] += p["points"]
    return totals


def multiplier(variant: str, doublings: Sequence[str]) -> int:
    """The product of the doublings; in gobek17 the two forms of (b) together double once."""
    kinds = set(doublings)
    if variant == GOBEK17 and {"before_others_opened", "from_hand"} <= kinds:
        kinds.discard("from_hand")
    return 1 << len(kinds)


def _penalty_sums(hand: Hand) -> list[int]:
    sums = [0] * hand.players
    for p in hand.penalties:
        sums[p["seat"]] += int(p["points"])
    return sums


def hand_scores(hand: Hand) -> list[int]:
    rules = {CLASSIC: _classic, DUZ: _duz, OKEY51: _okey51, GOBEK17: _gobek17}
    base = rules[hand.variant](hand)
    return [b + p for b, p in zip(base, _penalty_sums(hand), strict=True)]


def _classic(hand: Hand) -> list[int]:
    r = hand.result
    n = hand.players
    if r["ending"] != "finish":
        return [0] * n
    finisher, kind = r["finisher"], r["kind"]
    if hand.options["scoring"] == "plus_minus":
        unit = finish_worth(hand.variant, hand.options, kind)
        bonus = 1 if r.get("drew_last_tile") else 0
        return [unit + bonus if s == finisher else -unit for s in range(n)]
    if kind == "sequential_colour":
        # 004: the game is won at once; everyone else's score drops to zero.
        penalties = _penalty_sums(hand)
        return [0 if s == finisher else -(hand.scores_before[s] + penalties[s]) for s in range(n)]
    loss = finish_worth(hand.variant, hand.options, kind) * r["multiplier"]
    return [0 if s == finisher else -loss for s in range(n)]


def _duz(hand: Hand) -> list[int]:
    r = hand.result
    if r["ending"] != "finish":
        return [0] * hand.players
    return [
        0 if s == r["finisher"] else least_leftover(hand.racks[s], hand.okey, hand.wrap)
        for s in range(hand.players)
    ]


def _rack_sum(hand: Hand, seat: int, wild_value: int) -> int:
    total = 0
    for t in hand.racks[seat]:
        if t == hand.okey:
            total += wild_value
        else:
            total += number_of(hand.okey if t == FAKE else t)
    return total


def _okey51(hand: Hand) -> list[int]:
    r = hand.result
    finisher = r.get("finisher")
    big = r["ending"] == "finish" and r["kind"] in ("pairs", "okey")
    out = []
    for s in range(hand.players):
        opened = hand.opened[s]
        if s == finisher:
            out.append(-1000 if big else -500)
        elif opened is None:
            out.append(1000 if big else 500)
        else:
            factor = 10 if (big or opened == "pairs") else 5
            wild_flat = 1000 if opened == "pairs" else 500
            wilds = sum(1 for t in hand.racks[s] if t == hand.okey)
            out.append(_rack_sum(hand, s, 0) * factor + wilds * wild_flat)
    return out


def _gobek17(hand: Hand) -> list[int]:
    r = hand.result
    finisher = r.get("finisher")
    out = []
    for s in range(hand.players):
        opened = hand.opened[s]
        if s == finisher:
            out.append(-1000)
        elif opened is None:
            out.append(1000)
        else:
            total = _rack_sum(hand, s, 500)
            out.append(total * 2 if opened == "pairs" else total)
    m = int(r["multiplier"])
    return [x * m for x in out]


def match_outcome(hand: Hand, scores: Sequence[int]) -> tuple[bool, list[int]]:
    """(is the game over after this hand, the winning seats)."""
    r = hand.result
    if hand.variant == CLASSIC and r.get("kind") == "sequential_colour":
        return True, [r["finisher"]]
    if hand.variant == DUZ and r["ending"] != "finish":
        return True, []
    planned = planned_hands(hand.variant, hand.options)
    if planned is not None:
        over = hand.number >= planned
    elif hand.variant == CLASSIC:  # countdown
        over = any(s <= 0 for s in scores)
    else:
        over = True  # duz: the one hand
    if not over:
        return False, []
    if hand.options.get("partners"):
        best = leaders(hand.variant, team_scores(scores))
        return True, [s for s in range(hand.players) if team_of(s, hand.options) in best]
    return True, leaders(hand.variant, scores)
