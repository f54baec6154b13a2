"""The signed-in player's language: one session key, read by every page
(``accounts.middleware.UserLanguageMiddleware``) and every socket
(``games.live.table_socket.language_of``), written at log-in (``accounts.signals``), by the language
switch (``accounts.views.set_language``) and by the profile form."""

from __future__ import annotations

from typing import Any

from django.conf import settings

SESSION_KEY = "language"


def supported(code: Any) -> bool:
    """One of the site's languages (``settings.LANGUAGES``)."""
    return isinstance(code, str) and code in dict(settings.LANGUAGES)


def remember(session: Any, code: str) -> None:
    """Keep ``code`` as the session's language; blank (or unknown) forgets it, so the browser's
    choice applies again."""
    if supported(code):
        session[SESSION_KEY] = code
    else:
        session.pop(SESSION_KEY, None)


def of_session(session: Any) -> str | None:
    """The session's language, when it names one of the site's."""
    if session is None:
        return None
    code = session.get(SESSION_KEY)
    return code if supported(code) else None
