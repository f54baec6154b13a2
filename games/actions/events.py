"""Every message the games send: to the sockets of a table or of the lobby (through the channel
layer), and to the other apps (Django signals). One place for their names and shapes.

**Group messages.** Each kind has a typed builder here (``table_changed``, ``hand_moved``, ...),
and the consumer method Channels calls for it is :func:`handler_name` of its kind (``"hand.moved"``
→ ``hand_moved``); the sockets mark each handler with :func:`handles`, which checks the name
against the kind when the class is made. ``tests/test_architecture.py`` checks that every kind
sent to a group has its handler on the socket that joins that group.

They are sent only after the transaction that made the change commits (:func:`to_table`,
:func:`to_lobby`: ``transaction.on_commit``), through :mod:`games.actions.broadcast`. The layer
is best effort; a lost message is made good by the version in the database (a client that
sees a gap re-reads the table).

**Signals to other apps.** ``match_ended`` (``match_id``): a match finished or was abandoned.
Sent after commit, so a receiver reads the match as stored; a receiver's failure is logged,
never raised into the game. The leagues subscribe to it; the games never import them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict, TypeVar

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal

from games.actions import broadcast
from okeysite.channel_layers import RESUMED

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- groups
# Every open lobby socket is in this group.
LOBBY_GROUP = "lobby"
# A clock that runs in a server listens here (games.live.server_tasks): a table that changed
# may have a bot on turn, due a bot's delay later, so the clock need not poll to find it.
CLOCK_GROUP = "clock"


def table_group(table_id: int) -> str:
    """The group of a table's sockets (its players and its spectators)."""
    return f"table-{table_id}"


def user_group(user_id: int) -> str:
    """The group of every table and lobby socket a user has open (any session of theirs)."""
    return f"user-{user_id}"


def session_group(session_key: str) -> str:
    """The group of the sockets opened with one session (one browser's log-in)."""
    return f"session-{session_key}"


# ----------------------------------------------------------------------------- kinds
TABLE_CHANGED = "table.changed"
HAND_DEALT = "hand.dealt"
HAND_MOVED = "hand.moved"
TABLE_WATCHERS = "table.watchers"
CHAT_MESSAGE = "chat.message"
CHAT_MUTED = "chat.muted"
CHAT_DELETED = "chat.deleted"
CHAT_CHANGED = "chat.changed"
LOBBY_CHANGED = "lobby.changed"
LOBBY_HTML = "lobby.html"
SESSION_ENDED = "session.ended"
# Put in a socket's own buffer by the Redis layer after it lost its connection: what was
# published meanwhile is gone, so the socket sends the table (or the lobby) as it is.
LAYER_RESUMED = RESUMED

# What each group's sockets are sent (and must handle).
TABLE_KINDS = frozenset(
    {
        TABLE_CHANGED,
        HAND_DEALT,
        HAND_MOVED,
        TABLE_WATCHERS,
        CHAT_MESSAGE,
        CHAT_MUTED,
        CHAT_DELETED,
        CHAT_CHANGED,
        LAYER_RESUMED,
    }
)
LOBBY_KINDS = frozenset({LOBBY_CHANGED, LOBBY_HTML, LAYER_RESUMED})
# Sent to a user's or a session's group: every socket there (table or lobby) closes.
SESSION_KINDS = frozenset({SESSION_ENDED})
# Table messages after which the lobby's list may look different (a table opened, a seat
# changed, a match started or was ended). Moves do not change the lobby.
CHANGES_THE_LOBBY = frozenset({TABLE_CHANGED, HAND_DEALT})
# Table messages after which a seat the clock plays may be on turn (a move, a deal, a player
# gone or replaced), sent to CLOCK_GROUP as well.
WAKES_THE_CLOCK = frozenset({TABLE_CHANGED, HAND_DEALT, HAND_MOVED})
CLOCK_WAKE = "clock.wake"


def handler_name(kind: str) -> str:
    """The consumer method Channels calls for a message of ``kind`` (its dots made
    underscores)."""
    return kind.replace(".", "_")


Handler = TypeVar("Handler", bound=Callable[..., Any])


def handles(kind: str) -> Callable[[Handler], Handler]:
    """Mark a consumer method as the handler of ``kind``; its name must be
    :func:`handler_name` of it, or the class is not made."""

    def mark(method: Handler) -> Handler:
        if method.__name__ != handler_name(kind):
            raise TypeError(f"{method.__qualname__} handles {kind!r}: name it {handler_name(kind)}")
        method.handles = kind  # type: ignore[attr-defined]
        return method

    return mark


# ----------------------------------------------------------------------------- messages
class TableChanged(TypedDict):
    """Seats, presence, settings or the match changed: each socket reads the table again.
    ``reason``: why a match was ended, shown to the players."""

    type: Literal["table.changed"]
    table: int
    reason: NotRequired[str]


class HandDealt(TypedDict):
    """A hand was dealt (``match``: and it is a new match's first, so the chat starts empty)."""

    type: Literal["hand.dealt"]
    table: int
    hand: int
    version: int
    match: NotRequired[bool]


class MoveApplied(TypedDict):
    """What a server process holding the table at the version before needs to bring it to
    this version without reading it (``games.live.table_socket``): the engine is
    deterministic, so the same action on the same hand gives the same hand and events."""

    action: dict[str, Any]
    visibility: int
    deadline: str | None
    updated_at: str
    layout: list[str | None] | None


class HandMoved(TypedDict):
    """A move was accepted. ``events``: the move's events as everyone may see them.
    ``apply`` is left out when the move changed more than the hand's row."""

    type: Literal["hand.moved"]
    table: int
    hand: int
    version: int
    seat: int
    events: list[dict[str, Any]]
    apply: NotRequired[MoveApplied]


