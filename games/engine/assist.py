"""Help for assisted tables (RULES.md §6): the rules are the same, only the help differs.

:func:`assist` reads one seat's view (:meth:`Hand.view`) and nothing else, so the help never
knows more than the player does. It answers, as plain JSON-ready data:

- ``layout``: the rack sorted into its best melds, as a 32-slot stand layout
  (:mod:`.layout`): each meld on one row with an empty slot after it, the leftovers last;
- ``feedable``: the rack tiles that fit a meld on the table now (``add``) or could take a
  table okey's place (``swap``, okey51 only), with the meld ids; discarding one of these is
  the punished / workable discard of RULES.md §4-5;
- ``workable_discard``: the previous seat's top discard, and whether it extends table melds or
  makes a meld with the rack;
- ``opening``: the best opening the seat could make now (melds reaching the bar, else enough
  pairs), as the ready ``open`` move, or None.

Every suggestion is an ordinary move that the engine still judges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from . import solver
from .layout import ROW_SLOTS, SLOTS, Layout, reconcile
from .melds import PAIR, Meld
from .selfplay import pairs_in
from .tiles import FAKE, colour_of, format_tile, number_of, parse_tile
from .variants import rules_for


def assist(view: Mapping[str, Any]) -> dict[str, Any]:
    """The help an assisted table shows ``view["seat"]`` (see the module's docstring)."""
    rack = [parse_tile(t) for t in view["rack"]]
    okey = parse_tile(view["okey"])
    rules = rules_for(view["variant"])
    wrap = rules.wrap(view["options"])
    table = [Meld.from_state(m["state"]) for m in view["table"] if m["kind"] != PAIR]
    swaps = rules.swap
    best = solver.best_opening(rack, okey, wrap)  # both the sorting and the opening use it
    return {
        "layout": melds_layout(rack, okey, wrap, best),
        "feedable": feedable(rack, okey, wrap, table, swaps),
        "workable_discard": workable_discard(view, rack, okey, wrap, table, swaps),
        "opening": opening(view, rack, okey, wrap, best),
    }


# ---------------------------------------------------------------------------------------------
# The rack sorted into melds
# ---------------------------------------------------------------------------------------------
def best_groups(
    rack: Sequence[int], okey: int, wrap: bool, best: solver.Opening | None = None
) -> tuple[list[list[int]], list[int]]:
    """The rack's best melds (every tile, when it all groups; else the melds of highest total,
    which leave the least face value in hand) and the tiles left over. ``best`` is the rack's
    :func:`~.solver.best_opening` when the caller has it already."""
    whole = solver.arrange(rack, okey, wrap) if rack else None
    if whole is not None:
        groups = [list(m.tiles) for m in whole]
    else:
        found = best if best is not None else solver.best_opening(rack, okey, wrap)
        groups = [[parse_tile(tok.split(":")[0]) for tok in meld] for meld in found.melds]
    left = Counter(rack) - Counter(t for g in groups for t in g)
    # Wild okeys last: they are the tiles a player looks for first.
    leftover = sorted(left.elements(), key=lambda t: (t == okey, t))
    return groups, leftover


def melds_layout(
    rack: Sequence[int], okey: int, wrap: bool, best: solver.Opening | None = None
) -> Layout:
    """The rack as :func:`best_groups` sorts it, on the two-row stand: a meld never spans the
    two rows (a row's end splits groups), an empty slot follows each meld, leftovers come last."""
    groups, leftover = best_groups(rack, okey, wrap, best)
    codes = [format_tile(t) for t in rack]
    rows: list[list[str | None]] = [[], []]
    row = 0
    for group in groups:
        while row < 2 and len(rows[row]) + len(group) > ROW_SLOTS:
            row += 1
        if row == 2:  # cannot happen with a real rack; keep every tile, without gaps
            return reconcile([], codes)
        rows[row] += [format_tile(t) for t in group]
        if len(rows[row]) < ROW_SLOTS:
            rows[row].append(None)
    for t in leftover:
        while row < 2 and len(rows[row]) >= ROW_SLOTS:
            row += 1
        if row == 2:
            return reconcile([], codes)
        rows[row].append(format_tile(t))
    out: Layout = []
    for r in rows:
        out += r + [None] * (ROW_SLOTS - len(r))
    assert len(out) == SLOTS
    return out


def arranged(rack: Sequence[str], okey: str, wrap: bool) -> Layout:
    """The rack (in notation) laid out in its best runs and sets at once, the best opening
    first (:func:`melds_layout`): what "Arrange runs and sets" puts on the stand."""
    return melds_layout([parse_tile(t) for t in rack], parse_tile(okey), wrap)


# ---------------------------------------------------------------------------------------------
# Feeding
# ---------------------------------------------------------------------------------------------
def _identity(t: int, okey: int) -> int | None:
    """What a tile plays as: None for a wild okey, the okey's identity for a fake."""
    return None if t == okey else (okey if t == FAKE else t)


def feedable(
    rack: Sequence[int], okey: int, wrap: bool, table: Sequence[Meld], swaps: bool
) -> list[dict[str, Any]]:
    """Rack tiles that fit a table run or set now, each with the meld ids it can be added to
    and (okey51) swapped onto, in tile order. A wild okey is left out: it fits nearly every
    meld, so marking it would say nothing, and feeding it gives the best tile away."""
    out: list[dict[str, Any]] = []
    for t in sorted(set(rack)):
        ident = _identity(t, okey)
        if ident is None:
            continue
        add = [m.id for m in table if m.ends_for(ident, wrap)]
        swap = [m.id for m in table if m.could_swap(ident)] if swaps else []
        if add or swap:
            out.append({"tile": format_tile(t), "add": add, "swap": swap})
    return out


# ---------------------------------------------------------------------------------------------
# The previous seat's discard
# ---------------------------------------------------------------------------------------------
def joins_rack(t: int, rack: Sequence[int], okey: int, wrap: bool) -> bool:
    """Does ``t`` make a run or set with tiles of the rack? Any meld holding ``t`` holds a
    three-tile meld with ``t`` (three neighbours of a run, or three of a set), so pairs of
    rack tiles are enough to try, and only tiles of its colour or number (or wild) can join."""
    ident = _identity(t, okey)
    near = sorted(
        x
        for x in rack
        if ident is None
        or (other := _identity(x, okey)) is None
        or colour_of(other) == colour_of(ident)
        or number_of(other) == number_of(ident)
    )
    for a, b in set(combinations(near, 2)):
        if solver.groups_into_melds([t, a, b], okey, wrap):
            return True
    return False


def workable_discard(
    view: Mapping[str, Any],
    rack: Sequence[int],
    okey: int,
    wrap: bool,
    table: Sequence[Meld],
    swaps: bool,
) -> dict[str, Any] | None:
    """The previous seat's top discard and what it would do for this seat: ``melds`` (the
    table melds it could be added to or, in okey51, swapped onto), ``with_rack`` (it makes a
    run or set with rack tiles) and ``workable`` (either); None when that seat has no discard.
    Whether it may be taken now is the view's ``can_take``."""
    seat = int(view["seat"])
    previous = (seat - 1) % int(view["players"])
    pile = view["discards"][previous]
    if not pile:
        return None
    t = parse_tile(pile[-1])
    ident = _identity(t, okey)
    melds = [m.id for m in table if m.ends_for(ident, wrap) or (swaps and _swaps(m, ident))]
    with_rack = joins_rack(t, rack, okey, wrap)
    return {
        "tile": format_tile(t),
        "seat": previous,
        "melds": melds,
        "with_rack": with_rack,
        "workable": bool(melds) or with_rack,
    }


def _swaps(m: Meld, ident: int | None) -> bool:
    return ident is not None and m.could_swap(ident)


# ---------------------------------------------------------------------------------------------
# The opening
# ---------------------------------------------------------------------------------------------
def opening(
    view: Mapping[str, Any],
    rack: Sequence[int],
    okey: int,
    wrap: bool,
    best: solver.Opening | None = None,
) -> dict[str, Any] | None:
    """The best opening ``view["seat"]`` could make now, or None: melds of the highest total
    when they reach the bar the view states (51, raised by doubling in okey51 and always in
    gobek17), else the most pairs when they are enough; one tile is always kept to discard.
    As ``{"kind", "groups", "total", "pairs", "move"}``, ``move`` being the ``open`` move."""
    seat = int(view["seat"])
    if not rules_for(view["variant"]).open_table or view["opened"][seat] is not None or not rack:
        return None
    found = best if best is not None else solver.best_opening(rack, okey, wrap)
    # Below the bar, an opening that leaves one tile to throw (okey101's option).
    rules = rules_for(view["variant"])
    last_tile = rules.opens_below_bar(view["options"], len(rack), found.tiles_used)
    if found.melds and (found.reaches(int(view["opening_bar"])) or last_tile):
        groups = [list(m) for m in found.melds]
        return {
            "kind": "melds",
            "groups": groups,
            "total": found.total,
            "pairs": None,
            "move": {"do": "open", "melds": [list(g) for g in groups]},
        }
    pairs = pairs_in(list(rack), okey)[: (len(rack) - 1) // 2]
    if pairs and len(pairs) >= int(view["pairs_needed"]):
        return {
            "kind": "pairs",
            "groups": pairs,
            "total": None,
            "pairs": len(pairs),
            "move": {"do": "open", "pairs": [list(p) for p in pairs]},
        }
    return None


__all__ = [
    "arranged",
    "assist",
    "best_groups",
    "feedable",
    "melds_layout",
    "opening",
    "workable_discard",
]
