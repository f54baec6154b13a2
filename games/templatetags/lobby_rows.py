"""``{% lobby_rows tables site_root %}``: the tables of the lobby's list (``lobby_tables.html``),
from ``reads.lobby_tables``'s dicts.

The lobby lists up to 50 tables and its socket renders the list again for every viewer on
every change, so the rows' markup is a Jinja2 partial (``templates/jinja2/games/lobby_rows.jinja``;
games/jinja.py says why) and this tag looks up their words (where ``makemessages`` finds them).
The hooks are the ones ``tests/pages/test_lobby.py`` reads (``.lobby-table[data-table]``,
``[data-option]``, ``.table-seats [data-seat]``, ``[data-watching]``, ``[data-action="watch"]``,
``[data-invite]``, ...)."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext

from games.jinja import render

register = template.Library()


@register.simple_tag
def lobby_rows(tables: Any, site_root: Any = "") -> SafeString:
    """Each table's ``<li class="lobby-table">``, in order (``tables``: reads.lobby_tables's
    dicts); ``site_root`` makes the invite links absolute."""
    rows = []
    for t in tables or ():
        n = t["watching"]
        invite = f"{site_root or ''}{t['invite_url']}" if t["invite_url"] else ""
        # An htmx post (the page's CSRF header); the lobby socket then shows the new link.
        rotate = ""
        if invite and t.get("may_rotate"):
            rotate = reverse("table_rotate_invite", args=[t["id"]])
        watching = ngettext("%(n)s watching", "%(n)s watching", n) % {"n": n} if n else ""
        rows.append((t, {"watching": watching, "invite": invite, "rotate": rotate}))
    words = {
        "private": gettext("private"),
        "watch": gettext("Watch"),
        "other_tables_title": gettext("Players here may also sit at other tables"),
        "other_tables": gettext("multi-table"),
        "empty": gettext("empty"),
        "team": gettext("team"),
        "invite": gettext("Invite link"),
        "rotate": gettext("New invite link"),
        "rotate_title": gettext("The old link stops working; seated players keep their seats."),
        "copy": gettext("Copy"),
        "copied": gettext("Copied"),
        "share": gettext("Share"),
    }
    return render("games/lobby_rows.jinja", rows=rows, w=words)
