"""Which kinds of move a seat may try now, from its own view: what a client shows as enabled.

This answers "could a move of this kind be legal now", from the seat's view alone (so a
client, a bot or a page can call it): draw, take, discard, finish, open, lay, add, swap,
give_back, show_indicator. A move of an enabled kind can still be refused for its tiles
(``invalid_meld``, ``below_opening_bar``, ...); a kind that is not listed is always refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import MeldError
from .melds import PAIR, Meld, read_meld, read_pair
from .tiles import FAKE, parse_tile
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


def meld_targets(
    view: Mapping[str, Any], legal: Sequence[str] | None = None
) -> dict[str, dict[int, list[str]]]:
    """Which rack tiles of ``view["seat"]`` may go onto which table meld now: ``add`` (to an
    end of a run or set, a wild okey included) and ``swap`` (for a wild okey standing in the
    meld), each as meld id -> the rack tiles in notation, in rack order, each once. Empty for
    a kind :func:`legal_actions` does not list. An add may still be refused for a limit of
    the turn (``add_limit``). ``legal``: :func:`legal_actions` of ``view``, when the caller
    has it already."""
    legal = legal_actions(view) if legal is None else legal
    out: dict[str, dict[int, list[str]]] = {"add": {}, "swap": {}}
    if "add" not in legal and "swap" not in legal:
        return out
    rules = rules_for(view["variant"])
    wrap = rules.wrap(view["options"])
    okey = parse_tile(view["okey"])
    codes = list(dict.fromkeys(view["rack"]))
    rack = [(code, parse_tile(code)) for code in codes]
    for shown in view["table"]:
        meld = Meld.from_state(shown["state"])
        if "add" in legal and meld.kind != PAIR:
            fits = [
                c for c, t in rack if meld.ends_for(None if t == okey else _plays(t, okey), wrap)
            ]
            if fits:
                out["add"][meld.id] = fits
        if "swap" in legal and (meld.kind != PAIR or rules.swap_in_pairs) and any(meld.wild):
            gives = [c for c, t in rack if t != okey and meld.swap_index(_plays(t, okey)) >= 0]
            if gives:
                out["swap"][meld.id] = gives
    return out


def weigh(view: Mapping[str, Any], groups: list[list[str]]) -> dict[str, Any]:
    """What ``groups`` of the seat's tiles (notation, grouped as they stand on the stand) are
    worth put on the table now: for each group (in order) ``kind`` (``meld`` for three tiles or
    more, ``pair`` for two, None for one), ``valid``, ``points`` (a valid run or set's value, the
    okey counted as the tile it stands for) and ``why`` (the meld error's code when it is not
    valid); ``total``, the points of the valid runs and sets; ``pairs``, the valid pairs; and
    while the seat has not opened, its ``bar`` and ``pairs_needed`` (None once it has, or in a
    closed variant). What an opening of them would be, as the engine reads it."""
    rules = rules_for(view["variant"])
    wrap = rules.wrap(view["options"])
    okey = parse_tile(view["okey"])
    out: list[dict[str, Any]] = []
    for tiles in groups:
        kind = "meld" if len(tiles) >= 3 else "pair" if len(tiles) == 2 else None
        found: dict[str, Any] = {"kind": kind, "valid": False, "points": 0, "why": None}
        try:
            if kind == "meld":
                found["points"] = read_meld(tiles, okey, wrap).value(okey)
                found["valid"] = True
            elif kind == "pair":
                read_pair(tiles, okey)
                found["valid"] = True
            else:
                found["why"] = "meld_too_short"
        except MeldError as exc:
            found["why"] = exc.code
        out.append(found)
    opened = view["opened"][view["seat"]] if rules.open_table else None
    unopened = rules.open_table and not opened
    return {
        "groups": out,
        "total": sum(g["points"] for g in out if g["valid"] and g["kind"] == "meld"),
        "pairs": sum(1 for g in out if g["valid"] and g["kind"] == "pair"),
        "bar": view["opening_bar"] if unopened else None,
        "pairs_needed": view["pairs_needed"] if unopened else None,
    }


def _plays(t: int, okey: int) -> int:
    """What a tile that is not the wild okey plays as: a fake plays as the okey."""
    return okey if t == FAKE else t


__all__ = ["legal_actions", "meld_targets", "weigh"]
