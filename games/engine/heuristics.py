"""The greedy and strong bots' judgement: how far a rack stands from a finish or an opening,
which discard or table play to prefer, and which tiles the next seat wants. ``bots`` ranks
moves with it for those levels; ``expert`` uses it too, for the open variants' table plays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import solver
from .selfplay import table_melds
from .tiles import FAKE, NUMBERED, colour_of, format_tile, number_of, parse_tile
from .variants import rules_for, team_of

Move = dict[str, Any]
View = Mapping[str, Any]


@dataclass(frozen=True)
class DiscardWeights:
    """How the open variants' discard order weighs a throw: its cost, lowest thrown first."""

    loss: float = 10.0  # per point of opening value the throw gives up
    dump_opened: float = 2.0  # per point of the tile's value, once opened (high tiles first)
    dump_closed: float = 1.0  # the same before opening
    draw_gain: float = 5.0  # before opening, per point one more draw is expected to add
    loose: float = 0.0  # once opened, for a tile that melds with nothing left in the rack


class ByPhase:
    """Moves ranked by the phase of the seat's turn: drawing (or taking), then the open
    variants' table plays and discard, or the closed variants' discard or finish."""

    view: View
    open_variant: bool

    def ranked(self, moves: list[Move]) -> list[Move]:
        if not self.view["has_tile"]:
            return self.rank_draw(moves)
        if self.open_variant:
            return self.rank_open(moves)
        return self.rank_closed(moves)

    def rank_draw(self, moves: list[Move]) -> list[Move]:
        raise NotImplementedError

    def rank_open(self, moves: list[Move]) -> list[Move]:
        raise NotImplementedError

    def rank_closed(self, moves: list[Move]) -> list[Move]:
        raise NotImplementedError


