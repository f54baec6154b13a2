"""Who may do what: see a table, sit, stand, start a match, seat or remove a bot, move for a
seat, chat, and run the admin's game actions. One module, called by the actions, the
consumers, the views and the admin, so a rule is written once.

Each ``check_*`` raises :class:`~games.errors.NotAllowed` (or a more specific
:class:`~games.errors.GameError`) and returns nothing; each ``can_*`` answers a bool. They read
rows the caller already loaded (and, in the actions, locked), and never write.

``SYSTEM`` is the site itself acting: the demo loader, the clock, a management command. Only
trusted server code passes it; a request always passes its user.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from games import limits
from games.errors import GameError, NotAllowed
from games.models import Hand, Seat, Table


class _System:
    """The site acting on its own behalf (never a request's user)."""

    is_authenticated = True
    is_staff = True
    pk = None

    def __repr__(self) -> str:
        return "SYSTEM"


SYSTEM: Final = _System()

# Who plays a turn when the seat's holder does not: a bot seat plays at its own level; an away
# player's seat and a timed-out turn are played by this level.
STAND_IN_LEVEL: Final = "greedy"

# The two non-user movers, as ``actions.play`` receives them.
BOT: Final = "bot"
CLOCK: Final = "clock"


def _user_id(user: Any) -> int | None:
    if user is None or user is SYSTEM or not getattr(user, "is_authenticated", False):
        return None
    return getattr(user, "pk", None)


def viewer_id(user: Any) -> int | None:
    """A signed-in user's id; None for anonymous users and for the site itself."""
    return _user_id(user)


def _is_staff(user: Any) -> bool:
    return user is SYSTEM or bool(getattr(user, "is_staff", False) and _user_id(user))


def _seat_of(seats: Iterable[Seat], user: Any) -> Seat | None:
    uid = _user_id(user)
    if uid is None:
        return None
    return next((s for s in seats if s.user_id == uid), None)


# ----------------------------------------------------------------------------- seeing a table
def can_see(table: Table, seats: Iterable[Seat], user: Any, invite: str | None = None) -> bool:
    """A public table is open to everyone; a private one to its seats, its creator, staff, and
    whoever holds the invite."""
    if not table.is_private or _is_staff(user):
        return True
    if invite and invite == table.invite_token:
        return True
    uid = _user_id(user)
    if uid is None:
        return False
    return table.created_by_id == uid or _seat_of(seats, user) is not None


def check_see(table: Table, seats: Iterable[Seat], user: Any, invite: str | None = None) -> None:
    """To whoever may not see it, a private table is no table at all: the refusal is the one
    an id that no table has gets (``no_table``), so that no answer tells the two apart. Every
    check below that concerns a table makes this one first, before any refusal that would
    say something of the table (a seat taken, a match running, signing in first)."""
    if not can_see(table, seats, user, invite):
        raise NotAllowed("no_table", "there is no such table")


def can_replay(
    table: Table,
    seats: Iterable[Seat],
    user: Any,
    hand: Hand,
    participant_seat: int | None,
    invite: str | None = None,
) -> bool:
    """May ``user`` replay (or export, or verify) ``hand``? ``participant_seat`` is the seat
    the user held in that hand (its ``Participant`` row), or None.

    A live hand: only its players, each as their own seat saw it; nobody else (staff
    included). A hand that is over (finished or abandoned): its players, and whoever may see
    its table (:func:`can_see`)."""
    if participant_seat is not None and _user_id(user) is not None:
        return True
    if hand.status == Hand.Status.PLAYING:
        return False
    return can_see(table, seats, user, invite)


def may_manage(table: Table, seats: Iterable[Seat], user: Any) -> bool:
    """The table's host: its creator, or (for a table nobody created) anyone seated at it; and
    staff and the site itself."""
    if _is_staff(user):
        return True
    uid = _user_id(user)
    if uid is None:
        return False
    if table.created_by_id is not None:
        return table.created_by_id == uid
    return _seat_of(seats, user) is not None


def check_rotate_invite(
    table: Table, seats: Iterable[Seat], user: Any, invite: str | None = None
) -> None:
    """The host (:func:`may_manage`) may give a private table a new invite, which ends the
    old one: whoever is not seated there, its creator or staff then needs the new link."""
    check_see(table, seats, user, invite)
    if not may_manage(table, seats, user):
        raise NotAllowed("not_host", "only the table's host may change its invite")
    if not table.is_private:
        raise GameError("not_private", "this table is public: it has no invite")


# ----------------------------------------------------------------------------- seats
def check_sit(
    table: Table,
    seats: list[Seat],
    user: Any,
    position: int | None,
    invite: str | None,
    live_elsewhere: int | None = None,
    vacated: Iterable[int] = (),
    played_in_match: bool = False,
) -> Seat:
    """The seat ``user`` may take (their own seat again, or a free one). Returns it.

    ``live_elsewhere`` is the id of another live table where the user holds a seat (the
    service looks it up under the user's row lock): see :func:`check_one_live_table`.
    ``vacated``: during a match, the seats a person may take now: seats whose player left
    the match (a bot plays them meanwhile), while the match is between hands.
    ``played_in_match``: the user held a seat of that match, or left it. Such a seat goes to
    someone new: a player who held two sides of one match would make its result count for
    nobody (``leagues.results``), and a leaver coming back would shed the last place leaving
    costs."""
    mine = _seat_of(seats, user)
    if mine is not None:
        return mine  # coming back to your own seat is always allowed
    check_see(table, seats, user, invite)
    if _user_id(user) is None:
        raise NotAllowed("sign_in", "sign in to take a seat")
    if table.status == Table.Status.FINISHED:
        raise GameError("table_finished", "this table has finished")
    vacated = set(vacated)
    if table.status == Table.Status.PLAYING and not vacated:
        raise GameError("match_in_progress", "a match is being played at this table")
    if table.status == Table.Status.PLAYING and played_in_match:
        raise GameError(
            "played_this_match",
            "you played in this match already: its free seats go to someone new",
        )
    check_one_live_table(user, live_elsewhere)
    if position is not None and not any(s.position == position for s in seats):
        raise GameError("bad_seat", f"no seat {position} at this table")
    if table.status == Table.Status.PLAYING:
        free = [s for s in seats if s.position in vacated and not s.user_id]
    else:
        free = [s for s in seats if s.is_empty]
    free = [s for s in free if position is None or s.position == position]
    if not free:
        raise GameError("seat_taken", "that seat is not free")
    return free[0]


# A live table is one whose seats still matter: not started yet, or being played.
LIVE_STATUSES: Final = (Table.Status.OPEN, Table.Status.PLAYING)


def check_one_live_table(user: Any, live_elsewhere: int | None) -> None:
    """A player holds a seat at one live table at a time (open or playing): to sit at, open,
    or play-now another table they leave the first (or see its match to the end). No table
    option relaxes this yet; ``live_elsewhere`` is that other table's id, or None."""
    if live_elsewhere is not None and _user_id(user) is not None:
        raise GameError(
            "already_seated",
            "you already have a seat at another table: leave it (or finish its match) first",
            str(live_elsewhere),
        )


def check_open_table(
    user: Any, live_elsewhere: int | None, opened: int = 0, opened_by_guests_here: int = 0
) -> None:
    """A signed-in player may open a table (taking its first seat) or play now, if they hold
    no seat at another live table; and open one of their own ("New table") while they have
    fewer than ``OPEN_TABLES_PER_ACCOUNT`` live tables they opened (``opened``), and, for a
    guest, while the guests of their address have fewer than
    ``OPEN_TABLES_PER_GUEST_ADDRESS`` (``opened_by_guests_here``)."""
    if _user_id(user) is None:
        raise NotAllowed("sign_in", "sign in to open a table")
    check_one_live_table(user, live_elsewhere)
    if (
        opened >= limits.OPEN_TABLES_PER_ACCOUNT
        or opened_by_guests_here >= limits.OPEN_TABLES_PER_GUEST_ADDRESS
    ):
        raise GameError(
            "too_many_tables",
            "you have opened as many tables as one may have open: close or finish one first",
        )


def check_stand(table: Table, seats: list[Seat], user: Any) -> Seat:
    """The seat ``user`` leaves. Returns it."""
    mine = _seat_of(seats, user)
    if mine is None:
        raise GameError("not_seated", "you have no seat at this table")
    return mine


def check_leave(table: Table, seats: list[Seat], user: Any) -> Seat:
    """A player may leave their seat at any time: before a match it is freed, during one a
    bot takes it over (the actions decide which). Returns the seat."""
    return check_stand(table, seats, user)


def _check_host_before_match(table: Table, seats: list[Seat], user: Any, what: str) -> None:
    if not may_host(table, seats, user):
        raise NotAllowed("not_host", f"only the table's host may {what}")
    if table.status != Table.Status.OPEN:
        raise GameError("match_in_progress", "bots are seated and removed before the match")


def check_seat_bot(table: Table, seats: list[Seat], user: Any, position: int, level: str) -> Seat:
    """A bot of ``level`` may go on the empty seat ``position``: the host does it, before a
    match."""
    if level not in Seat.Bot.values or not level:
        raise GameError("bad_bot", f"no bot level {level!r}")
    _check_host_before_match(table, seats, user, "seat bots")
    seat = _seat_at(seats, position)
    if not seat.is_empty:
        raise GameError("seat_taken", "that seat is not free")
    return seat


def check_remove_bot(table: Table, seats: list[Seat], user: Any, position: int) -> Seat:
    """The host may take a bot off its seat before a match."""
    _check_host_before_match(table, seats, user, "remove bots")
    seat = _seat_at(seats, position)
    if not seat.bot_level:
        raise GameError("no_bot", "there is no bot on that seat")
    return seat


def _seat_at(seats: list[Seat], position: int) -> Seat:
    """The seat at ``position``; a position the table does not have is refused as such."""
    seat = next((s for s in seats if s.position == position), None)
    if seat is None:
        raise GameError("bad_seat", f"no seat {position} at this table")
    return seat


def check_start(table: Table, seats: list[Seat], user: Any, match_in_progress: bool) -> None:
    """The host starts a match at an open table whose every seat is filled."""
    if not may_host(table, seats, user):
        raise NotAllowed("not_host", "only the table's host may start the match")
    if match_in_progress or table.status == Table.Status.PLAYING:
        raise GameError("match_in_progress", "a match is being played at this table")
    if table.status == Table.Status.FINISHED:
        raise GameError("table_finished", "this table has finished")
    if len(seats) != table.players or any(s.is_empty for s in seats):
        raise GameError("seats_not_filled", "every seat needs a player or a bot")


def check_rematch(
    table: Table, seats: list[Seat], user: Any, live_elsewhere: int | None = None
) -> None:
    """After a match, any player seated at the table may start the next one with the same
    seats (bots included); a seat left empty must be filled first. ``live_elsewhere`` is the
    id of another live table where one of the seated players has sat down since (the
    one-live-table rule: they leave this seat, or that table, first)."""
    if _seat_of(seats, user) is None:
        raise NotAllowed("not_seated", "only a player at this table may ask for a rematch")
    if table.status == Table.Status.PLAYING:
        raise GameError("match_in_progress", "a match is being played at this table")
    if table.status != Table.Status.FINISHED:
        raise GameError("no_match_over", "there is no finished match to play again")
    if len(seats) != table.players or any(s.is_empty for s in seats):
        raise GameError("seats_not_filled", "every seat needs a player or a bot")
    if live_elsewhere is not None:
        raise GameError(
            "player_elsewhere",
            "a player of this table now sits at another table: they leave one of the two first",
            str(live_elsewhere),
        )


# ----------------------------------------------------------------------------- staff actions
def check_staff(user: Any, what: str) -> None:
    """Ending a match or removing a player is for staff (through the admin) and the site."""
    if not _is_staff(user):
        raise NotAllowed("staff_only", f"only staff may {what}")


# ----------------------------------------------------------------------------- events
# The group whose members run tournaments and leagues from the site (staff may too).
ORGANISERS = "organisers"


def is_organiser(user: Any) -> bool:
    """Staff, or a user in the "organisers" group."""
    if _is_staff(user):
        return True
    return bool(_user_id(user)) and user.groups.filter(name=ORGANISERS).exists()


def check_organiser(user: Any, what: str) -> None:
    if not is_organiser(user):
        raise NotAllowed("organisers_only", f"only organisers may {what}")


# ----------------------------------------------------------------------------- moves
@dataclass(frozen=True)
class Actor:
    """Who plays the turn now: ``player`` (the seat's holder), ``bot`` (a bot seat, or an away
    player's stand-in) or ``clock`` (the stand-in for a turn whose time ran out)."""

    kind: str
    level: str = ""


def actor_for_turn(hand: Hand, seat: Seat) -> Actor:
    """The one answer to "who acts now" for ``seat`` in ``hand``, used by the clock to decide
    what to play and by the move service to decide who may."""
    if hand.clock_turn is not None and hand.clock_turn == hand.turn_index:
        return Actor(CLOCK, STAND_IN_LEVEL)
    if seat.bot_level:
        return Actor(BOT, seat.bot_level)
    if seat.away or not seat.user_id:
        return Actor(BOT, STAND_IN_LEVEL)
    return Actor("player")


def check_move(hand: Hand, seat: Seat, by: Any) -> Actor:
    """May ``by`` (a user, ``BOT`` or ``CLOCK``) move for ``seat`` now? Returns who moves.

    The seat's holder may always move for their seat (an away player who moves is back);
    a bot only where :func:`actor_for_turn` hands the seat to a bot, the clock only on a turn
    whose timeout it claimed.
    """
    if by == BOT or by == CLOCK:
        actor = actor_for_turn(hand, seat)
        if actor.kind == CLOCK and by == BOT and (seat.bot_level or seat.away):
            # A claimed timeout at a bot or away seat: the seat's own bot may still finish it.
            return Actor(BOT, seat.bot_level or STAND_IN_LEVEL)
        if actor.kind != by:
            if by == CLOCK:
                raise NotAllowed("not_your_seat", "the clock plays only a turn whose time ran out")
            raise NotAllowed("not_your_seat", "a bot plays only bot seats and away players")
        return actor
    uid = _user_id(by)
    if uid is None:
        raise NotAllowed("not_your_seat", "sign in to play")
    if seat.user_id != uid:
        raise NotAllowed("not_your_seat", "that is not your seat")
    return Actor("player")


def check_arrange(seat: Seat, user: Any) -> None:
    """Only the seat's holder arranges its rack (nobody else ever sees it)."""
    uid = _user_id(user)
    if uid is None or seat.user_id != uid:
        raise NotAllowed("not_your_seat", "that is not your seat")


# ----------------------------------------------------------------------------- spectators
def check_hide(seats: Iterable[Seat], user: Any, hand: Hand | None) -> None:
    """A player seated at the table may hide the hand being played from spectators (until
    it ends)."""
    if _seat_of(seats, user) is None:
        raise NotAllowed("not_seated", "only a player at this table may hide the hand")
    if hand is None or hand.status != Hand.Status.PLAYING:
        raise GameError("no_hand", "no hand is being played at this table")


# ----------------------------------------------------------------------------- chat
def can_chat(table: Table, seats: Iterable[Seat], user: Any, invite: str | None = None) -> bool:
    """Signed-in people who may see the table may chat at it, while its chat is on."""
    try:
        check_chat(table, seats, user, invite)
    except GameError:
        return False
    return True


def check_chat(table: Table, seats: Iterable[Seat], user: Any, invite: str | None = None) -> None:
    """Seated players and spectators chat if they may see the table (a private one needs its
    invite) and are signed in, and the table's chat is on. Anonymous visitors read."""
    check_see(table, seats, user, invite)
    if _user_id(user) is None:
        raise NotAllowed("sign_in", "sign in to chat")
    if not table.chat_enabled:
        raise GameError("chat_off", "chat is off at this table")


def check_mute(
    table: Table, seats: Iterable[Seat], user: Any, muted_id: Any, invite: str | None = None
) -> None:
    """A signed-in reader of the table may mute (or unmute) anyone else's lines for
    themselves; muting works while the chat is off too (it is the reader's own setting)."""
    check_see(table, seats, user, invite)
    if _user_id(user) is None:
        raise NotAllowed("sign_in", "sign in to mute a player")
    if isinstance(muted_id, bool) or not isinstance(muted_id, int):
        raise GameError("bad_chat", "say whom to mute")
    if muted_id == _user_id(user):
        raise GameError("chat_mute_self", "you cannot mute yourself")


# ----------------------------------------------------------------------------- sockets
@dataclass(frozen=True)
class SocketCounts:
    """The fresh table sockets (a seat's or a spectator's) a new socket would join: of its
    user and of its address, at its table and in all (0 where it has no user or address)."""

    user_at_table: int = 0
    user_in_all: int = 0
    address_at_table: int = 0
    address_in_all: int = 0


def check_open_socket(counts: SocketCounts, seated: bool = False) -> None:
    """May one more table socket open? Not past ``games.limits``: a flood of sockets from one
    account or address costs every table's players (each socket is rendered for).

    A player's socket at their own seat (``seated``) is held to their account's caps only:
    strangers watching from the same address (a café, a school, a phone network) never lock a
    player out of their own table. The address caps count spectators' sockets."""
    if seated:
        if (
            counts.user_at_table >= limits.SOCKETS_PER_TABLE
            or counts.user_in_all >= limits.SOCKETS_PER_USER
        ):
            raise GameError("too_many_sockets", "too many table connections are open from here")
        return
    if (
        counts.user_at_table >= limits.SOCKETS_PER_TABLE
        or counts.address_at_table >= limits.SOCKETS_PER_TABLE
        or counts.user_in_all >= limits.SOCKETS_PER_USER
        or counts.address_in_all >= limits.SOCKETS_PER_ADDRESS
    ):
        raise GameError("too_many_sockets", "too many table connections are open from here")


# ----------------------------------------------------------------------------- quick play
# A player who left LEAVE_LIMIT matches in LEAVE_WINDOW, and finished none since the latest,
# waits LEAVE_COOLDOWN after it before being seated anywhere with people (Play now, a lobby
# table, an invite, a table they open; practice with bots stays open).
LEAVE_LIMIT: Final = 3
LEAVE_WINDOW: Final = timedelta(hours=24)
LEAVE_COOLDOWN: Final = timedelta(minutes=10)
# A match finished after the latest leave lifts the wait only if the player played this many
# of its moves themselves, with another person at the table (not bots playing it for them).
LEAVE_LIFTED_BY_MOVES: Final = 8


def check_quick_play(
    user: Any, abandoned: Iterable[datetime], last_finished: datetime | None, now: datetime
) -> None:
    """May ``user`` be seated by "Play now"? ``abandoned``: when they left matches being
    played (their ``Abandonment`` rows; older ones than ``LEAVE_WINDOW`` do not count),
    ``last_finished``: when a match they played to its end last finished (or None).
    Refused (``leave_cooldown``, with the seconds left as its detail) while the cooldown
    after a run of leaves lasts; finishing a match after the latest leave lifts it."""
    if _user_id(user) is None:
        raise NotAllowed("sign_in", "sign in to play")
    recent = [at for at in abandoned if at > now - LEAVE_WINDOW]
    if len(recent) < LEAVE_LIMIT:
        return
    latest = max(recent)
    if last_finished is not None and last_finished > latest:
        return
    left = latest + LEAVE_COOLDOWN - now
    if left > timedelta(0):
        seconds = math.ceil(left.total_seconds())
        raise GameError(
            "leave_cooldown",
            f"you left {len(recent)} matches lately: you may sit with people again in {seconds} s",
            str(seconds),
        )


def forming(table: Table) -> bool:
    """A table "Play now" formed that still waits for people (no match yet)."""
    return table.quick and table.status == Table.Status.OPEN


def due_to_fill(table: Table, now: datetime) -> bool:
    """Bots take a forming table's empty seats once its wait is over."""
    return forming(table) and table.fill_at is not None and table.fill_at <= now


def check_start_with_bots(table: Table, seats: list[Seat], user: Any) -> None:
    """A person seated at a forming table may stop waiting: bots take the empty seats and the
    match starts (the clock does the same, as ``SYSTEM``, once the wait is over). Nobody hosts
    such a table, so this is the only way to start it early."""
    if user is not SYSTEM and _seat_of(seats, user) is None:
        raise NotAllowed("not_seated", "only a player at this table may start it")
    if not forming(table):
        raise GameError("not_forming", "this table is not waiting for players")


def may_host(table: Table, seats: Iterable[Seat], user: Any) -> bool:
    """:func:`may_manage`, but that a table "Play now" formed has no host: its people came
    to play, not to seat bots for the others or start without them (staff still may)."""
    if table.quick and not _is_staff(user):
        return False
    return may_manage(table, seats, user)
