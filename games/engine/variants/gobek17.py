"""``gobek17``: Göbek 17, open table of the 101 family with raising openings and harsh
penalties (RULES.md §5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..melds import PAIR, Meld
from ..solver import fits_table
from ..tiles import FAKE
from .rules import ALWAYS, ASSISTED, BOOL, PARTNERS, TIMER, Choice, Rules, rack_sum

if TYPE_CHECKING:
    from ..hand import Hand


class Gobek17(Rules):
    key = "gobek17"
    options = {
        "hands": Choice(1, None, 1, 20),
        "partners": PARTNERS,
        "give_back_penalty": Choice(0, (0, 500)),
        "assisted": ASSISTED,
        "wrap_13_1": Choice(False, BOOL),
        "timer": TIMER,
    }
    quick_options = ("partners", "assisted")
    open_table = True
    melds_bar = 51
    melds_raise = ALWAYS
    pairs_bar = 4
    pairs_raise = ALWAYS
    pairs_onto_rows = True
    give_back_penalty_option = "give_back_penalty"

    def take_penalty(self, hand: Hand, t: int) -> int:
        return hand.value(t) * 10

    def discard_penalties(
        self, table: Sequence[Meld], okey: int, wrap: bool, t: int
    ) -> list[tuple[int, str, bool]]:
        if t == okey:
            return [(500, "okey_discard", False)]
        melds = [m for m in table if m.kind != PAIR]
        ident = okey if t == FAKE else t
        if fits_table(ident, melds, wrap):
            return [(500, "workable_discard", True)]
        return []

    def feed_penalty(self, hand: Hand, meld: Meld, index: int) -> int:
        return meld.tile_value(index, hand.okey) * 10

    def pairs_onto_penalty(self, hand: Hand, pairs: Sequence[Meld]) -> int:
        return 2 * sum(m.tile_value(0, hand.okey) + m.tile_value(1, hand.okey) for m in pairs)

    def finish(self, hand: Hand, seat: int, t: int, kind: str) -> tuple[str, list[str]]:
        doublings = []
        if hand.is_wild(t):
            doublings.append("okey")
        if all(hand.opened[s] is None for s in range(hand.players) if s != seat):
            doublings.append("before_others_opened")
        if hand.opened_turn[seat] == hand.turn_index:
            doublings.append("from_hand")
        if hand.opened[seat] == "pairs":
            doublings.append("pairs")
        return kind, doublings

    def multiplier(self, doublings: Sequence[str]) -> int:
        # Finishing before the others opened and from the hand are both (b): they double once.
        kinds = set(doublings)
        if {"before_others_opened", "from_hand"} <= kinds:
            kinds.discard("from_hand")
        return 1 << len(kinds)

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        finisher = hand.result.get("finisher")
        m = int(hand.result["multiplier"])
        out: list[list[dict[str, Any]]] = []
        for s in range(hand.players):
            opened = hand.opened[s]
            if s == finisher:
                out.append([{"item": "finished", "multiplier": m, "points": -1000 * m}])
            elif opened is None:
                out.append([{"item": "never_opened", "multiplier": m, "points": 1000 * m}])
            else:
                total = rack_sum(hand, s, 500)
                factor = 2 if opened == "pairs" else 1
                part = {"item": "tiles_left", "sum": total, "factor": factor, "multiplier": m}
                out.append([{**part, "pairs": opened == "pairs", "points": total * factor * m}])
        return out


RULES = Gobek17()
