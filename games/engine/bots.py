"""Bots for every variant, at three levels, that see only their seat's view.

- ``random``: a random legal move.
- ``greedy``: keeps melds together, discards the least useful tile, opens as soon as it can,
  never makes a punished or workable discard or throws an okey when another choice exists, and
  takes a discard only when it can use it.
- ``strong``: scores each discard by how far it leaves the rack from a finish (closed variants:
  the least leftover) or from an opening / an empty rack (open variants), averaged over the
  tiles it has not seen, the way mahjong engines count shanten and useful draws; in open variants
  it feeds and steals only to hurt rivals, never its partner, and avoids handing the next seat
  a tile it just showed it wants.
- ``expert``: determinized search over the tiles it cannot see (:mod:`.expert`): it samples the
  other racks and the pile consistently with its view and weighs each move in those worlds with
  the solver, within a time budget per decision (``budget_ms``).

:func:`choose_moves` returns moves in order of preference; the caller tries them in turn (the
engine is the judge) — the last ones (a discard, or giving a taken tile back) are always legal.
:func:`play_turn` plays a whole turn that way.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from . import solver
from .expert import DEFAULT_BUDGET_MS, expert_moves
from .selfplay import candidate_moves, pairs_in, table_melds
from .tiles import FAKE, NUMBERED, colour_of, format_tile, number_of, parse_tile
from .variants import DUZ, GOBEK17, OKEY51, is_open_variant, team_of

LEVELS = ("random", "greedy", "strong", "expert")
Move = dict[str, Any]
View = Mapping[str, Any]


def choose_moves(
    view: View,
    level: str,
    rng: random.Random | None = None,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
) -> list[Move]:
    """Moves for the seat on turn in ``view``, best first. ``budget_ms`` is the expert's
    thinking time per decision (the other levels do not search)."""
    rng = rng or random.Random()
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}")
    if level == "expert":
        return expert_moves(view, rng, budget_ms)
    moves = candidate_moves(view)
    if not moves:
        return []
    if level == "random":
        rng.shuffle(moves)
        return moves
    bot = _Bot(view, level == "strong")
    return bot.ranked(moves)


def play_turn(
    get_view: Callable[[], View],
    play: Callable[[Move], bool],
    level: str,
    rng: random.Random | None = None,
    limit: int = 60,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
) -> list[Move]:
    """Play the seat's whole turn: ask for its view, try moves best first, until the turn ends."""
    rng = rng or random.Random()
    played: list[Move] = []
    view = get_view()
    seat = view["seat"]
    for _ in range(limit):
        if view["result"]["over"] or view["turn"] != seat:
            return played
        for move in choose_moves(view, level, rng, budget_ms):
            if play(move):
                played.append(move)
                break
        else:
            raise RuntimeError("the bot found no legal move")
        view = get_view()
    raise RuntimeError("the bot's turn did not end")


# ---------------------------------------------------------------------------------------------
class _Bot:
    def __init__(self, view: View, strong: bool) -> None:
        self.view = view
        self.strong = strong
        self.seat: int = view["seat"]
        self.variant: str = view["variant"]
        self.okey = parse_tile(view["okey"])
        self.wrap = bool(view["options"].get("wrap_13_1", True))
        self.rack = [parse_tile(t) for t in view["rack"]]
        self.table = table_melds(view)
        self.open_variant = is_open_variant(self.variant)
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
        melds = [m for m in self.table if m.kind != "pair"]
        if t == self.okey:
            return self.variant == GOBEK17 or bool(melds)
        ident = self.ident(t)
        if solver.fits_table(ident, melds, self.wrap):
            return True
        return self.variant == OKEY51 and solver.swaps_table(ident or 0, melds)

    # --- ranking
    def ranked(self, moves: list[Move]) -> list[Move]:
        if not self.view["has_tile"]:
            return self.rank_draw(moves)
        if self.open_variant:
            return self.rank_open(moves)
        return self.rank_closed(moves)

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
                    if _near(u, rest, self.okey) and (
                        solver.least_leftover(rest + [u], self.okey, self.wrap, count=True) <= loose
                        and u != t
                    ):
                        useful += k
            # One tile nearer to melds is worth more than any number of useful draws; in duz
            # the face value left over is the score, so it breaks ties.
            value = solver.least_leftover(rest, self.okey, self.wrap) if self.variant == DUZ else 0
            out.append((loose * 1000 - useful * 10 + value * 0.5 + tie * 0.1, m))
        out.sort(key=lambda x: x[0])
        kept = {id(m) for _, m in out}
        return [(0, 0, m) for _, m in out] + [x for x in scored if id(x[2]) not in kept]

    # open variants
    def rank_open(self, moves: list[Move]) -> list[Move]:
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
            return [m for _, m in ordered] + [m for m in moves if m["do"] == "give_back"]
        if opened is None:
            # Open as soon as possible; otherwise keep building.
            plays = [p for p in plays if p[1]["do"] == "open"]
        plays.sort(key=lambda p: p[0])
        discards = [m for m in moves if m["do"] == "discard"]
        return [m for _, m in plays] + self.rank_open_discards(discards)

    def rank_open_discards(self, discards: list[Move]) -> list[Move]:
        opened = self.view["opened"][self.seat]
        base = self._open_potential(self.rack)
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
            loss = base - self._open_potential(rest)
            cost += loss * 10
            # Dump high tiles first: they cost the most if a rival finishes.
            cost -= self.value(t) * (2 if opened else 1)
            if self.strong and opened is None:
                cost -= self._draw_gain(rest) * 5
                # Plan against the bar: how far the rack would still be from opening now.
                cost += max(0, bar - self._open_potential(rest)) * 2
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
        near = [(u, k) for u, k in unseen.items() if _near(u, rest, self.okey)][:12]
        if not near:
            return 0.0
        total = sum(
            k * (solver.best_opening(rest + [u], self.okey, self.wrap).total - base)
            for u, k in near
        )
        return total / sum(k for _, k in near)

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


def _near(u: int, rack: list[int], okey: int) -> bool:
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


__all__ = ["LEVELS", "choose_moves", "play_turn", "pairs_in"]
