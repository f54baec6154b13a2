"""The ``expert`` bot: determinized search over the tiles its seat cannot see.

It reads one seat's view and nothing else (:mod:`.belief` builds the unseen tiles and the
evidence about them from the view). Each decision samples worlds consistent with the view —
every other rack and the pile order — weighted by what the other seats threw, passed and took,
and evaluates each candidate move (:func:`.selfplay.candidate_moves`) in those worlds with the
exact solver (:mod:`.solver`) as the evaluation: how far the rack stays from a finish, how many
of the tiles it can still draw bring it nearer, and what the next seat could do with the
discard. This is perfect-information Monte Carlo (PIMC) with a solver evaluation at the leaves;
``docs/bots.md`` explains the choice and its sources.

Its work is counted in solver calls, not in wall time, so a decision is the same on any
machine: the same view and seed give the same moves. The budget in milliseconds is turned into
a number of solver calls by a fixed rate measured on the reference machine; a wall-clock cap
(several times the budget) only stops a search on a machine far slower than that.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from . import solver
from .belief import Belief, World
from .heuristics import ByPhase, DiscardWeights, Ranker
from .legal import legal_actions
from .scoring import finish_worth
from .selfplay import candidate_moves
from .tiles import FAKE, colour_of, format_tile, number_of, parse_tile
from .variants import rules_for, team_of

Move = dict[str, Any]
View = Mapping[str, Any]

# least_leftover (count) of racks seen lately: a rack and its neighbours come back turn after
# turn. Bounded (about 15 MB when full), then emptied.
_LEFT: dict[tuple[Any, ...], int] = {}
_LEFT_MAX = 50_000

DEFAULT_BUDGET_MS = 80.0
# Solver calls per millisecond on the reference machine (a call is 60-90 us there).
CALLS_PER_MS = 5.0
# The wall-clock cap, as a multiple of the budget: only a much slower machine reaches it.
WALL_CAP = 3.0
# Worlds sampled per decision at most (fewer when the budget runs out first).
WORLDS = 16
# Discards whose useful draws are counted exactly (the others at a typical rate).
EXACT = 4
# Worlds read for the next seat in the open variants (a cheap check each).
OPEN_WORLDS = 16
# Open variants: what handing the next seat a tile it uses costs beyond the x10 penalty, and how
# much expected penalty one place in the strong bot's discard order is worth.
OPEN_PROGRESS = 60.0
OPEN_RANK = 40.0
# The strong bot's discard order for the open variants, with the expert's weights: per point
# of face value a discard sheds, once opened shedding high tiles lowers what the rack costs at
# the end, and before opening high tiles are what reaches the bar, so low ones go first; once
# opened, a tile that melds with nothing left goes before the others.
OPEN_DISCARDS = DiscardWeights(
    loss=10.0, dump_opened=1.0, dump_closed=-2.0, draw_gain=5.0, loose=20.0
)
# The closed-hand evaluation is in expected draws to a finish (tuned on bench/bots.py).
# Each step after the first is counted at this many useful tiles: low, so that a step nearer
# nearly always wins and useful draws break ties.
TYPICAL_OUTS = 4.0
PAIR_OUTS = 3.0  # ... a step of seven pairs, slower (one or two copies of each single are left)
PAIRS_FROM = 5  # pairs held before seven pairs is a plan
COLOUR_FROM = 10  # tiles of one colour (wild okeys included) held before a colour finish is one
# A finish worth twice as much (pairs over normal in classic, colour over pairs) is worth this
# many draws more: a slower plan is chosen when its finish pays enough more.
PLAN_VALUE = 1.5
TAKE_MARGIN = 1.0  # a draw from the pile is itself a draw nearer: take only to do better
FEED = 0.6  # the next seat can use the discard: a step for it, for free
FEED_FINISH = 10.0  # the next seat finishes with the discard: the hand is lost
DUZ_VALUE = 0.005  # per point of face value left outside melds (duz scores it)


def expert_moves(
    view: View, rng: random.Random | None = None, budget_ms: float | None = DEFAULT_BUDGET_MS
) -> list[Move]:
    """Moves for the seat on turn in ``view``, best first (the last ones are always legal).

    ``rng`` seeds the sampling (the same seed and view give the same moves); ``budget_ms`` is
    the thinking time per decision (None: the full number of worlds, whatever it costs)."""
    rng = rng or random.Random()
    moves = candidate_moves(view)
    show = _show_indicator(view)
    if not moves:
        return show
    return show + _Expert(view, random.Random(rng.getrandbits(64)), budget_ms).ranked(moves)


def _show_indicator(view: View) -> list[Move]:
    """Showing the indicator costs every other seat a point and us nothing but a tile's secret:
    always worth it, as the first action of the hand (classic only)."""
    if view["turn"] == view["seat"] and "show_indicator" in legal_actions(view):
        return [{"do": "show_indicator"}]
    return []


class _Expert(ByPhase):
    def __init__(self, view: View, rng: random.Random, budget_ms: float | None) -> None:
        self.view = view
        self.rng = rng
        self.seat: int = view["seat"]
        self.players: int = view["players"]
        self.variant: str = view["variant"]
        self.okey = parse_tile(view["okey"])
        self.rules = rules_for(self.variant)
        self.wrap = self.rules.wrap(view["options"])
        self.rack = [parse_tile(t) for t in view["rack"]]
        self.open_variant = self.rules.open_table
        self.pairs_ok = self.rules.special_finishes
        self.colour_ok = self.rules.special_finishes
        normal = finish_worth(self.variant, view["options"], "normal")
        self.plan_bonus = {
            kind: PLAN_VALUE * math.log2(finish_worth(self.variant, view["options"], kind) / normal)
            for kind in ("normal", "pairs", "colour")
        }
        self.next = (self.seat + 1) % self.players
        self.team = team_of(self.seat, view["options"])
        self.calls = 0
        self.max_calls = int(budget_ms * CALLS_PER_MS) if budget_ms is not None else 10**9
        self.deadline = (
            time.perf_counter() + WALL_CAP * budget_ms / 1000 if budget_ms is not None else None
        )
        self._belief: Belief | None = None
        self._worlds: list[World] | None = None

    # --- the budget and cached solver calls
    def spent(self) -> bool:
        if self.calls >= self.max_calls:
            return True
        return self.deadline is not None and time.perf_counter() > self.deadline

    def left(self, tiles: Sequence[int]) -> int:
        """Fewest tiles left outside runs and sets. Every call counts against the budget, found
        in the cache or not, so the cache (shared by decisions) changes the speed, never the
        choice."""
        self.calls += 1
        key = (self.okey, self.wrap, *sorted(tiles))
        got = _LEFT.get(key)
        if got is None:
            got = solver.least_leftover(key[2:], self.okey, self.wrap, count=True)
            if len(_LEFT) >= _LEFT_MAX:
                _LEFT.clear()
            _LEFT[key] = got
        return got

    @property
    def belief(self) -> Belief:
        if self._belief is None:
            self._belief = Belief(self.view)
        return self._belief

    def worlds(self) -> list[World]:
        if self._worlds is None:
            self._worlds = [self.belief.sample(self.rng) for _ in range(WORLDS)]
        return self._worlds

    def real(self, t: int) -> int:
        """The tile ``t`` stands for: a fake okey is the okey's tile."""
        return self.okey if t == FAKE else t

    def ident(self, t: int) -> int | None:
        return None if t == self.okey else self.real(t)

    def value(self, t: int) -> int:
        return number_of(self.real(t))

    def colour(self, t: int) -> int:
        """A tile's colour, a fake counting as the okey's (as in a colour finish)."""
        return colour_of(self.real(t))

    def ally(self, seat: int) -> bool:
        return seat == self.seat or (
            self.team is not None and team_of(seat, self.view["options"]) == self.team
        )

    # --- ranking
    # ================================================================ closed variants
    def plans(self, tiles14: Sequence[int]) -> list[tuple[str, int]]:
        """The ways to a finish and how many steps (useful draws) each is away: runs and sets
        (tiles outside melds) and, in classic, seven pairs (pairs missing) and a colour finish
        (``colour0`` ... ``colour3``: tiles to exchange for that colour)."""
        out = [("melds", self.left(tiles14))]
        if self.pairs_ok:
            # Seven pairs is slow to build (one or two copies of each single are left): a plan
            # only for a rack that already holds most of them.
            pairs = solver.pair_count(tiles14, self.okey)
            if pairs >= PAIRS_FROM:
                out.append(("pairs", 7 - min(7, pairs)))
        if self.colour_ok:
            # One pass to find the colours held often enough to be a plan (most racks: none).
            wilds = sum(1 for t in tiles14 if t == self.okey)
            held = Counter(self.colour(t) for t in tiles14 if t != self.okey)
            for c in sorted(held):
                if held[c] + wilds >= COLOUR_FROM:
                    steps = self.colour_steps(tiles14, c)
                    if steps is not None:
                        out.append((f"colour{c}", steps))
        return out

    def colour_steps(self, tiles: Sequence[int], c: int) -> int | None:
        """Tiles to exchange before 14 of ``tiles`` are runs of colour ``c`` (None: too few of
        that colour to be a plan). With ``j`` exchanges the rack gains ``j`` tiles of its choice
        (counted as wilds) and can throw away all but 14 of its colour ``c`` tiles and wilds."""
        wilds = sum(1 for t in tiles if t == self.okey)
        mine = [t for t in tiles if t != self.okey and self.colour(t) == c]
        held = len(mine) + wilds
        if held < COLOUR_FROM:
            return None
        for j in range(max(0, 14 - held), 15):
            if self.left(mine + [self.okey] * (wilds + j)) <= held + j - 14:
                return j
        return None

    def step_after(self, plan: str, tiles15: Sequence[int]) -> int:
        """Steps a 15-tile rack is from a finish by ``plan`` after its best throw."""
        if plan == "pairs":
            return 7 - min(7, solver.pair_count(tiles15, self.okey))
        if plan.startswith("colour"):
            steps = self.colour_steps(tiles15, int(plan[-1]))
            return 99 if steps is None else steps
        return max(0, self.left(tiles15) - 1)

    def drawable(self) -> Counter[int]:
        """Expected copies of each tile still in the pile, over the sampled worlds."""
        worlds = self.worlds()
        total: Counter[int] = Counter()
        for w in worlds:
            total.update(w.pile)
        return Counter({t: k / len(worlds) for t, k in total.items()})

    def useful(self, plan: str, rest: list[int], steps: int, avail: Mapping[int, float]) -> float:
        """Drawable tiles that bring the 14-tile ``rest`` a step nearer a finish (ukeire)."""
        if steps == 0:
            return sum(avail.values())
        score = 0.0
        for u, k in avail.items():
            if k <= 0:
                continue
            if plan == "pairs":
                # A copy of a single (a wild okey pairs anything).
                if u == self.okey or rest.count(u) % 2 == 1:
                    score += k
                continue
            if plan.startswith("colour"):
                mine = u == self.okey or self.colour(u) == int(plan[-1])
                if mine and self.step_after(plan, rest + [u]) < steps:
                    score += k
                continue
            if self._near(u, rest) and self.step_after(plan, rest + [u]) < steps:
                score += k
        return score

    def draws_to_finish(self, rest: list[int], avail: Mapping[int, float], exact: bool) -> float:
        """Expected draws until the 14-tile ``rest`` finishes, by its best plan: the first step
        at the odds of its useful tiles, each further step at a typical rate for the plan, less
        what the plan's finish is worth over a normal one (``PLAN_VALUE``). Without ``exact``
        (the budget is spent) the first step is taken at the typical rate."""
        total = max(1.0, sum(avail.values()))
        best = float("inf")
        for plan, steps in self.plans(rest):
            if steps >= 7 and plan == "pairs":
                continue
            typical = PAIR_OUTS if plan == "pairs" else TYPICAL_OUTS
            if steps == 0:
                e = 1.0
            else:
                outs = self.useful(plan, rest, steps, avail) if exact else typical
                e = total / max(outs, 0.5) + (steps - 1) * total / typical
            best = min(best, e - self.plan_bonus[_finish_kind(plan)])
        return best

    def _near(self, u: int, rack: Sequence[int]) -> bool:
        if u == self.okey:
            return True
        u = self.okey if u == FAKE else u
        for t in rack:
            if t == self.okey:
                continue
            t = self.okey if t == FAKE else t
            if t == u:
                return True
            if colour_of(t) == colour_of(u):
                gap = abs(number_of(t) - number_of(u))
                if gap <= 2 or (self.wrap and gap >= 11):
                    return True
            elif number_of(t) == number_of(u):
                return True
        return False

    def rank_draw(self, moves: list[Move]) -> list[Move]:
        draw = [m for m in moves if m["do"] == "draw"]
        take = [m for m in moves if m["do"] == "take"]
        if not take:
            return draw
        prev = (self.seat - 1) % self.players
        t = parse_tile(self.view["discards"][prev][-1])
        wants = self.wants_open(t) if self.open_variant else self.wants_closed(t)
        return take + draw if wants else draw + take

    def wants_closed(self, t: int) -> bool:
        """Take the discard when it finishes, or when the rack after it (and the best throw) is
        expected to finish sooner than after a draw from the pile."""
        with_t = self.rack + [t]
        if solver.best_finish(with_t, self.okey, self.wrap, self.pairs_ok) is not None:
            return True
        now_steps = min(s for _, s in self.plans(self.rack))
        throws = self.nearest(with_t, exclude=t)
        if not throws:
            return False
        rest = list(with_t)
        rest.remove(throws[0])
        take_steps = min(s for _, s in self.plans(rest))
        avail = self.drawable()
        now = self.draws_to_finish(self.rack, avail, True)
        best = float("inf")
        for d in throws[:EXACT]:
            if self.spent():
                break
            rest = list(with_t)
            rest.remove(d)
            best = min(best, self.draws_to_finish(rest, avail, True))
        if best == float("inf"):
            return take_steps < now_steps
        # Drawing uses this turn's draw too: the rack is then one draw further on.
        return best < now - TAKE_MARGIN

    def links(self, t: int) -> int:
        """How many other rack tiles could meld with ``t``: the fewer, the readier to go."""
        rest = list(self.rack)
        rest.remove(t)
        return sum(1 for x in rest if self._near(x, [t]))

    def nearest(self, tiles15: list[int], exclude: int | None = None) -> list[int]:
        """The throws that leave a 15-tile rack fewest steps from a finish."""
        steps: dict[int, int] = {}
        for d in set(tiles15):
            if d == self.okey or d == exclude:
                continue
            rest = list(tiles15)
            rest.remove(d)
            steps[d] = min(s for _, s in self.plans(rest))
        if not steps:
            return []
        low = min(steps.values())
        return [d for d, s in steps.items() if s == low]

    def rank_closed(self, moves: list[Move]) -> list[Move]:
        finish = [m for m in moves if m["do"] == "finish"]
        discards = [m for m in moves if m["do"] == "discard"]
        if finish:
            # The best finish (solver.best_finish): the highest kind, then a thrown wild okey.
            return finish + discards
        tiles = [parse_tile(m["tile"]) for m in discards]
        by_tile = dict(zip(tiles, discards, strict=True))
        steps: dict[int, int] = {}
        for t in tiles:
            if t == self.okey:
                continue
            rest = list(self.rack)
            rest.remove(t)
            steps[t] = min(s for _, s in self.plans(rest))
        if not steps:
            return discards
        best = min(steps.values())
        # Worth a look: the nearest discards, and one step further for safety's sake.
        cands = sorted(
            (t for t, d in steps.items() if d <= best + 1),
            key=lambda t: (steps[t], self.links(t), -self.value(t)),
        )
        avail = self.drawable()
        score: dict[int, float] = {}
        rough: list[int] = []  # left unevaluated (budget): after the evaluated ones, in order
        for k, t in enumerate(cands):
            if k >= EXACT or self.spent():
                rough.append(t)
                continue
            rest = list(self.rack)
            rest.remove(t)
            s = -self.draws_to_finish(rest, avail, True)
            if self.rules.leftover_scores:
                self.calls += 1
                s -= DUZ_VALUE * solver.least_leftover(rest, self.okey, self.wrap)
            s += 0.001 * self.value(t)  # ties: throw the higher tile
            score[t] = s
        for t, (feeds, finishes) in self.danger_closed(list(score)).items():
            score[t] -= FEED * feeds + FEED_FINISH * finishes
        order = sorted(score, key=lambda t: -score[t]) + rough
        rest_tiles = sorted(
            (t for t in tiles if t not in order), key=lambda t: (steps.get(t, 99), -self.value(t))
        )
        return [by_tile[t] for t in order + rest_tiles]

    def danger_closed(self, cands: list[int]) -> dict[int, tuple[float, float]]:
        """For each discard, over the sampled worlds: how often the next seat could use it (it
        takes it and is a step nearer) and how often it would finish with it."""
        uses = {t: 0.0 for t in cands}
        wins = {t: 0.0 for t in cands}
        n = 0
        for w in self.worlds():
            if self.spent() and n >= 4:
                break
            rack = w.racks.get(self.next)
            if rack is None:
                break
            n += 1
            base = self.left(rack)
            for t in cands:
                if t == self.okey:
                    uses[t] += 1
                    continue
                after = self.left(rack + [t])
                if after <= base and base > 0:
                    uses[t] += 1
                    if after <= 1:
                        self.calls += 1
                        if solver.can_finish(rack + [t], self.okey, self.wrap):
                            wins[t] += 1
        if not n:
            return {t: (0.0, 0.0) for t in cands}
        return {t: (uses[t] / n, wins[t] / n) for t in cands}

    # ================================================================ open variants
    def wants_open(self, t: int) -> bool:
        return self._open_bot().wants(t)

    def _open_bot(self) -> Ranker:
        # The strong bot's open-table judgement (openings against the bar, feeding only rivals,
        # planning discards against the bar), with the expert's reading of the next seat on top.
        class _OpenBot(Ranker):
            discard_weights = OPEN_DISCARDS

        return _OpenBot(self.view, True)

    def rank_open(self, moves: list[Move]) -> list[Move]:
        bot = self._open_bot()
        ranked: list[Move] = bot.ranked(moves)
        plays = [m for m in ranked if m["do"] not in ("discard", "give_back")]
        ends = [m for m in ranked if m["do"] == "give_back"]
        discards = [m for m in ranked if m["do"] == "discard"]
        # Once opened, laying or feeding a wild okey goes last: with the other tiles gone the okey
        # is thrown as the last tile, an okey finish (doubled in both open variants). Openings
        # keep their order (melds, with an okey or not, before pairs).
        wild = format_tile(self.okey)
        late = [m for m in plays if m["do"] in ("lay", "add") and _uses_tile(m, wild)]
        plays = [m for m in plays if m not in late] + late
        if discards and self.view["taken"] is None:
            discards = self.rank_open_discards(discards)
        return plays + discards + ends

    def rank_open_discards(self, discards: list[Move]) -> list[Move]:
        """The strong bot's order, moved by what the next seat could do with each tile in the
        sampled worlds: a taken discard costs its value x 10 and brings the taker nearer to
        opening or finishing."""
        if self.ally(self.next) or len(self.rack) == 1:
            return discards
        tiles = [parse_tile(m["tile"]) for m in discards]
        base = {t: float(k) for k, t in enumerate(tiles)}  # the strong order as a score
        opened = self.view["opened"][self.next]
        n = 0
        uses: Counter[int] = Counter()
        for w in self.worlds()[:OPEN_WORLDS]:
            rack = w.racks.get(self.next)
            if rack is None:
                break
            n += 1
            idents = [self.ident(x) for x in rack]
            for t in set(tiles):
                if opened == "pairs":
                    used = t == self.okey or self.ident(t) in idents
                else:
                    used = _forms_meld(self.ident(t), idents, self.wrap)
                if used:
                    uses[t] += 1
        if not n:
            return discards
        # One place in the strong order is worth about OPEN_RANK points of expected penalty.
        score = {
            t: base[t] + uses[t] / n * (self.value(t) * 10 + OPEN_PROGRESS) / OPEN_RANK
            for t in tiles
        }
        order = sorted(range(len(tiles)), key=lambda k: (score[tiles[k]], k))
        return [discards[k] for k in order]


