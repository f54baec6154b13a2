"""``okey101``: 101 Okey, open table, 21/22 tiles, the 101 bar and +101 penalties (RULES.md §7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..melds import PAIR, Meld
from ..solver import fits_table
from ..tiles import FAKE
from .rules import ASSISTED, BOOL, PARTNERS, TIMER, WITH_DOUBLING, Choice, Rules, rack_sum

if TYPE_CHECKING:
    from ..hand import Hand

# Every penalty of the hand, the price of an unopened rack at the end and the finisher's gain
# are counted in 101s.
PENALTY = 101


class Okey101(Rules):
    key = "okey101"
    options = {
        "doubling": Choice(False, BOOL),
        "partners": PARTNERS,
        "hands": Choice(1, (1, 3, 5, 7, 9, 11)),
        "add_limit": Choice(2, (0, 1, 2, 3)),
        "give_back_penalty": Choice(0, (0, PENALTY)),
        "from_hand_below_bar": Choice(True, BOOL),
        "assisted": ASSISTED,
        "timer": TIMER,
    }
    quick_options = ("hands", "doubling", "partners", "assisted")
    rack_sizes = (22, 21)
    wrap_13_1 = False
    open_table = True
    melds_bar = 101
    melds_raise = WITH_DOUBLING
    pairs_bar = 5
    pairs_raise = WITH_DOUBLING
    swap = True
    swap_in_pairs = True
    pairs_onto_rows = True
    pairs_players_add = True
    melds_players_lay_pairs = True
    take_into_opening = True
    add_limit_option = "add_limit"
    give_back_penalty_option = "give_back_penalty"
    from_hand_option = "from_hand_below_bar"
    finish_needs_opening = True
    void_on_fourth_pairs = True
    dry_wall_at_turn_start = True

    def discard_penalties(
        self, table: Sequence[Meld], okey: int, wrap: bool, t: int
    ) -> list[tuple[int, str, bool]]:
        if t == okey:
            return [(PENALTY, "okey_thrown", False)]
        # Workable: it could be added to a run or a set as the table stands (pair rows take
        # nothing here, and a tile that could only swap out an okey is not workable).
        melds = [m for m in table if m.kind != PAIR]
        ident = okey if t == FAKE else t
        if fits_table(ident, melds, wrap):
            return [(PENALTY, "workable", True)]
        return []

    def finish(self, hand: Hand, seat: int, t: int, kind: str) -> tuple[str, list[str]]:
        doublings = []
        if hand.is_wild(t):
            doublings.append("okey")
        if hand.opened[seat] == "pairs":
            doublings.append("pairs")
        others = (s for s in range(hand.players) if s != seat)
        if hand.opened_turn[seat] == hand.turn_index and all(
            hand.opened[s] is None for s in others
        ):
            doublings.append("from_hand")
        return kind, doublings

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        r = hand.result
        n = hand.players
        if r["ending"] == "void":
            return [[] for _ in range(n)]
        m = int(r["multiplier"])
        finisher = r.get("finisher")
        partner = None
        if finisher is not None and hand.options.get("partners"):
            partner = (finisher + 2) % n
        out: list[list[dict[str, Any]]] = []
        for s in range(n):
            opened = hand.opened[s]
            if s == finisher:
                out.append([{"item": "finished", "multiplier": m, "points": -PENALTY * m}])
            elif s == partner:
                # The finisher's partner pays nothing for the end of the hand.
                out.append([{"item": "partner_finished", "points": 0}])
            elif opened is None:
                out.append([{"item": "never_opened", "multiplier": m, "points": 2 * PENALTY * m}])
            else:
                total = rack_sum(hand, s, 0)
                factor = 2 if opened == "pairs" else 1
                parts = [
                    {
                        "item": "tiles_left",
                        "sum": total,
                        "factor": factor,
                        "pairs": opened == "pairs",
                        "multiplier": m,
                        "points": total * factor * m,
                    }
                ]
                wilds = sum(1 for t in hand.racks[s] if t == hand.okey)
                if wilds:
                    parts.append({"item": "okey_held", "count": wilds, "points": PENALTY * wilds})
                out.append(parts)
        return out

    def planned_hands(self, options: Mapping[str, Any]) -> int | None:
        return int(options.get("hands", 1))

    def match_over(self, hand: Hand, scores: Sequence[int]) -> bool:
        # A void hand is played again: it never ends the match.
        return hand.result["ending"] != "void" and super().match_over(hand, scores)


RULES = Okey101()
