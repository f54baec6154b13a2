"""What the profile page shows, as plain data (the games' selectors split: read here, write in
views and services)."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch
from django.urls import reverse
from django.utils.translation import gettext

from accounts.models import display_name
from games import policy
from games.messages import variant_name
from games.models import Match, Participant, Seat

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
        "winners": [_holder_name(holders.get(w)) for w in m.winners] if finished else [],
        "visible": visible,
        "table_name": table.name if visible else "",
        "url": reverse("table", args=[table.pk]) if visible else "",
    }


def _holder_name(p: Participant | None) -> str:
    if p is None:
        return "?"
    if p.user_id and p.user is not None:
        return display_name(p.user)
    if p.bot_level:
        level = dict(Seat.Bot.choices).get(p.bot_level, p.bot_level)
        return gettext("Bot (%(level)s)") % {"level": level}
    return gettext("a former player")