def _finish_kind(plan: str) -> str:
    """The finish a plan ends in: melds a normal one, ``colour0`` ... ``colour3`` a colour one."""
    return {"melds": "normal", "pairs": "pairs"}.get(plan, "colour")


def _uses_tile(move: Move, name: str) -> bool:
    if move.get("tile") == name:
        return True
    return any(
        str(tok).split(":")[0] == name
        for group in move.get("melds", []) + move.get("pairs", [])
        for tok in group
    )


def _forms_meld(ident: int | None, rack: list[int | None], wrap: bool) -> bool:
    """Could a tile make a new run or set with two tiles of ``rack`` (``None``: a wild okey)?"""
    wilds = sum(1 for x in rack if x is None)
    if ident is None:
        return wilds >= 2 or _any_pair_near(rack, wrap)
    have = {x for x in rack if x is not None}
    c, num = colour_of(ident), number_of(ident)

    def at(m: int) -> bool:
        if wrap and m == 14:
            m = 1
        return 1 <= m <= 13 and c * 13 + m - 1 in have

    for lo in (num - 2, num - 1, num):
        others = [m for m in (lo, lo + 1, lo + 2) if m != num]
        if lo < 1 or lo + 2 > (14 if wrap else 13):
            continue
        missing = sum(1 for m in others if not at(m))
        if missing <= wilds:
            return True
    colours = {x // 13 for x in have if x % 13 == num - 1 and x // 13 != c}
    return len(colours) + wilds >= 2


def _any_pair_near(rack: list[int | None], wrap: bool) -> bool:
    """Two real tiles that a third (wild) tile makes a meld of."""
    have = sorted({x for x in rack if x is not None})
    for a in have:
        for b in have:
            if b <= a:
                continue
            if a // 13 == b // 13 and b - a <= 2:
                return True
            if a % 13 == b % 13:
                return True
    return False


__all__ = ["DEFAULT_BUDGET_MS", "expert_moves"]
