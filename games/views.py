import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from games import messages, selectors, services
from games.errors import GameError, NotAllowed
from games.models import Seat, Table


def table_detail(request: HttpRequest, table_id: int) -> HttpResponse:
    try:
        context = selectors.table_context(table_id, request.user, request.GET.get("invite"))
    except (Table.DoesNotExist, NotAllowed) as exc:
        # A private table without its invite looks like no table at all.
        raise Http404 from exc
    return render(request, "games/table.html", context)


@require_POST
def table_move(request: HttpRequest, table_id: int) -> HttpResponse:
    """The table socket's messages over plain HTTP (for clients without WebSockets): a move,
    "ready" or "rematch", as JSON in the ``payload`` field. Answers with the viewer's fresh
    fragments, or with the reason a move was refused (and nothing changes)."""
    try:
        data: Any = json.loads(request.POST.get("payload") or request.body or b"")
    except ValueError:
        data = None
    try:
        if not isinstance(data, dict):
            raise GameError("bad_move", "the payload is a JSON object with a 'type'")
        seat = Seat.objects.filter(table_id=table_id, user_id=request.user.pk).first()
        if seat is None or not request.user.is_authenticated:
            raise GameError("not_your_seat", "you have no seat at this table")
        if data.get("type") == "ready":
            services.ready(table_id, request.user)  # type: ignore[arg-type]
        elif data.get("type") == "rematch":
            services.rematch(table_id, by=request.user)
        elif data.get("type") == "move":
            hand = data.get("hand")
            if isinstance(hand, bool) or not isinstance(hand, int):
                raise GameError("bad_move", "say which hand the move is for")
            services.submit(
                hand,
                seat.position,
                data.get("move"),  # type: ignore[arg-type]
                by=request.user,  # type: ignore[arg-type]
                expected_version=data.get("expected_version"),
                client_move_id=data.get("client_move_id"),
            )
        else:
            raise GameError("bad_move", "the payload's type is move, ready or rematch")
    except GameError as exc:
        html = render_to_string(
            "games/_move_error.html",
            {"code": exc.code, "text": messages.refusal(exc.code, exc.message)},
            request=request,
        )
        return HttpResponse(html, status=200 if exc.code != "not_your_seat" else 403)
    context = selectors.table_context(table_id, request.user)
    html = render_to_string("games/table.html#live", context, request=request)
    html += render_to_string("games/table.html#rack", context, request=request)
    return HttpResponse(html)