class Ranker(ByPhase):
    """A seat's moves ranked the greedy way, or the strong way (``strong``)."""

    discard_weights = DiscardWeights()

    def __init__(self, view: View, strong: bool) -> None:
        self.view = view
        self.strong = strong
        self.seat: int = view["seat"]
        self.variant: str = view["variant"]
        self.okey = parse_tile(view["okey"])
        self.rules = rules_for(self.variant)
        self.wrap = self.rules.wrap(view["options"])
        self.rack = [parse_tile(t) for t in view["rack"]]
        self.table = table_melds(view)
        self.open_variant = self.rules.open_table
        self.team = team_of(self.seat, view["options"])

    # --- shared facts
    def ally(self, seat: int) -> bool:
        return seat == self.seat or (
            self.team is not None and team_of(seat, self.view["options"]) == self.team
        )

    def value(self, t: int) -> int:
        return number_of(self.okey if t == FAKE else t)

    def ident(self, t: int) -> int | None:
        return None if t == self.okey else (self.okey if t == FAKE else t)

    def unseen(self) -> Counter[int]:
        """Tiles this seat has not seen: the set less its rack, the indicator, discards, table."""
        left: Counter[int] = Counter({t: 2 for t in range(NUMBERED + 1)})
        seen = list(self.rack) + [parse_tile(self.view["indicator"])]
        for pile in self.view["discards"]:
            seen += [parse_tile(t) for t in pile]
        for m in self.table:
            seen += m.tiles
        left.subtract(seen)
        return +left

    def penalised(self, t: int) -> bool:
        """Would discarding t cost a punished / workable / okey discard penalty?"""
        if not self.open_variant or len(self.rack) == 1:
            return False
        return bool(self.rules.discard_penalties(self.table, self.okey, self.wrap, t))

    # --- ranking
    def rank_draw(self, moves: list[Move]) -> list[Move]:
        draw = [m for m in moves if m["do"] == "draw"]
        take = [m for m in moves if m["do"] == "take"]
        if take and self.wants(
            parse_tile(self.view["discards"][(self.seat - 1) % self.view["players"]][-1])
        ):
            return take + draw
        return draw + take

    def wants(self, t: int) -> bool:
        """Take the discard only when it helps (closed) or can go on the table now (open)."""
        if not self.open_variant:
            with_t = self.rack + [t]
            if solver.can_finish(with_t, self.okey, self.wrap):
                return True
            if self.strong:
                # Take it when, after the best discard, fewer tiles stay outside melds.
                now = solver.least_leftover(self.rack, self.okey, self.wrap, count=True)
                later = min(
                    solver.least_leftover(
                        [x for i, x in enumerate(with_t) if i != with_t.index(d)],
                        self.okey,
                        self.wrap,
                        count=True,
                    )
                    for d in set(with_t)
                    if d != t
                )
                return later < now
            before = solver.least_leftover(self.rack, self.okey, self.wrap)
            after = min(self._leftover_without(with_t, d) for d in set(with_t) if d != t)
            return after < before
        opened = self.view["opened"][self.seat]
        if opened == "pairs":
            return False
        if opened == "melds":
            if solver.fits_table(
                self.ident(t), [m for m in self.table if m.kind != "pair"], self.wrap
            ):
                return True
            return _in_opening(self.rack + [t], t, self.okey, self.wrap)
        best = solver.best_opening(self.rack + [t], self.okey, self.wrap)
        return best.reaches(self.view["opening_bar"]) and _uses(best, t)

    def _leftover_without(self, tiles: list[int], d: int) -> int:
        rest = list(tiles)
        rest.remove(d)
        return solver.least_leftover(rest, self.okey, self.wrap)

    # closed variants: finish, else the discard that leaves the least
    def rank_closed(self, moves: list[Move]) -> list[Move]:
        finish = [m for m in moves if m["do"] == "finish"]
        discards = [m for m in moves if m["do"] == "discard"]
        scored = []
        for m in discards:
            t = parse_tile(m["tile"])
            left = self._leftover_without(self.rack, t)
            scored.append((left + (1000 if t == self.okey else 0), -self.value(t), m))
        scored.sort(key=lambda x: (x[0], x[1]))
        if self.strong and len(scored) > 1:
            scored = self.lookahead_closed(scored)
        return finish + [m for _, _, m in scored]

    def lookahead_closed(self, scored: list[tuple[int, int, Move]]) -> list[tuple[int, int, Move]]:
        """Shanten first, useful draws second: rank discards by the fewest tiles left outside
        melds, then by how many unseen tiles would leave fewer still (ukeire)."""
        unseen = self.unseen()
        ranked = []
        for _left, tie, m in scored:
            t = parse_tile(m["tile"])
            if t == self.okey:
                continue
            rest = list(self.rack)
            rest.remove(t)
            loose = solver.least_leftover(rest, self.okey, self.wrap, count=True)
            ranked.append((loose, t, tie, m, rest))
        if not ranked:
            return scored
        best_loose = min(r[0] for r in ranked)
        out = []
        for loose, t, tie, m, rest in ranked:
            useful = 0
            if loose == best_loose:
                for u, k in unseen.items():
                    if near(u, rest, self.okey) and (
                        solver.least_leftover(rest + [u], self.okey, self.wrap, count=True) <= loose
                        and u != t
                    ):
                        useful += k
            # One tile nearer to melds is worth more than any number of useful draws; in duz
            # the face value left over is the score, so it breaks ties.
            value = (
                solver.least_leftover(rest, self.okey, self.wrap)
                if self.rules.leftover_scores
                else 0
            )
            out.append((loose * 1000 - useful * 10 + value * 0.5 + tie * 0.1, m))
        out.sort(key=lambda x: x[0])
        kept = {id(m) for _, m in out}
        return [(0, 0, m) for _, m in out] + [x for x in scored if id(x[2]) not in kept]

    # open variants
    def rank_open(self, moves: list[Move]) -> list[Move]:
        plays, discards = self.rank_open_plays(moves)
        return plays + (self.rank_open_discards(discards) if discards is not None else [])

    def lazily(self, moves: list[Move]) -> Iterator[Move]:
        """:meth:`ranked`'s moves in the same order, the open variants' discards ranked only
        when every table play before them was refused (ranking them asks the solver for each
        tile; a turn of table plays would rank them after every play for nothing)."""
        if not self.view["has_tile"] or not self.open_variant:
            yield from self.ranked(moves)
            return
        plays, discards = self.rank_open_plays(moves)
        yield from plays
        if discards is not None:
            yield from self.rank_open_discards(discards)

    def rank_open_plays(self, moves: list[Move]) -> tuple[list[Move], list[Move] | None]:
        """The table plays best first (then giving back a taken tile), and the discards to
        rank after them (None while a taken tile waits: it cannot be discarded)."""
        opened = self.view["opened"][self.seat]
        taken = self.view["taken"]
        plays: list[tuple[float, Move]] = []
        for m in moves:
            do = m["do"]
            if do == "open":
                # Melds first; pairs only when melds cannot open.
                plays.append((0 if "melds" in m else 1, m))
            elif do == "lay":
                onto = m.get("onto")
                if onto is not None and self.ally(onto):
                    continue
                plays.append((2, m))
            elif do == "add":
                owner = next(x.owner for x in self.table if x.id == m["meld"])
                if self.strong and self.ally(owner) and owner != self.seat:
                    plays.append((3.5, m))  # feeding a partner hurts nobody: last resort
                else:
                    plays.append((3 if not self.ally(owner) else 3.2, m))
            elif do == "swap":
                owner = next(x.owner for x in self.table if x.id == m["meld"])
                if self.strong and self.ally(owner) and owner != self.seat:
                    continue
                plays.append((1.5, m))
        if taken is not None:
            t = parse_tile(taken)
            using = [p for p in plays if _mentions(p[1], t)]
            rest = [p for p in plays if not _mentions(p[1], t)]
            ordered = sorted(using, key=lambda p: p[0]) + sorted(rest, key=lambda p: p[0])
            return [m for _, m in ordered] + [m for m in moves if m["do"] == "give_back"], None
        if opened is None:
            # Open as soon as possible; otherwise keep building.
            plays = [p for p in plays if p[1]["do"] == "open"]
        plays.sort(key=lambda p: p[0])
        return [m for _, m in plays], [m for m in moves if m["do"] == "discard"]

    def rank_open_discards(self, discards: list[Move]) -> list[Move]:
        w = self.discard_weights
        opened = self.view["opened"][self.seat]
        # A tile the rack's best melds leave out can go without changing them: the rest's
        # potential is the rack's, as long as a tile is still left over to keep.
        best = None if opened == "pairs" else solver.best_opening(self.rack, self.okey, self.wrap)
        base = best.total if best is not None else self._open_potential(self.rack)
        wanted = self._next_seat_wants() if self.strong else set()
        nxt = (self.seat + 1) % self.view["players"]
        # What the next seat threw away itself is the safest thing to hand it.
        shed = {self.ident(parse_tile(t)) for t in self.view["discards"][nxt]}
        bar = self.view["opening_bar"] or 51
        scored = []
        for m in discards:
            t = parse_tile(m["tile"])
            rest = list(self.rack)
            rest.remove(t)
            cost = 0.0
            if self.penalised(t):
                cost += 10_000
            if t == self.okey:
                cost += 5_000
            if self.strong and self.ident(t) in wanted:
                cost += 300
            if best is not None and not _uses(best, t) and best.tiles_used < len(rest):
                potential = base
            else:
                potential = self._open_potential(rest)
            loss = base - potential
            cost += loss * w.loss
            # Dump high tiles first: they cost the most if a rival finishes.
            cost -= self.value(t) * (w.dump_opened if opened else w.dump_closed)
            if self.strong and opened is None:
                cost -= self._draw_gain(rest) * w.draw_gain
                # Plan against the bar: how far the rack would still be from opening now.
                cost += max(0, bar - potential) * 2
            elif opened is not None and w.loose:
                cost -= 0 if any(near(x, [t], self.okey) for x in rest) else w.loose
            if self.strong and self.ident(t) in shed:
                cost -= 15
            scored.append((cost, m))
        scored.sort(key=lambda x: x[0])
        return [m for _, m in scored]

    def _open_potential(self, tiles: list[int]) -> int:
        """How much of the rack sits in melds (opening value), or in pairs for a pairs player."""
        if self.view["opened"][self.seat] == "pairs":
            return solver.pair_count(tiles, self.okey) * 20
        return solver.best_opening(tiles, self.okey, self.wrap).total if tiles else 0

    def _draw_gain(self, rest: list[int]) -> float:
        """Average gain in opening value from one more unseen tile (a cheap sample)."""
        unseen = self.unseen()
        base = solver.best_opening(rest, self.okey, self.wrap).total
        close = [(u, k) for u, k in unseen.items() if near(u, rest, self.okey)][:12]
        if not close:
            return 0.0
        total = sum(
            k * (solver.best_opening(rest + [u], self.okey, self.wrap).total - base)
            for u, k in close
        )
        return total / sum(k for _, k in close)

    def _next_seat_wants(self) -> set[int]:
        """Identities the next seat showed interest in: colours/numbers next to what it took."""
        nxt = (self.seat + 1) % self.view["players"]
        wanted: set[int] = set()
        for m in self.table:
            if m.extra.get("laid_by") == nxt or m.owner == nxt:
                for s in m.stands:
                    if s >= 0:
                        wanted.add(s)
        return wanted


def near(u: int, rack: list[int], okey: int) -> bool:
    """Could tile u plausibly join something in the rack (same colour within 2, or same number)?"""
    if u == okey or u == FAKE:
        return True
    for t in rack:
        if t == okey:
            continue
        t = okey if t == FAKE else t
        if colour_of(t) == colour_of(u) and abs(number_of(t) - number_of(u)) <= 2:
            return True
        if number_of(t) == number_of(u) and colour_of(t) != colour_of(u):
            return True
    return False


def _uses(opening: solver.Opening, t: int) -> bool:
    name = format_tile(t)
    return any(tok.split(":")[0] == name for meld in opening.melds for tok in meld)


def _in_opening(tiles: list[int], t: int, okey: int, wrap: bool) -> bool:
    return _uses(solver.best_opening(tiles, okey, wrap), t)


def _mentions(move: Move, t: int) -> bool:
    name = format_tile(t)
    if move.get("tile") == name:
        return True
    for group in move.get("melds", []) + move.get("pairs", []):
        if any(str(tok).split(":")[0] == name for tok in group):
            return True
    return False
