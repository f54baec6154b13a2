"""What a table's chat says: the canned phrases, how free text is cleaned, and the limits.

A canned phrase is stored by its key (``ChatMessage.canned``) and shown in each reader's
language; free text is stored as typed (cleaned here) and shown as plain text (autoescaped,
never marked safe). The actions (``games.actions.chat.send_chat``) write messages; the reads
(``games.reads.tables.chat_context``) read them. Chat is never part of a hand's log or state.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from accounts import names
from games.errors import GameError
from games.models import ChatMessage

# One tap away, in both languages. The keys are stored; the text is translated when shown.
CANNED: dict[str, Any] = {
    "hello": _("Hello"),
    "good_luck": _("Have a good game"),
    "well_played": _("Well played"),
    "thanks": _("Thanks"),
    "hurry": _("You kept us waiting"),
    "sorry": _("Sorry"),
    "bye": _("Bye"),
}

MAX_LENGTH = ChatMessage.MAX_LENGTH
# A text longer than this as typed is refused before it is cleaned (cleaning costs time on
# the server's one write thread, and cannot shorten it to MAX_LENGTH): room for spaces round
# it and letters typed decomposed (a letter and its accent are two characters until NFC).
MAX_TYPED = 4 * MAX_LENGTH
# At most RATE_COUNT messages per RATE_SECONDS per user, across every table (counted from
# the user's recent ChatMessage rows, so it holds across server processes).
RATE_COUNT = 5
RATE_SECONDS = 10
# How many lines a page shows when it opens (see ``reads.chat_context``).
HISTORY = 50


def check_typed(text: Any) -> None:
    """The checks of a text that cost nothing, made before any other work: it is text, and
    not longer than ``MAX_TYPED`` as typed."""
    if not isinstance(text, str):
        raise GameError("bad_chat", "a chat message is text")
    if len(text) > MAX_TYPED:
        raise GameError("chat_too_long", f"a message has at most {MAX_LENGTH} characters")


def clean_text(text: Any) -> str:
    """Free text as it is stored, cleaned as names are (``accounts.names.clean``): line breaks
    and tabs turned into spaces, control characters, direction marks, overrides and isolates
    and other invisible characters removed, NFC-normalised, runs of spaces kept as typed, and
    stripped. Refuses an empty text and one longer than ``MAX_LENGTH`` characters (a long text
    is refused, never cut)."""
    if not isinstance(text, str):
        raise GameError("bad_chat", "a chat message is text")
    cleaned = names.clean(text)
    if not cleaned:
        raise GameError("chat_empty", "the message is empty")
    if len(cleaned) > MAX_LENGTH:
        raise GameError("chat_too_long", f"a message has at most {MAX_LENGTH} characters")
    return cleaned


def check_canned(key: Any) -> str:
    if not isinstance(key, str) or key not in CANNED:
        raise GameError("chat_bad_canned", f"there is no canned phrase {key!r}")
    return key


def phrase(key: str) -> str:
    """A canned phrase in the active language (its key if it is no longer defined)."""
    return str(CANNED[key]) if key in CANNED else key


def canned_buttons() -> list[dict[str, str]]:
    """The canned phrases as the panel's buttons, in the active language."""
    return [{"key": key, "text": str(text)} for key, text in CANNED.items()]


def line(message: ChatMessage) -> dict[str, Any]:
    """One message as templates receive it (plain data; a canned phrase in the active
    language)."""
    return {
        "id": message.pk,
        "user_id": message.user_id,
        "author": names.shown(message.author),  # a line may predate the name policy
        "canned": message.canned,
        "text": phrase(message.canned) if message.canned else message.text,
        "created_at": message.created_at,
    }
