"""A slow, obviously-correct reference for the hand solver, written from RULES.md alone.

It does not import the engine. Tiles are written in RULES.md notation (``R5``, ``K13``, ``F``)
and the hand's okey is given as its identity (``R6``): every tile written as the okey is a wild
okey, and ``F`` (a fake okey) is an ordinary tile with the okey's identity.

The method is plain exhaustive search. Take the lowest real tile left: it is either left out (where
the question allows) or sits in some meld. Every meld holding it is listed straight from the
definitions:

- a run: one colour, positions ``lo..hi`` with 3 <= length <= 13, positions 1..13 being the
  numbers and, when ``wrap_13_1`` is on, position 14 being a high 1 after 13 (so 12-13-1 and
  11-12-13-1 are runs, and 13-1-2 never is: nothing follows position 14); each number once;
- a set: one number, 3 or 4 distinct colours;

and every slot of the meld other than the lowest tile's own is filled by a real tile still there
or by a wild okey (at most the wilds left; a missing tile must be a wild). The lowest tile's own
slot is real, so every meld holds a tile that is not wild. Wild okeys never meld alone, so once no
real tile is left, the wilds left are left over. Results are memoised on the sorted tuple of
real tiles left and the number of wilds left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from functools import cache
from itertools import combinations

COLOURS = "RBKY"
NEG = -(10**9)

Ident = int  # colour * 13 + number - 1 (this module's own encoding)


def _ident(colour: int, number: int) -> Ident:
    return colour * 13 + number - 1


def _colour(i: Ident) -> int:
    return i // 13


def _number(i: Ident) -> int:
    return i % 13 + 1


def parse(token: str) -> Ident:
    """An ordinary tile in notation (not ``F``) as an identity."""
    colour = COLOURS.index(token[0])
    number = int(token[1:])
    if not 1 <= number <= 13:
        raise ValueError(token)
    return _ident(colour, number)


def split_rack(tiles: Sequence[str], okey: str) -> tuple[tuple[Ident, ...], int]:
    """(the real tiles as sorted identities, the number of wild okeys).

    A tile written as the okey is wild; ``F`` plays as the okey's identity.
    """
    okey_id = parse(okey)
    reals: list[Ident] = []
    wilds = 0
    for t in tiles:
        if t == okey:
            wilds += 1
        elif t == "F":
            reals.append(okey_id)
        else:
            reals.append(parse(t))
    return tuple(sorted(reals)), wilds


# ---------------------------------------------------------------------------------------------
# Every meld that holds a given real tile
# ---------------------------------------------------------------------------------------------
def _fillings(
    slots: Sequence[Ident], counts: Counter[Ident], wilds: int
) -> Iterator[tuple[tuple[Ident, ...], int]]:
    """Every way to fill ``slots`` (distinct identities) with real tiles or wilds.

    Yields (the real tiles used, the wilds used). A slot whose tile is not there takes a wild.
    """
    present = [s for s in slots if counts[s] > 0]
    missing = len(slots) - len(present)
    if missing > wilds:
        return
    for extra in range(0, min(wilds - missing, len(present)) + 1):
        for as_wild in combinations(range(len(present)), extra):
            chosen = set(as_wild)
            reals = tuple(s for k, s in enumerate(present) if k not in chosen)
            yield reals, missing + extra


def melds_with(
    t: Ident, counts: Counter[Ident], wilds: int, wrap: bool
) -> Iterator[tuple[tuple[Ident, ...], int, int]]:
    """Every meld holding the real tile ``t``, the other slots taken from ``counts``/wilds.

    Yields (the other real tiles used, the wilds used, the meld's total value), where every tile
    counts the number it plays as (a wild: the number it stands for; a high 1: 1).
    """
    c, n = _colour(t), _number(t)
    # Sets: t's colour and 2 or 3 other colours, all for number n.
    others = [k for k in range(4) if k != c]
    for size in (2, 3):
        for cols in combinations(others, size):
            slots = [_ident(k, n) for k in cols]
            for reals, used in _fillings(slots, counts, wilds):
                yield reals, used, n * (size + 1)
    # Runs: positions lo..hi of colour c holding t at position p. A position whose tile is not
    # there needs a wild, so a span missing more tiles than there are wilds is no run, nor is
    # any longer span around it: the loops stop there.
    top = 14 if wrap else 13
    positions = [n] + ([14] if n == 1 and wrap else [])
    for p in positions:
        missing_below = 0
        for lo in range(p, max(1, p - 12) - 1, -1):
            if lo < p and counts[_ident(c, lo)] == 0:
                missing_below += 1
            if missing_below > wilds:
                break
            missing = missing_below
            for hi in range(p, min(top, lo + 12) + 1):
                if hi > p and counts[_ident(c, hi if hi <= 13 else 1)] == 0:
                    missing += 1
                if missing > wilds:
                    break
                if hi - lo + 1 < 3:
                    continue
                numbers = [q if q <= 13 else 1 for q in range(lo, hi + 1) if q != p]
                slots = [_ident(c, m) for m in numbers]
                value = sum(numbers) + n
                for reals, used in _fillings(slots, counts, wilds):
                    yield reals, used, value


def _without(rest: tuple[Ident, ...], used: tuple[Ident, ...]) -> tuple[Ident, ...]:
    out = list(rest)
    for u in used:
        out.remove(u)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# (a) all tiles into runs and sets; a 15-tile rack finishing by throwing one tile
# ---------------------------------------------------------------------------------------------
@cache
def _groups(reals: tuple[Ident, ...], wilds: int, wrap: bool) -> bool:
    if not reals:
        return wilds == 0
    t, rest = reals[0], reals[1:]
    counts = Counter(rest)
    for used, w, _value in melds_with(t, counts, wilds, wrap):
        if _groups(_without(rest, used), wilds - w, wrap):
            return True
    return False


def groups(tiles: Sequence[str], okey: str, wrap: bool) -> bool:
    """Can every tile be grouped into runs and sets?"""
    reals, wilds = split_rack(tiles, okey)
    return _groups(reals, wilds, wrap)


def finishing_throws(rack: Sequence[str], okey: str, wrap: bool) -> set[str]:
    """The tiles (as written) whose throw leaves the rest grouped into runs and sets."""
    out = set()
    for k, t in enumerate(rack):
        if t not in out and groups(list(rack[:k]) + list(rack[k + 1 :]), okey, wrap):
            out.add(t)
    return out


def can_finish(rack: Sequence[str], okey: str, wrap: bool) -> bool:
    """Can the rack finish (runs and sets) by throwing one tile?"""
    return bool(finishing_throws(rack, okey, wrap))


# ---------------------------------------------------------------------------------------------
# (b) pairs
# ---------------------------------------------------------------------------------------------
@cache
def _pairs(reals: tuple[Ident, ...], wilds: int, spare: bool) -> int:
    """Most disjoint pairs; with ``spare`` False, at least one tile must stay out."""
    if not reals:
        if wilds == 0:
            return 0 if spare else NEG
        # Wilds pair with each other; an odd one (or a spare pair broken) stays out.
        if wilds == 1:
            return 0
        return wilds // 2 if (spare or wilds % 2) else wilds // 2 - 1
    t, rest = reals[0], reals[1:]
    best = _pairs(rest, wilds, True)  # t stays out
    if rest and rest[0] == t:
        best = max(best, 1 + _pairs(rest[1:], wilds, spare))
    if wilds:
        best = max(best, 1 + _pairs(rest, wilds - 1, spare))
    return best


def pair_count(tiles: Sequence[str], okey: str) -> int:
    """The most disjoint pairs (a wild pairs with any tile; two wilds are a pair)."""
    reals, wilds = split_rack(tiles, okey)
    return _pairs(reals, wilds, True)


def most_pairs(tiles: Sequence[str], okey: str) -> int:
    """The most disjoint pairs keeping at least one tile out (to discard)."""
    reals, wilds = split_rack(tiles, okey)
    return max(0, _pairs(reals, wilds, False))


def seven_pairs(tiles: Sequence[str], okey: str) -> bool:
    """Are the 14 tiles exactly seven pairs?"""
    return len(tiles) == 14 and pair_count(tiles, okey) == 7


# ---------------------------------------------------------------------------------------------
# (e) the least face value left over (Düz)
# ---------------------------------------------------------------------------------------------
@cache
def _leftover(
    reals: tuple[Ident, ...], wilds: int, wrap: bool, okey_number: int, count: bool
) -> int:
    if not reals:
        # A wild left over counts the okey's own number (or 1 when counting tiles).
        return wilds * (1 if count else okey_number)
    t, rest = reals[0], reals[1:]
    left = 1 if count else _number(t)
    best = left + _leftover(rest, wilds, wrap, okey_number, count)  # t left over
    counts = Counter(rest)
    for used, w, _value in melds_with(t, counts, wilds, wrap):
        best = min(best, _leftover(_without(rest, used), wilds - w, wrap, okey_number, count))
    return best


def least_leftover(tiles: Sequence[str], okey: str, wrap: bool, count: bool = False) -> int:
    """The least face value outside runs and sets (a fake counts the okey's number, as does a
    wild left over); with ``count``, the fewest tiles left outside instead."""
    reals, wilds = split_rack(tiles, okey)
    return _leftover(reals, wilds, wrap, _number(parse(okey)), count)


# ---------------------------------------------------------------------------------------------
# (f) the best opening
# ---------------------------------------------------------------------------------------------
@cache
def _opening(reals: tuple[Ident, ...], wilds: int, wrap: bool, spare: bool) -> int:
    """Highest total of disjoint melds; with ``spare`` False some tile must still stay out."""
    if not reals:
        return 0 if (spare or wilds > 0) else NEG
    t, rest = reals[0], reals[1:]
    best = _opening(rest, wilds, wrap, True)  # t stays out
    counts = Counter(rest)
    for used, w, value in melds_with(t, counts, wilds, wrap):
        sub = _opening(_without(rest, used), wilds - w, wrap, spare)
        if sub != NEG:
            best = max(best, value + sub)
    return best


def best_opening(tiles: Sequence[str], okey: str, wrap: bool) -> int:
    """The highest total of disjoint runs and sets keeping at least one tile out."""
    reals, wilds = split_rack(tiles, okey)
    return max(0, _opening(reals, wilds, wrap, False))


# ---------------------------------------------------------------------------------------------
# Finish kinds of a closed hand (classic): normal, pairs, colour, sequential colour
# ---------------------------------------------------------------------------------------------
def one_colour(tiles: Sequence[str], okey: str) -> bool:
    """All non-wild tiles of one colour; a fake counts as the okey's colour."""
    reals, _ = split_rack(tiles, okey)
    return len({_colour(r) for r in reals}) <= 1


def every_number(tiles: Sequence[str], okey: str) -> bool:
    """Every number 1..13 present, wilds filling in missing numbers."""
    reals, wilds = split_rack(tiles, okey)
    return 13 - len({_number(r) for r in reals}) <= wilds


def clear_caches() -> None:
    for f in (_groups, _pairs, _leftover, _opening):
        f.cache_clear()
