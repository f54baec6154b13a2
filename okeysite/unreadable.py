"""Requests holding a NUL are refused with 400 before any view runs.

A NUL anywhere in a path, a query or a form (``/players/%00/``, a posted name) made
PostgreSQL fail the query (500, a traceback in the log). No view is written to expect one,
so it is refused here, once, in the reader's language: in the path, the query string's names
and values, and a form's names and values (a form is read only after Django's own size
limits, ``DATA_UPLOAD_MAX_MEMORY_SIZE``).
Other control characters pass to the fields' own cleaners (a display name drops them). The
same rule for socket messages: ``games.protocol.storable``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext

from games.protocol import unreadable


def _any_unreadable(request: HttpRequest) -> bool:
    if unreadable(request.path):
        return True
    try:
        fields = [request.GET]
        if request.method == "POST":
            fields.append(request.POST)
    except MultiPartParserError:
        return False  # Django answers a broken form itself
    for query in fields:
        for name, values in query.lists():
            if unreadable(name) or any(unreadable(v) for v in values):
                return True
    return False


class RefuseUnreadable:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _any_unreadable(request):
            return HttpResponseBadRequest(
                gettext("That request holds characters that cannot be read."),
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)
