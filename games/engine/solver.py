"""The exact hand solver (RULES.md §1-5): finishes, leftover, openings, pairs, workable tiles.

Every question is answered exactly, not by a heuristic. The method is the one mahjong shanten
calculators use: a rack splits into sets (chosen number by number, at most two per number) and,
per colour, what is left must form runs. Per-colour questions are answered by small memoised
searches over a 2-bits-per-number vector (positions 1..14, 14 being a high 1 after 13), so the
work for a whole rack is a short walk over the numbers that can hold a set.

Tiles are codes from :mod:`.tiles`; a rack is any sequence of codes; ``okey`` is the hand's okey
identity. Wild okeys are the tiles equal to ``okey``; fakes play as ``okey``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from .melds import PAIR, RUN, SET, Meld, position_number
from .tiles import FAKE, NUMBERED, colour_of, format_tile, number_of

CAP = 3  # more wilds than exist (two): "cannot"
NEG = -(10**6)
# Entries each per-colour memo keeps: a server process meets ever more colour vectors over its
# life, and a memo that only grows would take its memory. A full memo starts again.
MEMO_LIMIT = 1 << 17


# ---------------------------------------------------------------------------------------------
# Rack preparation
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prepared:
    """A rack as counts: per colour a 2-bit vector over numbers 1..13, and the wild count."""

    vecs: tuple[int, int, int, int]
    wilds: int
    counts: tuple[int, ...]  # per identity 0..51, fakes counted as the okey


def prepare(tiles: Iterable[int], okey: int) -> Prepared:
    counts = [0] * NUMBERED
    wilds = 0
    for t in tiles:
        if t == okey:
            wilds += 1
        else:
            counts[okey if t == FAKE else t] += 1
    vecs = [0, 0, 0, 0]
    for ident, k in enumerate(counts):
        if k:
            vecs[ident // 13] += k << (2 * (ident % 13))
    return Prepared((vecs[0], vecs[1], vecs[2], vecs[3]), wilds, tuple(counts))


def _at(v: int, pos: int) -> int:
    return (v >> (2 * (pos - 1))) & 3


def _bit(pos: int) -> int:
    return 1 << (2 * (pos - 1))


def _wrap_variants(v13: int, wrap: bool) -> list[int]:
    """A colour vector with 0, 1 or 2 of its 1s moved to position 14 (the high 1)."""
    out = [v13]
    if wrap:
        ones = v13 & 3
        for k in range(1, ones + 1):
            out.append(v13 - k + k * _bit(14))
    return out


# ---------------------------------------------------------------------------------------------
# Per-colour runs: the fewest wilds that turn a colour's tiles into runs
# ---------------------------------------------------------------------------------------------
_runs_min_memo: dict[int, int] = {}


def _runs_min(v: int) -> int:
    """Fewest wilds to split the tiles of vector ``v`` (positions 1..14) into runs; CAP if more."""
    if v == 0:
        return 0
    r = _runs_min_memo.get(v)
    if r is not None:
        return r
    i = ((v & -v).bit_length() - 1) // 2 + 1
    rest = v - _bit(i)
    best = CAP
    gaps = 0
    for b in range(i, min(i + 12, 14) + 1):
        if b > i:
            if _at(v, b):
                rest -= _bit(b)
            else:
                gaps += 1
                if gaps >= best:
                    break
                continue
        cost = gaps + max(0, 3 - (b - i + 1))
        if cost < best:
            sub = _runs_min(rest)
            if cost + sub < best:
                best = cost + sub
    if len(_runs_min_memo) >= MEMO_LIMIT:
        _runs_min_memo.clear()
    _runs_min_memo[v] = best
    return best


@lru_cache(maxsize=MEMO_LIMIT)
def colour_min(v13: int, wrap: bool) -> int:
    """Fewest wilds that make one colour's tiles (numbers 1..13) into runs."""
    return min(_runs_min(v) for v in _wrap_variants(v13, wrap))


@lru_cache(maxsize=MEMO_LIMIT)
def colour_min_less_one(v13: int, wrap: bool) -> int:
    """As :func:`colour_min` when one tile of the colour may be left out (thrown)."""
    best = CAP
    for pos in range(1, 14):
        if _at(v13, pos):
            best = min(best, colour_min(v13 - _bit(pos), wrap))
    return best


