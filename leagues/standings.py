"""Season standings: who leads a season, from the matches its members played at its tables.

What counts: matches at the season's tables (``Table.season``) that finished (and, with
``Season.count_abandoned``, that were abandoned, as they stood when stopped) on a day of the
season, between members only (every human player a ``SeasonMember``); a match in which a bot
held a seat counts only with ``Season.allow_bots``. Who played comes from the Participant rows.

Per member: matches played, won (their side alone came first), drawn (first together with
another side), points (the sum of their seats' final totals), their rating ordinal for the
league's variant, and their form (last five results, W/D/L). The rank follows
``Season.counting``; members who have not played yet come last; equal keys share a rank.

``compute_standings`` computes all of it from the stored matches (pure: it writes nothing);
``count_match`` adds one match to the stored ``Standing`` rows when it ends (once per season
and match: ``SeasonMatch``); ``recompute`` rewrites the stored rows from ``compute_standings``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from games import engine
from games.models import Match
from leagues import results
from leagues.models import Rating, Season, SeasonMatch, SeasonMember, Standing

FORM_LENGTH = 5


@dataclass
class Line:
    """One member's line of the standings (the fields of a stored ``Standing``)."""

    user_id: int
    rank: int = 0
    played: int = 0
    won: int = 0
    drawn: int = 0
    points: int = 0
    rating: float | None = None
    form: str = ""


def as_tuple(row: Standing | Line) -> tuple[Any, ...]:
    """A line's values, to compare stored rows with computed lines."""
    return (
        row.user_id,
        row.rank,
        row.played,
        row.won,
        row.drawn,
        row.points,
        row.rating,
        row.form,
    )


def _statuses(season: Season) -> list[str]:
    statuses = [Match.Status.FINISHED]
    if season.count_abandoned:
        statuses.append(Match.Status.ABANDONED)
    return statuses


def member_ids(season: Season) -> set[int]:
    return set(SeasonMember.objects.filter(season=season).values_list("user_id", flat=True))


def counts(season: Season, match: Match, out: results.Outcome | None, members: set[int]) -> bool:
    """Whether the match counts in the season's standings (see the module's docstring)."""
    if match.status not in _statuses(season) or match.finished_at is None:
        return False
    if match.table.season_id != season.pk:
        return False
    day = timezone.localdate(match.finished_at)
    if not (season.starts_on <= day <= season.ends_on):
        return False
    if out is None or out.conflict or not out.users:
        return False
    if out.has_bot and not season.allow_bots:
        return False
    return set(out.users) <= members


def _add(line: Standing | Line, out: results.Outcome, user_id: int) -> None:
    letter = out.letter(user_id)
    line.played += 1
    line.won += letter == "W"
    line.drawn += letter == "D"
    line.points += out.points(user_id)
    line.form = (line.form + letter)[-FORM_LENGTH:]


def _ratings(season: Season, users: Iterable[int]) -> dict[int, float]:
    rows = Rating.objects.filter(variant_id=season.league.variant_id, user_id__in=list(users))
    return dict(rows.values_list("user_id", "ordinal"))


def _rank(season: Season, lines: list[Any]) -> list[Any]:
    """Set each line's rank by the season's counting rule; the lines in rank order."""
    higher = engine.higher_is_better(season.league.variant.key)

    def key(line: Any) -> tuple[Any, ...]:
        not_played = 0 if line.played else 1
        points = -line.points if higher else line.points
        rating = -line.rating if line.rating is not None else math.inf
        if season.counting == Season.Counting.WINS:
            return (not_played, -line.won, -line.drawn, points)
        if season.counting == Season.Counting.RATING:
            return (not_played, rating, -line.won, points)
        return (not_played, points, -line.won, -line.drawn)

    keys = {id(line): key(line) for line in lines}
    for line in lines:
        line.rank = 1 + sum(1 for other in lines if keys[id(other)] < keys[id(line)])
    return sorted(lines, key=lambda line: (line.rank, line.user_id))


def _season_matches(season: Season) -> list[Match]:
    return list(
        Match.objects.filter(table__season=season, status__in=_statuses(season))
        .select_related("table")
        .order_by("finished_at", "pk")
    )


