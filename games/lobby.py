"""The lobby: the list of open tables, "New table", "Play now", and the pre-match
seat controls of a table (sit, stand, seat or remove a bot, start).

Reading: the ``*_context``/``lobby_*`` functions at the top are the lobby's selectors. They
hand templates plain dicts, never model rows, and are shared by the HTTP views and the lobby
socket (``games.consumers.LobbyConsumer``). Writing: every action goes through
``games.services`` with ``by=request.user``; a refusal (``GameError``/``NotAllowed``) is shown
with its message and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.signals import setting_changed
from django.db.models import Prefetch
from django.dispatch import receiver
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.models import display_name
from accounts.views import become_guest
from games import engine, policy, reads, selectors, services, views
from games import messages as game_messages
from games.errors import GameError, NotAllowed
from games.forms import NewTableForm
from games.messages import variant_description, variant_name
from games.models import Seat, Table, Variant

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


def refusal(exc: GameError) -> str:
    """A refusal in the user's language (``games.messages.REFUSALS``, one table for the site)."""
    return game_messages.refusal(exc.code, exc.message)


def invite_path(table_id: int, token: str) -> str:
    return f"{reverse('table', args=[table_id])}?{urlencode({'invite': token})}"


# ----------------------------------------------------------------------------- selectors
def online_count() -> int:
    """Players online: the distinct signed-in users with a fresh lobby socket
    (``LobbyPresence``) or a fresh seated table socket (``Presence``).

    Both are database rows kept fresh by the sockets' heartbeats, so every daphne process
    counts the sockets of every other (an in-process count would not), and the sockets of a
    process that died stop counting after ``Presence.FRESH`` seconds. Spectators' table
    sockets are not recorded, so a signed-in spectator counts only while a lobby is open.
    (Written out in ``games.reads``, which the lobby's list also counts with.)
    """
    return reads.online_count()


def lobby_tables(user: Any, listed: reads.LobbyList | None = None) -> list[dict[str, Any]]:
    """The tables the lobby lists to ``user``: open and playing public tables, and the
    private ones that are theirs (they created them, or hold a seat), newest first, with how
    many watch each (fresh spectator sockets, not those of a user seated there, as
    ``selectors.watching`` counts). Read as plain values, in one statement with the count
    of players online (``reads.lobby_list``; ``listed``: that read, when made): composed by
    the ORM, the three queries it replaces cost more than the rest of the lobby."""
    uid = policy.viewer_id(user)
    if listed is None:
        listed = reads.lobby_list(uid, policy.LIVE_STATUSES, LOBBY_SIZE)
    tables = [_TableRow(*row) for row in listed.tables]
    seats = {t.id: [_SeatRow(*row) for row in listed.seats[t.id]] for t in tables}
    words = _Words()
    return [
        {**_lobby_table(t, seats[t.id], user, words), "watching": listed.watching[t.id]}
        for t in tables
    ]