# ---------------------------------------------------------------------------------------------
# Set options per number: which colours go into sets (at most two sets per number)
# ---------------------------------------------------------------------------------------------
def _subsets(avail: tuple[int, ...], min_size: int) -> list[int]:
    out = []
    for mask in range(1, 16):
        cols = [c for c in range(4) if mask >> c & 1]
        if len(cols) >= min_size and all(avail[c] for c in cols):
            out.append(mask)
    return out


def _set_sizes(real: int, wild_choices: str) -> list[tuple[int, int]]:
    """(wilds, size) choices for a set with ``real`` real tiles.

    ``min``: the fewest wilds (used for finishing); ``all``: every way to reach 3 or 4 tiles.
    """
    if wild_choices == "min":
        return [(max(0, 3 - real), max(3, real))]
    return [(size - real, size) for size in (3, 4) if 0 <= size - real <= 2]


@cache
def set_options(
    signature: tuple[int, int, int, int], min_real: int, wild_choices: str
) -> tuple[tuple[tuple[int, int, int, int], int, int, tuple[tuple[int, int], ...]], ...]:
    """All ways to take 0..3 sets out of one number's colour counts (a third set needs wilds).

    Each option: (tiles taken per colour, wilds used, sets of total size 3, ((mask, size), ...)).
    """
    options: list[tuple[tuple[int, int, int, int], int, int, tuple[tuple[int, int], ...]]] = []
    singles: list[tuple[int, int, int]] = []
    for mask in _subsets(signature, min_real):
        real = bin(mask).count("1")
        for wilds, size in _set_sizes(real, wild_choices):
            singles.append((mask, wilds, size))

    def extend(start: int, picks: list[tuple[int, int, int]], taken: list[int], wilds: int) -> None:
        threes = sum(1 for p in picks if p[2] == 3)
        options.append(
            (
                (taken[0], taken[1], taken[2], taken[3]),
                wilds,
                threes,
                tuple((p[0], p[2]) for p in picks),
            )
        )
        if len(picks) == 3:
            return
        for k in range(start, len(singles)):
            mask, w, size = singles[k]
            if wilds + w > 2:
                continue
            more = [taken[c] + (mask >> c & 1) for c in range(4)]
            if any(more[c] > signature[c] for c in range(4)):
                continue
            extend(k, picks + [singles[k]], more, wilds + w)

    extend(0, [], [0, 0, 0, 0], 0)
    return tuple(options)


def _signature(vecs: Sequence[int], n: int) -> tuple[int, int, int, int]:
    sh = 2 * (n - 1)
    return (vecs[0] >> sh & 3, vecs[1] >> sh & 3, vecs[2] >> sh & 3, vecs[3] >> sh & 3)


def _set_numbers(vecs: Sequence[int], min_colours: int) -> list[int]:
    out = []
    for n in range(1, 14):
        sig = _signature(vecs, n)
        if sum(1 for x in sig if x) >= min_colours:
            out.append(n)
    return out


# ---------------------------------------------------------------------------------------------
# (a) Can 14 tiles be grouped into runs and sets?  And can 15 finish by throwing one?
# ---------------------------------------------------------------------------------------------
def _absorbable(vecs: Sequence[int], surplus: int, threes: int) -> bool:
    """Can ``surplus`` wild okeys still join the melds? Any run can grow; a 3-set takes one."""
    if surplus <= 0:
        return True
    if any(vecs):
        return True
    return surplus <= threes


def groups_into_melds(tiles: Sequence[int], okey: int, wrap: bool) -> bool:
    """True when every tile fits in runs and sets (up to two wild okeys fill gaps)."""
    p = prepare(tiles, okey)
    return _search(list(p.vecs), _set_numbers(p.vecs, 2), 0, p.wilds, 0, wrap, False) is not None


def can_finish(rack: Sequence[int], okey: int, wrap: bool) -> bool:
    """True when a rack (normally 15 tiles) finishes by throwing some tile, runs and sets only."""
    p = prepare(rack, okey)
    return _search(list(p.vecs), _set_numbers(p.vecs, 2), 0, p.wilds, 0, wrap, True) is not None


Path = list[tuple[int, tuple[tuple[int, int], ...]]]


