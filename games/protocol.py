"""What a client may send to a table, declared once: each message is a typed dataclass, and
one validator (:func:`parse`) turns a JSON object into one of them or refuses it.

The table socket and the HTTP fallbacks (``/tables/<id>/move/``, ``/tables/<id>/chat/``) both
read what they receive through :func:`parse`, and hand the message to
``games.actions.requests.perform``; neither checks a field by hand. A message that does not
match its declaration (not a JSON object, an unknown ``type``, a missing field, a field of the
wrong type, a field nobody declared) is refused here, before anything is read or written, with
its family's code: ``bad_chat`` for the chat's messages, ``bad_move`` for the others.

The messages::

    {"type": "refresh"}                                  the table as it is now (socket only)
    {"type": "ping"}                                     "are you there?": answered "pong"
                                                         (socket only; the page's heartbeat)
    {"type": "weigh", "hand": 12, "layout": [...],       what the stand's groups and the
     "slots": [3, 4, 5]}                                 selected tiles are worth (socket only)
    {"type": "move", "hand": 12, "move": {"do": ...},
     "expected_version": 7, "client_move_id": "..."}     a move (the last two optional)
    {"type": "arrange", "hand": 12, "layout": [...]}     the rack as arranged on the stand
    {"type": "ready"}  {"type": "rematch"}  {"type": "hide"}
    {"type": "sit", "position": 1}                       take a free seat (position optional)
    {"type": "leave"}                                    leave the table (a bot takes the seat
                                                         during a match)
    {"type": "back"}                                     "I'm back": play the seat again
    {"type": "chat", "text": "..."} | {"type": "chat", "canned": "gg"}
    {"type": "mute", "user": 7}  {"type": "unmute", "user": 7}

What a message may then do (whose seat, which hand, how long a chat line) is the actions'
and the policy's to say; this module only says what a message is.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from games.errors import GameError

# The longest client move id a client may send (the Move row's column).
MAX_MOVE_ID = 64


@dataclass(frozen=True)
class Message:
    """A message from a client; subclasses declare its ``type`` and fields."""

    type: ClassVar[str] = ""
    refusal: ClassVar[str] = "bad_move"  # the code a message of this family is refused with
    # A person sends it a few times a minute (a seat's or the chat's message), and it writes
    # and changes what others see: it has a smaller budget of its own (``games.limits``).
    rare: ClassVar[bool] = False


@dataclass(frozen=True)
class Refresh(Message):
    type = "refresh"


@dataclass(frozen=True)
class Ping(Message):
    type = "ping"


@dataclass(frozen=True)
class Weigh(Message):
    type = "weigh"
    hand: int
    layout: list[Any]
    slots: list[Any]


@dataclass(frozen=True)
class Move(Message):
    type = "move"
    hand: int
    move: dict[str, Any]
    expected_version: int | None = None
    client_move_id: str | None = None

    def check(self) -> None:
        if self.client_move_id is not None and len(self.client_move_id) > MAX_MOVE_ID:
            raise GameError("bad_move", f"client_move_id is at most {MAX_MOVE_ID} characters")


@dataclass(frozen=True)
class Arrange(Message):
    type = "arrange"
    hand: int
    layout: list[Any]


@dataclass(frozen=True)
class Ready(Message):
    type = "ready"
    rare = True


@dataclass(frozen=True)
class Rematch(Message):
    type = "rematch"
    rare = True


@dataclass(frozen=True)
class Hide(Message):
    type = "hide"
    rare = True


@dataclass(frozen=True)
class Sit(Message):
    type = "sit"
    rare = True
    position: int | None = None


@dataclass(frozen=True)
class Leave(Message):
    type = "leave"
    rare = True


@dataclass(frozen=True)
class Back(Message):
    type = "back"
    rare = True


@dataclass(frozen=True)
class Chat(Message):
    type = "chat"
    refusal = "bad_chat"
    rare = True
    text: str | None = None
    canned: str | None = None


@dataclass(frozen=True)
class Mute(Message):
    type = "mute"
    refusal = "bad_chat"
    rare = True
    user: int


@dataclass(frozen=True)
class Unmute(Message):
    type = "unmute"
    refusal = "bad_chat"
    rare = True
    user: int


MESSAGES: dict[str, type[Message]] = {
    m.type: m
    for m in (
        Refresh,
        Ping,
        Weigh,
        Move,
        Arrange,
        Ready,
        Rematch,
        Hide,
        Sit,
        Leave,
        Back,
        Chat,
        Mute,
        Unmute,
    )
}
CHAT = frozenset(k for k, m in MESSAGES.items() if m.refusal == "bad_chat")


def parse(data: Any, allowed: typing.Collection[str] | None = None) -> Message:
    """The message ``data`` (a JSON value, already decoded) declares, checked field by field
    against its declaration; ``allowed``: the types this endpoint takes (all if None).
    Raises :class:`GameError` with the family's refusal code for anything else."""
    # An endpoint that takes only the chat's messages refuses the rest as the chat does.
    family = "bad_chat" if allowed is not None and set(allowed) <= CHAT else "bad_move"
    if not isinstance(data, dict):
        raise GameError(family, "a message is a JSON object with a 'type'")
    kind = data.get("type")
    cls = MESSAGES.get(kind) if isinstance(kind, str) else None
    if cls is None or (allowed is not None and kind not in allowed):
        raise GameError(family, f"unknown message type {kind!r}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields) - {"type"}
    if unknown:
        raise GameError(cls.refusal, f"a {kind} message has no field {sorted(unknown)[0]!r}")
    if not storable(data):
        raise GameError(cls.refusal, f"a {kind} message holds a character that cannot be read")
    values = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING:
                raise GameError(cls.refusal, f"a {kind} message needs its {name!r}")
            continue
        if not _is(data[name], hints[name]):
            raise GameError(cls.refusal, f"the {kind} message's {name!r} is not of its kind")
        values[name] = data[name]
    message = cls(**values)
    check = getattr(message, "check", None)
    if check is not None:
        check()
    return message


def unreadable(text: str) -> bool:
    """Whether ``text`` holds a NUL or a lone surrogate (JSON's ``\\ud800``): nothing a person
    types, and what PostgreSQL refuses to store (a NUL) or UTF-8 cannot encode (a surrogate).
    Other control characters are the fields' own cleaners' (a name, a chat line)."""
    return "\x00" in text or any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def storable(value: Any, depth: int = 0) -> bool:
    """Whether no string in the JSON value ``value`` (keys too) is :func:`unreadable`."""
    if isinstance(value, str):
        return not unreadable(value)
    if depth > 20:
        return False
    if isinstance(value, dict):
        return all(storable(k, depth + 1) and storable(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(storable(v, depth + 1) for v in value)
    return True


_HINTS: dict[type[Message], dict[str, Any]] = {}


def _hints(cls: type[Message]) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _is(value: Any, hint: Any) -> bool:
    """Does the JSON value ``value`` match the declared type ``hint``? (JSON's own kinds:
    int never bool, str, list, dict, and None where a field is optional.)"""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_is(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list or hint is list:
        return isinstance(value, list)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    raise TypeError(f"no check for {hint!r}")  # a declaration this module cannot read
