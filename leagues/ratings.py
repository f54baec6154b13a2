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

A result that cannot be bought (docs/SECURITY.md, "Rated results"):

- A match a player left before it really began (their seat had played fewer than
  ``EARLY_LEAVE_MOVES`` moves of the match) is rated for nobody: a second account that sits
  down and leaves at once would otherwise hand the other account a win. The leaver keeps the
  leave on their record (``Abandonment``: Play now makes serial leavers wait), and the pair
  (leaver, each other person) is counted in ``EarlyLeavePair`` for staff.
- Only established accounts are rated (``established``): not a guest, and ``MIN_FINISHED``
  matches played to their end before this one. The others are left out as bots are (their
  sides leave a gap), so that a throwaway account moves nobody's rating.
- A match where someone held two sides is rated for nobody; the seats make it impossible
  (``games.policy.check_sit``), and this stays for matches from before.

Exactly once: the ``RatedMatch`` row (one per match, unique) is inserted in the same
transaction as the rating updates, after the ``Rating`` rows are locked; a second run finds
it and does nothing, and a racing one fails on the unique constraint and rolls back.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from django.db.models import Count, Exists, F, OuterRef
from django.utils import timezone
from openskill.models import PlackettLuce

from games.models import Abandonment, Match, Move, Participant
from leagues import results
from leagues.models import EarlyLeavePair, RatedMatch, Rating, RatingChange

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


# The fewest rated people (players who left included) a match needs to be rated.
MIN_PEOPLE = 2
# A player who left before their seat had played this many moves of the match (four turns of
# a draw and a throw) left before it really began: the match is rated for nobody.
EARLY_LEAVE_MOVES = 8
# An account is rated once it has played this many matches to their end (finished, not left).
MIN_FINISHED = 3


def rated_sides(
    out: results.Outcome | None, counted: set[int] | None = None
) -> list[results.Side] | None:
    """The sides to rate (each with its people, in its place among all the sides: bots' sides
    are left out, and so are people not in ``counted``, the established accounts, when given),
    or None when the match is not rated (see the module's docstring)."""
    if out is None or out.conflict:
        return None
    sides = [
        replace(s, users=[u for u in s.users if counted is None or u in counted]) for s in out.sides
    ]
    sides = [s for s in sides if s.users]
    if sum(len(s.users) for s in sides) < MIN_PEOPLE or len(sides) < 2:
        return None
    return sides


def early_leavers(match_id: int) -> list[int]:
    """The players who left the match before their seat had played ``EARLY_LEAVE_MOVES`` of
    its moves (counted in the hands they held it, up to when they left)."""
    found = []
    for user_id, position, at in Abandonment.objects.filter(match_id=match_id).values_list(
        "user_id", "position", "at"
    ):
        played = Move.objects.filter(
            hand__match_id=match_id,
            seat=position,
            created_at__lte=at,
            hand__participants__user_id=user_id,
            hand__participants__position=position,
        ).count()
        if played < EARLY_LEAVE_MOVES:
            found.append(user_id)
    return found


def established(user_ids: list[int], match_id: int) -> set[int]:
    """Which of the accounts are rated: not guests, with ``MIN_FINISHED`` matches other than
    ``match_id`` that they played to the end (finished, and they did not leave it)."""
    left = Abandonment.objects.filter(
        user_id=OuterRef("user_id"), match_id=OuterRef("hand__match_id")
    )
    finished = (
        Participant.objects.filter(user_id__in=user_ids, hand__match__status=Match.Status.FINISHED)
        .exclude(hand__match_id=match_id)
        .exclude(user__profile__is_guest=True)
        .filter(~Exists(left))
        .values("user_id")
        .annotate(matches=Count("hand__match_id", distinct=True))
    )
    return {row["user_id"] for row in finished if row["matches"] >= MIN_FINISHED}


def _count_early_leaves(match: Match, leavers: list[int], people: list[int]) -> None:
    """One more early leave for each (leaver, other person in the match) pair."""
    for leaver in leavers:
        for other in people:
            if other == leaver:
                continue
            pair, _created = EarlyLeavePair.objects.get_or_create(leaver_id=leaver, other_id=other)
            EarlyLeavePair.objects.filter(pk=pair.pk).update(times=F("times") + 1, last_match=match)


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
    reason = RatedMatch.Reason.TOO_FEW
    sides = None
    if out is not None and out.conflict:
        reason = RatedMatch.Reason.TWO_SIDES
    elif out is not None:
        early = early_leavers(pk)
        if early:
            reason = RatedMatch.Reason.EARLY_LEAVE
            _count_early_leaves(match, early, out.users)
        else:
            sides = rated_sides(out, established(out.users, pk))
    if sides is None:
        RatedMatch.objects.create(match=match, rated=False, reason=reason)
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
