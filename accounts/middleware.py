"""Pages in the signed-in player's language."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from accounts import language


class UserLanguageMiddleware:
    """Speak the session's language (``accounts.language.SESSION_KEY``: the signed-in
    player's profile language, set at log-in) when it names one.

    Placed right after ``AuthenticationMiddleware``: ``LocaleMiddleware`` has already picked
    the visitor's language (cookie, then Accept-Language); a player's own choice wins over
    both. Without one in the session, nothing changes."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        code = language.of_session(getattr(request, "session", None))
        if code:
            translation.activate(code)
            request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if code:
            response.headers["Content-Language"] = code
        return response
