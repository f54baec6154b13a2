"""Who sits where each round of a tournament, at tables of four: pure Python, deterministic.

- **Round 1** (both formats) is seeded by rating: the field sorted best first is cut into four
  quarters, and table ``i`` takes the ``i``-th player of each quarter, so every table has one
  player from each quarter (``first_round``).
- **A Swiss round** fills the tables top-down by the standings (``swiss_round``): the four best
  at table 1, the next four at table 2, and so on; then players are swapped between tables
  until nobody sits with someone of the previous round (wherever any seating allows it: from
  four tables on, one always does), as few as possible sit again with someone met earlier,
  and everyone stays as near their place in the order as that allows.
- **A knockout round** seats those who go on as round 1 does, by their order (``quarters``),
  keeping apart two who come from the same table.
- **Byes**: when the field is not a multiple of four, the lowest-ranked players who have had
  the fewest byes sit the round out (``byes``).
- **Accounts from one address** never share a table unless the organiser allowed it; a field
  where that cannot be kept raises ``SeatingImpossible``.
- **Seat order**: around each table the players sit so that as few as possible take the
  discards of a player whose discards they took in an earlier round (the player before them
  in seat order is their upstream neighbour).

The search is a local one (swaps between two tables that lower a cost), which a general
library does not offer for tables of four: networkx's matchings pair two by two.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

TABLE = 4

# What a seating costs, from worst to mildest: two accounts of one address at a table (when
# not allowed), two players who sat together in the previous round, each earlier meeting of
# two players, and each table a player is moved away from their place in the order (squared).
SAME_ADDRESS = 10**9
PREVIOUS_ROUND = 10**6
MET_BEFORE = 10**3
MOVED = 1


class SeatingImpossible(ValueError):
    """No seating keeps the rules (accounts of one address at separate tables)."""


@dataclass(frozen=True)
class Player:
    """An entrant: their id (the account's), rating, and the address they play from ("":
    unknown, never shared)."""

    id: int
    rating: float = 0.0
    address: str = ""


@dataclass(frozen=True)
class Round:
    """A round's seating: each table's players in seat order, and who has a bye."""

    tables: tuple[tuple[int, ...], ...]
    byes: tuple[int, ...] = ()


@dataclass
class History:
    """What earlier rounds say about a new seating: who met whom and how often, who sat
    together in the last round, who took whose discards, and who had byes."""

    met: Counter[frozenset[int]] = field(default_factory=Counter)
    previous: set[frozenset[int]] = field(default_factory=set)
    upstream: Counter[tuple[int, int]] = field(default_factory=Counter)
    byes: Counter[int] = field(default_factory=Counter)

    @classmethod
    def of(cls, rounds: Iterable[Round]) -> History:
        history = cls()
        for played in rounds:
            history.previous = set()
            history.byes.update(played.byes)
            for table in played.tables:
                for a, b in itertools.combinations(table, 2):
                    history.met[frozenset((a, b))] += 1
                    history.previous.add(frozenset((a, b)))
                for seat, player in enumerate(table):
                    history.upstream[(table[seat - 1], player)] += 1
        return history


def byes(order: Sequence[int], history: History) -> list[int]:
    """Who sits this round out: as many as the field is over a multiple of four, taken from
    the bottom of ``order`` among those with the fewest byes so far."""
    count = len(order) % TABLE
    if not count:
        return []
    ranked = sorted(
        range(len(order)), key=lambda i: (history.byes[order[i]], -i)
    )  # fewest byes first, then the lowest-ranked
    return sorted((order[i] for i in ranked[:count]), key=order.index)


def quarters(order: Sequence[int]) -> list[list[int]]:
    """Tables of four from ``order`` (best first, a multiple of four): table ``i`` takes the
    ``i``-th player of each quarter."""
    tables = len(order) // TABLE
    return [[order[q * tables + i] for q in range(TABLE)] for i in range(tables)]


def first_round(players: Sequence[Player], *, shared_addresses: bool = False) -> Round:
    """Round 1, by rating (best first; equal ratings in the given order)."""
    order = [p.id for p in sorted(players, key=lambda p: -p.rating)]
    history = History()
    out = byes(order, history)
    seated = [p for p in order if p not in out]
    by_id = {p.id: p for p in players}
    tables = _improve(quarters(seated), by_id, history, shared_addresses)
    return Round(_seat_orders(tables, history), tuple(out))


def swiss_round(
    order: Sequence[int],
    players: Mapping[int, Player],
    rounds: Sequence[Round],
    *,
    shared_addresses: bool = False,
) -> Round:
    """A Swiss round after ``rounds``: ``order`` is the standings, best first."""
    history = History.of(rounds)
    out = byes(order, history)
    seated = [p for p in order if p not in out]
    start = [seated[i : i + TABLE] for i in range(0, len(seated), TABLE)]
    tables = _improve(start, players, history, shared_addresses)
    return Round(_seat_orders(tables, history), tuple(out))


def knockout_round(
    order: Sequence[int],
    players: Mapping[int, Player],
    rounds: Sequence[Round],
    *,
    shared_addresses: bool = False,
) -> Round:
    """The next knockout round: ``order`` is those who go on, best first (a multiple of
    four: the top two of each table of the round before)."""
    if len(order) % TABLE:
        raise ValueError(f"a knockout round needs a multiple of {TABLE} players")
    history = History.of(rounds)
    tables = _improve(quarters(list(order)), players, history, shared_addresses)
    return Round(_seat_orders(tables, history))


# ----------------------------------------------------------------------------- the search
def _pair_cost(
    a: int, b: int, players: Mapping[int, Player], history: History, shared: bool
) -> int:
    pair = frozenset((a, b))
    cost = MET_BEFORE * history.met[pair]
    if pair in history.previous:
        cost += PREVIOUS_ROUND
    if not shared:
        address = players[a].address if a in players else ""
        if address and players.get(b) is not None and players[b].address == address:
            cost += SAME_ADDRESS
    return cost


def _improve(
    start: list[list[int]], players: Mapping[int, Player], history: History, shared: bool
) -> list[list[int]]:
    """``start`` with players swapped between tables while a swap lowers the cost: first the
    players in a pair that costs something, each with the player, at another table, whose
    swap lowers the cost most (the nearest tables first)."""
    tables = [list(t) for t in start]
    home = {p: i for i, t in enumerate(tables) for p in t}
    where = dict(home)

    def pairs(table: list[int]) -> int:
        return sum(
            _pair_cost(a, b, players, history, shared) for a, b in itertools.combinations(table, 2)
        )

    def cost(i: int) -> int:
        return pairs(tables[i]) + MOVED * sum((home[p] - i) ** 2 for p in tables[i])

    costs = [cost(i) for i in range(len(tables))]
    for _round in range(50):
        troubled = [
            p
            for t in tables
            for p in t
            if any(_pair_cost(p, q, players, history, shared) for q in t if q != p)
        ]
        improved = False
        for p in troubled:
            i = where[p]
            best, choice = 0, None
            for j in sorted(range(len(tables)), key=lambda j: abs(j - i)):
                if j == i:
                    continue
                for q in tables[j]:
                    a, b = tables[i].index(p), tables[j].index(q)
                    tables[i][a], tables[j][b] = q, p
                    gain = costs[i] + costs[j] - cost(i) - cost(j)
                    tables[i][a], tables[j][b] = p, q
                    if gain > best:
                        best, choice = gain, (j, q)
            if choice is not None:
                j, q = choice
                tables[i][tables[i].index(p)], tables[j][tables[j].index(q)] = q, p
                where[p], where[q] = j, i
                costs[i], costs[j] = cost(i), cost(j)
                improved = True
        if not improved:
            break
    if not shared and any(cost >= SAME_ADDRESS for cost in costs):
        raise SeatingImpossible("two accounts of one address would share a table")
    return tables


def _seat_orders(tables: list[list[int]], history: History) -> tuple[tuple[int, ...], ...]:
    """Each table's players in seat order: of the orders with its best-placed player first,
    the one where fewest take the discards of an earlier upstream neighbour again (the
    first such order in the table's own order)."""

    def repeats(order: tuple[int, ...]) -> int:
        return sum(history.upstream[(order[s - 1], order[s])] for s in range(len(order)))

    seated = []
    for table in tables:
        first, rest = table[0], table[1:]
        orders = [(first, *others) for others in itertools.permutations(rest)]
        seated.append(min(orders, key=repeats))
    return tuple(seated)
