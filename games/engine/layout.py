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

ROW_SLOTS = 16
SLOTS = 2 * ROW_SLOTS

Layout = list[str | None]


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


def groups(layout: Sequence[str | None], leave_out: str | None = None) -> list[list[str]]:
    """The runs of adjacent tiles on each row (gaps and row ends split them); ``leave_out``
    (a tile about to be thrown) is taken out once first."""
    found: list[list[str]] = []
    skipped = leave_out is None
    for row in rows(layout):
        current: list[str] = []
        for code in row + [None]:
            if code is not None and not skipped and code == leave_out:
                skipped = True
                code = None
            if code is None:
                if current:
                    found.append(current)
                current = []
            else:
                current.append(code)
    return found


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


__all__ = [
    "ROW_SLOTS",
    "SLOTS",
    "check",
    "default_layout",
    "groups",
    "reconcile",
    "rows",
    "selected_groups",
]
