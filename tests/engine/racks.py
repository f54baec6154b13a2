"""Rack makers shared by the solver tests and ``bench/engine.py``, in RULES.md notation.

- :func:`random_melds`: runs and sets of a given size, as for a table.
- :func:`winning_rack`: 14 tiles built as runs and sets (so they group), with a chosen number of
  wild okeys and, sometimes, fakes; every copy count is physically possible (two of each tile,
  the indicator's copy out of play).
- :func:`near_finished`: a winning 14 plus a 15th tile, with one or two tiles replaced from the
  tiles left in the box.
- :func:`set_wilds`: a dealt rack with its number of wild okeys forced, swapping with the pile.

Nothing here imports the engine.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

COLOURS = "RBKY"


def name(colour: int, number: int) -> str:
    return f"{COLOURS[colour]}{number}"


def okey_for(indicator: str) -> str:
    """The okey of an indicator: same colour, one higher, 13 → 1."""
    n = int(indicator[1:])
    return f"{indicator[0]}{n % 13 + 1}"


def box_without(indicator: str, used: Sequence[str]) -> list[str]:
    """The physical tiles left in the box once the indicator and ``used`` are out."""
    box = Counter({name(c, n): 2 for c in range(4) for n in range(1, 14)})
    box["F"] = 2
    box[indicator] -= 1
    for t in used:
        box[t] -= 1
        if box[t] < 0:
            raise ValueError(f"more copies of {t} than exist")
    return sorted(box.elements())


def _template(rng: random.Random, size: int, wrap: bool) -> list[str] | None:
    if rng.random() < 0.35 and size <= 4:
        n = rng.randint(1, 13)
        cols = rng.sample(range(4), size)
        return [name(c, n) for c in cols]
    c = rng.randrange(4)
    top = 14 if wrap else 13
    if size > top:
        return None
    lo = rng.randint(1, top - size + 1)
    return [name(c, p if p <= 13 else 1) for p in range(lo, lo + size)]


def random_melds(
    rng: random.Random, tiles: int, wilds: int, wrap: bool, indicator: str
) -> list[list[str]] | None:
    """Runs and sets (in ascending order) of ``tiles`` tiles in all, ``wilds`` of them wild
    okeys, each meld keeping a tile that is not wild; None when this draw does not fit."""
    okey = okey_for(indicator)
    box = Counter(box_without(indicator, []))
    box.pop(okey)  # the okey's copies are the wilds; fakes play as the okey
    melds: list[list[str]] = []
    left = tiles
    while left:
        sizes = [s for s in range(3, min(left, 7) + 1) if left - s == 0 or left - s >= 3]
        if not sizes:
            return None
        tpl = _template(rng, rng.choice(sizes), wrap)
        if tpl is None:
            return None
        meld = []
        for t in tpl:
            real = "F" if t == okey else t
            if box[real] <= 0:
                return None
            box[real] -= 1
            meld.append(real)
        melds.append(meld)
        left -= len(meld)
    slots = [(i, k) for i, m in enumerate(melds) for k in range(len(m))]
    rng.shuffle(slots)
    placed = 0
    for i, k in slots:
        if placed == wilds:
            break
        if sum(1 for t in melds[i] if t != okey) <= 1:
            continue
        melds[i][k] = okey
        placed += 1
    return melds if placed == wilds else None


def winning_rack(
    rng: random.Random, wilds: int, wrap: bool, indicator: str | None = None
) -> tuple[list[str], str]:
    """(14 tiles that group into runs and sets, holding ``wilds`` wild okeys; the indicator)."""
    while True:
        ind = indicator or name(rng.randrange(4), rng.randint(1, 13))
        melds = random_melds(rng, 14, wilds, wrap, ind)
        if melds is None:
            continue
        rack = [t for m in melds for t in m]
        rng.shuffle(rack)
        return rack, ind


def near_finished(
    rng: random.Random, wilds: int, wrap: bool, replace: int
) -> tuple[list[str], str]:
    """(a 15-tile rack: a winning 14 plus one tile, with ``replace`` tiles swapped; indicator).

    The rack holds exactly ``wilds`` wild okeys: replacements never add or remove one.
    """
    while True:
        rack, ind = winning_rack(rng, wilds, wrap)
        okey = okey_for(ind)
        box = [t for t in box_without(ind, rack) if t != okey]
        rack.append(box.pop(rng.randrange(len(box))))
        ok = True
        for _ in range(replace):
            spots = [k for k, t in enumerate(rack) if t != okey]
            if not spots or not box:
                ok = False
                break
            k = rng.choice(spots)
            new = box.pop(rng.randrange(len(box)))
            box.append(rack[k])
            rack[k] = new
        if ok:
            rng.shuffle(rack)
            return rack, ind


def set_wilds(
    rack: Sequence[str], pile: Sequence[str], okey: str, wilds: int, rng: random.Random
) -> list[str]:
    """The rack with exactly ``wilds`` wild okeys, swapping tiles with the pile (copies stay
    physically possible; at most two wilds exist)."""
    out = list(rack)
    spare = list(pile)
    while out.count(okey) > wilds:
        k = out.index(okey)
        j = next(j for j, t in enumerate(spare) if t != okey)
        out[k], spare[j] = spare[j], out[k]
    while out.count(okey) < wilds:
        j = spare.index(okey)
        k = rng.choice([k for k, t in enumerate(out) if t != okey])
        out[k], spare[j] = spare[j], out[k]
    return out