def _compute(season: Season) -> tuple[list[Line], list[int]]:
    members = member_ids(season)
    lines = {u: Line(user_id=u) for u in members}
    matches = _season_matches(season)
    parts = results.participants_of(m.pk for m in matches)
    variant = season.league.variant.key
    counted = []
    for match in matches:
        out = results.outcome(match, parts.get(match.pk, []), variant)
        if out is None or not counts(season, match, out, members):
            continue
        counted.append(match.pk)
        for user_id in out.users:
            _add(lines[user_id], out, user_id)
    ratings = _ratings(season, members)
    for line in lines.values():
        line.rating = ratings.get(line.user_id)
    return _rank(season, list(lines.values())), counted


def compute_standings(season: Season) -> list[Line]:
    """The season's standings computed from the stored matches, in rank order (no writes)."""
    season = Season.objects.select_related("league__variant").get(pk=season.pk)
    return _compute(season)[0]


def recompute(season: Season | int) -> list[Line]:
    """Rewrite the season's stored standings (and its counted matches) from the matches."""
    pk = season.pk if isinstance(season, Season) else season
    with transaction.atomic():
        s = (
            Season.objects.select_for_update(of=("self",))
            .select_related("league__variant")
            .get(pk=pk)
        )
        lines, counted = _compute(s)
        Standing.objects.filter(season=s).delete()
        SeasonMatch.objects.filter(season=s).delete()
        Standing.objects.bulk_create(
            [
                Standing(
                    season=s,
                    user_id=line.user_id,
                    rank=line.rank,
                    played=line.played,
                    won=line.won,
                    drawn=line.drawn,
                    points=line.points,
                    rating=line.rating,
                    form=line.form,
                )
                for line in lines
            ]
        )
        SeasonMatch.objects.bulk_create([SeasonMatch(season=s, match_id=m) for m in counted])
    return lines


def _stored_rows(season: Season) -> list[Standing]:
    """The season's Standing rows, one per member (rows for new members are added)."""
    have = set(Standing.objects.filter(season=season).values_list("user_id", flat=True))
    missing = member_ids(season) - have
    if missing:
        Standing.objects.bulk_create([Standing(season=season, user_id=u) for u in missing])
    return list(Standing.objects.filter(season=season))


def _rerank(season: Season, rows: list[Standing]) -> None:
    ratings = _ratings(season, [r.user_id for r in rows])
    now = timezone.now()
    for row in rows:
        row.rating = ratings.get(row.user_id)
        row.updated_at = now
    _rank(season, rows)
    fields = ["rank", "played", "won", "drawn", "points", "rating", "form", "updated_at"]
    Standing.objects.bulk_update(rows, fields)


def count_match(match: Match | int) -> bool:
    """Add a match that has ended to its season's stored standings, once; True if it counted."""
    # Another worker that inserted the SeasonMatch first counted it.
    return results.once_per_match(_count, match)


def _count(pk: int) -> bool:
    m = Match.objects.select_related("table__variant").get(pk=pk)
    if m.table.season_id is None:
        return False
    # The season's row is the lock: counting and recomputing a season happen one at a time.
    season = (
        Season.objects.select_for_update(of=("self",))
        .select_related("league__variant")
        .get(pk=m.table.season_id)
    )
    if SeasonMatch.objects.filter(season=season, match=m).exists():
        return False
    members = member_ids(season)
    out = results.outcome(m, results.participants_of([pk]).get(pk, []), m.table.variant.key)
    if out is None or not counts(season, m, out, members):
        return False
    SeasonMatch.objects.create(season=season, match=m)
    rows = _stored_rows(season)
    by_user = {r.user_id: r for r in rows}
    for user_id in out.users:
        _add(by_user[user_id], out, user_id)
    _rerank(season, rows)
    return True


def refresh_ratings(user_ids: Iterable[int], variant_id: int) -> None:
    """After a rating change: the stored standings that show these players' rating for the
    variant take the new ordinals (and ranks, when the season ranks by rating)."""
    seasons = Season.objects.filter(
        league__variant_id=variant_id, standings__user_id__in=list(user_ids)
    ).distinct()
    for pk in list(seasons.values_list("pk", flat=True)):
        with transaction.atomic():
            season = (
                Season.objects.select_for_update(of=("self",))
                .select_related("league__variant")
                .get(pk=pk)
            )
            _rerank(season, list(Standing.objects.filter(season=season)))
