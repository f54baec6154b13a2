"""The lobby page ("/"), the "New table" form, "Play now" (seated with other people; bots fill
the seats still empty after a short wait), "Practice with bots" (three bots at once), and a
forming table's "Start now with bots".

Every action goes through ``games.actions`` with ``by=request.user``; a refusal
(``GameError``) is shown in the user's language and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.limits import Rate, client_address
from accounts.models import Profile
from accounts.views import become_guest
from games import actions, limits, reads
from games import messages as game_messages
from games.errors import GameError
from games.live import state_cache
from games.models import Table, Variant
from games.pages.forms import NewTableForm, quick_choices, quick_posted


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    context = reads.lobby_context(request.user, request.build_absolute_uri("/").rstrip("/"))
    rows = list(Variant.objects.all())  # one read for the Play-now buttons and the form
    context["variants"] = reads.variants(rows)
    remembered = play_options(request.user)
    for v in context["variants"]:
        v["quick"] = quick_choices(v["key"], remembered.get(v["key"]))
    context["play_now_levels"] = play_now_levels()
    context["play_now_level"] = play_now_level(request.user)
    context["quick_play_wait"] = settings.QUICK_PLAY_WAIT_SECONDS
    if request.user.is_authenticated:
        context["new_table_form"] = new_table_form(request, rows)
    return render(request, "games/home.html", context)


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
    html = state_cache.forms.get(key)
    if html is None:
        form = NewTableForm(variant_rows=rows)
        html = render_to_string(
            "games/lobby_new_table.html#form", {"form": form, "csrf_token": _CSRF_MARK}
        )
        state_cache.forms.put(key, html)
    return mark_safe(html.replace(_CSRF_MARK, get_token(request)))  # noqa: S308 - rendered


# "New table" asked for per address (every account and guest of it), per hour.
NEW_TABLES = Rate("games.new-tables", f"{limits.NEW_TABLES_PER_HOUR}/h")


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
    if NEW_TABLES.exceeded(request):  # counted before the form is read
        form = NewTableForm(request.POST)
        form.is_valid()
        form.add_error(None, game_messages.refusal("new_tables_too_fast", ""))
        return _form_response(request, form)
    form = NewTableForm(request.POST)
    if form.is_valid():
        try:
            table = actions.open_table(
                variant=form.variant_key,
                user=request.user,  # type: ignore[arg-type]
                name=form.cleaned_data["name"].strip(),
                options=form.options(),
                is_private=form.cleaned_data["is_private"],
                players=form.players(),
                auto_start=form.cleaned_data["auto_start"],
                other_tables=form.cleaned_data["other_tables"],
                chat_enabled=form.cleaned_data["chat_enabled"],
                address=client_address(request),
            )
        except GameError as exc:
            form.add_error(None, game_messages.refused(exc))
        else:
            url = reverse("table", args=[table.pk])
            if table.is_private:
                url = reads.invite_path(table.pk, table.invite_token)
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


def play_now_level(user: Any) -> str:
    """The bot level "Play now" offers ``user`` first: the one they chose last, else the
    default."""
    if user.is_authenticated:
        # Read, not made: a player who never chose has no profile row to write on a GET.
        chosen = Profile.objects.filter(user=user).values_list("play_now_level", flat=True).first()
        if chosen in actions.PLAY_NOW_LEVELS:
            return str(chosen)
    return str(actions.PLAY_NOW_LEVEL)


def play_options(user: Any) -> dict[str, Any]:
    """The options ``user`` last chose before sitting down, by variant."""
    if not user.is_authenticated:
        return {}
    found = Profile.objects.filter(user=user).values_list("play_options", flat=True).first()
    return dict(found) if isinstance(found, dict) else {}


def play_now_levels() -> list[tuple[str, str]]:
    """The levels "Play now" offers, with their names in the active language."""
    return [(str(level), reads.bot_level_name(level)) for level in actions.PLAY_NOW_LEVELS]


def _variant_and_level(request: HttpRequest) -> tuple[str, str] | HttpResponse:
    """The variant and bot level a lobby button posted, or the lobby again with the refusal.
    An anonymous visitor becomes a new guest here (refused over the guests' limit)."""
    key = request.POST.get("variant", "")
    if not Variant.objects.filter(key=key).exists():
        messages.error(request, _("There is no such variant."))
        return _redirect(request, reverse("lobby"))
    level = request.POST.get("level") or play_now_level(request.user)
    if level not in actions.PLAY_NOW_LEVELS:
        messages.error(request, _("There is no such bot level."))
        return _redirect(request, reverse("lobby"))
    refused = become_guest(request)
    if refused is not None:
        return refused
    return key, level


def _refusal_with_the_way_back(request: HttpRequest, exc: GameError) -> str:
    """A refusal of a lobby button; one for a seat at another table links to that table (a
    player who closed its tab finds their way back without looking for it)."""
    words = game_messages.refused(exc)
    if exc.code != "already_seated":
        return words
    seat = reads.live_seat(request.user)
    if seat is None:
        return words
    link = gettext("Return to your table: %(name)s") % {"name": seat["name"]}
    return format_html(
        '{} <a href="{}" data-action="return-to-table">{}</a>', words, seat["url"], link
    )


def _options_again(request: HttpRequest, key: str) -> dict[str, Any]:
    """ "Practice again": the options of the table the player practised at (``again``: its
    id, a table of ``key`` where they hold a seat), else none."""
    again = request.POST.get("again", "")
    if not again.isdigit() or not request.user.is_authenticated:
        return {}
    found = (
        Table.objects.filter(pk=int(again), variant__key=key, seats__user=request.user)
        .values_list("options", flat=True)
        .first()
    )
    return dict(found) if isinstance(found, dict) else {}


def _remember(request: HttpRequest, level: str, key: str, options: dict[str, Any]) -> None:
    profile = Profile.of(request.user)
    fields = []
    if profile.play_now_level != level:
        profile.play_now_level = level
        fields.append("play_now_level")
    remembered = dict(profile.play_options or {})
    if remembered.get(key) != options:
        remembered[key] = options
        profile.play_options = remembered
        fields.append("play_options")
    if fields:
        profile.save(update_fields=fields)


def _seat_and_go(
    request: HttpRequest, seat: Callable[[str, str, dict[str, Any]], int]
) -> HttpResponse:
    """A lobby button's variant, level and options (its quick options, ``quick_posted``),
    the player seated by ``seat(variant, level, options)`` (which returns the table's id),
    the level and the options remembered for next time; then the table page, or the lobby
    with the refusal."""
    chosen = _variant_and_level(request)
    if isinstance(chosen, HttpResponse):
        return chosen
    key, level = chosen
    options = quick_posted(key, request.POST, _options_again(request, key))
    try:
        table_id = seat(key, level, options)
    except GameError as exc:
        messages.error(request, _refusal_with_the_way_back(request, exc))
        return _redirect(request, reverse("lobby"))
    _remember(request, level, key, options)
    return _redirect(request, reverse("table", args=[table_id]))


@require_POST
def play_now(request: HttpRequest) -> HttpResponse:
    """The lobby's "Play now": a seat at once at a table of the variant with other people who
    want the same game (``actions.quick_play``); bots of the level chosen beside the buttons
    (remembered for next time) fill the seats still empty when the wait is over. Then the
    table page. An anonymous visitor plays as a new guest."""
    # request.user read when the seat is taken: a visitor has become a guest by then.
    return _seat_and_go(
        request,
        lambda key, level, options: (
            actions.quick_play(_user(request), key, level=level, options=options).pk
        ),
    )


@require_POST
def practice(request: HttpRequest) -> HttpResponse:
    """The lobby's "Practice with bots": a table of the variant with its defaults, three bots
    of the level chosen beside the buttons (remembered for next time), the match started;
    then the table page. An anonymous visitor plays as a new guest."""
    return _seat_and_go(
        request,
        lambda key, level, options: (
            actions.play_now(_user(request), key, level=level, options=options).table_id
        ),
    )


def _user(request: HttpRequest) -> Any:
    return request.user
