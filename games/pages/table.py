import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from accounts.limits import Rate, client_address
from games import actions, frames, limits, messages, policy, protocol, reads
from games.errors import GameError, NotAllowed
from games.limits import MAX_MESSAGE_LENGTH
from games.models import Seat, Table


def invite_of(request: HttpRequest) -> str | None:
    """The invite a request carries: a form's ``invite`` field, else the query's."""
    return request.POST.get("invite") or request.GET.get("invite") or None


def check_table_or_404(request: HttpRequest, table_id: int, invite: str | None) -> None:
    """Every endpoint under ``/tables/<id>/`` asks this before anything else: a table the
    viewer may not see (``policy.check_see``) answers 404, exactly as an id that no table has,
    so that no refusal, redirect or message tells a private table from a missing one."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise Http404
    seats = list(Seat.objects.filter(table_id=table_id)) if table.is_private else []
    try:
        policy.check_see(table, seats, request.user, invite)
    except NotAllowed as exc:
        raise Http404 from exc


def table_detail(request: HttpRequest, table_id: int) -> HttpResponse:
    invite = request.GET.get("invite")
    try:
        # One read of the table (reads.table_state) for the board and the chat panel.
        state = reads.table_state(table_id)
        context = reads.table_context(table_id, request.user, invite, state=state)
    except (Table.DoesNotExist, NotAllowed):
        # A private table without its invite looks like no table at all: one page and one
        # status for both, which says so in the reader's language.
        return render(request, "games/table_private.html", status=404)
    # Beside the board, in one query: how many watch (on the page only, outside the live
    # fragments, so that no socket counts on every move: the sockets update it from the count
    # the actions publish), and what the chat panel needs to know first.
    counts = reads.page_counts(table_id, reads.viewer_id(request.user))
    context["watching"] = counts.watching
    # The chat panel (outside the live fragments: the board's frames never re-render it).
    context["chat"] = reads.chat_context(
        table_id, request.user, invite, table=state.table, seats=state.seats, counts=counts
    )
    context["live_html"] = frames.live(context, get_token(request))
    context["rack_html"] = frames.rack(context)
    response = render(request, "games/table.html", context)
    if context["my_seat"] is not None:
        private(response)
    return response


def private(response: HttpResponse) -> HttpResponse:
    """A page or answer that shows a seat's rack is the player's alone: no shared cache keeps
    it, nor the browser's cache (another person at the same computer)."""
    patch_cache_control(response, private=True, no_store=True)
    return response


# A payload larger than a socket message may be (games.live.socket_guard) is refused unread.
_TOO_BIG = object()


def _raw_payload(request: HttpRequest) -> str | bytes:
    """The ``payload`` field of a form, else the body (JSON sent as it is). A multipart
    form's body has been read as its fields: without the field there is no payload."""
    if "payload" in request.POST:
        return request.POST["payload"]
    if request.content_type == "multipart/form-data":
        return ""
    return request.body


def _payload(raw: str | bytes) -> Any:
    if len(raw) > MAX_MESSAGE_LENGTH:
        return _TOO_BIG
    return json.loads(raw)


# What the move endpoint takes: every table message but the chat's (``table_chat``) and
# ``refresh`` (a socket's: a page without one has the table from its last answer).
_TABLE_MESSAGES = frozenset(protocol.MESSAGES) - protocol.CHAT - {"refresh", "ping", "weigh"}


def _account_key(group: str, request: HttpRequest) -> str:
    user = request.user
    if user.is_authenticated:
        return f"user:{user.pk}"
    return client_address(request) or "unknown"


# The socket's message budget, for the same messages sent over HTTP (``games.limits``).
HTTP_MESSAGES = (
    Rate("games.http-messages", limits.HTTP_MESSAGES_PER_ACCOUNT, key=_account_key),
    Rate("games.http-messages-address", limits.HTTP_MESSAGES_PER_ADDRESS),
)


def _too_fast(request: HttpRequest) -> HttpResponse | None:
    """Count this message against its budgets, before any work; past one, the refusal."""
    if not any([rate.exceeded(request) for rate in HTTP_MESSAGES]):  # each one counts it
        return None
    html = render_to_string(
        "games/_move_error.html",
        {"code": "too_fast", "text": messages.refusal("too_fast", "")},
        request=request,
    )
    return HttpResponse(html, status=429)


@require_POST
def table_move(request: HttpRequest, table_id: int) -> HttpResponse:
    """The table socket's messages over plain HTTP (for clients without WebSockets): a move,
    "ready", "rematch", "hide", "sit", "leave" or "back", as JSON in the ``payload`` field,
    read through ``games.protocol`` and carried out by ``actions.perform`` as the socket does.
    Answers with the viewer's fresh fragments, or with the reason it was refused (and nothing
    changes)."""
    refused = _too_fast(request)
    if refused is not None:
        return refused
    invite = invite_of(request)
    check_table_or_404(request, table_id, invite)
    try:
        data: Any = _payload(_raw_payload(request))
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read
        data = None
    try:
        if data is _TOO_BIG:
            raise GameError("too_big", "the payload is larger than any message needs")
        message = protocol.parse(data, _TABLE_MESSAGES)
        uid = policy.viewer_id(request.user)
        seat = Seat.objects.filter(table_id=table_id, user_id=uid).first() if uid else None
        sender = actions.Sender(table_id, request.user, seat and seat.position, invite)
        actions.perform(message, sender)
    except GameError as exc:
        if exc.code == "no_table":
            raise Http404 from exc  # gone, or no longer to be seen, since the check above
        html = render_to_string(
            "games/_move_error.html",
            {"code": exc.code, "text": messages.refused(exc)},
            request=request,
        )
        return HttpResponse(html, status=200 if exc.code != "not_your_seat" else 403)
    context = reads.table_context(table_id, request.user, invite)
    html = frames.live(context, get_token(request)) + frames.rack(context)
    return private(HttpResponse(html))


@require_POST
def table_chat(request: HttpRequest, table_id: int) -> HttpResponse:
    """The socket's chat messages over plain HTTP (a client without an open socket): JSON in
    the ``payload`` field (``{"type": "chat", "text"|"canned"}``, ``{"type": "mute"|"unmute",
    "user": id}``), or the form fields ``text`` / ``canned``. The same actions as the socket;
    answers with the viewer's chat list, or with the refusal (and nothing changes)."""
    refused = _too_fast(request)
    if refused is not None:
        return refused
    invite = invite_of(request)
    check_table_or_404(request, table_id, invite)
    data: Any
    if "payload" in request.POST:
        try:
            data = _payload(request.POST["payload"])
        except (ValueError, RecursionError):
            data = None
    else:  # a plain form
        data = {"type": "chat", **{k: request.POST.get(k) for k in ("text", "canned")}}
    try:
        if data is _TOO_BIG:
            raise GameError("too_big", "the payload is larger than any message needs")
        message = protocol.parse(data, protocol.CHAT)
        actions.perform(message, actions.Sender(table_id, request.user, invite=invite))
    except GameError as exc:
        if exc.code == "no_table":
            raise Http404 from exc  # gone since the check above, or no longer to be seen
        html = render_to_string(
            "games/_move_error.html",
            {"code": exc.code, "text": messages.refused(exc)},
            request=request,
        )
        return HttpResponse(html, status=403 if isinstance(exc, NotAllowed) else 200)
    context = reads.chat_context(table_id, request.user, invite)
    html = render_to_string("games/table.html#chat_lines", {"chat": context}, request=request)
    return HttpResponse(html)
