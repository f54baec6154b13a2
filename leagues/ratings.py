"""Player ratings: OpenSkill's Plackett-Luce model, one ``Rating`` per player and variant.

A match is rated once, from its final result (``leagues.results.outcome``: the sides are the
2v2 teams, or the seats; equal places are ties), when it finishes. Which matches: a finished
match with at least two people in it (players who left it count) is rated, for those people,
at any table, in a season or not. Bots are never rated: the people are rated by their places
among all the sides, a bot's side only leaves a gap. A match with fewer than two people (one
person and three bots) is not rated, nor one whose people all played on one side (2v2 partners
against two bots: nobody rated to compare them with), nor an abandoned one.

Leaving costs last place: a player who left the match (``games.models.Abandonment``; a bot
held their seat for the rest of it) is placed below every side, their 2v2 partner keeping the
team's place (``results.outcome``); several who left share the last place.

Exactly once: the ``RatedMatch`` row (one per match, unique) is inserted in the same
transaction as the rating updates, after the ``Rating`` rows are locked; a second run finds
it and does nothing, and a racing one fails on the unique constraint and rolls back.
"""

from __future__ import annotations

import logging

from django.utils import timezone
from openskill.models import PlackettLuce

from games.models import Match
from leagues import results
from leagues.models import RatedMatch, Rating, RatingChange

log = logging.getLogger(__name__)

# The model's defaults: mu 25, sigma 25/3; the ordinal is mu - 3 sigma.
MODEL = PlackettLuce()


def ordinal(mu: float, sigma: float) -> float:
    return float(MODEL.rating(mu=mu, sigma=sigma).ordinal())


def initial() -> tuple[float, float]:
    return float(MODEL.mu), float(MODEL.sigma)


# The rating players read, on the familiar chess-like scale: 1500 for a new player (ordinal
# 0), 20 points per unit of the ordinal. A function of the ordinal alone, so it orders players
# exactly as the leaderboards and standings do. Provisional until PROVISIONAL_MATCHES rated
# matches: until then it moves a lot, and the pages say so.
SHOWN_BASE = 1500
SHOWN_PER_ORDINAL = 20
PROVISIONAL_MATCHES = 10


def shown(ordinal: float) -> int:
    """The rating as players read it (1500 for a new player)."""
    return round(SHOWN_BASE + SHOWN_PER_ORDINAL * ordinal)


def provisional(matches: int) -> bool:
    return matches < PROVISIONAL_MATCHES


# The fewest people (players who left included) a match needs to be rated.
MIN_PEOPLE = 2


def rated_sides(out: results.Outcome | None) -> list[results.Side] | None:
    """The sides to rate (each with its people, in its place among all the sides: bots' sides
    are left out), or None when the match is not rated (see the module's docstring)."""
    if out is None or out.conflict or len(out.users) < MIN_PEOPLE:
        return None
    sides = [s for s in out.sides if s.users]
    return sides if len(sides) >= 2 else None


def rate_match(match: Match | int) -> bool:
    """Rate a finished match if it has not been rated; True when this call rated it."""
    # Another worker that inserted the match's RatedMatch first rated the match.
    return results.once_per_match(_rate, match)


def _already_rated(pk: int) -> bool:
    return RatedMatch.objects.filter(match_id=pk).exists()


def _rate(pk: int) -> bool:
    if _already_rated(pk):
        return False
    match = Match.objects.select_related("table__variant").get(pk=pk)
    if match.status != Match.Status.FINISHED:
        return False
    variant = match.table.variant
    out = results.outcome(match, results.participants_of([pk]).get(pk, []), variant.key)
    sides = rated_sides(out)
    if sides is None:
        RatedMatch.objects.create(match=match, rated=False)
        return False
    user_ids = sorted(u for s in sides for u in s.users)
    mu0, sigma0 = initial()
    Rating.objects.bulk_create(
        [
            Rating(user_id=u, variant=variant, mu=mu0, sigma=sigma0, ordinal=ordinal(mu0, sigma0))
            for u in user_ids
        ],
        ignore_conflicts=True,
    )
    rows = {
        r.user_id: r
        for r in Rating.objects.select_for_update()
        .filter(variant=variant, user_id__in=user_ids)
        .order_by("user_id")
    }
    # The marker goes in with the updates: a racing worker fails here and rolls back.
    RatedMatch.objects.create(match=match, rated=True)
    teams = [[MODEL.rating(mu=rows[u].mu, sigma=rows[u].sigma) for u in s.users] for s in sides]
    new = MODEL.rate(teams, ranks=[float(s.place) for s in sides])
    changes = []
    for side, team in zip(sides, new, strict=True):
        for u, after in zip(side.users, team, strict=True):
            row = rows[u]
            changes.append(
                RatingChange(
                    match=match,
                    user_id=u,
                    variant=variant,
                    mu_before=row.mu,
                    sigma_before=row.sigma,
                    ordinal_before=row.ordinal,
                    mu_after=after.mu,
                    sigma_after=after.sigma,
                    ordinal=ordinal(after.mu, after.sigma),
                )
            )
            row.mu, row.sigma = float(after.mu), float(after.sigma)
            row.ordinal = ordinal(row.mu, row.sigma)
            row.matches += 1
            row.updated_at = timezone.now()
    Rating.objects.bulk_update(rows.values(), ["mu", "sigma", "ordinal", "matches", "updated_at"])
    RatingChange.objects.bulk_create(changes)
    return True
