"""What the lobby shows: the list of open tables, the players online, "return to your table",
the variants for "Play now", and a table's pre-match seat controls.

They hand templates plain dicts, never model rows, and are shared by the lobby page
(``games.pages.lobby``) and the lobby socket (``games.live.lobby_socket``). The list is read in
one statement (``sql.lobby_list``); its words (statuses, bot levels, options) are looked
up once per list."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from django.db.models import Prefetch
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext, ngettext

from accounts import names
from accounts.models import display_name
from games import engine, policy
from games.messages import default_table_name, variant_description, variant_name
from games.models import Seat, Table, Variant
from games.reads import sql
from games.reads.tables import bot_level_name

LOBBY_SIZE = 50


# The options the lobby shows for a table, in this order (when the variant has them).
MAIN_OPTIONS = (
    "scoring",
    "start_score",
    "hands",
    "doubling",
    "partners",
    "give_back_penalty",
    "assisted",
)


def invite_path(table_id: int, token: str) -> str:
    return f"{reverse('table', args=[table_id])}?{urlencode({'invite': token})}"


def online_count() -> int:
    """Players online: the distinct signed-in users with a fresh lobby socket
    (``LobbyPresence``) or a fresh seated table socket (``Presence``).

    Both are database rows kept fresh by the sockets' heartbeats, so every daphne process
    counts the sockets of every other (an in-process count would not), and the sockets of a
    process that died stop counting after ``Presence.FRESH`` seconds. Spectators' table
    sockets are not recorded, so a signed-in spectator counts only while a lobby is open.
    (Written out in ``games.reads``, which the lobby's list also counts with.)
    """
    return sql.online_count()


def lobby_tables(user: Any, listed: sql.LobbyList | None = None) -> list[dict[str, Any]]:
    """The tables the lobby lists to ``user``: open and playing public tables, and the
    private ones that are theirs (they created them, or hold a seat), newest first, with how
    many watch each (fresh spectator sockets, not those of a user seated there, as
    ``reads.watching`` counts). Read as plain values, in one statement with the count
    of players online (``sql.lobby_list``; ``listed``: that read, when made): composed by
    the ORM, the three queries it replaces cost more than the rest of the lobby."""
    uid = policy.viewer_id(user)
    if listed is None:
        listed = sql.lobby_list(uid, policy.LIVE_STATUSES, LOBBY_SIZE)
    tables = [_TableRow(*row) for row in listed.tables]
    seats = {t.id: [_SeatRow(*row) for row in listed.seats[t.id]] for t in tables}
    words = _Words()
    return [
        {**_lobby_table(t, seats[t.id], user, words), "watching": listed.watching[t.id]}
        for t in tables
    ]


class _TableRow(NamedTuple):
    """A table as the lobby's list reads it (plain values, in ``sql.LOBBY_TABLE``'s order)."""

    id: int
    name: str
    variant__key: str
    variant__name: str
    status: str
    is_private: bool
    invite_token: str
    created_by_id: int | None
    players: int
    move_timer: int
    auto_start: bool
    other_tables: bool
    options: dict[str, Any]


class _SeatRow(NamedTuple):
    """A seat as the lobby's list reads it (plain values, in ``sql.LOBBY_SEAT``'s order:
    200 seats are no 200 models)."""

    table_id: int
    position: int
    user_id: int | None
    bot_level: str
    team: int | None
    away: bool
    user__username: str | None
    user__profile__display_name: str | None


_NO_TABLE = 2_147_483_647  # an id no table has, to find where ids go in a table's URL


class _Words:
    """The lobby's words in the active language, each looked up once per list (50 tables
    repeat the same few: statuses, bot levels, options)."""

    def __init__(self) -> None:
        self.statuses = {value: str(label) for value, label in Table.Status.choices}
        self.bots = {value: str(label) for value, label in Seat.Bot.choices}
        # reverse() once (it costs as much as the rest of a row): the id goes in its place.
        self._url = reverse("table", args=[_NO_TABLE]).split(str(_NO_TABLE))
        self._bot_names: dict[str, str] = {}
        self._said: dict[tuple[Any, ...], str] = {}

    def said(self, words: Any, *what: Any) -> str:
        """``words(*what)`` (a table's words: an option, a timer, ...), once per list."""
        key = (words, *what)
        try:
            return self._said[key]
        except KeyError:
            found = self._said[key] = words(*what)
            return found
        except TypeError:  # an unhashable option value: not kept
            return words(*what)

    def table_url(self, pk: int) -> str:
        return str(pk).join(self._url)

    def bot_name(self, level: str) -> str:
        if level not in self._bot_names:
            shown = self.bots.get(level, level)
            self._bot_names[level] = gettext("Bot (%(level)s)") % {"level": shown}
        return self._bot_names[level]


def _lobby_table(t: _TableRow, rows: list[_SeatRow], user: Any, words: _Words) -> dict[str, Any]:
    uid = policy.viewer_id(user)
    seats = [_listed_seat(s, uid, words) for s in rows]
    own = uid is not None and (t.created_by_id == uid or any(s["mine"] for s in seats))
    private = t.is_private and own
    # The rows are plain values with the model's attribute names, which is all the policy sql.
    host = private and policy.may_manage(t, rows, user)  # type: ignore[arg-type]
    options = [
        {"key": k, "value": t.options[k], "label": words.said(_option_words, k, t.options[k])}
        for k in _main_options(t.options, t.variant__key)
    ]
    return {
        "id": t.id,
        "url": words.table_url(t.id),
        "name": t.name or words.said(default_table_name, t.variant__name),
        "variant": t.variant__key,
        "variant_name": words.said(variant_name, t.variant__name),
        "status": t.status,
        "status_display": words.statuses.get(t.status, t.status),
        "is_private": t.is_private,
        "invite_url": invite_path(t.id, t.invite_token) if private else "",
        "may_rotate": host,
        "players": t.players,
        # The words for the player count (when not 4) and the move timer.
        "players_words": words.said(_players_words, t.players) if t.players != 4 else "",
        "timer_words": words.said(_timer_words, t.move_timer),
        "move_timer": t.move_timer,
        "auto_start": t.auto_start,
        "other_tables": t.other_tables,
        "options": options,
        "seats": seats,
        "free": sum(1 for s in seats if s["empty"]),
        "mine": any(s["mine"] for s in seats),
    }


def _players_words(players: int) -> str:
    return ngettext("%(n)s player", "%(n)s players", players) % {"n": players}


def _timer_words(seconds: int) -> str:
    return gettext("%(s)s s per move") % {"s": seconds} if seconds else gettext("no move timer")


def _option_words(key: str, value: Any) -> str:
    """An option of a table in words, as the lobby lists it (``MAIN_OPTIONS``)."""
    if key == "hands":
        return ngettext("%(n)s hand", "%(n)s hands", value) % {"n": value}
    if key == "doubling":
        return gettext("doubling") if value else gettext("no doubling")
    if key == "partners":
        return gettext("partners (2 against 2)")
    if key == "assisted":
        return gettext("assisted")
    if key == "scoring":
        if value == "plus_minus":
            return gettext("plus/minus scoring")
        return gettext("countdown scoring")
    if key == "start_score":
        return gettext("from %(n)s points") % {"n": value}
    if key == "give_back_penalty":
        if value:
            return gettext("give-back penalty %(n)s") % {"n": value}
        return gettext("no give-back penalty")
    return ""


def _main_options(options: dict[str, Any], variant: str) -> list[str]:
    """The options worth a word in the lobby: those that change the game, when they do."""
    shown = []
    idle = engine.idle_options(variant, options)
    for key in MAIN_OPTIONS:
        if key not in options:
            continue
        if key in ("partners", "assisted") and not options[key]:
            continue  # off is the usual case
        if key in idle:
            continue  # the other scoring's setting
        shown.append(key)
    return shown


def _seat(s: Seat, uid: int | None) -> dict[str, Any]:
    return {
        "position": s.position,
        "name": display_name(s.user) if s.user else "",
        "user_id": s.user_id,
        "bot_level": s.bot_level,
        "bot_display": bot_level_name(s.bot_level) if s.bot_level else "",
        "team": s.team,
        "away": s.away,
        "empty": s.is_empty,
        "mine": uid is not None and s.user_id == uid,
    }


def _listed_seat(s: _SeatRow, uid: int | None, words: _Words) -> dict[str, Any]:
    """:func:`_seat` for the lobby's list, from plain values, with ``label``: who sits there
    in words (their name, "Bot (level)", or "" for an empty seat)."""
    stored = (s.user__profile__display_name or s.user__username or "") if s.user_id else ""
    name = names.shown(stored)  # a row may predate the name policy
    if s.user_id:
        label = name
    elif s.bot_level:
        label = words.bot_name(s.bot_level)
    else:
        label = ""
    return {
        "position": s.position,
        "name": name,
        "label": label,
        "user_id": s.user_id,
        "bot_level": s.bot_level,
        "bot_display": words.bots.get(s.bot_level, s.bot_level) if s.bot_level else "",
        "team": s.team,
        "away": s.away,
        "empty": not s.user_id and not s.bot_level,
        "mine": uid is not None and s.user_id == uid,
    }


def live_seat(user: Any, tables: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The viewer's seat at a live table (open or playing), for "return to your table".
    ``tables``: the lobby's list for this viewer (``lobby_tables``), newest first: when the
    viewer sits at one of them, it is that one (any newer table of theirs would be listed
    before it), and nothing is read; nor when the list is not full (it holds every live table
    the viewer sits at)."""
    uid = policy.viewer_id(user)
    if uid is None:
        return None
    for t in tables or ():
        seat = next((s for s in t["seats"] if s["mine"]), None)
        if seat is not None:
            return {
                "table_id": t["id"],
                "url": t["url"],
                "name": t["name"],
                "position": seat["position"],
                "status": t["status"],
            }
    if tables is not None and len(tables) < LOBBY_SIZE:
        return None
    seat = (
        Seat.objects.filter(user_id=uid, table__status__in=policy.LIVE_STATUSES)
        .select_related("table")
        .order_by("-table__created_at")
        .first()
    )
    if seat is None:
        return None
    return {
        "table_id": seat.table_id,
        "url": reverse("table", args=[seat.table_id]),
        "name": seat.table.shown_name,
        "position": seat.position,
        "status": seat.table.status,
    }


def variants(rows: list[Variant] | None = None) -> list[dict[str, str]]:
    """The variants, for the Play-now buttons (``rows``: the Variant rows, if read)."""
    return [
        {
            "key": v.key,
            "name": variant_name(v.name),
            "description": variant_description(v.description),
        }
        for v in (rows if rows is not None else Variant.objects.all())
    ]


def lobby_context(user: Any, site_root: str = "") -> dict[str, Any]:
    """What the live part of the lobby shows ``user`` (``lobby_tables.html``); ``site_root``
    (``https://host``) makes the invite links absolute, for copying."""
    listed = sql.lobby_list(policy.viewer_id(user), policy.LIVE_STATUSES, LOBBY_SIZE)
    tables = lobby_tables(user, listed)
    return {
        "site_root": site_root,
        "tables": tables,
        "online": listed.online,
        "live_seat": live_seat(user, tables),
        "signed_in": policy.viewer_id(user) is not None,
    }


def seat_controls(table_id: int, user: Any, invite: str | None = None) -> dict[str, Any]:
    """The pre-match controls of a table for ``user`` (``_seat_controls.html``): who sits
    where, what they may do. Raises ``Table.DoesNotExist``/``NotAllowed`` like the page."""
    table = (
        Table.objects.select_related("variant")
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=Seat.objects.select_related("user__profile").order_by("position"),
            )
        )
        .get(pk=table_id)
    )
    rows = list(table.seats.all())
    policy.check_see(table, rows, user, invite)
    uid = policy.viewer_id(user)
    seats = [_seat(s, uid) for s in rows]
    my_seat = next((s["position"] for s in seats if s["mine"]), None)
    # A table "Play now" formed has no host: no bots seated by hand, no "Start the match".
    manage = policy.may_host(table, rows, user)
    is_open = table.status == Table.Status.OPEN
    own = uid is not None and (table.created_by_id == uid or my_seat is not None)
    return {
        "quick": _forming(table, rows, my_seat),
        "table": {
            "id": table.pk,
            "name": table.shown_name,
            "status": table.status,
            "status_display": table.get_status_display(),
            "is_open": is_open,
            "is_private": table.is_private,
            "auto_start": table.auto_start,
            "players": table.players,
        },
        "seats": seats,
        "my_seat": my_seat,
        "signed_in": uid is not None,
        "may_manage": manage,
        "can_start": manage and is_open and not any(s["empty"] for s in seats),
        "invite": invite or "",
        "invite_url": invite_path(table.pk, table.invite_token) if table.is_private and own else "",
        "may_rotate": table.is_private and own and manage,
        "bot_levels": [(v, label) for v, label in Seat.Bot.choices if v],
    }


def _forming(table: Table, rows: list[Seat], my_seat: int | None) -> dict[str, Any] | None:
    """A forming table's waiting panel: who sat down, and when bots take the empty seats
    (the seconds left, counted down by the page; and the time itself)."""
    if not policy.forming(table):
        return None
    left = (table.fill_at - timezone.now()).total_seconds() if table.fill_at else 0.0
    level = table.fill_level or str(Seat.Bot.STRONG)
    return {
        "seated": sum(1 for s in rows if s.user_id),
        "players": table.players,
        "fill_at": table.fill_at.isoformat(timespec="milliseconds") if table.fill_at else "",
        "fill_in": max(0, math.ceil(left)),
        "level": bot_level_name(level),
        "may_start": my_seat is not None,
    }
