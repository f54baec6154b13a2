"""Which kinds of move a seat may try now, from its own view: what a client shows as enabled.

This answers "could a move of this kind be legal now", from the seat's view alone (so a
client, a bot or a page can call it): draw, take, discard, finish, open, lay, add, swap,
give_back, show_indicator. A move of an enabled kind can still be refused for its tiles
(``invalid_meld``, ``below_opening_bar``, ...); a kind that is not listed is always refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .variants import rules_for


def legal_actions(view: Mapping[str, Any]) -> list[str]:
    """The move kinds ``view["seat"]`` may try now, in a fixed order."""
    if view.get("over") or view["result"].get("over"):
        return []
    seat = view["seat"]
    rules = rules_for(view["variant"])
    out: list[str] = []
    if (
        rules.indicator_show
        and not view["indicator_shown"]
        and not view["acted"]
        and view["indicator"] in view["rack"]
    ):
        out.append("show_indicator")
    if view["turn"] != seat:
        return out
    has_tile = bool(view["has_tile"])
    if not has_tile:
        out.append("draw")
        if view["can_take"]:
            out.append("take")
        return out
    if view["must_draw"]:
        return ["draw"]
    if view.get("must_finish"):
        return ["discard"]
    taken_waiting = view["taken"] is not None
    if not rules.open_table:
        out.append("discard")
        if len(view["rack"]) == 15:
            out.append("finish")
        return out
    opened = view["opened"][seat]
    keep_one = len(view["rack"]) > 1
    if not taken_waiting:
        out.append("discard")
    may_add = opened == "melds" or (opened == "pairs" and rules.pairs_players_add)
    has_melds = any(m["kind"] != "pair" for m in view["table"])
    if keep_one:
        if not opened:
            out.append("open")
        else:
            out.append("lay")
            if may_add and has_melds:
                out.append("add")
    # A swap leaves the rack as large as it was: even a last tile may be given for an okey.
    has_okey = has_melds or (rules.swap_in_pairs and bool(view["table"]))
    if rules.swap and may_add and has_okey:
        out.append("swap")
    if taken_waiting:
        out.append("give_back")
    return out


__all__ = ["legal_actions"]
