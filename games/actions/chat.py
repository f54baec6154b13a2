"""A table's chat: say something, mute and unmute a player, and staff deleting a line.

Chat is beside the game, never in it: these functions write ChatMessage and ChatMute rows
only, never a hand's state, version or move log."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import display_name
from games import chat, policy
from games.actions import events
from games.actions.seats import lock_user
from games.errors import GameError
from games.models import (
    ChatMessage,
    ChatMute,
    Match,
    Seat,
    Table,
)


# Chat is beside the game, never in it: these functions write ChatMessage and ChatMute rows
# only, never a hand's state, version or move log.
def _chat_table(table_id: int) -> tuple[Table, list[Seat]]:
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise GameError("no_table", "there is no such table")
    return table, list(Seat.objects.filter(table_id=table_id))


def _author_name(user: Any) -> str:
    """The name a message is sent under (kept with it): the name other players see."""

    return display_name(user)


def send_chat(
    table_id: int, user: Any, text: Any = "", canned: Any = "", invite: str | None = None
) -> ChatMessage:
    """``user`` says ``text`` (or the canned phrase ``canned``) at the table. The policy says
    who may (signed in, may see the table, its chat on); the text is cleaned and checked
    (``games.chat.clean_text``); at most ``chat.RATE_COUNT`` messages per
    ``chat.RATE_SECONDS`` per user across all tables. The message is kept with the table's
    latest match (the one being played, or the last one; none before the first).

    The cheap checks come first (the text's type and size as typed, then the rate), so that
    an oversized or too frequent message costs no cleaning."""
    if canned and text:
        raise GameError("bad_chat", "a message is either text or a canned phrase")
    if not canned:
        chat.check_typed(text)
    with transaction.atomic():
        table, seats = _chat_table(table_id)
        policy.check_chat(table, seats, user, invite)
        key = chat.check_canned(canned) if canned else ""
        lock_user(user)  # one user's messages are counted one at a time
        since = timezone.now() - timedelta(seconds=chat.RATE_SECONDS)
        if ChatMessage.objects.filter(user_id=user.pk, created_at__gte=since).count() >= (
            chat.RATE_COUNT
        ):
            raise GameError("chat_too_fast", "too many messages: wait a few seconds")
        body = "" if key else chat.clean_text(text)
        match_id = (
            Match.objects.filter(table_id=table_id)
            .order_by("-started_at", "-id")
            .values_list("id", flat=True)
            .first()
        )
        message = ChatMessage.objects.create(
            table_id=table_id,
            match_id=match_id,
            user=user,
            author=_author_name(user),
            text=body,
            canned=key,
        )
        events.to_table(events.chat_said(table_id, message.pk, user.pk))
    return message


def mute_chat(table_id: int, user: Any, muted_user_id: Any, invite: str | None = None) -> ChatMute:
    """``user`` stops reading ``muted_user_id``'s lines at the table until a match there ends
    (``ChatMute``); the others still read them. Every socket of ``user`` is told."""
    with transaction.atomic():
        table, seats = _chat_table(table_id)
        policy.check_mute(table, seats, user, muted_user_id, invite)
        if not get_user_model().objects.filter(pk=muted_user_id).exists():
            raise GameError("bad_chat", "there is no such player")
        mute, _ = ChatMute.objects.update_or_create(
            table_id=table_id,
            user_id=user.pk,
            muted_id=muted_user_id,
            defaults={"created_at": timezone.now()},
        )
        events.to_table(events.chat_muted(table_id, user.pk, muted_user_id, on=True))
    return mute


def unmute_chat(table_id: int, user: Any, muted_user_id: Any, invite: str | None = None) -> None:
    """``user`` reads ``muted_user_id`` again (their earlier lines come back too)."""
    with transaction.atomic():
        table, seats = _chat_table(table_id)
        policy.check_mute(table, seats, user, muted_user_id, invite)
        if not get_user_model().objects.filter(pk=muted_user_id).exists():
            raise GameError("bad_chat", "there is no such player")
        ChatMute.objects.filter(table_id=table_id, user_id=user.pk, muted_id=muted_user_id).delete()
        events.to_table(events.chat_muted(table_id, user.pk, muted_user_id, on=False))


def delete_chat_message(message_id: int, by: Any) -> None:
    """Staff remove a message (through the admin); open pages drop the line."""
    policy.check_staff(by, "delete a chat message")
    with transaction.atomic():
        message = ChatMessage.objects.filter(pk=message_id).first()
        if message is None:
            return
        table_id = message.table_id
        message.delete()
        events.to_table(events.chat_deleted(table_id, message_id))
