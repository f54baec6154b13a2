"""League pages: a season's standings (with its counting rule in words and a Join button)
and a variant's rating leaderboard."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.models import display_name
from games import engine
from games.messages import variant_name
from games.models import Variant
from leagues import ratings
from leagues.models import League, Rating, Season, SeasonMember, Standing

LEADERBOARD_SIZE = 50


def leagues_index(request: HttpRequest) -> HttpResponse:
    """Every league with its seasons (newest first), and the rating leaderboards."""
    leagues = League.objects.select_related("variant").prefetch_related("seasons").order_by("name")
    rows = [
        {
            "name": league.name,
            "variant_name": variant_name(league.variant.name),
            "description": league.description,
            "seasons": sorted(league.seasons.all(), key=lambda s: s.starts_on, reverse=True),
        }
        for league in leagues
    ]
    boards = [{"key": v.key, "name": variant_name(v.name)} for v in Variant.objects.order_by("id")]
    return render(request, "leagues/index.html", {"leagues": rows, "boards": boards})


def _season(league_id: int, season_id: int) -> Season:
    return get_object_or_404(
        Season.objects.select_related("league__variant"), pk=season_id, league_id=league_id
    )


def counting_rule(season: Season) -> list[str]:
    """The season's counting rule, in words (one sentence a line)."""
    higher = engine.higher_is_better(season.league.variant.key)
    rank_by = {
        Season.Counting.POINTS: (
            _("Members are ranked by their total points (the highest first).")
            if higher
            else _("Members are ranked by their total penalty points (the fewest first).")
        ),
        Season.Counting.WINS: _("Members are ranked by the matches they won."),
        Season.Counting.RATING: _("Members are ranked by their rating in this variant."),
    }[Season.Counting(season.counting)]
    lines = [
        _(
            "Only matches at this season's tables between its members count, "
            "from %(start)s to %(end)s."
        )
        % {"start": season.starts_on.isoformat(), "end": season.ends_on.isoformat()},
        rank_by,
        (
            _("Matches with a bot count; bots are not ranked or rated.")
            if season.allow_bots
            else _("Matches with a bot do not count.")
        ),
        (
            _("Abandoned matches count, as they stood when they were stopped.")
            if season.count_abandoned
            else _("Abandoned matches do not count.")
        ),
        _("A shared first place is a draw (D); members who have not played yet come last."),
    ]
    return lines


def season_standings(request: HttpRequest, league_id: int, season_id: int) -> HttpResponse:
    season = _season(league_id, season_id)
    rows = list(
        Standing.objects.filter(season=season)
        .select_related("user__profile")
        .order_by("rank", "user_id")
    )
    member = (
        request.user.is_authenticated
        and SeasonMember.objects.filter(season=season, user_id=request.user.pk).exists()
    )
    context: dict[str, Any] = {
        "season": season,
        "league": season.league,
        "variant_name": variant_name(season.league.variant.name),
        "rule": counting_rule(season),
        "table_options": sorted((season.table_options or {}).items()),
        # Where members play: the season's public tables that are open or being played.
        "tables": list(
            season.tables.filter(is_private=False, status__in=["open", "playing"]).order_by("pk")
        ),
        "rows": [
            {
                "rank": r.rank,
                "name": display_name(r.user),
                "username": r.user.get_username(),
                "played": r.played,
                "won": r.won,
                "drawn": r.drawn,
                "points": r.points,
                "rating": ratings.shown(r.rating) if r.rating is not None else None,
                "form": list(r.form),
            }
            for r in rows
        ],
        "member": member,
        "can_join": request.user.is_authenticated and season.open_to_join and not member,
    }
    return render(request, "leagues/season.html", context)


@require_POST
@login_required
def season_join(request: HttpRequest, league_id: int, season_id: int) -> HttpResponse:
    season = _season(league_id, season_id)
    if not season.open_to_join:
        raise Http404
    # A new member's line appears at once (leagues.signals recomputes the standings).
    created = SeasonMember.objects.get_or_create(season=season, user=request.user)[1]
    if created:
        messages.success(request, _("You joined the season."))
    return redirect("season_standings", league_id=season.league_id, season_id=season.pk)


def leaderboard(request: HttpRequest, variant: str) -> HttpResponse:
    v = get_object_or_404(Variant, key=variant)
    top = (
        Rating.objects.filter(variant=v)
        .exclude(user__profile__is_guest=True)  # a guest's rating is not on the board
        .select_related("user__profile")
        .order_by("-ordinal", "user_id")[:LEADERBOARD_SIZE]
    )
    rows = [
        {
            "rank": n,
            "name": display_name(r.user),
            "username": r.user.get_username(),
            "rating": ratings.shown(r.ordinal),
            "provisional": ratings.provisional(r.matches),
            "matches": r.matches,
        }
        for n, r in enumerate(top, start=1)
    ]
    return render(
        request,
        "leagues/leaderboard.html",
        {"variant": v, "variant_name": variant_name(v.name), "rows": rows},
    )
