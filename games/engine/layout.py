"""A rack as the player arranged it on the two-row stand (ıstaka): slots holding a tile or a gap.

A layout is a list of ``2 * ROW_SLOTS`` entries, row one then row two, each a tile in notation
or ``None`` for an empty slot. The server keeps each seat's layout so a reload shows it
unchanged; :func:`reconcile` fits a stored layout to the rack as it is now (tiles that left
are cleared, new tiles go into free slots), and :func:`groups` reads the tiles the player has
put side by side (a gap or a row's end separates groups), which a finish tries first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .tiles import COLOURS, FAKE, colour_of, number_of, parse_tile, parse_token

ROW_SLOTS = 16
SLOTS = 2 * ROW_SLOTS

Layout = list[str | None]

# The ways the rack's sort buttons sort it (:func:`sorted_layout`).
SORTS = ("runs", "sets", "pairs")
# The colours in the order the sort puts them: red, yellow, blue, black; fakes after them.
SORT_COLOURS = "RYBK"


def default_layout(rack: Sequence[str]) -> Layout:
    """The rack as dealt: the first row filled from the left, then the second."""
    return reconcile([], rack)


def reconcile(layout: Sequence[str | None], rack: Sequence[str]) -> Layout:
    """``layout`` fitted to ``rack``: every rack tile exactly once, placed tiles kept where they
    are, tiles no longer in the rack removed, new tiles in the first free slots."""
    out: Layout = list(layout[:SLOTS]) + [None] * max(0, SLOTS - len(layout))
    left = Counter(rack)
    for i, code in enumerate(out):
        if code is None:
            continue
        if left[code] > 0:
            left[code] -= 1
        else:
            out[i] = None
    new = []
    for code in rack:  # what is left over is new, in the rack's order
        if left[code] > 0:
            left[code] -= 1
            new.append(code)
    free = [i for i, code in enumerate(out) if code is None]
    for k, code in enumerate(new):
        if k < len(free):
            out[free[k]] = code
        else:  # more tiles than slots: cannot happen with a real rack
            out.append(code)
    return out


def check(layout: object, rack: Sequence[str]) -> Layout:
    """A layout sent by a client, checked: the right length, and exactly the rack's tiles."""
    if not isinstance(layout, list) or len(layout) != SLOTS:
        raise ValueError(f"a layout is a list of {SLOTS} slots")
    if not all(code is None or isinstance(code, str) for code in layout):
        raise ValueError("each slot holds a tile such as R5, or nothing")
    placed = Counter(code for code in layout if code is not None)
    if placed != Counter(rack):
        raise ValueError("the layout does not hold exactly the rack's tiles")
    return list(layout)


def rows(layout: Sequence[str | None]) -> list[list[str | None]]:
    return [list(layout[:ROW_SLOTS]), list(layout[ROW_SLOTS:SLOTS])]


def slot_groups(layout: Sequence[str | None]) -> list[list[int]]:
    """The slots of each run of adjacent tiles on each row (gaps and row ends split them)."""
    found: list[list[int]] = []
    for start in range(0, len(layout), ROW_SLOTS):
        current: list[int] = []
        for i in range(start, min(start + ROW_SLOTS, len(layout))):
            if layout[i] is not None:
                current.append(i)
            elif current:
                found.append(current)
                current = []
        if current:
            found.append(current)
    return found


def _tiles_in(layout: Sequence[str | None], slots: Sequence[int]) -> list[str]:
    return [code for i in slots if (code := layout[i]) is not None]


def groups(layout: Sequence[str | None], leave_out: str | None = None) -> list[list[str]]:
    """The runs of adjacent tiles on each row (gaps and row ends split them); ``leave_out``
    (a tile about to be thrown) is taken out once first."""
    standing = list(layout)
    if leave_out is not None and leave_out in standing:
        standing[standing.index(leave_out)] = None
    return [_tiles_in(standing, group) for group in slot_groups(standing)]


def groups_at(layout: Sequence[str | None], slots: Sequence[int]) -> list[list[str]]:
    """The tiles in ``slots`` (indexes into ``layout``), grouped as they stand on the rack: for
    each group of adjacent tiles, its tiles in the chosen slots, in rack order. A slot names
    one copy of a tile where a name could be either of two. Raises ``ValueError`` for a slot
    chosen twice, out of the stand, or empty."""
    _check_slots(layout, slots)
    chosen = set(slots)
    found = (_tiles_in(layout, [i for i in g if i in chosen]) for g in slot_groups(layout))
    return [group for group in found if group]


def taken(layout: Sequence[str | None], slots: Sequence[int]) -> Layout:
    """``layout`` with the tiles in ``slots`` taken off the stand (a move played them): the
    stand the player expects after it, where the copy they chose is the one gone. Raises
    ``ValueError`` as :func:`groups_at` does."""
    _check_slots(layout, slots)
    out = list(layout)
    for slot in slots:
        out[slot] = None
    return out