class TableWatchers(TypedDict):
    """How many watch the table now (counted once by the sender: no socket queries)."""

    type: Literal["table.watchers"]
    table: int
    count: int


class ChatSaid(TypedDict):
    type: Literal["chat.message"]
    table: int
    id: int
    user: int


class ChatMuted(TypedDict):
    """``user`` muted (``on``) or unmuted ``muted``: only ``user``'s sockets act on it."""

    type: Literal["chat.muted"]
    table: int
    user: int
    muted: int
    on: bool


class ChatDeleted(TypedDict):
    type: Literal["chat.deleted"]
    table: int
    id: int


class ChatChanged(TypedDict):
    """The table's chat was turned on or off."""

    type: Literal["chat.changed"]
    table: int
    enabled: bool


class LobbyChanged(TypedDict):
    type: Literal["lobby.changed"]


class LobbyHtml(TypedDict):
    """A fragment every lobby socket sends as it is."""

    type: Literal["lobby.html"]
    html: str


class SessionEnded(TypedDict):
    """The user's session ended (a log-out, a new password, a deactivated account): a socket
    opened with it closes; a page whose session still holds opens a new one."""

    type: Literal["session.ended"]


TableMessage = (
    TableChanged
    | HandDealt
    | HandMoved
    | TableWatchers
    | ChatSaid
    | ChatMuted
    | ChatDeleted
    | ChatChanged
)


def table_changed(table_id: int, reason: str | None = None) -> TableChanged:
    message = TableChanged(type="table.changed", table=table_id)
    if reason is not None:
        message["reason"] = reason
    return message


def hand_dealt(table_id: int, hand_id: int, *, new_match: bool = False) -> HandDealt:
    message = HandDealt(type="hand.dealt", table=table_id, hand=hand_id, version=0)
    if new_match:
        message["match"] = True
    return message


def hand_moved(
    table_id: int,
    hand_id: int,
    version: int,
    seat: int,
    events: list[dict[str, Any]],
    apply: MoveApplied | None = None,
) -> HandMoved:
    message = HandMoved(
        type="hand.moved", table=table_id, hand=hand_id, version=version, seat=seat, events=events
    )
    if apply is not None:
        message["apply"] = apply
    return message


def table_watchers(table_id: int, count: int) -> TableWatchers:
    return TableWatchers(type="table.watchers", table=table_id, count=count)


def chat_said(table_id: int, message_id: int, user_id: int) -> ChatSaid:
    return ChatSaid(type="chat.message", table=table_id, id=message_id, user=user_id)


def chat_muted(table_id: int, user_id: int, muted_id: int, on: bool) -> ChatMuted:
    return ChatMuted(type="chat.muted", table=table_id, user=user_id, muted=muted_id, on=on)


def chat_deleted(table_id: int, message_id: int) -> ChatDeleted:
    return ChatDeleted(type="chat.deleted", table=table_id, id=message_id)


def chat_changed(table_id: int, enabled: bool) -> ChatChanged:
    return ChatChanged(type="chat.changed", table=table_id, enabled=enabled)


def lobby_changed() -> LobbyChanged:
    return LobbyChanged(type="lobby.changed")


def lobby_html(html: str) -> LobbyHtml:
    return LobbyHtml(type="lobby.html", html=html)


def session_ended() -> SessionEnded:
    return SessionEnded(type="session.ended")


# ----------------------------------------------------------------------------- sending
def to_table(message: TableMessage) -> None:
    """Send ``message`` to its table's group once the transaction has committed, and tell the
    lobby too when it changes what the lobby lists, and a clock in a server when a seat it
    plays may be on turn. Each gets a ``change`` id, so that a server process reads the table
    once for all of its sockets there."""
    sent: dict[str, Any] = {**message, "change": uuid.uuid4().hex}
    group = table_group(message["table"])
    # Only a clock inside a server listens (with run_clock workers nobody would hear it).
    wakes_the_clock = message["type"] in WAKES_THE_CLOCK and settings.CLOCK_IN_SERVER

    def publish() -> None:
        broadcast.send(group, sent)
        if wakes_the_clock:
            broadcast.send(CLOCK_GROUP, {"type": CLOCK_WAKE})

    transaction.on_commit(publish)
    if message["type"] in CHANGES_THE_LOBBY:
        to_lobby()


def to_lobby() -> None:
    """Tell every lobby socket, after commit, that the table list changed: each renders it
    again for its own viewer."""
    transaction.on_commit(lambda: broadcast.send(LOBBY_GROUP, dict(lobby_changed())))


def to_sessions(*, user_id: int | None = None, session_key: str | None = None) -> None:
    """Close, after commit, every socket of a user (``user_id``: all their sessions) or of
    one session (``session_key``)."""
    groups = []
    if user_id is not None:
        groups.append(user_group(user_id))
    if session_key:
        groups.append(session_group(session_key))
    for group in groups:
        transaction.on_commit(lambda group=group: broadcast.send(group, dict(session_ended())))


# ----------------------------------------------------------------------------- other apps
match_ended = Signal()


def announce_match_ended(match_id: int) -> None:
    """Send ``match_ended`` once the current transaction commits (at once outside one)."""

    def send() -> None:
        for receiver, outcome in match_ended.send_robust(sender=None, match_id=match_id):
            if isinstance(outcome, Exception):
                log.error(
                    "%s failed after match %s ended",
                    getattr(receiver, "__qualname__", receiver),
                    match_id,
                    exc_info=outcome,
                )

    transaction.on_commit(send)
