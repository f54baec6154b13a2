from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from games import selectors
from games.errors import NotAllowed
from games.models import Table


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "games/home.html", {"tables": selectors.public_tables()[:50]})


def table_detail(request: HttpRequest, table_id: int) -> HttpResponse:
    try:
        context = selectors.table_context(table_id, request.user, request.GET.get("invite"))
    except (Table.DoesNotExist, NotAllowed) as exc:
        # A private table without its invite looks like no table at all.
        raise Http404 from exc
    return render(request, "games/table.html", context)
