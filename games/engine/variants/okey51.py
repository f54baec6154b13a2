"""``okey51``: open table, the 51 bar, feeding and the okey swap (RULES.md §4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..melds import PAIR, Meld
from ..solver import fits_table, swaps_table
from ..tiles import FAKE, number_of
from .rules import ASSISTED, BOOL, PARTNERS, TIMER, WITH_DOUBLING, Choice, Rules, rack_sum

if TYPE_CHECKING:
    from ..hand import Hand


class Okey51(Rules):
    key = "okey51"
    options = {
        "doubling": Choice(True, BOOL),
        "hands": Choice(1, (1, 3)),
        "partners": PARTNERS,
        "assisted": ASSISTED,
        "wrap_13_1": Choice(True, BOOL),
        "timer": TIMER,
    }
    quick_options = ("hands", "doubling", "partners", "assisted")
    open_table = True
    melds_bar = 51
    melds_raise = WITH_DOUBLING
    swap = True
    give_back_cancels_take = True

    def take_penalty(self, hand: Hand, t: int) -> int:
        return hand.value(t) * 10

    def discard_penalties(
        self, table: Sequence[Meld], okey: int, wrap: bool, t: int
    ) -> list[tuple[int, str, bool]]:
        melds = [m for m in table if m.kind != PAIR]
        if t == okey:
            return [(100, "okey_discard", False)] if melds else []
        ident = okey if t == FAKE else t
        if fits_table(ident, melds, wrap) or swaps_table(ident, melds):
            return [(100, "punished_discard", True)]
        return []

    def feed_penalty(self, hand: Hand, meld: Meld, index: int) -> int:
        return meld.tile_value(index, hand.okey) * 10

    def swap_penalty(self, hand: Hand, identity: int) -> int:
        return 100 + number_of(identity) * 10

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        r = hand.result
        finisher = r.get("finisher")
        big = r["ending"] == "finish" and r["kind"] in ("pairs", "okey")
        out: list[list[dict[str, Any]]] = []
        for s in range(hand.players):
            opened = hand.opened[s]
            if s == finisher:
                out.append(
                    [{"item": "finished", "kind": r["kind"], "points": -1000 if big else -500}]
                )
            elif opened is None:
                out.append([{"item": "never_opened", "points": 1000 if big else 500}])
            else:
                factor = 10 if (big or opened == "pairs") else 5
                wild_flat = 1000 if opened == "pairs" else 500
                total = rack_sum(hand, s, 0)
                parts = [
                    {
                        "item": "tiles_left",
                        "sum": total,
                        "factor": factor,
                        "pairs": opened == "pairs",
                        "points": total * factor,
                    }
                ]
                wilds = sum(1 for t in hand.racks[s] if t == hand.okey)
                if wilds:
                    parts.append({"item": "okey_held", "count": wilds, "points": wilds * wild_flat})
                out.append(parts)
        return out


RULES = Okey51()
