from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from games import selectors
from games.models import Table


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "games/home.html", {"tables": selectors.public_tables()[:50]})


def table_detail(request: HttpRequest, table_id: int) -> HttpResponse:
    """A table: its seats (who is there, who is away, which are bots) and the hand in play.

    Only the signed-in player's own rack is shown, from the engine's view of their seat.
    """
    try:
        table = selectors.table_with_seats(table_id)
    except Table.DoesNotExist as exc:
        raise Http404 from exc
    if table.is_private and request.GET.get("invite") != table.invite_token:
        seated = request.user.is_authenticated and any(
            s.user_id == request.user.pk for s in table.seats.all()
        )
        if not seated:
            raise Http404
    hand = selectors.current_hand(table)
    my_seat = next(
        (s for s in table.seats.all() if s.user_id and s.user_id == request.user.pk), None
    )
    view = hand.view_for(my_seat.position) if hand is not None and my_seat is not None else None
    scores = hand.state["scores_before"] if hand is not None else None
    return render(
        request,
        "games/table.html",
        {
            "table": table,
            "seats": list(table.seats.all()),
            "hand": hand,
            "turn": hand.turn if hand is not None else None,
            "view": view,
            "scores": scores,
            "match": selectors.latest_match(table),
        },
    )
