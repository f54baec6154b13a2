"""A player's profile page: who they are (``accounts``), their last matches and statistics
per variant, and what the leagues add (their ratings, drawn by the leagues' template tag). The
owner edits their display name and language here."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts import context_processors, language
from accounts.forms import ProfileForm
from accounts.models import Profile, display_name
from games import policy
from games.messages import variant_name
from games.models import Match, Participant, Seat
from games.reads import holder_name
from games.reads.stats import player_stats

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
        "table_name": table.shown_name if visible else "",
        "url": reverse("table", args=[table.pk]) if visible else "",
    }


@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's page: their name, language, when they joined, whether they are a guest, and
    their last matches. The owner edits their display name and language here."""
    person = get_object_or_404(
        get_user_model().objects.select_related("profile"), username=username
    )
    owner = request.user.is_authenticated and request.user.pk == person.pk
    own = Profile.of(person) if owner else _profile_or_none(person)
    form = None
    if owner:
        if request.method == "POST":
            form = ProfileForm(request.POST, instance=own)
            saved = form.save_claiming() if form.is_valid() else None
            if saved is not None:
                language.remember(request.session, form.cleaned_data["language"])
                context_processors.remember(
                    request.session, person.pk, saved.display_name, saved.is_guest
                )
                messages.success(request, _("Your profile is saved."))
                return redirect("profile", person.get_username())
        else:
            form = ProfileForm(instance=own, initial={"display_name": display_name(person)})
    elif request.method == "POST":
        raise PermissionDenied
    context = {
        "person": person,
        "name": display_name(person),
        "username": person.get_username(),
        "language": own.get_language_display() if own and own.language else "",
        "is_guest": bool(own and own.is_guest),
        "date_joined": person.date_joined,
        "owner": owner,
        "form": form,
        "matches": recent_matches(person, request.user),
        # Statistics per variant (finished hands only: games.reads.stats).
        "stats": player_stats(person),
    }
    return render(request, "games/profile.html", context)


def _profile_or_none(user: Any) -> Profile | None:
    try:
        return user.profile  # type: ignore[no-any-return]
    except Profile.DoesNotExist:
        return None
