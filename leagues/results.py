"""How a match came out, read from its ``Participant`` rows (who held each seat in each hand),
never from today's seats: the sides (a 2v2 team, or a seat), who played each, whether a bot
held a seat, and each side's place; and from its ``Abandonment`` rows, who left it (a player
who left is split out of their side and placed last). Ratings and standings both read matches
through here."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction

from games import engine
from games.models import Abandonment, Match, Participant


@dataclass
class Side:
    """A team in a 2v2 match (``Participant.team``), otherwise one seat; or one player who left
    the match (``left``), split out of the side they played on."""

    key: int
    seats: list[int] = field(default_factory=list)
    users: list[int] = field(default_factory=list)  # user ids in seat order, each once
    bot: bool = False  # a bot held one of its seats in some hand
    total: int = 0
    place: int = 1  # 1 is best; equal places are a tie
    left: bool = False  # its one player left the match (an ``Abandonment``): placed last


@dataclass
class Outcome:
    match_id: int
    sides: list[Side]
    totals: list[int]
    seats_of: dict[int, list[int]] = field(default_factory=dict)  # user id -> seats held
    left: list[int] = field(default_factory=list)  # user ids of the players who left it

    @property
    def has_bot(self) -> bool:
        return any(s.bot for s in self.sides)

    @property
    def users(self) -> list[int]:
        return [u for s in self.sides for u in s.users]

    @property
    def conflict(self) -> bool:
        """A user played on two sides (a seat changed hands to an opponent): not counted."""
        users = self.users
        return len(users) != len(set(users))

    def side_of(self, user_id: int) -> Side:
        return next(s for s in self.sides if user_id in s.users)

    def letter(self, user_id: int) -> str:
        """W: their side alone came first; D: first together with another side; L: otherwise."""
        side = self.side_of(user_id)
        if side.place != 1:
            return "L"
        return "W" if sum(1 for s in self.sides if s.place == 1) == 1 else "D"

    def points(self, user_id: int) -> int:
        """The final totals of the seats the user held (their own seat, in 2v2 too)."""
        return sum(self.totals[p] for p in self.seats_of[user_id] if p < len(self.totals))


def participants_of(match_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """The Participant rows of the matches' hands, by match id (two queries: the rows, and
    the matches' ``Abandonment`` rows). Each row's ``left`` says whether its player left the
    match (on every row of theirs, the hands before they left too)."""
    ids = list(match_ids)
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if not ids:
        return out
    left = set(Abandonment.objects.filter(match_id__in=ids).values_list("match_id", "user_id"))
    rows = Participant.objects.filter(hand__match_id__in=ids).values(
        "hand__match_id", "position", "user_id", "bot_level", "team"
    )
    for row in rows:
        row["left"] = (row["hand__match_id"], row["user_id"]) in left
        out[row["hand__match_id"]].append(row)
    return out


def outcome(match: Match, participants: list[dict[str, Any]], variant_key: str) -> Outcome | None:
    """The sides of a finished (or abandoned) match and their places, or None without hands.

    Places: the sides holding a seat of ``Match.winners`` share first place; the others follow
    by their totals (summed over a team's seats), equal totals tying. A finished match without
    winners (a draw) puts every side first. An abandoned match has no winners: its sides are
    placed by their totals as they stood when it was stopped.

    Leaving counts as last place: a player who left the match (a row's ``left``, from an
    ``Abandonment``) is taken out of their side into a side of their own (``Side.left``, the
    seats they held, their totals) placed below every other side; several who left share that
    last place, whatever their totals. The side they left (their seat, now a bot's; or their
    2v2 team, with their partner) keeps its seats and its place by the match's result. A
    match in which a player sat on two sides (``Outcome.conflict``) is left as it is.
    """
    if not participants:
        return None
    sides: dict[int, Side] = {}
    seats_of: dict[int, list[int]] = defaultdict(list)
    for row in sorted(participants, key=lambda r: r["position"]):
        p = row["position"]
        key = row["team"] if row["team"] is not None else p
        side = sides.setdefault(key, Side(key=key))
        if p not in side.seats:
            side.seats.append(p)
        if row["bot_level"]:
            side.bot = True
        elif row["user_id"] is not None:
            if row["user_id"] not in side.users:
                side.users.append(row["user_id"])
            if p not in seats_of[row["user_id"]]:
                seats_of[row["user_id"]].append(p)
    left = sorted(
        {r["user_id"] for r in participants if r.get("left") and r["user_id"] is not None},
        key=lambda u: (seats_of[u], u),
    )
    totals = [int(t) for t in match.totals]
    ordered = [sides[k] for k in sorted(sides)]
    for side in ordered:
        side.total = sum(totals[p] for p in side.seats if p < len(totals))
    higher = engine.higher_is_better(variant_key)

    def better(a: Side, b: Side) -> bool:
        return a.total > b.total if higher else a.total < b.total

    if match.status == Match.Status.ABANDONED:
        best = engine.leaders(variant_key, [s.total for s in ordered])
        winners = {p for k in best for p in ordered[k].seats}
    else:
        winners = set(match.winners or [])
    first = [s for s in ordered if winners & set(s.seats)]
    if not first:
        for side in ordered:
            side.place = 1
    else:
        rest = [s for s in ordered if s not in first]
        for side in first:
            side.place = 1
        for side in rest:
            side.place = len(first) + 1 + sum(1 for o in rest if better(o, side))
    out = Outcome(match_id=match.pk, sides=ordered, totals=totals, seats_of=dict(seats_of))
    if left and not out.conflict:
        out.sides = ordered + _split_out(ordered, left, seats_of, totals)
        out.left = left
    return out


def _split_out(
    sides: list[Side], left: list[int], seats_of: dict[int, list[int]], totals: list[int]
) -> list[Side]:
    """Take the players who left out of ``sides``; their own sides, sharing the last place."""
    last = len(sides) + 1
    key = max(s.key for s in sides) + 1
    own = []
    for n, user_id in enumerate(left):
        next(s for s in sides if user_id in s.users).users.remove(user_id)
        seats = list(seats_of[user_id])
        total = sum(totals[p] for p in seats if p < len(totals))
        own.append(
            Side(key=key + n, seats=seats, users=[user_id], total=total, place=last, left=True)
        )
    return own


def once_per_match(step: Callable[[int], bool], match: Match | int) -> bool:
    """Run ``step`` on the match's id in a transaction of its own; False when a unique row it
    inserts (the mark that the step was done for this match) was inserted by another worker
    first: the step is then done already."""
    pk = match.pk if isinstance(match, Match) else match
    try:
        with transaction.atomic():
            return step(pk)
    except IntegrityError:
        return False
