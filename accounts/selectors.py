"""What the profile page shows, as plain data (the games' selectors split: read here, write in
views and services)."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch
from django.urls import reverse

from games import policy
from games.messages import variant_name
from games.models import Match, Participant, Seat
from games.selectors import holder_name

RECENT_MATCHES = 20


def recent_matches(person: Any, viewer: Any, limit: int = RECENT_MATCHES) -> list[dict[str, Any]]:
    """The last ``limit`` matches ``person`` played (a ``Participant`` of one of its hands),
    newest first: variant, date, status, their final total once finished, the winners, and
    the table's name and link when ``viewer`` may see the table (``policy.can_see``). Three
    queries however many matches."""
    matches = list(
        Match.objects.filter(hands__participants__user=person)
        .distinct()
        .select_related("table__variant")
        .prefetch_related(Prefetch("table__seats", queryset=Seat.objects.order_by("position")))
        .order_by("-started_at", "-pk")[:limit]
    )
    if not matches:
        return []
    # Who held each seat, by match: the later hands' holders win (seats change hands), and
    # the seat the person last held there.
    holders: dict[int, dict[int, Participant]] = {m.pk: {} for m in matches}
    own_seat: dict[int, int] = {}
    rows = (
        Participant.objects.filter(hand__match__in=[m.pk for m in matches])
        .select_related("user__profile", "hand")
        .order_by("hand__number", "position")
    )
    for p in rows:
        holders[p.hand.match_id][p.position] = p
        if p.user_id == person.pk:
            own_seat[p.hand.match_id] = p.position
    return [_match(m, holders[m.pk], own_seat.get(m.pk), viewer) for m in matches]


def _match(
    m: Match, holders: dict[int, Participant], seat: int | None, viewer: Any
) -> dict[str, Any]:
    table = m.table
    visible = policy.can_see(table, list(table.seats.all()), viewer)
    finished = m.status == Match.Status.FINISHED
    total = None
    if finished and seat is not None and seat < len(m.totals):
        total = m.totals[seat]
    return {
        "id": m.pk,
        "variant": table.variant.key,
        "variant_name": variant_name(table.variant.name),
        "date": m.finished_at or m.started_at,
        "status": m.status,
        "status_display": m.get_status_display(),
        "finished": finished,
        "seat": seat,
        "total": total,
        "winners": [holder_name(holders.get(w)) for w in m.winners] if finished else [],
        "visible": visible,
        "table_name": table.name if visible else "",
        "url": reverse("table", args=[table.pk]) if visible else "",
    }


# ----------------------------------------------------------------------------- ratings
# The rating history chart on the profile (server-drawn SVG, no script): one line per variant.
CHART_W, CHART_H, PAD = 480, 160, 28


def rating_history(person: Any) -> list[dict[str, Any]]:
    """Per variant the player is rated in (``leagues.Rating``): the rating now (ordinal,
    mu, sigma, matches), its leaderboard link, and a chart of the ordinal after each rated
    match (``leagues.RatingChange``), oldest first. Two queries."""
    from leagues.models import Rating, RatingChange

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
        series = [first[r.variant_id], *changes[r.variant_id]] if r.variant_id in first else []
        rows.append(
            {
                "variant": r.variant.key,
                "variant_name": variant_name(r.variant.name),
                "ordinal": round(r.ordinal, 2),
                "mu": round(r.mu, 2),
                "sigma": round(r.sigma, 2),
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