def _search(
    vecs: list[int],
    numbers: list[int],
    at: int,
    wilds: int,
    threes: int,
    wrap: bool,
    throw: bool,
    path: Path | None = None,
) -> Path | None:
    """Walk the set choices number by number; at the end check the runs per colour."""
    if path is None:
        path = []
    if at == len(numbers):
        if _leaf_ok(vecs, wilds, threes, wrap, throw):
            return list(path)
        return None
    n = numbers[at]
    sh = 2 * (n - 1)
    for taken, w, th, sets in set_options(_signature(vecs, n), 2, "min"):
        if w > wilds:
            continue
        if sets:
            for c in range(4):
                vecs[c] -= taken[c] << sh
            path.append((n, sets))
        found = _search(vecs, numbers, at + 1, wilds - w, threes + th, wrap, throw, path)
        if sets:
            path.pop()
            for c in range(4):
                vecs[c] += taken[c] << sh
        if found is not None:
            return found
    return None


def _leaf_ok(vecs: Sequence[int], wilds: int, threes: int, wrap: bool, throw: bool) -> bool:
    costs = [colour_min(v, wrap) for v in vecs]
    total = sum(costs)
    if not throw:
        return total <= wilds and _absorbable(vecs, wilds - total, threes)
    # Throw a wild okey ...
    if wilds >= 1 and total <= wilds - 1 and _absorbable(vecs, wilds - 1 - total, threes):
        return True
    # ... or one real tile of some colour.
    for c, v in enumerate(vecs):
        if not v:
            continue
        cost = total - costs[c] + colour_min_less_one(v, wrap)
        if cost <= wilds:
            surplus = wilds - cost
            if surplus == 0 or _tile_count(vecs) > 1 or surplus <= threes:
                return True
    return False


def _tile_count(vecs: Sequence[int]) -> int:
    total = 0
    for v in vecs:
        while v:
            total += v & 3
            v >>= 2
    return total


# ---------------------------------------------------------------------------------------------
# Building an arrangement (for finishes and for showing players their melds)
# ---------------------------------------------------------------------------------------------
def _runs_build(v: int) -> list[tuple[int, int, list[int]]]:
    """Runs for vector v as (first, last, positions holding a real tile); wilds fill the rest."""
    if v == 0:
        return []
    target = _runs_min(v)
    i = ((v & -v).bit_length() - 1) // 2 + 1
    rest = v - _bit(i)
    gaps = 0
    reals = [i]
    for b in range(i, min(i + 12, 14) + 1):
        if b > i:
            if _at(v, b):
                rest -= _bit(b)
                reals.append(b)
            else:
                gaps += 1
                continue
        cost = gaps + max(0, 3 - (b - i + 1))
        if cost + _runs_min(rest) == target:
            return [(i, b, list(reals))] + _runs_build(rest)
    raise AssertionError("unreachable: memo and build disagree")


def arrange(tiles: Sequence[int], okey: int, wrap: bool) -> list[Meld] | None:
    """One grouping of all the tiles into runs and sets, as melds, or None."""
    p = prepare(tiles, okey)
    vecs = list(p.vecs)
    path = _search(vecs, _set_numbers(p.vecs, 2), 0, p.wilds, 0, wrap, False)
    if path is None:
        return None
    melds: list[Meld] = []
    wilds_left = p.wilds
    real_pool = list(tiles)

    def take(identity: int) -> int:
        # Prefer the real tile; a fake plays as the okey identity.
        if identity in real_pool and identity != okey:
            real_pool.remove(identity)
            return identity
        real_pool.remove(FAKE)
        return FAKE

    for n, sets in path:
        for mask, size in sets:
            colours = [c for c in range(4) if mask >> c & 1]
            m_tiles = [take(c * 13 + n - 1) for c in colours]
            stands = [c * 13 + n - 1 for c in colours]
            missing = [c for c in range(4) if c not in colours]
            for k in range(size - len(colours)):
                m_tiles.append(okey)
                stands.append(missing[k] * 13 + n - 1)
                wilds_left -= 1
            melds.append(Meld(SET, m_tiles, [t == okey for t in m_tiles], stands))
            for c in colours:
                vecs[c] -= _bit(n)
    for c in range(4):
        best_v = min(_wrap_variants(vecs[c], wrap), key=_runs_min)
        for lo, hi, reals in _runs_build(best_v):
            while hi - lo + 1 < 3:
                if hi < (14 if wrap else 13) and hi - lo + 1 < 13:
                    hi += 1
                else:
                    lo -= 1
            m_tiles, stands = [], []
            for pos in range(lo, hi + 1):
                ident = c * 13 + position_number(pos) - 1
                if pos in reals:
                    m_tiles.append(take(ident))
                else:
                    m_tiles.append(okey)
                    wilds_left -= 1
                stands.append(ident)
            melds.append(Meld(RUN, m_tiles, [t == okey for t in m_tiles], stands, low=lo))
    # Leftover wilds join a run that can grow, else a 3-set.
    for _ in range(wilds_left):
        for m in melds:
            if m.kind == RUN and m.ends_for(None, wrap):
                m.add(okey, True, None, m.ends_for(None, wrap)[-1])
                break
            if m.kind == SET and len(m.tiles) == 3:
                m.add(okey, True, None, "set")
                break
        else:
            # A run of 13: split it so the wild starts a second run.
            run = next(m for m in melds if m.kind == RUN)
            tail = Meld(RUN, run.tiles[9:], run.wild[9:], run.stands[9:], low=run.low + 9)
            del run.tiles[9:], run.wild[9:], run.stands[9:]
            tail.add(okey, True, None, "low")
            melds.append(tail)
    return melds


