"""The only code that writes game state.

Every change follows one pattern (zulip's "check, then do, then tell on commit"): open a
transaction, lock the rows it touches, check, apply through the engine, write, and publish to
the table's channel group only after the commit. Consumers, views, the admin and the clock call
these functions and nothing else.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connections, router, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext

from games import broadcast, chat, engine, events, history, policy, reads, selectors
from games.engine import layout as rack_layout
from games.errors import GameError, NotAllowed, StaleVersion
from games.models import (
    ChatMessage,
    ChatMute,
    Hand,
    LobbyPresence,
    Match,
    Move,
    Participant,
    Presence,
    Seat,
    Table,
    Variant,
    Watcher,
)

log = logging.getLogger(__name__)

BOT = policy.BOT
CLOCK = policy.CLOCK
SYSTEM = policy.SYSTEM

__all__ = ["BOT", "CLOCK", "SYSTEM", "GameError", "NotAllowed", "StaleVersion"]


def table_group(table_id: int) -> str:
    return f"table-{table_id}"


# The lobby's group: every open lobby socket (``games.consumers.LobbyConsumer``) is in it.
LOBBY_GROUP = "lobby"
# Table messages after which the lobby's list may look different (a table opened, a seat
# changed, a match started or was ended). Moves do not change the lobby.
_LOBBY_MESSAGES = frozenset({"table.changed", "hand.dealt"})


def _publish(table_id: int, message: dict[str, Any]) -> None:
    """Send to the table's group once the transaction has committed (best effort); tell the
    lobby too when the message changes what the lobby lists."""
    # "change": this change's id, so that a server process reads the table once for all
    # of its sockets at the table (games.table_socket).
    message = {**message, "change": uuid.uuid4().hex}
    transaction.on_commit(lambda: broadcast.send(table_group(table_id), message))
    if message.get("type") in _LOBBY_MESSAGES:
        _publish_lobby()


def _visibility_changed(table_id: int) -> None:
    """Who may see what at the table changes (in the caller's transaction): the hand being
    played counts it (``Hand.visibility``), and every move's message carries the count, so a
    server process that misses this change's message reads the table again at the next move
    instead of bringing a stale state forward (``games.table_socket``). Called before the
    table's row is locked: a move locks its hand first too."""
    Hand.objects.filter(match__table_id=table_id, status=Hand.Status.PLAYING).update(
        visibility=F("visibility") + 1
    )


def _publish_lobby() -> None:
    """Tell every lobby socket, after commit, that the table list changed: each re-renders it
    for its own viewer from the database (``{"type": "lobby.changed"}``, best effort)."""

    transaction.on_commit(lambda: broadcast.send(LOBBY_GROUP, {"type": "lobby.changed"}))


# ----------------------------------------------------------------------------- tables and seats
def create_table(
    *,
    variant: str | Variant,
    created_by: AbstractBaseUser | None,
    name: str = "",
    options: dict[str, Any] | None = None,
    is_private: bool = False,
    move_timer: int | None = None,
    players: int = 4,
    season: Any = None,
    auto_start: bool = False,
    other_tables: bool = False,
    chat_enabled: bool = True,
) -> Table:
    """A new open table with empty seats; options are validated by the engine. With
    ``auto_start`` the match starts by itself when the last seat is filled."""
    v = variant if isinstance(variant, Variant) else Variant.objects.get(key=variant)
    checked = check_table_settings(v, options, move_timer, players, season)
    with transaction.atomic():
        table = Table.objects.create(
            variant=v,
            options=checked,
            name=name or f"{v.name} table",
            is_private=is_private,
            created_by=created_by,
            move_timer=int(checked["timer"]),
            players=players,
            season=season,
            auto_start=auto_start,
            other_tables=other_tables,
            chat_enabled=chat_enabled,
        )
        Seat.objects.bulk_create(
            [Seat(table=table, position=p, team=engine.team_of(p, checked)) for p in range(players)]
        )
    _publish(table.id, {"type": "table.changed", "table": table.id})
    return table


def check_table_settings(
    variant: Variant,
    options: dict[str, Any] | None,
    move_timer: int | None,
    players: int,
    season: Any,
) -> dict[str, Any]:
    """The table options a new table of ``variant`` gets, checked by the engine. A season's
    table options win over the table's own choices (every table of a season plays alike)."""
    season_options = season.table_options if season is not None else {}
    merged = {**variant.default_options, **(options or {}), **(season_options or {})}
    if move_timer is not None:
        merged["timer"] = move_timer
    try:
        checked = engine.check_table(variant.key, merged, players)
    except engine.OptionsError as exc:
        raise GameError("bad_options", str(exc)) from exc
    if season is not None and season.league.variant_id != variant.pk:
        raise GameError("bad_season", "the season's league plays another variant")
    return checked


def _locked_table(table: Table | int) -> tuple[Table, list[Seat]]:
    """Lock a table row and its seats: seat changes at one table happen one at a time."""
    pk = table.pk if isinstance(table, Table) else table
    t = Table.objects.select_for_update(of=("self",)).select_related("variant").get(pk=pk)
    seats = list(Seat.objects.select_for_update().filter(table=t).order_by("position"))
    return t, seats


def sit(
    table: Table | int,
    user: AbstractBaseUser,
    position: int | None = None,
    *,
    invite: str | None = None,
) -> Seat:
    """Seat a player at an empty place (the first free one if none is named), or give them
    their own seat back (an away player returns)."""
    with transaction.atomic():
        _visibility_changed(table.pk if isinstance(table, Table) else table)
        t, seats = _locked_table(table)
        _lock_user(user)  # one live table per player: two sits by one user run one at a time
        elsewhere = None if t.other_tables else _live_elsewhere(user, t.pk)
        seat = policy.check_sit(t, seats, user, position, invite, elsewhere)
        if seat.user_id == user.pk:
            if seat.away:
                seat.away = False
                seat.timeouts_in_a_row = 0
                seat.last_seen = timezone.now()
                seat.save(update_fields=["away", "timeouts_in_a_row", "last_seen"])
            return seat
        seat.user = user  # type: ignore[assignment]
        # A new occupant starts fresh: nothing of the previous holder's presence carries over.
        seat.away = False
        seat.timeouts_in_a_row = 0
        seat.last_seen = timezone.now()
        seat.save(update_fields=["user", "away", "timeouts_in_a_row", "last_seen"])
        _auto_start(t, seats)
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return seat


def _lock_user(user: Any) -> None:
    """Lock the user's row (after the table's): seat-taking by one user is serialised, so the
    one-live-table rule holds under concurrent requests."""
    uid = policy.viewer_id(user)
    if uid is not None:
        list(get_user_model().objects.select_for_update().filter(pk=uid).values_list("pk"))


def _live_elsewhere(user: Any, table_id: int | None = None) -> int | None:
    """The id of a live table (open or playing), other than ``table_id``, where ``user``
    holds a seat; None if there is none. Tables whose options let their players sit at
    other tables (``other_tables``) do not count."""
    uid = policy.viewer_id(user)
    if uid is None:
        return None
    seats = Seat.objects.filter(
        user_id=uid, table__status__in=policy.LIVE_STATUSES, table__other_tables=False
    )
    if table_id is not None:
        seats = seats.exclude(table_id=table_id)
    return seats.values_list("table_id", flat=True).first()


def _auto_start(t: Table, seats: list[Seat]) -> None:
    """Start the match now if the table's creator asked for it and every seat is filled
    (inside the caller's transaction, with the table locked)."""
    if t.auto_start and t.status == Table.Status.OPEN and not any(s.is_empty for s in seats):
        start_match(t, by=SYSTEM)


def add_bot(table: Table | int, position: int, level: str = "greedy", *, by: Any) -> Seat:
    """Put a bot of ``level`` on an empty seat (the table's host, before the match)."""
    with transaction.atomic():
        t, seats = _locked_table(table)
        seat = policy.check_seat_bot(t, seats, by, position, level)
        seat.bot_level = level
        seat.save(update_fields=["bot_level"])
        _auto_start(t, seats)
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return seat


def remove_bot(table: Table | int, position: int, *, by: Any) -> Seat:
    """Take a bot off its seat (the table's host, before the match)."""
    with transaction.atomic():
        t, seats = _locked_table(table)
        seat = policy.check_remove_bot(t, seats, by, position)
        seat.bot_level = ""
        seat.save(update_fields=["bot_level"])
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return seat


def stand(table: Table | int, user: AbstractBaseUser) -> None:
    """Leave a seat. Before a match the seat is freed; during one, a bot keeps it warm."""
    with transaction.atomic():
        t, seats = _locked_table(table)
        seat = policy.check_stand(t, seats, user)
        if t.status == Table.Status.PLAYING:
            seat.away = True
            seat.save(update_fields=["away"])
        else:
            _free(seat)
    _publish(t.id, {"type": "table.changed", "table": t.id})


leave = stand


def _free(seat: Seat) -> None:
    seat.user = None
    seat.away = False
    seat.timeouts_in_a_row = 0
    seat.last_seen = None
    seat.save(update_fields=["user", "away", "timeouts_in_a_row", "last_seen"])
    seat.presences.all().delete()


def remove_player(seat: Seat | int, *, by: Any, level: str = policy.STAND_IN_LEVEL) -> Seat:
    """Staff take a player off a seat. Before a match the seat is freed; during one a bot of
    ``level`` takes the seat over for the rest of the match (the hands already dealt keep
    the player as their participant)."""
    policy.check_staff(by, "remove a player")
    pk = seat.pk if isinstance(seat, Seat) else seat
    table_id = Seat.objects.values_list("table_id", flat=True).get(pk=pk)
    with transaction.atomic():
        _visibility_changed(table_id)
        t, seats = _locked_table(table_id)
        s = next(x for x in seats if x.pk == pk)
        if not s.user_id:
            raise GameError("not_seated", "nobody sits on that seat")
        if t.status == Table.Status.PLAYING:
            if level not in Seat.Bot.values or not level:
                raise GameError("bad_bot", f"no bot level {level!r}")
            # Until the hand being played is over, its replay shows them no further than this.
            for hand in Hand.objects.filter(match__table_id=t.pk, status=Hand.Status.PLAYING):
                Participant.objects.filter(
                    hand=hand, position=s.position, user_id=s.user_id, left_at=None
                ).update(left_at=hand.version)
            _free(s)
            s.bot_level = level
            s.save(update_fields=["bot_level"])
        else:
            _free(s)
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return s


def start_match(table: Table | int, *, by: Any, seed: str | None = None) -> Match:
    """Start a match once every seat is filled; hand 1 is dealt from ``seed`` (or a fresh one)."""
    with transaction.atomic():
        t, seats = _locked_table(table)
        running = Match.objects.filter(table=t, status=Match.Status.PLAYING).exists()
        policy.check_start(t, seats, by, running)
        rules = _rules(t)
        match = Match.objects.create(
            table=t, hands_planned=rules.planned_hands, totals=rules.scores
        )
        hand = _deal(match, t, seats, rules.deal_hand(seed))
        t.status = Table.Status.PLAYING
        t.save(update_fields=["status"])
    # "match": a new match began (its chat window starts empty: the sockets re-send the panel).
    _publish(
        t.id, {"type": "hand.dealt", "table": t.id, "hand": hand.id, "version": 0, "match": True}
    )
    return match


def rematch(table: Table | int, *, by: Any, seed: str | None = None) -> Match:
    """After a match, a seated player starts another at the same table with the same seats.
    Two players pressing "rematch" at once start one match: the table row is locked, and the
    second finds it playing."""
    with transaction.atomic():
        t, seats = _locked_table(table)
        # The seats' players may have sat down elsewhere since the match ended: lock their
        # rows (as sit does) so the one-live-table check holds against a concurrent sit.
        players = [s.user_id for s in seats if s.user_id]
        users = get_user_model().objects.select_for_update().filter(pk__in=players)
        list(users.order_by("pk").values_list("pk"))  # in one order: two rematches never deadlock
        elsewhere = (
            Seat.objects.filter(user_id__in=players, table__status__in=policy.LIVE_STATUSES)
            .exclude(table=t)
            .values_list("table_id", flat=True)
            .first()
        )
        policy.check_rematch(t, seats, by, elsewhere)
        t.status = Table.Status.OPEN  # for start_match's checks, inside this transaction
        t.save(update_fields=["status"])
        return start_match(t, by=policy.SYSTEM, seed=seed)


def _rules(t: Table, m: Match | None = None, dealt: int = 0) -> engine.Match:
    """The engine's rules of a match at ``t``: where ``m`` stands after its first ``dealt``
    hands (its totals), else before its first hand."""
    scores = list(m.totals) if m is not None else None
    return engine.Match(t.variant.key, t.options, t.players, scores=scores, dealt=dealt)


def _deal(match: Match, t: Table, seats: list[Seat], eng: engine.Hand) -> Hand:
    """Store the hand the engine dealt (``engine.Match.deal_hand``) and who holds each seat."""
    hand = Hand.objects.create(
        match=match,
        number=eng.number,
        starter=eng.starter,
        commitment=eng.commitment,
        seed=eng.seed,
        state=_snapshot(eng),
        turn=eng.turn,
        turn_index=eng.turn_index,
        deadline=_deadline(t),
    )
    # Who holds each seat as the hand is dealt: results and ratings read who played from here.
    Participant.objects.bulk_create(
        [
            Participant(
                hand=hand,
                position=s.position,
                user_id=s.user_id,
                bot_level=s.bot_level,
                team=s.team,
            )
            for s in seats
        ]
    )
    return hand


def _snapshot(eng: engine.Hand) -> dict[str, Any]:
    """The engine state to store. Its move log is left out: the Move rows are the one log."""
    state = eng.to_state()
    state.pop("log", None)
    return state


def _deadline(t: Table) -> Any:
    return timezone.now() + timedelta(seconds=t.move_timer) if t.move_timer else None


def end_match(match: Match | int, *, by: Any, reason: str = "ended by an administrator") -> Match:
    """Stop a stuck match: its open hand and the match become abandoned (staff only)."""
    policy.check_staff(by, "end a match")
    pk = match.pk if isinstance(match, Match) else match
    with transaction.atomic():
        # Lock in the order a move does (hand, then match), so the two never deadlock.
        list(
            Hand.objects.select_for_update(of=("self",)).filter(
                match_id=pk, status=Hand.Status.PLAYING
            )
        )
        m = Match.objects.select_for_update(of=("self",)).get(pk=pk)
        if m.status != Match.Status.PLAYING:
            return m
        Hand.objects.filter(match=m, status=Hand.Status.PLAYING).update(
            status=Hand.Status.ABANDONED, deadline=None, finished_at=timezone.now()
        )
        m.status = Match.Status.ABANDONED
        m.finished_at = timezone.now()
        m.save(update_fields=["status", "finished_at"])
        _match_over(m.pk)
        Table.objects.filter(pk=m.table_id).update(status=Table.Status.OPEN)
    _publish(m.table_id, {"type": "table.changed", "table": m.table_id, "reason": reason})
    return m


def update_table(table: Table | int, *, by: Any, **changes: Any) -> Table:
    """Staff change a table's name, privacy, league season or whether its chat is on. Game
    settings (variant, options, players, timer) are fixed once the table exists; only these
    fields are written."""
    policy.check_staff(by, "edit a table")
    allowed = {"name", "is_private", "season", "chat_enabled"}
    unknown = set(changes) - allowed
    if unknown:
        raise GameError("read_only", f"{', '.join(sorted(unknown))} cannot be changed")
    with transaction.atomic():
        if "is_private" in changes:
            _visibility_changed(table.pk if isinstance(table, Table) else table)
        t, _ = _locked_table(table)
        season = changes.get("season", t.season)
        if season is not None and season.league.variant_id != t.variant_id:
            raise GameError("bad_season", "the season's league plays another variant")
        if season is not None and any(
            t.options.get(k) != v for k, v in (season.table_options or {}).items()
        ):
            raise GameError(
                "season_options", "this table's options are not the season's table options"
            )
        for key, value in changes.items():
            setattr(t, key, value)
        t.save(update_fields=sorted(changes))
    _publish(t.id, {"type": "table.changed", "table": t.id})
    if "chat_enabled" in changes:  # open chat panels show (or drop) the notice and the input
        _publish(t.id, {"type": "chat.changed", "table": t.id, "enabled": t.chat_enabled})
    return t


def rotate_invite(table: Table | int, *, by: Any, invite: str | None = None) -> Table:
    """The host gives a private table a new invite token. The old link then opens nothing:
    to whoever is not seated there, its creator or staff it is no table at all, and the
    spectators who came in with it lose the table at their socket's next frame (the change
    is counted as one of who may see what, so a lost message does not keep them watching).
    Seated players keep their seats. ``invite``: the one the request came with (the policy
    asks, as for any request, whether ``by`` may see the table)."""
    with transaction.atomic():
        _visibility_changed(table.pk if isinstance(table, Table) else table)
        t, seats = _locked_table(table)
        policy.check_rotate_invite(t, seats, by, invite)
        t.invite_token = Table._meta.get_field("invite_token").get_default()
        t.save(update_fields=["invite_token"])
    _publish(t.id, {"type": "table.changed", "table": t.id})
    return t


# ----------------------------------------------------------------------------- lobby
# The bot level "Play now" seats beside the player.
PLAY_NOW_LEVEL = Seat.Bot.STRONG


def open_table(
    *,
    variant: str | Variant,
    user: AbstractBaseUser,
    name: str = "",
    options: dict[str, Any] | None = None,
    is_private: bool = False,
    players: int = 4,
    auto_start: bool = False,
    other_tables: bool = False,
    chat_enabled: bool = True,
) -> Table:
    """A signed-in player opens a table (the lobby's "New table") and takes seat 0, in one
    transaction: a refused option or a seat elsewhere leaves nothing behind."""
    with transaction.atomic():
        _lock_user(user)
        policy.check_open_table(user, None if other_tables else _live_elsewhere(user))
        table = create_table(
            variant=variant,
            created_by=user,
            name=name,
            options=options,
            is_private=is_private,
            players=players,
            auto_start=auto_start,
            other_tables=other_tables,
            chat_enabled=chat_enabled,
        )
        sit(table, user, 0)
    return table


def play_now(user: AbstractBaseUser, variant: str | Variant, *, seed: str | None = None) -> Match:
    """One click to play: a table of ``variant`` with its default options, the player at seat
    0 and a strong bot on every other seat, and the match started (hand 1 dealt)."""
    with transaction.atomic():
        _lock_user(user)
        policy.check_open_table(user, _live_elsewhere(user))
        table = create_table(variant=variant, created_by=user)
        sit(table, user, 0)
        for position in range(1, table.players):
            add_bot(table, position, PLAY_NOW_LEVEL, by=user)
        return start_match(table, by=user, seed=seed)


def lobby_socket_opened(user: AbstractBaseUser, channel_name: str) -> None:
    """A signed-in user's lobby socket opened: they count as online (see LobbyPresence)."""
    now = timezone.now()
    was_online = _online(user.pk, now)
    LobbyPresence.objects.update_or_create(
        channel_name=channel_name, defaults={"user": user, "seen_at": now}
    )
    # Rows of sockets whose server died are dropped once long stale.
    LobbyPresence.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
    if not was_online:
        _publish_lobby()  # one more player online


def _online(user_id: Any, now: Any) -> bool:
    """The user has a fresh lobby or table socket (the lobby's "players online")."""
    since = Presence.fresh_since(now)
    return (
        LobbyPresence.objects.filter(user_id=user_id, seen_at__gte=since).exists()
        or Presence.objects.filter(user_id=user_id, seen_at__gte=since).exists()
    )


def lobby_socket_closed(channel_name: str) -> None:
    row = LobbyPresence.objects.filter(channel_name=channel_name).first()
    if row is None:
        return
    row.delete()
    if not _online(row.user_id, timezone.now()):
        _publish_lobby()  # one player fewer online


def sockets_alive(
    table_channels: list[str], lobby_channels: list[str], watch_channels: list[str] | None = None
) -> None:
    """One server process's heartbeat for all its open sockets (``games.live``): one query
    per kind, however many sockets the process holds."""
    now = timezone.now()
    if table_channels:
        Presence.objects.filter(channel_name__in=table_channels).update(seen_at=now)
    if lobby_channels:
        LobbyPresence.objects.filter(channel_name__in=lobby_channels).update(seen_at=now)
    if watch_channels:
        Watcher.objects.filter(channel_name__in=watch_channels).update(seen_at=now)


# ----------------------------------------------------------------------------- spectators
def watcher_opened(table_id: int, user: Any, channel_name: str) -> None:
    """A spectator's table socket opened (anyone not seated there; the socket already asked
    the policy whether they may see the table): one more watching."""
    now = timezone.now()
    with transaction.atomic():
        Watcher.objects.update_or_create(
            channel_name=channel_name,
            defaults={"table_id": table_id, "user_id": policy.viewer_id(user), "seen_at": now},
        )
        # Rows of sockets whose server died are dropped once long stale.
        Watcher.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
        _publish_watchers(table_id)


def watcher_closed(channel_name: str) -> None:
    with transaction.atomic():
        row = Watcher.objects.filter(channel_name=channel_name).first()
        if row is None:
            return
        row.delete()
        _publish_watchers(row.table_id)


def _publish_watchers(table_id: int) -> None:
    """After commit, tell the table's sockets how many watch now (counted once here, so no
    socket queries for it), and the lobby, which shows the count too."""
    count = selectors.watching([table_id]).get(table_id, 0)
    _publish(table_id, {"type": "table.watchers", "table": table_id, "count": count})
    _publish_lobby()


def hide_from_spectators(table_id: int, by: Any) -> Hand:
    """A seated player hides the hand being played from spectators until it ends: they see
    the seats and the match's totals, not the board (``selectors.table_context``)."""
    with transaction.atomic():
        hand = (
            Hand.objects.select_for_update(of=("self",))
            .filter(match__table_id=table_id, status=Hand.Status.PLAYING)
            .first()
        )
        seats = list(Seat.objects.filter(table_id=table_id))
        policy.check_hide(seats, by, hand)
        assert hand is not None  # checked by the policy
        if not hand.hidden:
            hand.hidden = True
            hand.visibility += 1
            hand.save(update_fields=["hidden", "visibility", "updated_at"])
            _publish(table_id, {"type": "table.changed", "table": table_id})
    return hand


def publish_lobby_changed() -> None:
    """Tell the lobby sockets to render their list again (after the current transaction)."""
    _publish_lobby()


# ----------------------------------------------------------------------------- chat
# Chat is beside the game, never in it: these functions write ChatMessage and ChatMute rows
# only, never a hand's state, version or move log.
def _chat_table(table_id: int) -> tuple[Table, list[Seat]]:
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise GameError("no_table", "there is no such table")
    return table, list(Seat.objects.filter(table_id=table_id))


def _author_name(user: Any) -> str:
    """The name a message is sent under (kept with it): the name other players see."""
    from accounts.models import display_name

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
        _lock_user(user)  # one user's messages are counted one at a time
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
        _publish(
            table_id, {"type": "chat.message", "table": table_id, "id": message.pk, "user": user.pk}
        )
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
        _publish(
            table_id,
            {
                "type": "chat.muted",
                "table": table_id,
                "user": user.pk,
                "muted": muted_user_id,
                "on": True,
            },
        )
    return mute


def unmute_chat(table_id: int, user: Any, muted_user_id: Any, invite: str | None = None) -> None:
    """``user`` reads ``muted_user_id`` again (their earlier lines come back too)."""
    with transaction.atomic():
        table, seats = _chat_table(table_id)
        policy.check_mute(table, seats, user, muted_user_id, invite)
        if not get_user_model().objects.filter(pk=muted_user_id).exists():
            raise GameError("bad_chat", "there is no such player")
        ChatMute.objects.filter(table_id=table_id, user_id=user.pk, muted_id=muted_user_id).delete()
        _publish(
            table_id,
            {
                "type": "chat.muted",
                "table": table_id,
                "user": user.pk,
                "muted": muted_user_id,
                "on": False,
            },
        )


def delete_chat_message(message_id: int, by: Any) -> None:
    """Staff remove a message (through the admin); open pages drop the line."""
    policy.check_staff(by, "delete a chat message")
    with transaction.atomic():
        message = ChatMessage.objects.filter(pk=message_id).first()
        if message is None:
            return
        table_id = message.table_id
        message.delete()
        _publish(table_id, {"type": "chat.deleted", "table": table_id, "id": message_id})


# ----------------------------------------------------------------------------- moves
@dataclass
class Played:
    """The outcome of an accepted move (or of a repeated ``client_move_id``)."""

    move: Move
    version: int
    events: list[dict[str, Any]] = field(default_factory=list)
    repeated: bool = False


def play(
    hand: Hand | int,
    seat: int,
    move: dict[str, Any],
    *,
    by: AbstractBaseUser | str,
    expected_version: int | None = None,
    client_move_id: str | None = None,
    level: str = "",
) -> Played:
    """Apply one move for ``seat`` of ``hand``, as ``by`` (a user, ``"bot"`` or ``"clock"``).

    In one transaction: lock the hand, answer a repeated ``client_move_id`` with its first
    result, refuse a stale ``expected_version``, check with the policy that ``by`` may act for
    the seat, apply through the engine, append the engine's normalised move, store the snapshot
    and version, set the deadline, close the hand and match when they end (dealing the next
    hand), and publish after commit. ``level`` names the bot level that chose a bot's move.
    """
    pk = _hand_pk(hand)
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise GameError("bad_seat", f"a seat is a number, not {seat!r}")
    if not isinstance(move, dict):
        raise GameError("bad_move", "a move is an object with a 'do' field")
    if expected_version is not None and (
        isinstance(expected_version, bool) or not isinstance(expected_version, int)
    ):
        raise GameError("bad_move", "expected_version is a number")
    if client_move_id is not None and (
        not isinstance(client_move_id, str) or len(client_move_id) > 64
    ):
        raise GameError("bad_move", "client_move_id is a string of at most 64 characters")
    try:
        with transaction.atomic():
            return _play_locked(pk, seat, move, by, expected_version, client_move_id, level)
    except Hand.DoesNotExist as exc:
        raise GameError("no_hand", f"there is no hand {pk}") from exc
    except IntegrityError:
        # A move sent again passed the checks (or two raced): the unique id kept the first.
        repeated = _repeat_of(pk, client_move_id, seat, by)
        if repeated is not None:
            return repeated
        raise


# Kinds whose tiles a client picks on the rack: the selected tiles, grouped as they stand.
_TABLE_PLAYS = ("open", "lay")
# Refusals after which a finish is tried again with the solver's grouping instead of the rack's.
_FINISH_RETRY = ("not_a_finish", "invalid_meld", "bad_move", "bad_groups")


def submit(
    hand: Hand | int,
    seat: int,
    request: dict[str, Any],
    *,
    by: AbstractBaseUser | str,
    expected_version: int | None = None,
    client_move_id: str | None = None,
) -> Played:
    """A move as the table page sends it: an engine move whose tiles may come from the rack.

    ``request`` is ``{"do": ...}`` with the engine's fields (``tile``, ``meld``, ``end``,
    ``onto``), plus optionally ``layout`` (the rack as arranged, saved first) and ``tiles``
    (the selected tiles). ``open`` and ``lay`` use the selected tiles grouped as they stand on
    the rack (two-tile groups are pairs). ``finish`` first tries the groups arranged on the
    rack; if they are not melds, the engine's solver looks for any grouping.
    """
    if not isinstance(request, dict) or not isinstance(request.get("do"), str):
        raise GameError("bad_move", "a move is an object with a 'do' field")
    pk = _hand_pk(hand)
    move = {k: v for k, v in request.items() if k not in ("layout", "tiles")}
    arranged = request.get("layout")
    if arranged is not None:
        arranged = arrange(pk, seat, arranged, by=by)
    kind = move["do"]
    if kind in _TABLE_PLAYS and "melds" not in move and "pairs" not in move:
        selected = request.get("tiles")
        if not isinstance(selected, list) or not all(isinstance(t, str) for t in selected):
            raise GameError("bad_move", "select the tiles to put on the table")
        if arranged is None:
            arranged = _layout_of(pk, seat)
        groups = rack_layout.selected_groups(arranged, selected)
        if groups and all(len(g) == 2 for g in groups):
            move["pairs"] = groups
        else:
            move["melds"] = groups
    options = {"by": by, "expected_version": expected_version, "client_move_id": client_move_id}
    if kind == "finish" and "groups" not in move and isinstance(move.get("tile"), str):
        if arranged is None:
            arranged = _layout_of(pk, seat)
        groups = rack_layout.groups(arranged, leave_out=move["tile"])
        try:
            return play(pk, seat, {**move, "groups": groups}, **options)  # type: ignore[arg-type]
        except GameError as exc:
            if exc.code not in _FINISH_RETRY:
                raise
    return play(pk, seat, move, **options)  # type: ignore[arg-type]


def arrange(hand: Hand | int, seat: int, layout: Any, *, by: Any) -> list[str | None]:
    """Keep how the seat's holder arranged their rack. It must hold exactly the rack's tiles.
    Not game state (no version, no broadcast): private to the seat, like the rack."""
    pk = _hand_pk(hand)
    h = Hand.objects.select_related("match").filter(pk=pk).first()
    if h is None:
        raise GameError("no_hand", f"there is no hand {pk}")
    seat_row = Seat.objects.filter(table_id=h.match.table_id, position=seat).first()
    if seat_row is None:
        raise GameError("bad_seat", f"no seat {seat} at this table")
    policy.check_arrange(seat_row, by)
    if h.status != Hand.Status.PLAYING:
        raise GameError("hand_over", "the hand has ended")
    rack = h.view_for(seat)["rack"]
    try:
        checked = rack_layout.check(layout, rack)
    except ValueError as exc:
        raise GameError("bad_layout", str(exc)) from exc
    Participant.objects.filter(hand=h, position=seat).update(layout=checked)
    return checked


def _layout_of(hand_id: int, seat: int) -> list[str | None]:
    """The seat's stored layout, fitted to its rack now."""
    h = Hand.objects.filter(pk=hand_id).first()
    if h is None:
        raise GameError("no_hand", f"there is no hand {hand_id}")
    stored = (
        Participant.objects.filter(hand=h, position=seat).values_list("layout", flat=True).first()
    )
    return rack_layout.reconcile(stored or [], h.view_for(seat)["rack"])


def _hand_pk(hand: Any) -> int:
    """A hand's id as a client may send it: a number an id can be (a row's id is a positive
    64-bit integer; a bigger one would overflow the database's), else there is no such hand."""
    if isinstance(hand, Hand):
        return int(hand.pk)
    if isinstance(hand, bool) or not isinstance(hand, int) or not 0 < hand < 2**63:
        raise GameError("no_hand", f"there is no hand {hand!r}")
    return hand


def _repeat_of(
    hand_id: int, client_move_id: str | None, seat: int, by: AbstractBaseUser | str
) -> Played | None:
    """The first result of a move whose ``client_move_id`` was played before, if it was."""
    if not client_move_id:
        return None
    first = Move.objects.filter(hand_id=hand_id, client_move_id=client_move_id).first()
    return _repeated(first, seat, by) if first is not None else None


def _repeated(first: Move, seat: int, by: AbstractBaseUser | str) -> Played:
    """A client_move_id seen before: the same sender gets the first result, nobody else."""
    same = first.seat == seat and (
        first.by != Move.By.USER or (not isinstance(by, str) and first.user_id == by.pk)
    )
    if not same:
        raise GameError("bad_move", "that client_move_id belongs to another move")
    return Played(first, first.number, list(first.events), repeated=True)


def _play_locked(
    pk: int,
    seat: int,
    move: dict[str, Any],
    by: AbstractBaseUser | str,
    expected_version: int | None,
    client_move_id: str | None,
    level: str,
) -> Played:
    h, seat_row = reads.locked_hand(pk, seat)
    try:
        if h.status != Hand.Status.PLAYING:
            raise GameError("hand_over", "the hand has ended")
        if expected_version is not None and expected_version != h.version:
            raise StaleVersion(
                "stale_version", f"the hand is at version {h.version}, not {expected_version}"
            )
        if seat_row is None:
            raise GameError("bad_seat", f"no seat {seat} at this table")
        actor = policy.check_move(h, seat_row, by)
        # The snapshot was just read for this move alone: the engine may keep it uncopied.
        eng = engine.Hand.from_state(h.state, copy_data=False)
        turn_before = eng.turn
        result = eng.play(seat, move)
        if not result.ok:
            raise GameError(result.error or "refused", result.message or "", result.detail)
    except GameError:
        # A move sent again (a client that reconnected) is refused by now: if its
        # client_move_id was played, the sender gets the first result instead. (An accepted
        # move never looks: a repeat that passes the checks fails on the unique
        # client_move_id, and ``play`` answers it the same way.)
        repeated = _repeat_of(pk, client_move_id, seat, by)
        if repeated is not None:
            return repeated
        raise
    table_id: int = h.move_table_id
    h.version += 1
    user = by if actor.kind == "player" else None
    row = Move(
        hand=h,
        number=h.version,
        seat=seat,
        action=result.move,
        events=result.events,
        by={"player": Move.By.USER, BOT: Move.By.BOT, CLOCK: Move.By.CLOCK}[actor.kind],
        user=user,
        bot_level="" if user is not None else (level or actor.level),
        client_move_id=client_move_id or None,
    )
    h.state = _snapshot(eng)
    h.turn, h.turn_index = eng.turn, eng.turn_index
    fields = ["state", "version", "deadline", "turn", "turn_index", "updated_at"]
    if eng.turn != turn_before or eng.over:
        timer = h.move_timer
        h.deadline = None if eng.over or not timer else timezone.now() + timedelta(seconds=timer)
    seat_changed = user is not None and bool(seat_row.timeouts_in_a_row or seat_row.away)
    if seat_changed:
        # The player moved: they are here, and an away seat is theirs again at once.
        Seat.objects.filter(pk=seat_row.pk).update(
            away=False, timeouts_in_a_row=0, last_seen=timezone.now()
        )
    if eng.over:
        _close_hand(h, eng, Table.objects.select_related("variant").get(pk=table_id))
        fields += ["status", "ending", "finisher", "kind", "multiplier", "hand_scores"]
        fields += ["finished_at"]
    _write_move(row, h, fields)
    public = [engine.event_for(e, -1) for e in result.events]
    message: dict[str, Any] = {
        "type": "hand.moved",
        "table": table_id,
        "hand": h.id,
        "version": h.version,
        "seat": seat,
        "events": public,
    }
    if not eng.over and not seat_changed:
        # What a server process holding the table at the version before needs to bring it to
        # this one without reading it (games.table_socket): the engine is deterministic, so
        # the same action on the same hand gives the same hand and events. Left out when the
        # move changed more than the hand's row (a seat back from away, a closed hand).
        message["apply"] = {
            "action": result.move,
            "visibility": h.visibility,
            "deadline": h.deadline.isoformat() if h.deadline else None,
            "updated_at": h.updated_at.isoformat(),
            "layout": h.move_layout,
        }
    _publish(table_id, message)
    return Played(row, h.version, result.events)


# By database and the hand's fields written: the statement, the Move's fields, the hand's.
_write_move_sql: dict[tuple[str, tuple[str, ...]], tuple[str, list[Any], list[Any]]] = {}


def _write_move(row: Move, h: Hand, fields: list[str]) -> None:
    """Insert the move's row and update the hand's ``fields``: on PostgreSQL in one
    statement (the insert in a ``WITH``), written out once per process like the locked read;
    elsewhere through the ORM, as two statements.

    Every move runs this; composing an insert and an update through the ORM costs more than
    the round trips themselves (``bench/service.py``)."""
    using = router.db_for_write(Hand)
    connection = connections[using]
    if connection.vendor != "postgresql":
        row.save(using=using, force_insert=True)
        h.save(using=using, update_fields=fields)
        return
    key = (using, tuple(fields))
    found = _write_move_sql.get(key)
    if found is None:
        move_fields = [f for f in Move._meta.local_concrete_fields if not f.primary_key]
        hand_fields = [Hand._meta.get_field(name) for name in fields]
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in move_fields)
        places = ", ".join(["%s"] * len(move_fields))
        sets = ", ".join(f"{qn(f.column)} = %s" for f in hand_fields)
        pk = qn(Move._meta.pk.column)
        sql = (
            f"WITH new_move AS (INSERT INTO {qn(Move._meta.db_table)} ({columns})"
            f" VALUES ({places}) RETURNING {pk})"
            f" UPDATE {qn(Hand._meta.db_table)} SET {sets} WHERE {qn(Hand._meta.pk.column)} = %s"
            f" RETURNING (SELECT {pk} FROM new_move)"
        )
        found = _write_move_sql[key] = (sql, move_fields, hand_fields)
    sql, move_fields, hand_fields = found
    # pre_save fills auto_now(_add) dates on the instances, as save() would.
    params = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in move_fields]
    params += [f.get_db_prep_save(f.pre_save(h, False), connection) for f in hand_fields]
    params.append(h.pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        (row.pk,) = cursor.fetchone()
    row._state.adding, row._state.db = False, using


def _close_hand(h: Hand, eng: engine.Hand, table: Table) -> None:
    r = eng.result
    h.status = Hand.Status.FINISHED
    h.ending = r["ending"]
    h.finisher = r.get("finisher")
    h.kind = r.get("kind") or ""
    h.multiplier = int(r.get("multiplier", 1))
    h.hand_scores = r["hand_scores"]
    h.finished_at = timezone.now()
    h.deadline = None
    match = Match.objects.select_for_update(of=("self",)).get(pk=h.match_id)
    rules = _rules(table, match, dealt=eng.number)
    rules.record(eng)
    match.totals = rules.scores
    if rules.over:
        match.status = Match.Status.FINISHED
        match.winners = rules.winners
        match.ranking = rules.ranking()
        match.finished_at = timezone.now()
        match.save(update_fields=["totals", "status", "winners", "ranking", "finished_at"])
        _match_over(match.pk)
        Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
        # The move's own message is for the table; the lobby must drop the finished table.
        _publish_lobby()
        return
    # The scoreboard stays on screen for a pause; then the clock (or every player pressing
    # "ready") deals the next hand.
    match.next_hand_at = timezone.now() + timedelta(seconds=settings.NEXT_HAND_PAUSE_SECONDS)
    match.ready = []
    match.save(update_fields=["totals", "next_hand_at", "ready"])
    return None


def _match_over(match_id: int) -> None:
    """After the transaction that ends a match commits, whoever follows the games hears of it
    (the leagues rate it and count it in its season)."""
    events.announce_match_ended(match_id)


def deal_next_hand(match: Match | int, *, now: Any = None, force: bool = False) -> Hand | None:
    """Deal a match's next hand once its pause is over (or at once with ``force``, or when
    every human seat is ready). Safe to call twice: the second call finds nothing to do."""
    now = now or timezone.now()
    pk = match.pk if isinstance(match, Match) else match
    with transaction.atomic():
        m = (
            Match.objects.select_for_update(of=("self",))
            .select_related("table__variant")
            .get(pk=pk)
        )
        if m.status != Match.Status.PLAYING or m.next_hand_at is None:
            return None
        t = m.table
        seats = list(Seat.objects.filter(table=t).order_by("position"))
        humans = {s.position for s in seats if s.user_id and not s.away}
        everyone_ready = bool(humans) and humans <= set(m.ready)
        if not force and not everyone_ready and m.next_hand_at > now:
            return None
        last = m.hands.order_by("-number").first()
        assert last is not None and last.status != Hand.Status.PLAYING
        hand = _deal(m, t, seats, _rules(t, m, dealt=last.number).deal_hand())
        m.next_hand_at = None
        m.ready = []
        m.save(update_fields=["next_hand_at", "ready"])
    _publish(t.id, {"type": "hand.dealt", "table": t.id, "hand": hand.id, "version": 0})
    return hand


def ready(table: Table | int, user: AbstractBaseUser) -> Hand | None:
    """A player is ready for the next hand; when every human at the table is, it is dealt."""
    table_id = table.pk if isinstance(table, Table) else table
    if policy.viewer_id(user) is None:  # an anonymous visitor has no seat to be ready at
        raise GameError("not_seated", "you have no seat at this table")
    with transaction.atomic():
        m = (
            Match.objects.select_for_update(of=("self",))
            .filter(table_id=table_id, status=Match.Status.PLAYING)
            .first()
        )
        if m is None or m.next_hand_at is None:
            raise GameError("no_pause", "there is no hand to get ready for")
        seat = Seat.objects.filter(table_id=table_id, user=user).first()
        if seat is None:
            raise GameError("not_seated", "you have no seat at this table")
        if seat.position not in m.ready:
            m.ready = sorted([*m.ready, seat.position])
            m.save(update_fields=["ready"])
    dealt = deal_next_hand(m.pk)
    if dealt is None:
        _publish(table_id, {"type": "table.changed", "table": table_id})
    return dealt


def name_changed(user_id: int) -> None:
    """A player's name (display name or username) changed: the tables where they sit, and the
    lobby, show it (after commit; a server that holds a table's state reads it again)."""
    tables = Seat.objects.filter(user_id=user_id).values_list("table_id", flat=True)
    for table_id in sorted(set(tables)):
        _publish(table_id, {"type": "table.changed", "table": table_id})


# ----------------------------------------------------------------------------- clock and presence
# How long a clock worker may hold a hand; a turn takes well under a second.
LEASE_SECONDS = 30
# How long a hand whose turn failed is left alone before the clock tries it again.
FAILED_BACKOFF_SECONDS = 60


def take_lease(hand_id: int, now: Any = None) -> str | None:
    """Lease a hand for one clock worker (a conditional update, so of several workers exactly
    one wins): a token if it won, None if another worker holds it. A worker that dies
    holding a lease loses it when the lease runs out."""
    now = now or timezone.now()
    token = uuid.uuid4().hex[:16]
    won = (
        Hand.objects.filter(pk=hand_id, status=Hand.Status.PLAYING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
        .update(lease_until=now + timedelta(seconds=LEASE_SECONDS), lease_owner=token)
    )
    return token if won == 1 else None


def release_lease(hand_id: int, token: str) -> None:
    """Give back the lease ``token`` holds (nothing if it ran out and another worker has it)."""
    Hand.objects.filter(pk=hand_id, lease_owner=token).update(lease_until=None, lease_owner="")


def set_aside(hand_id: int) -> None:
    """A hand whose turn failed for the clock: no worker takes it for a while, so that one
    broken hand does not fill every pass with the same error."""
    Hand.objects.filter(pk=hand_id).update(
        lease_until=timezone.now() + timedelta(seconds=FAILED_BACKOFF_SECONDS),
        lease_owner="failed",
    )


def claim_timeout(hand: Hand | int, now: Any = None) -> Seat | None:
    """Claim a hand whose deadline has passed, once: the clock may then play that turn.

    The claim is a conditional update on (version, deadline), so of several workers exactly
    one wins. The seat's timeouts in a row go up; at two the seat is marked away.
    """
    now = now or timezone.now()
    pk = hand.pk if isinstance(hand, Hand) else hand
    with transaction.atomic():
        h = Hand.objects.select_for_update(of=("self",)).select_related("match").filter(pk=pk)
        h = h.first()
        if h is None or h.status != Hand.Status.PLAYING or h.deadline is None or h.deadline > now:
            return None
        if h.clock_turn == h.turn_index:
            return None
        claimed = Hand.objects.filter(pk=pk, version=h.version, deadline=h.deadline).update(
            clock_turn=h.turn_index, deadline=None
        )
        if claimed != 1:
            return None
        seat = Seat.objects.select_for_update().get(table_id=h.match.table_id, position=h.turn)
        seat.timeouts_in_a_row += 1
        if seat.user_id and seat.timeouts_in_a_row >= 2:
            seat.away = True
        seat.save(update_fields=["timeouts_in_a_row", "away"])
    _publish(seat.table_id, {"type": "table.changed", "table": seat.table_id})
    return seat


def socket_opened(seat: Seat | int, user: AbstractBaseUser, channel_name: str) -> None:
    """A seated player's socket opened: they are here (and back, if they were away)."""
    pk = seat.pk if isinstance(seat, Seat) else seat
    now = timezone.now()
    with transaction.atomic():
        s = Seat.objects.select_for_update().get(pk=pk)
        if s.user_id != user.pk:
            return  # the seat changed hands since the socket was admitted
        # Another fresh socket of theirs (a second tab, a reconnect racing the old socket's
        # close): the table already shows them here, so nobody needs a new frame.
        already_here = (
            Presence.objects.filter(seat=s, user=user, seen_at__gte=Presence.fresh_since(now))
            .exclude(channel_name=channel_name)
            .exists()
        )
        Presence.objects.update_or_create(
            channel_name=channel_name, defaults={"seat": s, "user": user, "seen_at": now}
        )
        returning = s.away
        s.away = False
        s.timeouts_in_a_row = 0 if returning else s.timeouts_in_a_row
        s.last_seen = now
        s.save(update_fields=["last_seen", "away", "timeouts_in_a_row"])
        if returning or not already_here:
            _publish(s.table_id, {"type": "table.changed", "table": s.table_id})


def socket_closed(channel_name: str) -> None:
    """A seated player's socket closed; with none of theirs left the grace period starts."""
    with transaction.atomic():
        row = Presence.objects.select_related("seat").filter(channel_name=channel_name).first()
        if row is None:
            return
        row.delete()
        now = timezone.now()
        if row.seat.user_id == row.user_id:
            Seat.objects.filter(pk=row.seat_id).update(last_seen=now)
        # Still here on another fresh socket: the table looks the same, nobody needs a frame.
        still_here = Presence.objects.filter(
            seat_id=row.seat_id, user_id=row.user_id, seen_at__gte=Presence.fresh_since(now)
        ).exists()
        if not still_here:
            _publish(row.seat.table_id, {"type": "table.changed", "table": row.seat.table_id})


def mark_gone_players_away(grace_seconds: int = 20, now: Any = None) -> int:
    """Players at a playing table with no fresh socket, not seen for the grace period, are
    marked away (a bot plays for them until they come back). This covers a closed socket, a
    server that died without closing its sockets, and a player who never connected."""
    now = now or timezone.now()
    gone = (
        Seat.objects.filter(
            user__isnull=False,
            away=False,
            table__status=Table.Status.PLAYING,
        )
        .exclude(last_seen__gt=now - timedelta(seconds=grace_seconds))
        .annotate(here=Presence.here(now))
        .filter(here=False)
    )
    pks = list(gone.values_list("pk", "table_id"))
    count = Seat.objects.filter(pk__in=[pk for pk, _ in pks], away=False).update(away=True)
    for table_id in {t for _, t in pks}:
        _publish(table_id, {"type": "table.changed", "table": table_id})
    # Rows of sockets whose server died are kept a while for the record, then dropped.
    Presence.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
    return count


# ----------------------------------------------------------------------------- audit
@dataclass(frozen=True)
class Finding:
    """One check of a stored hand: passed or not, the problems it found (in the audit's words;
    a check that could not be made because an earlier one failed adds none) and what the deal
    check shows beside it."""

    key: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    detail: str = ""


def audit(hand: Hand) -> list[Finding]:
    """Check a stored hand against its seed, replaying it once: the commitment, the deal made
    again (``history.dealt``), the move log played on it (``engine.replay_moves``), the
    version, the stored snapshot and the stored result. The site's audit (:func:`verify_hand`)
    and the deal check (``history.deal_checks``) both read it."""
    found: list[Finding] = []
    try:
        digest = engine.commitment(hand.seed)
    except engine.TileError as exc:
        found.append(Finding("commitment", False, [str(exc)], str(exc)))
    else:
        ok = digest == hand.commitment
        wrong = [] if ok else ["the seed does not match its commitment"]
        found.append(Finding("commitment", ok, wrong, f"sha256 = {digest}"))
    moves = list(hand.moves.order_by("number"))
    ok = hand.version == len(moves)
    wrong = [] if ok else [f"version {hand.version} but {len(moves)} moves"]
    version = Finding("version", ok, wrong, str(hand.version))
    try:
        eng = history.dealt(hand)
    except (engine.TileError, engine.OptionsError, ValueError) as exc:
        cannot = f"cannot deal: {exc}"
        found.append(Finding("deal", False, [cannot], cannot))
        found.append(Finding("moves", False, [], cannot))
        return [*found, version, *(Finding(k, False, [], cannot) for k in ("snapshot", "result"))]
    state = hand.state or {}
    ok = (state.get("indicator"), state.get("initial")) == (eng.indicator, eng.initial)
    found.append(Finding("deal", ok, [] if ok else ["the deal differs from the stored one"]))

    jump = next((k for k, m in enumerate(moves) if m.number != k + 1), None)
    replay = engine.replay_moves(eng, history.record(moves[:jump], events=True))
    wrong = list(replay.problems)
    if jump is not None and replay.error is None:
        wrong.append(f"move numbers jump from {jump} to {moves[jump].number}")
    found.append(Finding("moves", not wrong, wrong, "; ".join(wrong) or f"{len(moves)} moves"))
    found.append(version)
    # The snapshot and the result are compared only when the whole log replays.
    replayed = not wrong

    ok = replayed and _snapshot(eng) == hand.state
    wrong = [] if ok or not replayed else ["the replayed state differs from the stored snapshot"]
    found.append(Finding("snapshot", ok, wrong))

    r = eng.result
    if hand.status == Hand.Status.FINISHED:
        stored = (hand.hand_scores, hand.ending, hand.finisher, hand.kind)
        if not r["over"]:
            problem = "stored as finished but the replay has not ended"
        elif (r["hand_scores"], r["ending"], r["finisher"], r["kind"] or "") != stored:
            problem = "the stored result differs from the replay"
        else:
            problem = ""
        detail = f"hand scores {r['hand_scores']}" if r["over"] else "not over"
    else:
        problem = "the replay has ended but the hand is not stored as over" if r["over"] else ""
        detail = gettext("the hand has not ended")
    ok = replayed and not problem
    found.append(Finding("result", ok, [problem] if problem and replayed else [], detail))
    return found


def verify_hand(hand: Hand) -> list[str]:
    """Replay a hand from its seed and move log; list every way it differs from what is stored
    (:func:`audit`)."""
    return [p for finding in audit(hand) for p in finding.problems]
