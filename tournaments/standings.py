"""Standings of a tournament: placement points for each match, the tie-breaks, the ranking.
Pure Python, deterministic (a seeded draw settles what nothing else does).

- **Placement points** per match: 3, 2, 1 and 0 for the four places; players tied on the
  match's score share the points of the places they cover (two tied first: 2.5 each). A bye
  is worth a table's mean, 1.5. A seat a bot held for the whole match (``None``) takes its
  place but scores nothing and ranks nobody.
- **Score margin**: a player's own match score minus the mean of their table's scores.
- **Swiss ranking** (``swiss``): points; then the tie-breaks in order: score margin summed,
  opponents' average points (each opponent met, counted per meeting, at their final
  points), the number of first places, the better places at tables the tied players shared
  (each time one finished ahead of another of them, minus each time behind), a seeded draw.
- **Knockout ranking** (``knockout``): the final table's places, then the others by the
  round they reached, their place at that table, their score margin there, a seeded draw.

Scores come in as "more is better": the caller turns a countdown or a penalty total round
(``games.engine.scoring.higher_is_better``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

PLACE_POINTS = (3.0, 2.0, 1.0, 0.0)
BYE_POINTS = sum(PLACE_POINTS) / len(PLACE_POINTS)


@dataclass(frozen=True)
class MatchResult:
    """A table's match in round ``round``: its seats' players (``None``: a bot's seat) and
    their final scores, more being better."""

    round: int
    players: tuple[int | None, ...]
    scores: tuple[float, ...]

    def places(self) -> dict[int, int]:
        """Each player's place (1 is first): one more than the seats that scored more."""
        return {
            p: 1 + sum(other > score for other in self.scores)
            for p, score in zip(self.players, self.scores, strict=True)
            if p is not None
        }

    def points(self) -> dict[int, float]:
        """Each player's placement points; tied players share those of the places they
        cover."""
        out = {}
        for p, score in zip(self.players, self.scores, strict=True):
            if p is None:
                continue
            above = sum(other > score for other in self.scores)
            tied = sum(other == score for other in self.scores)
            covered = PLACE_POINTS[above : above + tied]
            out[p] = sum(covered) / tied
        return out

    def margins(self) -> dict[int, float]:
        mean = sum(self.scores) / len(self.scores)
        return {
            p: score - mean
            for p, score in zip(self.players, self.scores, strict=True)
            if p is not None
        }


@dataclass
class Line:
    """A player's line in the standings."""

    player: int
    points: float = 0.0
    margin: float = 0.0
    opponents_average: float = 0.0
    firsts: int = 0
    matches: int = 0
    byes: int = 0
    rank: int = 0
    opponents: list[int] = field(default_factory=list)


def draw(seed: int | str, player: int) -> str:
    """The seeded draw's key for ``player``: the same seed always draws the same order."""
    return hashlib.sha256(f"{seed}:{player}".encode()).hexdigest()


def lines(
    entrants: Sequence[int], results: Sequence[MatchResult], byes: Mapping[int, int]
) -> dict[int, Line]:
    """Each entrant's totals: points, margin, firsts, matches, byes and opponents."""
    table = {p: Line(p) for p in entrants}
    for result in results:
        points, margins, places = result.points(), result.margins(), result.places()
        for p in points:
            line = table.setdefault(p, Line(p))
            line.points += points[p]
            line.margin += margins[p]
            line.firsts += places[p] == 1
            line.matches += 1
            line.opponents += [q for q in points if q != p]
    for p, count in byes.items():
        line = table.setdefault(p, Line(p))
        line.byes += count
        line.points += BYE_POINTS * count
    for line in table.values():
        met = [table[q].points for q in line.opponents if q in table]
        line.opponents_average = sum(met) / len(met) if met else 0.0
    return table


def swiss(
    entrants: Sequence[int],
    results: Sequence[MatchResult],
    byes: Mapping[int, int] | None = None,
    *,
    seed: int | str = 0,
) -> list[Line]:
    """The Swiss standings, best first, each line's ``rank`` set (1 is first)."""
    table = lines(entrants, results, byes or {})

    def key(line: Line) -> tuple[float, float, float, int]:
        return (
            -line.points,
            -round(line.margin, 9),
            -round(line.opponents_average, 9),
            -line.firsts,
        )

    ordered = sorted(table.values(), key=lambda line: (key(line), draw(seed, line.player)))
    out: list[Line] = []
    for _key, group in _groups(ordered, key):
        out += _head_to_head(group, results, seed) if len(group) > 1 else group
    for rank, line in enumerate(out, 1):
        line.rank = rank
    return out


def knockout(rounds: Sequence[Sequence[MatchResult]], *, seed: int | str = 0) -> list[Line]:
    """The knockout's final ranking: the final table's places first (its last round has one
    table), then the others by the round they reached, their place and margin there."""
    last: dict[int, tuple[int, MatchResult]] = {}
    for number, played in enumerate(rounds):
        for result in played:
            for p in result.places():
                last[p] = (number, result)
    table = lines(list(last), [r for played in rounds for r in played], {})

    def key(line: Line) -> tuple[int, int, float, str]:
        number, result = last[line.player]
        return (
            -number,
            result.places()[line.player],
            -round(result.margins()[line.player], 9),
            draw(seed, line.player),
        )

    out = sorted(table.values(), key=key)
    for rank, line in enumerate(out, 1):
        line.rank = rank
    return out


def _groups(ordered: list[Line], key: object) -> list[tuple[object, list[Line]]]:
    groups: list[tuple[object, list[Line]]] = []
    for line in ordered:
        k = key(line)  # type: ignore[operator]
        if groups and groups[-1][0] == k:
            groups[-1][1].append(line)
        else:
            groups.append((k, [line]))
    return groups


def _head_to_head(group: list[Line], results: Sequence[MatchResult], seed: int | str) -> list[Line]:
    """Players tied on everything before: each time one finished ahead of another of them at
    a table they shared counts +1, behind -1; then the seeded draw."""
    tied = {line.player for line in group}
    score: dict[int, int] = defaultdict(int)
    for result in results:
        places = {p: place for p, place in result.places().items() if p in tied}
        for p, place in places.items():
            score[p] += sum((place < other) - (place > other) for other in places.values())
    return sorted(group, key=lambda line: (-score[line.player], draw(seed, line.player)))
