from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from games import selectors
from games.models import Table


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "games/home.html", {"tables": selectors.public_tables()[:50]})


def table_context(table_id: int, user: Any) -> dict[str, Any]:
    """What the table page (and its live fragment) shows ``user``: the seats, who is away or on
    turn, the scores, and only the user's own rack, from the engine's view of their seat."""
    table = selectors.table_with_seats(table_id)
    seats = list(table.seats.all())
    hand = selectors.current_hand(table)
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    my_seat = next((s for s in seats if s.user_id and s.user_id == user_id), None)
    view = hand.view_for(my_seat.position) if hand is not None and my_seat is not None else None
    # What everyone may see (table melds, discards, penalties): a seat's view without its rack.
    public = None
    if hand is not None:
        public = {k: v for k, v in (view or hand.view_for(0)).items() if k != "rack"}
    return {
        "table": table,
        "seats": seats,
        "my_seat": my_seat,
        "hand": hand,
        "turn": hand.turn if hand is not None else None,
        "version": hand.version if hand is not None else 0,
        "view": view,
        "public": public,
        "scores": hand.state["scores_before"] if hand is not None else None,
        "match": selectors.latest_match(table),
    }


def may_see(table: Table, user: Any, invite: str | None) -> bool:
    """Public tables are open to all; a private one to its seats and holders of the invite."""
    if not table.is_private or invite == table.invite_token:
        return True
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    return user_id is not None and any(s.user_id == user_id for s in table.seats.all())


def table_detail(request: HttpRequest, table_id: int) -> HttpResponse:
    try:
        context = table_context(table_id, request.user or AnonymousUser())
    except Table.DoesNotExist as exc:
        raise Http404 from exc
    if not may_see(context["table"], request.user, request.GET.get("invite")):
        raise Http404
    return render(request, "games/table.html", context)