class _TableRow(NamedTuple):
    """A table as the lobby's list reads it (plain values, in ``reads.LOBBY_TABLE``'s order)."""

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
    """A seat as the lobby's list reads it (plain values, in ``reads.LOBBY_SEAT``'s order:
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
    # The rows are plain values with the model's attribute names, which is all the policy reads.
    host = private and policy.may_manage(t, rows, user)  # type: ignore[arg-type]
    options = [
        {"key": k, "value": t.options[k], "label": words.said(_option_words, k, t.options[k])}
        for k in _main_options(t.options, t.variant__key)
    ]
    return {
        "id": t.id,
        "url": words.table_url(t.id),
        "name": t.name,
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
        "bot_display": selectors.bot_level_name(s.bot_level) if s.bot_level else "",
        "team": s.team,
        "away": s.away,
        "empty": s.is_empty,
        "mine": uid is not None and s.user_id == uid,
    }


def _listed_seat(s: _SeatRow, uid: int | None, words: _Words) -> dict[str, Any]:
    """:func:`_seat` for the lobby's list, from plain values, with ``label``: who sits there
    in words (their name, "Bot (level)", or "" for an empty seat)."""
    name = (s.user__profile__display_name or s.user__username or "") if s.user_id else ""
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
        "name": seat.table.name,
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
    listed = reads.lobby_list(policy.viewer_id(user), policy.LIVE_STATUSES, LOBBY_SIZE)
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
    manage = policy.may_manage(table, rows, user)
    is_open = table.status == Table.Status.OPEN
    own = uid is not None and (table.created_by_id == uid or my_seat is not None)
    return {
        "table": {
            "id": table.pk,
            "name": table.name,
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


# ----------------------------------------------------------------------------- the lobby page
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    context = lobby_context(request.user, request.build_absolute_uri("/").rstrip("/"))
    rows = list(Variant.objects.all())  # one read for the Play-now buttons and the form
    context["variants"] = variants(rows)
    if request.user.is_authenticated:
        context["new_table_form"] = new_table_form(request, rows)
    return render(request, "games/home.html", context)


# The "New table" form as the lobby shows it, by language and variants (see new_table_form).
_FORMS: dict[tuple[Any, ...], str] = {}
_FORMS_MAX = 32
_CSRF_MARK = "csrf-token-of-the-request"  # where the request's CSRF token goes


def new_table_form(request: HttpRequest, rows: list[Variant]) -> SafeString:
    """The lobby's "New table" form (``lobby_new_table.html#form``, a fresh form), with the
    request's CSRF token. Rendering a form's widgets costs more than the rest of the lobby
    page, and a fresh form is the same for everyone: it is rendered once per process for each
    language and state of the Variant rows (``rows``: all of them), then only the token
    changes."""
    key = (
        translation.get_language(),
        tuple((v.pk, v.key, v.name, json.dumps(v.default_options, sort_keys=True)) for v in rows),
    )
    html = _FORMS.get(key)
    if html is None:
        form = NewTableForm(variant_rows=rows)
        html = render_to_string(
            "games/lobby_new_table.html#form", {"form": form, "csrf_token": _CSRF_MARK}
        )
        if len(_FORMS) >= _FORMS_MAX:
            _FORMS.clear()
        _FORMS[key] = html
    return mark_safe(html.replace(_CSRF_MARK, get_token(request)))  # noqa: S308 - rendered


@receiver(setting_changed, dispatch_uid="games.lobby.forget_forms")
def _forget_forms(*, setting: str, **kwargs: Any) -> None:
    """Other catalogues or settings (tests): render the form again."""
    _FORMS.clear()


@require_http_methods(["GET", "POST"])
def new_table(request: HttpRequest) -> HttpResponse:
    """GET: the form for a variant (htmx swaps it in when the variant changes). POST: check
    the options with the engine, open the table and seat its creator, go to the table."""
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("lobby"))
    if request.method == "GET":
        keep = {k: request.GET[k] for k in ("name",) if k in request.GET}
        keep["is_private"] = request.GET.get("is_private") in ("on", "true", "1")
        keep["auto_start"] = request.GET.get("auto_start") in ("on", "true", "1")
        keep["other_tables"] = request.GET.get("other_tables") in ("on", "true", "1")
        # The chat is on unless the form (sent again when the variant changes) unticked it.
        chat_ticked = request.GET.get("chat_enabled") in ("on", "true", "1")
        keep["chat_enabled"] = chat_ticked or "variant" not in request.GET
        form = NewTableForm(variant=request.GET.get("variant"), initial=keep)
        return _form_response(request, form)
    form = NewTableForm(request.POST)
    if form.is_valid():
        try:
            table = services.open_table(
                variant=form.variant_key,
                user=request.user,  # type: ignore[arg-type]
                name=form.cleaned_data["name"].strip(),
                options=form.options(),
                is_private=form.cleaned_data["is_private"],
                players=form.players(),
                auto_start=form.cleaned_data["auto_start"],
                other_tables=form.cleaned_data["other_tables"],
                chat_enabled=form.cleaned_data["chat_enabled"],
            )
        except GameError as exc:
            form.add_error(None, refusal(exc))
        else:
            url = reverse("table", args=[table.pk])
            if table.is_private:
                url = invite_path(table.pk, table.invite_token)
            return _redirect(request, url)
    return _form_response(request, form)


def _form_response(request: HttpRequest, form: NewTableForm) -> HttpResponse:
    template = "games/lobby_new_table.html"
    if getattr(request, "htmx", False):
        template += "#form"
    return render(request, template, {"form": form})


def _redirect(request: HttpRequest, url: str) -> HttpResponse:
    """A redirect htmx follows as a page load (HX-Redirect), or a plain 302."""
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return HttpResponseRedirect(url)


@require_POST
def play_now(request: HttpRequest) -> HttpResponse:
    """One click: a table of the variant with its defaults, three strong bots, the match
    started; then the table page. An anonymous visitor plays as a new guest."""
    key = request.POST.get("variant", "")
    if not Variant.objects.filter(key=key).exists():
        messages.error(request, _("There is no such variant."))
        return _redirect(request, reverse("lobby"))
    refused = become_guest(request)
    if refused is not None:
        return refused
    try:
        match = services.play_now(request.user, key)  # type: ignore[arg-type]
    except GameError as exc:
        messages.error(request, refusal(exc))
        return _redirect(request, reverse("lobby"))
    return _redirect(request, reverse("table", args=[match.table_id]))


# ----------------------------------------------------------------------------- seat controls
def _controls(
    request: HttpRequest, table_id: int, invite: str | None, error: str = ""
) -> HttpResponse:
    try:
        controls = seat_controls(table_id, request.user, invite)
    except (Table.DoesNotExist, NotAllowed) as exc:
        raise Http404 from exc
    controls["error"] = error
    return render(request, "games/_seat_controls.html", {"controls": controls})


@require_safe
def table_controls(request: HttpRequest, table_id: int) -> HttpResponse:
    """The pre-match controls fragment (the table page loads it, and reloads it when the
    table's socket says something changed)."""
    return _controls(request, table_id, request.GET.get("invite"))


def _act(
    request: HttpRequest, table_id: int, action: Any, *, ends_invite: bool = False
) -> HttpResponse:
    """Run one seat action through the services. htmx gets the fresh controls (with the
    refusal in them, status 200 so that htmx swaps it); a plain form goes back to the table
    with a message. A table the viewer may not see is no table (404), before any refusal.
    ``ends_invite``: once the action is done, the invite it came with no longer works (and
    whoever could do it sees the table without one)."""
    invite = views.invite_of(request)
    views.check_table_or_404(request, table_id, invite)
    error = ""
    try:
        action()
    except GameError as exc:
        if exc.code == "no_table":  # gone, or no longer to be seen, since the check above
            raise Http404 from exc
        error = refusal(exc)
    if ends_invite and not error:
        invite = None
    if getattr(request, "htmx", False):
        return _controls(request, table_id, invite, error)
    if error:
        messages.error(request, error)
    url = invite_path(table_id, invite) if invite else reverse("table", args=[table_id])
    return HttpResponseRedirect(url)


def _position(request: HttpRequest) -> int | None:
    """The posted seat; None when none is named (sit: the first free seat). A value that is
    not a seat number is refused, never read as "any seat"."""
    raw = request.POST.get("position", "")
    if raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise GameError("bad_seat", f"no seat {raw!r}") from None


def _need_position(request: HttpRequest) -> int:
    position = _position(request)
    if position is None:
        raise GameError("bad_seat", "name a seat")
    return position


@require_POST
def sit(request: HttpRequest, table_id: int) -> HttpResponse:
    return _act(
        request,
        table_id,
        lambda: services.sit(
            table_id,
            request.user,  # type: ignore[arg-type]
            _position(request),
            invite=request.POST.get("invite") or None,
        ),
    )


@require_POST
def stand(request: HttpRequest, table_id: int) -> HttpResponse:
    def leave() -> None:
        if policy.viewer_id(request.user) is None:
            raise NotAllowed("sign_in", "sign in first")
        services.stand(table_id, request.user)  # type: ignore[arg-type]

    return _act(request, table_id, leave)


@require_POST
def add_bot(request: HttpRequest, table_id: int) -> HttpResponse:
    level = request.POST.get("level", "")
    return _act(
        request,
        table_id,
        lambda: services.add_bot(table_id, _need_position(request), level, by=request.user),
    )


@require_POST
def remove_bot(request: HttpRequest, table_id: int) -> HttpResponse:
    return _act(
        request,
        table_id,
        lambda: services.remove_bot(table_id, _need_position(request), by=request.user),
    )


@require_POST
def start(request: HttpRequest, table_id: int) -> HttpResponse:
    return _act(request, table_id, lambda: services.start_match(table_id, by=request.user))


@require_POST
def rotate_invite(request: HttpRequest, table_id: int) -> HttpResponse:
    """The host's "New invite link": the old link stops working (``services.rotate_invite``);
    the controls (or the table page) show the new one."""

    def rotate() -> None:
        services.rotate_invite(table_id, by=request.user, invite=views.invite_of(request))
        if not getattr(request, "htmx", False):
            messages.success(request, _("A new invite link: the old one no longer works."))

    return _act(request, table_id, rotate, ends_invite=True)
