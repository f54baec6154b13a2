"""A table's pre-match seat controls: sit, stand, seat or remove a bot, start the match, and a
private table's new invite link. Each action goes through ``games.actions`` with
``by=request.user``; htmx gets the controls again, with the refusal in them."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from games import actions, policy, reads
from games import messages as game_messages
from games.errors import GameError, NotAllowed
from games.models import Table
from games.pages import table as table_page


def _controls(
    request: HttpRequest, table_id: int, invite: str | None, error: str = ""
) -> HttpResponse:
    try:
        controls = reads.seat_controls(table_id, request.user, invite)
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
    """Run one seat action through the actions. htmx gets the fresh controls (with the
    refusal in them, status 200 so that htmx swaps it); a plain form goes back to the table
    with a message. A table the viewer may not see is no table (404), before any refusal.
    ``ends_invite``: once the action is done, the invite it came with no longer works (and
    whoever could do it sees the table without one)."""
    invite = table_page.invite_of(request)
    table_page.check_table_or_404(request, table_id, invite)
    error = ""
    try:
        action()
    except GameError as exc:
        if exc.code == "no_table":  # gone, or no longer to be seen, since the check above
            raise Http404 from exc
        error = game_messages.refused(exc)
    if ends_invite and not error:
        invite = None
    if getattr(request, "htmx", False):
        return _controls(request, table_id, invite, error)
    if error:
        messages.error(request, error)
    url = reads.invite_path(table_id, invite) if invite else reverse("table", args=[table_id])
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
        lambda: actions.sit(
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
        actions.stand(table_id, request.user)  # type: ignore[arg-type]

    return _act(request, table_id, leave)


@require_POST
def add_bot(request: HttpRequest, table_id: int) -> HttpResponse:
    level = request.POST.get("level", "")
    return _act(
        request,
        table_id,
        lambda: actions.add_bot(table_id, _need_position(request), level, by=request.user),
    )


@require_POST
def remove_bot(request: HttpRequest, table_id: int) -> HttpResponse:
    return _act(
        request,
        table_id,
        lambda: actions.remove_bot(table_id, _need_position(request), by=request.user),
    )


@require_POST
def start(request: HttpRequest, table_id: int) -> HttpResponse:
    return _act(request, table_id, lambda: actions.start_match(table_id, by=request.user))


@require_POST
def rotate_invite(request: HttpRequest, table_id: int) -> HttpResponse:
    """The host's "New invite link": the old link stops working (``actions.rotate_invite``);
    the controls (or the table page) show the new one."""

    def rotate() -> None:
        actions.rotate_invite(table_id, by=request.user, invite=table_page.invite_of(request))
        if not getattr(request, "htmx", False):
            messages.success(request, _("A new invite link: the old one no longer works."))

    return _act(request, table_id, rotate, ends_invite=True)


@require_POST
def start_with_bots(request: HttpRequest, table_id: int) -> HttpResponse:
    """A person waiting at a table "Play now" formed stops waiting: bots take the empty seats
    and the match starts."""
    return _act(request, table_id, lambda: actions.start_with_bots(table_id, by=request.user))