def holds(layout: Sequence[str | None], slot: int, token: str) -> bool:
    """Whether ``slot`` holds the tile ``token`` names (a wild okey's ``:X`` aside). Raises
    ``ValueError`` for a token that is not a tile."""
    code = layout[slot]
    return code is not None and parse_tile(code) == parse_token(token)[0]


def _check_slots(layout: Sequence[str | None], slots: Sequence[int]) -> None:
    if not isinstance(slots, Sequence) or isinstance(slots, str):
        raise ValueError("slots is a list of places on the stand")
    for slot in slots:
        if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < len(layout):
            raise ValueError(f"no slot {slot!r} on the stand")
        if layout[slot] is None:
            raise ValueError(f"slot {slot} holds no tile")
    if len(set(slots)) != len(slots):
        raise ValueError("a slot is chosen once")


def selected_groups(layout: Sequence[str | None], selected: Sequence[str]) -> list[list[str]]:
    """The selected tiles, grouped as they stand on the rack: for each group of adjacent tiles,
    the selected ones in it (in rack order). Each selected tile is used once."""
    want = Counter(selected)
    out: list[list[str]] = []
    for group in groups(layout):
        chosen = []
        for code in group:
            if want[code] > 0:
                want[code] -= 1
                chosen.append(code)
        if chosen:
            out.append(chosen)
    return out


FAKE_CODE = "F"


def _row_chunks(codes: list[str]) -> list[list[str]]:
    """``codes`` as groups that each fit a row (a gap may then fall between two of them)."""
    return [codes[i : i + ROW_SLOTS - 1] for i in range(0, len(codes), ROW_SLOTS - 1)]


def _sort_place(code: str) -> tuple[int, int]:
    """A tile's (colour, number) for sorting: colours in :data:`SORT_COLOURS` order, a fake
    after them as number 0."""
    t = parse_tile(code)
    if t == FAKE:
        return len(SORT_COLOURS), 0
    return SORT_COLOURS.index(COLOURS[colour_of(t)]), number_of(t)


def sorted_layout(rack: Sequence[str], okey: str, by: str) -> Layout:
    """The rack sorted as a sort button sorts it, on the stand: ``by`` ``runs`` (by colour,
    then number; one colour's consecutive or equal numbers make a group), ``sets`` (by number,
    then colour; equal numbers make a group) or ``pairs`` (the pairs first, two equal tiles
    each, then the other tiles as runs sort them, side by side). A fake okey sorts where the
    tile it plays as (the okey) belongs; the wild okeys (tiles equal to ``okey``) go last,
    each alone. An empty slot separates groups; a group that would run past the first row's
    end starts the second, and when the gaps do not fit the tiles stand in order without
    them."""
    if by not in SORTS:
        raise ValueError(f"a rack is sorted by {', '.join(SORTS)}")
    place = {code: _sort_place(okey if code == FAKE_CODE else code) for code in set(rack)}

    def key(code: str) -> tuple[bool, tuple[int, int]]:
        colour, number = place[code]
        return code == okey, ((number, colour) if by == "sets" else (colour, number))

    codes = sorted(rack, key=key)
    found: list[list[str]] = []
    for code in codes:
        group = found[-1] if found else None
        together = False
        if group is not None and code != okey and group[-1] != okey:
            prev = group[-1]
            (pc, pn), (c, n) = place[prev], place[code]
            if by == "runs":
                together = pc == c and n - pn <= 1
            elif by == "sets":
                together = pn == n
            else:
                together = prev == code and len(group) < 2
        if together and group is not None:
            group.append(code)
        else:
            found.append([code])
    if by == "pairs":
        # The pairs, then what is left as one run of tiles (the wild okeys still last).
        left = [g[0] for g in found if len(g) == 1 and g[0] != okey]
        wild = [g[0] for g in found if len(g) == 1 and g[0] == okey]
        found = [g for g in found if len(g) == 2] + _row_chunks(left) + [[c] for c in wild]
    out: Layout = []
    for group in found:
        column = len(out) % ROW_SLOTS
        if out and column:
            if column + 1 + len(group) > ROW_SLOTS and len(out) < ROW_SLOTS:
                out += [None] * (ROW_SLOTS - len(out))  # to the second row
            else:
                out.append(None)
        out += group
    if len(out) > SLOTS:
        out = list(codes)
    return out + [None] * (SLOTS - len(out))


__all__ = [
    "ROW_SLOTS",
    "SLOTS",
    "SORTS",
    "check",
    "default_layout",
    "groups",
    "groups_at",
    "holds",
    "reconcile",
    "rows",
    "selected_groups",
    "slot_groups",
    "sorted_layout",
    "taken",
]
