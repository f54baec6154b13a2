"""Melds: runs, sets and pairs, what a wild okey stands for, and table melds (RULES.md §1).

A :class:`Meld` keeps, for every tile, the physical tile, whether it is a wild okey, and the
identity it plays as (``stands``; -1 for a wild in a set or pair whose colour is still open).
Runs are kept in ascending order; ``low`` is the position of their first tile, where position 14
is a high 1 (after 13).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import MeldError
from .tiles import FAKE, TileError, colour_of, format_tile, number_of, parse_token

RUN, SET, PAIR = "run", "set", "pair"
UNSET = -1


def effective(t: int, okey: int) -> int:
    """The identity a non-wild tile plays as: a fake plays as the okey."""
    return okey if t == FAKE else t


def face_value(t: int, okey: int) -> int:
    """A tile's number; a fake counts its identity's number (and so does a wild, by default)."""
    return number_of(effective(t, okey))


def position_number(position: int) -> int:
    """Run position 1..14 to tile number (14 is the high 1)."""
    return position if position <= 13 else 1


@dataclass
class Meld:
    """A run, set or pair, on the table or being checked."""

    kind: str
    tiles: list[int]
    wild: list[bool]
    stands: list[int]
    low: int = 0
    id: int = -1
    owner: int = -1
    extra: dict[str, int] = field(default_factory=dict)

    # ----- reading -------------------------------------------------------------------------
    @property
    def colour(self) -> int:
        """A run's colour."""
        return colour_of(next(s for s in self.stands if s != UNSET))

    @property
    def number(self) -> int:
        """A set's number."""
        return number_of(next(s for s in self.stands if s != UNSET))

    @property
    def high(self) -> int:
        """A run's last position."""
        return self.low + len(self.tiles) - 1

    def value(self, okey: int) -> int:
        """The meld's total: each tile counts the number it plays as (a high 1 counts 1)."""
        if self.kind == SET:
            return self.number * len(self.tiles)
        return sum(number_of(s) if s != UNSET else number_of(okey) for s in self.stands)

    def tile_value(self, index: int, okey: int) -> int:
        """The number one tile of the meld plays as."""
        s = self.stands[index]
        if s == UNSET:
            return self.number if self.kind == SET else number_of(okey)
        return number_of(s)

    def missing_colours(self) -> list[int]:
        """A set's colours that no tile (real, or a wild already fixed) plays yet."""
        taken = {colour_of(s) for s in self.stands if s != UNSET}
        return [c for c in range(4) if c not in taken]

    def tokens(self) -> list[str]:
        """The meld's tiles in notation; a wild with a known meaning carries it (``B7:R2``)."""
        out = []
        for t, w, s in zip(self.tiles, self.wild, self.stands, strict=True):
            out.append(f"{format_tile(t)}:{format_tile(s)}" if w and s != UNSET else format_tile(t))
        return out

    # ----- feeding and swapping --------------------------------------------------------------
    def ends_for(self, identity: int | None, wrap: bool) -> list[str]:
        """Where a tile could be added: ``low``/``high`` for a run, ``set`` for a set.

        ``identity`` None means a wild okey.
        """
        if self.kind == RUN:
            if len(self.tiles) >= 13:
                return []
            ends = []
            top = 14 if wrap else 13
            if self.low > 1 and (identity is None or identity == self._run_identity(self.low - 1)):
                ends.append("low")
            if self.high < top and (
                identity is None or identity == self._run_identity(self.high + 1)
            ):
                ends.append("high")
            return ends
        if self.kind == SET:
            if len(self.tiles) >= 4:
                return []
            if identity is None:
                return ["set"]
            if number_of(identity) == self.number and colour_of(identity) in self.missing_colours():
                return ["set"]
        return []

    def _run_identity(self, position: int) -> int:
        return self.colour * 13 + position_number(position) - 1

    def add(self, t: int, is_wild: bool, identity: int | None, end: str) -> int:
        """Add a tile at ``end`` (from :meth:`ends_for`); return the index it went to."""
        if self.kind == RUN:
            if end == "low":
                self.low -= 1
                self.tiles.insert(0, t)
                self.wild.insert(0, is_wild)
                self.stands.insert(0, self._run_identity(self.low))
                return 0
            stand = self._run_identity(self.high + 1)
            self.tiles.append(t)
            self.wild.append(is_wild)
            self.stands.append(stand)
            return len(self.tiles) - 1
        self.tiles.append(t)
        self.wild.append(is_wild)
        self.stands.append(UNSET if identity is None else identity)
        self._settle()
        return len(self.tiles) - 1

    def swap_index(self, identity: int) -> int:
        """The index of a wild okey that the real tile ``identity`` may replace, or -1."""
        for i, (w, s) in enumerate(zip(self.wild, self.stands, strict=True)):
            if w and s == identity:
                return i
        if self.kind == SET and number_of(identity) == self.number:
            if colour_of(identity) in self.missing_colours():
                for i, (w, s) in enumerate(zip(self.wild, self.stands, strict=True)):
                    if w and s == UNSET:
                        return i
        return -1

    def swap(self, index: int, t: int, identity: int) -> int:
        """Put the real tile in the wild's place; return the wild tile taken."""
        taken = self.tiles[index]
        self.tiles[index] = t
        self.wild[index] = False
        self.stands[index] = identity
        if self.kind == SET:
            self._settle()
        return taken

    def could_swap(self, identity: int) -> bool:
        return self.kind in (RUN, SET) and self.swap_index(identity) >= 0

    def _settle(self) -> None:
        """Fix open wilds in a set once the missing colours leave them no choice."""
        if self.kind != SET:
            return
        missing = self.missing_colours()
        open_at = [i for i, s in enumerate(self.stands) if s == UNSET]
        if open_at and len(open_at) == len(missing):
            n = self.number
            for i, c in zip(open_at, missing, strict=True):
                self.stands[i] = c * 13 + n - 1

    # ----- serialisation ---------------------------------------------------------------------
    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "owner": self.owner,
            "kind": self.kind,
            "tiles": self.tokens(),
        }

    def to_state(self) -> dict[str, object]:
        return {
            "id": self.id,
            "owner": self.owner,
            "kind": self.kind,
            "tiles": list(self.tiles),
            "wild": list(self.wild),
            "stands": list(self.stands),
            "low": self.low,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_state(cls, d: dict[str, object]) -> Meld:
        return cls(
            kind=str(d["kind"]),
            tiles=[int(x) for x in d["tiles"]],  # type: ignore[attr-defined]
            wild=[bool(x) for x in d["wild"]],  # type: ignore[attr-defined]
            stands=[int(x) for x in d["stands"]],  # type: ignore[attr-defined]
            low=int(d["low"]),  # type: ignore[call-overload]
            id=int(d["id"]),  # type: ignore[call-overload]
            owner=int(d["owner"]),  # type: ignore[call-overload]
            extra={str(k): int(v) for k, v in d.get("extra", {}).items()},  # type: ignore[attr-defined]
        )


Item = tuple[int, bool, "int | None"]


def parse_tokens(tokens: Sequence[object], okey: int) -> list[Item]:
    """Read meld tokens into (tile, is_wild, stated identity) items."""
    items: list[Item] = []
    for tok in tokens:
        try:
            t, stands = parse_token(tok)  # type: ignore[arg-type]
        except TileError as exc:
            raise MeldError("bad_tile", str(exc)) from exc
        wild = t == okey
        if stands is not None and not wild:
            raise MeldError(
                "suffix_on_real_tile", f"{tok}: only a wild okey may say what it stands for"
            )
        items.append((t, wild, stands))
    return items


def read_meld(tokens: Sequence[object], okey: int, wrap: bool) -> Meld:
    """Check a run or set written in notation; raise :class:`MeldError` if it is not one."""
    return meld_from_items(parse_tokens(tokens, okey), okey, wrap)


def meld_from_items(items: list[Item], okey: int, wrap: bool) -> Meld:
    if len(items) < 3:
        raise MeldError("meld_too_short", "a run or set has at least 3 tiles")
    reals = [effective(t, okey) for t, w, _ in items if not w]
    if not reals:
        raise MeldError("all_wild", "a meld needs at least one tile that is not a wild okey")
    as_set: Meld | None = None
    as_run: Meld | None = None
    errors: list[MeldError] = []
    try:
        as_set = _read_set(items, okey)
    except MeldError as exc:
        errors.append(exc)
    try:
        as_run = _read_run(items, okey, wrap)
    except MeldError as exc:
        errors.append(exc)
    if as_set and as_run:
        # Only wilds and one real tile can read both ways: take the higher total (ties: run).
        return as_set if as_set.value(okey) > as_run.value(okey) else as_run
    if as_set:
        return as_set
    if as_run:
        return as_run
    same_number = len({number_of(r) for r in reals}) == 1
    same_colour = len({colour_of(r) for r in reals}) == 1
    if same_number and not same_colour:
        raise errors[0]
    if same_colour and not same_number:
        raise errors[-1]
    if same_colour and same_number:
        raise errors[-1]
    raise MeldError("not_a_meld", "neither a run (one colour) nor a set (one number)")


def _read_set(items: list[Item], okey: int) -> Meld:
    reals = [effective(t, okey) for t, w, _ in items if not w]
    numbers = {number_of(r) for r in reals}
    if len(numbers) > 1:
        raise MeldError("mixed_numbers", "a set is of one number")
    n = numbers.pop()
    if len(items) > 4:
        raise MeldError("meld_too_long", "a set has at most 4 tiles")
    colours = [colour_of(r) for r in reals]
    stated = [s for _, w, s in items if w and s is not None]
    for s in stated:
        if number_of(s) != n:
            raise MeldError("suffix_mismatch", f"{format_tile(s)} is not a {n}")
    all_colours = colours + [colour_of(s) for s in stated]
    if len(set(all_colours)) != len(all_colours):
        raise MeldError("repeated_colour", "a set's tiles are all of different colours")
    meld = Meld(
        kind=SET,
        tiles=[t for t, _, _ in items],
        wild=[w for _, w, _ in items],
        stands=[(s if s is not None else UNSET) if w else effective(t, okey) for t, w, s in items],
    )
    meld._settle()
    return meld


def _read_run(items: list[Item], okey: int, wrap: bool) -> Meld:
    reals = [effective(t, okey) for t, w, _ in items if not w]
    colours = {colour_of(r) for r in reals}
    if len(colours) > 1:
        raise MeldError("mixed_colours", "a run is of one colour")
    c = colours.pop()
    for _, w, s in items:
        if w and s is not None and colour_of(s) != c:
            raise MeldError("suffix_mismatch", f"{format_tile(s)} is not of the run's colour")
    if len(items) > 13:
        raise MeldError("meld_too_long", "a run has at most 13 tiles")
    known: list[tuple[int, int]] = []
    for k, (t, w, s) in enumerate(items):
        if not w:
            known.append((k, number_of(effective(t, okey))))
        elif s is not None:
            known.append((k, number_of(s)))
    top = 14 if wrap else 13
    length = len(items)
    for low in range(1, top - length + 2):
        if all(position_number(low + k) == n for k, n in known):
            return _run(items, okey, c, low)
    if all(not w or s is not None for _, w, s in items):
        # Every tile's number is known: accept any order and put the run in order.
        numbers = [n for _, n in known]
        for candidate in (numbers, [14 if n == 1 else n for n in numbers] if wrap else None):
            if candidate is None:
                continue
            ordered = sorted(range(length), key=lambda k: candidate[k])
            lo = candidate[ordered[0]]
            if [candidate[k] for k in ordered] == list(range(lo, lo + length)):
                return _run([items[k] for k in ordered], okey, c, lo)
    numbers_seen = {n for _, n in known}
    if {13, 1, 2} <= numbers_seen:
        raise MeldError("thirteen_one_two", "13-1-2 is never a run")
    if not wrap and 13 in numbers_seen and 1 in numbers_seen:
        raise MeldError("wrap_not_allowed", "1 after 13 is not allowed at this table")
    raise MeldError("not_consecutive", "a run's numbers are consecutive, in order, each once")


def _run(items: list[Item], okey: int, c: int, low: int) -> Meld:
    return Meld(
        kind=RUN,
        tiles=[t for t, _, _ in items],
        wild=[w for _, w, _ in items],
        stands=[c * 13 + position_number(low + k) - 1 for k in range(len(items))],
        low=low,
    )


def read_pair(tokens: Sequence[object], okey: int) -> Meld:
    """Check a pair: two tiles of one identity; a wild okey pairs with any tile."""
    items = parse_tokens(tokens, okey)
    if len(items) != 2:
        raise MeldError("not_a_pair", "a pair is two tiles")
    (t1, w1, s1), (t2, w2, s2) = items
    e1 = UNSET if w1 else effective(t1, okey)
    e2 = UNSET if w2 else effective(t2, okey)
    if w1 and s1 is not None:
        e1 = s1
    if w2 and s2 is not None:
        e2 = s2
    if not w1 and not w2 and e1 != e2:
        raise MeldError("not_a_pair", f"{format_tile(t1)} and {format_tile(t2)} are not a pair")
    if e1 != UNSET and e2 != UNSET and e1 != e2:
        raise MeldError("suffix_mismatch", "a wild okey in a pair stands for its partner")
    identity = e1 if e1 != UNSET else e2
    return Meld(kind=PAIR, tiles=[t1, t2], wild=[w1, w2], stands=[identity, identity])