# ---------------------------------------------------------------------------------------------
# (b) pairs, (c) colour finishes, (d) the best finish of a closed hand
# ---------------------------------------------------------------------------------------------
def pair_count(tiles: Sequence[int], okey: int) -> int:
    """The most disjoint pairs in the tiles (a wild pairs with anything, two wilds pair)."""
    p = prepare(tiles, okey)
    doubles = sum(k // 2 for k in p.counts)
    singles = sum(k % 2 for k in p.counts)
    used = min(singles, p.wilds)
    return doubles + used + (p.wilds - used) // 2


def is_seven_pairs(tiles: Sequence[int], okey: int) -> bool:
    """14 tiles that are exactly 7 pairs."""
    return len(tiles) == 14 and pair_count(tiles, okey) == 7


def one_colour(tiles: Sequence[int], okey: int) -> bool:
    """All non-wild tiles of one colour (a fake counts as the okey's colour)."""
    colours = {colour_of(okey if t == FAKE else t) for t in tiles if t != okey}
    return len(colours) <= 1


def all_numbers(tiles: Sequence[int], okey: int) -> bool:
    """Every number 1..13 present, wild okeys filling in missing ones."""
    numbers = {number_of(okey if t == FAKE else t) for t in tiles if t != okey}
    wilds = sum(1 for t in tiles if t == okey)
    return 13 - len(numbers) <= wilds


FINISH_RANK = {"normal": 0, "pairs": 1, "colour": 2, "sequential_colour": 3}


def finish_kind(tiles14: Sequence[int], okey: int, wrap: bool, pairs_allowed: bool) -> str | None:
    """The best finish 14 kept tiles make (``sequential_colour`` > ``colour`` > ``pairs`` >
    ``normal``), or None when they are no finish."""
    melds = groups_into_melds(tiles14, okey, wrap)
    pairs = pairs_allowed and is_seven_pairs(tiles14, okey)
    if not melds and not pairs:
        return None
    if pairs_allowed and one_colour(tiles14, okey):
        return "sequential_colour" if all_numbers(tiles14, okey) else "colour"
    return "pairs" if pairs else "normal"


def best_finish(
    rack15: Sequence[int], okey: int, wrap: bool, pairs_allowed: bool
) -> tuple[int, str] | None:
    """The best (thrown tile, kind) for a 15-tile rack, preferring a thrown wild okey on ties."""
    best: tuple[int, str] | None = None
    score = -1
    for t in sorted(set(rack15)):
        rest = list(rack15)
        rest.remove(t)
        kind = finish_kind(rest, okey, wrap, pairs_allowed)
        if kind is None:
            continue
        s = FINISH_RANK[kind] * 2 + (1 if t == okey else 0)
        if s > score:
            best, score = (t, kind), s
    return best


# ---------------------------------------------------------------------------------------------
# (e) least leftover face value (Düz scoring)
# ---------------------------------------------------------------------------------------------
_dead_memo: dict[tuple[int, int, bool], int] = {}


def _vec_value(v: int) -> int:
    total = 0
    pos = 1
    while v:
        total += (v & 3) * position_number(pos)
        v >>= 2
        pos += 1
    return total


def _dead(v: int, k: int, count: bool = False) -> int:
    """Least face value (or, with ``count``, fewest tiles) left outside runs in vector v,
    using at most k wilds."""
    if v == 0:
        return 0
    key = (v, k, count)
    r = _dead_memo.get(key)
    if r is not None:
        return r
    i = ((v & -v).bit_length() - 1) // 2 + 1
    rest = v - _bit(i)
    best = (1 if count else position_number(i)) + _dead(rest, k, count)
    gaps = 0
    for b in range(i, min(i + 12, 14) + 1):
        if b > i:
            if _at(v, b):
                rest -= _bit(b)
            else:
                gaps += 1
                if gaps > k:
                    break
                continue
        cost = gaps + max(0, 3 - (b - i + 1))
        if cost <= k:
            best = min(best, _dead(rest, k - cost, count))
    if len(_dead_memo) >= MEMO_LIMIT:
        _dead_memo.clear()
    _dead_memo[key] = best
    return best


@lru_cache(maxsize=MEMO_LIMIT)
def colour_dead(v13: int, wrap: bool, k: int, count: bool = False) -> int:
    return min(_dead(v, k, count) for v in _wrap_variants(v13, wrap))


def least_leftover(tiles: Sequence[int], okey: int, wrap: bool, count: bool = False) -> int:
    """The least face value left outside any grouping of the tiles into runs and sets.

    A wild okey left over counts the okey's own number; a fake its identity's number. With
    ``count`` it is the fewest tiles left over instead (how far a closed hand is from melds).
    """
    p = prepare(tiles, okey)
    okey_value = 1 if count else number_of(okey)
    best = [10**9]
    vecs = list(p.vecs)
    numbers = _set_numbers(p.vecs, 2)

    def walk(at: int, wilds: int, threes: int) -> None:
        if at == len(numbers):
            best[0] = min(best[0], _dead_leaf(vecs, wilds, threes, wrap, okey_value, count))
            return
        n = numbers[at]
        sh = 2 * (n - 1)
        for taken, w, th, _sets in set_options(_signature(vecs, n), 2, "min"):
            if w > wilds:
                continue
            for c in range(4):
                vecs[c] -= taken[c] << sh
            walk(at + 1, wilds - w, threes + th)
            for c in range(4):
                vecs[c] += taken[c] << sh

    walk(0, p.wilds, 0)
    return best[0]


@lru_cache(maxsize=MEMO_LIMIT)
def _colour_leaf(v13: int, wrap: bool, k: int, count: bool) -> tuple[int, int, bool]:
    """One colour given ``k`` wilds: what is left outside runs, how many of the wilds the runs
    use, and whether any tile of the colour is in a run."""
    dead = colour_dead(v13, wrap, k, count)
    used = min(j for j in range(k + 1) if colour_dead(v13, wrap, j, count) == dead)
    return dead, used, dead < (_tile_count([v13]) if count else _vec_value(v13))


def _dead_leaf(
    vecs: Sequence[int], wilds: int, threes: int, wrap: bool, okey_value: int, count: bool
) -> int:
    if not wilds:
        return sum(_colour_leaf(v, wrap, 0, count)[0] for v in vecs)
    best = 10**9
    for split in _splits(wilds, 4):
        total = 0
        used = 0
        runs = False
        for c in range(4):
            d, u, r = _colour_leaf(vecs[c], wrap, split[c], count)
            total += d
            # Wilds handed to a colour that does not need them are still in hand.
            used += u
            runs = runs or r
        # Wilds nobody needs still join a run (it can grow) or a 3-set (one each).
        unused = wilds - used
        if unused and not runs:
            total += max(0, unused - threes) * okey_value
        best = min(best, total)
    return best


@cache
def _splits(k: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """Ways to hand out at most k wilds to ``parts`` colours."""
    if parts == 0:
        return ((),)
    out = []
    for first in range(k + 1):
        for rest in _splits(k - first, parts - 1):
            out.append((first, *rest))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# (f) best opening: disjoint melds of highest total, keeping a tile to discard; most pairs
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=MEMO_LIMIT)
def _open_runs(v: int, k: int, keep: bool) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """Highest total of runs from vector v using at most k wilds; runs as (lo, hi, wilds).

    With ``keep``, at least one real tile of v stays out of the runs (NEG when v is empty).
    """
    if v == 0:
        return (NEG, ()) if keep else (0, ())
    i = ((v & -v).bit_length() - 1) // 2 + 1
    rest = v - _bit(i)
    best = _open_runs(rest, k, False)  # tile i stays out (which also satisfies ``keep``)
    gaps = 0
    for b in range(i, min(i + 12, 14) + 1):
        if b > i:
            if _at(v, b):
                rest -= _bit(b)
            else:
                gaps += 1
                if gaps > k:
                    break
                continue
        span = b - i + 1
        for ext in range(max(0, 3 - span), k - gaps + 1):
            if span + ext > 13:
                break
            got = _extend(i, b, ext)
            if got is None:
                continue
            lo, hi, value = got
            sub_value, sub_runs = _open_runs(rest, k - gaps - ext, keep)
            if value + sub_value > best[0]:
                best = (value + sub_value, ((lo, hi, gaps + ext), *sub_runs))
    return best


def _extend(i: int, b: int, ext: int) -> tuple[int, int, int] | None:
    """Grow the run i..b by ``ext`` wilds at the ends, for the highest total."""
    best: tuple[int, int, int] | None = None
    for low_ext in range(ext + 1):
        lo, hi = i - low_ext, b + ext - low_ext
        if lo < 1 or hi > 14:
            continue
        value = sum(position_number(p) for p in range(lo, hi + 1))
        if best is None or value > best[2]:
            best = (lo, hi, value)
    return best


@dataclass(frozen=True)
class Opening:
    """The best opening found: its total and the melds (as notation lists)."""

    total: int
    melds: tuple[tuple[str, ...], ...]
    tiles_used: int

    def reaches(self, bar: int) -> bool:
        return self.total >= bar


def best_opening(tiles: Sequence[int], okey: int, wrap: bool) -> Opening:
    """The disjoint runs and sets of highest total, keeping at least one tile to discard."""
    found = _best_opening_all(tiles, okey, wrap, keep_one=False)
    if found.tiles_used < len(tiles):
        return found
    # The best melds would use every tile: search again with one tile kept back.
    return _best_opening_all(tiles, okey, wrap, keep_one=True)


_SetOption = tuple[tuple[int, int, int, int], int, int, tuple[tuple[int, int], ...]]


@cache
def _opening_set_options(
    signature: tuple[int, int, int, int], high: bool, wilds: int
) -> tuple[_SetOption, ...]:
    """One number's set choices for an opening with at most ``wilds`` wilds, "no set" first.
    Below 11, a set of one real tile and two wilds is left out: a run through that tile is
    worth at least as much."""
    return tuple(
        o
        for o in set_options(signature, 1, "all")
        if o[1] <= wilds and (high or not any(bin(m).count("1") == 1 for m, _ in o[3]))
    )


@lru_cache(maxsize=MEMO_LIMIT // 2)
def _colour_runs(
    v13: int, k: int, keep: bool, wrap: bool
) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """:func:`_open_runs` of one colour, the best of its wrap variants (1 as 14 too)."""
    return max((_open_runs(v, k, keep) for v in _wrap_variants(v13, wrap)), key=lambda x: x[0])


def _best_opening_all(tiles: Sequence[int], okey: int, wrap: bool, keep_one: bool) -> Opening:
    p = prepare(tiles, okey)
    vecs = list(p.vecs)
    # The numbers where a set is possible at all, with their choices; elsewhere "no set" is
    # the only choice and the search need not stop there.
    levels = []
    for n in range(1, 14):
        options = _opening_set_options(_signature(vecs, n), n >= 11, p.wilds)
        if len(options) > 1:
            levels.append((2 * (n - 1), n, options))
    best_total = [-1]
    RunPlan = list[tuple[tuple[int, int, int], ...]]
    best_plan: list[tuple[Path, RunPlan]] = []
    path: Path = []

    def leaf(wilds: int, set_value: int) -> None:
        # Hand the wilds to colours for runs; one tile must stay in the rack: a wild nobody
        # was handed, or a real tile one colour leaves out.
        plain_by = [
            [_colour_runs(vecs[c], k, False, wrap) for k in range(wilds + 1)] for c in range(4)
        ]
        kept_by = (
            [[_colour_runs(vecs[c], k, True, wrap) for k in range(wilds + 1)] for c in range(4)]
            if keep_one
            else None
        )
        for split in _splits(wilds, 4):
            plain = [plain_by[c][split[c]] for c in range(4)]
            base = set_value + plain[0][0] + plain[1][0] + plain[2][0] + plain[3][0]
            if not keep_one or sum(split) < wilds:
                if base > best_total[0]:
                    best_total[0] = base
                    best_plan[:] = [(list(path), [x[1] for x in plain])]
            if kept_by is not None:
                for c in range(4):
                    kept = kept_by[c][split[c]]
                    if kept[0] > NEG:
                        total = base - plain[c][0] + kept[0]
                        if total > best_total[0]:
                            runs = [x[1] for x in plain]
                            runs[c] = kept[1]
                            best_total[0] = total
                            best_plan[:] = [(list(path), runs)]

    def walk(at: int, wilds: int, set_value: int) -> None:
        if at == len(levels):
            leaf(wilds, set_value)
            return
        sh, n, options = levels[at]
        for taken, w, _th, sets in options:
            if w > wilds:
                continue
            for c in range(4):
                vecs[c] -= taken[c] << sh
            if sets:
                path.append((n, sets))
            walk(at + 1, wilds - w, set_value + sum(n * size for _, size in sets))
            if sets:
                path.pop()
            for c in range(4):
                vecs[c] += taken[c] << sh

    walk(0, p.wilds, 0)
    if not best_plan:
        return Opening(0, (), 0)
    sets_path, runs = best_plan[0]
    melds: list[tuple[str, ...]] = []
    used = 0
    wild_tok = format_tile(okey)
    pool = list(tiles)

    def tok(identity: int) -> str:
        if identity in pool and identity != okey:
            pool.remove(identity)
            return format_tile(identity)
        pool.remove(FAKE)
        return "F"

    for n, sets in sets_path:
        for mask, size in sets:
            colours = [c for c in range(4) if mask >> c & 1]
            missing = [c for c in range(4) if c not in colours]
            meld = [tok(c * 13 + n - 1) for c in colours]
            meld += [
                f"{wild_tok}:{format_tile(missing[k] * 13 + n - 1)}"
                for k in range(size - len(colours))
            ]
            melds.append(tuple(meld))
            used += size
    for c in range(4):
        for lo, hi, _w in runs[c]:
            meld = []
            for pos in range(lo, hi + 1):
                ident = c * 13 + position_number(pos) - 1
                if ident != okey and (ident in pool or (ident == okey and FAKE in pool)):
                    meld.append(tok(ident))
                elif ident == okey and FAKE in pool:
                    meld.append(tok(ident))
                else:
                    meld.append(f"{wild_tok}:{format_tile(ident)}")
            melds.append(tuple(meld))
            used += hi - lo + 1
    return Opening(max(best_total[0], 0), tuple(melds), used)


def most_pairs(tiles: Sequence[int], okey: int) -> int:
    """The most pairs that can be laid while keeping one tile to discard."""
    return min(pair_count(tiles, okey), (len(tiles) - 1) // 2)


# ---------------------------------------------------------------------------------------------
# (g) workable tiles
# ---------------------------------------------------------------------------------------------
def fits_table(identity: int | None, table: Iterable[Meld], wrap: bool) -> bool:
    """Could this tile (``None``: a wild okey) be added to some run or set on the table?"""
    return any(m.kind != PAIR and m.ends_for(identity, wrap) for m in table)


def swaps_table(identity: int, table: Iterable[Meld]) -> bool:
    """Could this real tile replace a wild okey in some run or set on the table?"""
    return any(m.could_swap(identity) for m in table)


def workable_tiles(table: Sequence[Meld], wrap: bool, swap: bool) -> set[int]:
    """Every identity that fits a table meld (and, where swaps exist, frees a table okey)."""
    out = set()
    for ident in range(NUMBERED):
        if fits_table(ident, table, wrap) or (swap and swaps_table(ident, table)):
            out.add(ident)
    return out
