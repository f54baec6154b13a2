"""A client's message to a table (``games.protocol``), carried out: the one place that says
which action each message calls, shared by the table socket and the HTTP fallbacks, so the
two can never take a message differently."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games import protocol
from games.actions.chat import mute_chat, send_chat, unmute_chat
from games.actions.matches import ready, rematch
from games.actions.moves import arrange, submit
from games.actions.seats import come_back, leave_table, sit
from games.actions.tables import hide_from_spectators
from games.errors import GameError


@dataclass(frozen=True)
class Sender:
    """Who sent a message, and from where: the table, the user (anonymous too), the seat they
    hold there (None: a spectator) and the invite their page came with."""

    table_id: int
    user: Any
    position: int | None = None
    invite: str | None = None


def perform(message: protocol.Message, sender: Sender) -> None:
    """Carry out ``message`` for ``sender`` through the actions (which check the policy and
    publish after commit). ``Refresh``, ``Ping`` and ``Weigh`` change nothing and are the
    caller's to answer.
    Raises the actions' :class:`GameError` when refused."""
    user, table_id = sender.user, sender.table_id
    match message:
        case protocol.Refresh():
            return
        case protocol.Ping():  # the page's heartbeat: the socket answers it
            return
        case protocol.Weigh():  # a read for the page: the socket answers it
            return
        case protocol.Move():
            submit(
                message.hand,
                _seat(sender),
                message.move,
                by=user,
                expected_version=message.expected_version,
                client_move_id=message.client_move_id,
                table_id=table_id,
            )
        case protocol.Arrange():
            arrange(message.hand, _seat(sender), message.layout, by=user, table_id=table_id)
        case protocol.Ready():
            ready(table_id, user)
        case protocol.Rematch():
            rematch(table_id, by=user)
        case protocol.Hide():
            hide_from_spectators(table_id, user)
        case protocol.Sit():
            sit(table_id, user, message.position, invite=sender.invite)
        case protocol.Leave():
            leave_table(table_id, user)
        case protocol.Back():
            come_back(table_id, user)
        case protocol.Chat():
            text, canned = message.text or "", message.canned or ""
            send_chat(table_id, user, text=text, canned=canned, invite=sender.invite)
        case protocol.Mute():
            mute_chat(table_id, user, message.user, invite=sender.invite)
        case protocol.Unmute():
            unmute_chat(table_id, user, message.user, invite=sender.invite)
        case _:  # a declared message nobody carries out: a mistake here, not the client's
            raise GameError("bad_move", f"no action for a {message.type} message")


def _seat(sender: Sender) -> int:
    if sender.position is None:
        raise GameError("not_your_seat", "you have no seat at this table")
    return sender.position
