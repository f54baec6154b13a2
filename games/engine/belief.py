"""What one seat can tell about the tiles it cannot see, from its view alone, and worlds drawn
consistently with it (the determinizations of the ``expert`` bot).

Everything here reads a seat's view (:meth:`Hand.view`): the seat's rack, the indicator, the
discards still lying, the melds on the table, the rack counts and the public ``took`` (which
discards each seat took from the side). Nothing reads another rack, the pile or the seed.

- The *unseen* tiles: the 106 less the seat's rack, the indicator, every discard lying and every
  tile on the table.
- Tiles *known* to sit in another rack: in the closed variants a taken discard stays in the
  taker's rack unless it shows up again among that seat's discards (open variants put a taken
  tile on the table, where it is seen).
- *Soft evidence*: a seat that threw a tile, or passed the previous seat's discard, is less likely
  to hold tiles that meld with it; a seat that took a tile is more likely to. These become weights
  when the unseen tiles are dealt out to the racks (the rest, shuffled, is the pile).

A :class:`World` is one full guess: every other rack and the pile order. The counts match the view
exactly (each rack its ``rack_counts``, the pile its ``pile_size``), and every tile is used once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .tiles import FAKE, NUMBERED, colour_of, number_of, parse_tile
from .variants import is_open_variant

# How much a seat's own throw, a pass of the previous discard, and a take change the odds that it
# holds a tile melding with that one (tuned on bench/bots.py; a nudge, not a certainty: bots and
# people throw and pass useful tiles too).
THREW = 0.75
PASSED = 0.85
TOOK = 1.6


def full_set() -> Counter[int]:
    """Every tile of a hand: two of each numbered tile and two fakes."""
    out: Counter[int] = Counter({t: 2 for t in range(NUMBERED)})
    out[FAKE] = 2
    return out


def neighbours(t: int, okey: int) -> list[int]:
    """Identities that meld with tile ``t``: same colour within two, same number other colour.

    A fake plays as the okey; a wild okey melds with everything, so it has no neighbours."""
    if t == okey:
        return []
    ident = okey if t == FAKE else t
    c, n = colour_of(ident), number_of(ident)
    out = [c * 13 + m - 1 for m in (n - 2, n - 1, n + 1, n + 2) if 1 <= m <= 13]
    if n in (12, 13):  # 12-13-1 runs where they wrap; harmless as a nudge where they do not
        out.append(c * 13)
    if n in (1, 2):
        out.append(c * 13 + 12)
    out += [k * 13 + n - 1 for k in range(4) if k != c]
    return out


@dataclass
class World:
    """One guess at the hidden state: each other seat's rack (the seat's own is its real one)
    and the pile, top first."""

    racks: dict[int, list[int]]
    pile: list[int]


class Belief:
    """The unseen tiles and the evidence about who holds them, from one seat's view."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.seat: int = view["seat"]
        self.players: int = view["players"]
        self.okey = parse_tile(view["okey"])
        self.open_variant = is_open_variant(view["variant"])
        rack = [parse_tile(t) for t in view["rack"]]
        discards = [[parse_tile(t) for t in pile] for pile in view["discards"]]
        took = [[parse_tile(t) for t in pile] for pile in (view.get("took") or [])]
        if len(took) != self.players:
            took = [[] for _ in range(self.players)]
        seen: Counter[int] = Counter(rack)
        seen[parse_tile(view["indicator"])] += 1
        for pile in discards:
            seen.update(pile)
        for m in view["table"]:
            seen.update(int(t) for t in m["state"]["tiles"])
        # A taken tile waiting in our own rack is already counted in the rack.
        self.unseen: Counter[int] = +(full_set() - seen)
        self.rack_counts: list[int] = list(view["rack_counts"])
        self.others = [s for s in range(self.players) if s != self.seat]
        # Known holdings: a closed-variant take stays in the taker's rack unless it was thrown
        # again (the same identity among the taker's discards: we cannot tell the copies apart).
        self.known: dict[int, Counter[int]] = {}
        pool = Counter(self.unseen)
        for s in self.others:
            held: Counter[int] = Counter()
            if not self.open_variant:
                held = Counter(took[s]) - Counter(discards[s])
                held = Counter({t: min(k, pool[t]) for t, k in held.items() if pool[t] > 0})
                # Never more known tiles than the rack holds.
                while sum(held.values()) > self.rack_counts[s]:
                    held[next(iter(held))] -= 1
                    held = +held
                pool -= held
            self.known[s] = held
        self.free: Counter[int] = pool  # unseen tiles whose place is not known
        # The seat on turn that has not drawn yet has not passed the latest discard.
        self.deciding: int | None = view["turn"] if view["phase"] == "draw" else None
        self.weights = {s: self._weights(s, discards, took) for s in self.others}

    def _weights(self, s: int, discards: list[list[int]], took: list[list[int]]) -> list[float]:
        """Per tile code, how likely seat ``s`` holds it relative to an even deal."""
        w = [1.0] * (NUMBERED + 1)
        okey = self.okey

        def nudge(t: int, factor: float) -> None:
            for u in neighbours(t, okey):
                w[u] *= factor
                if u == okey:
                    w[FAKE] *= factor

        for t in discards[s]:
            nudge(t, THREW)
        prev = (s - 1) % self.players
        passed = list(discards[prev])
        # The previous seat's latest discard is only passed once ``s`` has drawn instead.
        if passed and self.deciding == s:
            passed.pop()
        for t in passed:
            nudge(t, PASSED)
        for t in took[s]:
            nudge(t, TOOK)
        return w

    def unknown_slots(self, s: int) -> int:
        """How many tiles of seat ``s``'s rack are not known."""
        return max(0, self.rack_counts[s] - sum(self.known[s].values()))

    def sample(self, rng: random.Random) -> World:
        """One world: the free unseen tiles dealt to the other racks by the weights, the rest
        shuffled into the pile."""
        pool = sorted(self.free.elements())
        racks: dict[int, list[int]] = {}
        order = list(self.others)
        rng.shuffle(order)
        for s in order:
            need = min(self.unknown_slots(s), len(pool))
            w = self.weights[s]
            # Weighted sampling without replacement (Efraimidis and Spirakis): keep the ``need``
            # largest u ** (1 / w).
            keyed = sorted(
                ((rng.random() ** (1.0 / w[t]), i) for i, t in enumerate(pool)), reverse=True
            )
            chosen = {i for _, i in keyed[:need]}
            racks[s] = list(self.known[s].elements()) + [pool[i] for i in sorted(chosen)]
            pool = [t for i, t in enumerate(pool) if i not in chosen]
        rng.shuffle(pool)
        return World(racks, pool)


__all__ = ["Belief", "World", "full_set", "neighbours"]
