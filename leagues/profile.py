"""A player's ratings on their profile page: the rating now per variant and a chart of its
history (``templatetags/leagues.py`` puts them on the page)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from games.messages import variant_name
from leagues.models import Rating, RatingChange
from leagues.ratings import provisional, shown

# The rating history chart on the profile (server-drawn SVG, no script): one line per variant.
CHART_W, CHART_H, PAD = 480, 160, 28


def rating_history(person: Any) -> list[dict[str, Any]]:
    """Per variant the player is rated in (``leagues.Rating``): the rating now as players
    read it (``leagues.ratings.shown``, provisional or not) and its matches, its leaderboard
    link, and a chart of the rating after each rated match (``leagues.RatingChange``), oldest
    first. Two queries."""
    ratings = list(
        Rating.objects.filter(user=person).select_related("variant").order_by("variant_id")
    )
    if not ratings:
        return []
    changes: dict[int, list[float]] = {}
    first: dict[int, float] = {}
    for variant_id, before, after in (
        RatingChange.objects.filter(user=person)
        .order_by("created_at", "id")
        .values_list("variant_id", "ordinal_before", "ordinal")
    ):
        first.setdefault(variant_id, before)
        changes.setdefault(variant_id, []).append(after)
    rows = []
    for r in ratings:
        ordinals = [first[r.variant_id], *changes[r.variant_id]] if r.variant_id in first else []
        series: list[float] = [shown(o) for o in ordinals]
        rows.append(
            {
                "variant": r.variant.key,
                "variant_name": variant_name(r.variant.name),
                "rating": shown(r.ordinal),
                "provisional": provisional(r.matches),
                "matches": r.matches,
                "url": reverse("leaderboard", args=[r.variant.key]),
                "chart": _line_chart(series) if len(series) > 1 else None,
            }
        )
    return rows


def _line_chart(values: list[float]) -> dict[str, Any]:
    """A polyline of ``values`` over their index, in pixels, with the lowest and highest
    value as labels."""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (CHART_W - 2 * PAD) / (len(values) - 1)

    def y(v: float) -> float:
        return round(CHART_H - PAD - (v - low) / span * (CHART_H - 2 * PAD), 1)

    points = [(round(PAD + i * step, 1), y(v)) for i, v in enumerate(values)]
    return {
        "width": CHART_W,
        "height": CHART_H,
        "points": " ".join(f"{x},{yy}" for x, yy in points),
        "values": [round(v, 2) for v in values],
        "low": round(low, 2),
        "high": round(high, 2),
        "low_y": y(low),
        "high_y": y(high),
        "last_x": points[-1][0],
        "last_y": points[-1][1],
        "pad": PAD,
        "right": CHART_W - PAD,
    }
