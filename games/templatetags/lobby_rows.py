"""``{% lobby_table t site_root %}``: one table of the lobby's list (``lobby_tables.html``),
built in Python from ``reads.lobby_tables``'s dict for it.

The lobby lists up to 50 tables and its socket renders the list again for every viewer on
every change: drawn by the template language, the rows take most of the page's time (a dozen
``if``s, a loop over the options and one over the seats, for each table). The markup and its
hooks are the ones ``tests/pages/test_lobby.py`` reads (``.lobby-table[data-table]``,
``[data-option]``, ``.table-seats [data-seat]``, ``[data-watching]``, ``[data-action="watch"]``,
``[data-invite]``, ...); every value in it is escaped. (The words are looked up outside the
f-strings, where ``makemessages`` finds them.)"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext

register = template.Library()


@register.simple_tag
def lobby_table(t: dict[str, Any], site_root: Any = "") -> SafeString:
    """The ``<li class="lobby-table">`` of the table ``t``; ``site_root`` makes its invite
    link absolute."""
    url = escape(t["url"])
    mine = " mine" if t["mine"] else ""
    head = [
        f'<a class="table-name" href="{url}">{escape(t["name"])}</a>',
        f'<span class="variant">{escape(t["variant_name"])}</span>',
        f'<span class="badge status">{escape(t["status_display"])}</span>',
    ]
    if t["is_private"]:
        private = escape(gettext("private"))
        head.append(f'<span class="badge private" data-private>{private}</span>')
    if t["watching"]:
        n = t["watching"]
        words = ngettext("%(n)s watching", "%(n)s watching", n) % {"n": n}
        head.append(
            f'<span class="badge watching" data-watching="{escape(n)}">{escape(words)}</span>'
        )
    if t["status"] == "playing" and not t["mine"]:
        watch = escape(gettext("Watch"))
        head.append(f'<a class="watch" href="{url}" data-action="watch">{watch}</a>')
    if t["other_tables"]:
        title = escape(gettext("Players here may also sit at other tables"))
        words = escape(gettext("multi-table"))
        head.append(f'<span class="badge" data-other-tables title="{title}">{words}</span>')
    options = []
    if t["players_words"]:
        options.append(f"<li>{escape(t['players_words'])}</li>")
    for o in t["options"]:
        options.append(f'<li data-option="{escape(o["key"])}">{escape(o["label"])}</li>')
    options.append(f'<li data-option="timer">{escape(t["timer_words"])}</li>')
    empty = escape(gettext("empty"))
    team = escape(gettext("team"))
    seats = []
    for s in t["seats"]:
        css = "seat" + (" empty" if s["empty"] else "") + (" mine" if s["mine"] else "")
        who = escape(s["label"]) if s["label"] else f"<em>{empty}</em>"
        if s["team"] is not None:
            who += f' <span class="team">({team} {escape(s["team"] + 1)})</span>'
        seats.append(f'<li class="{css}" data-seat="{escape(s["position"])}">{who}</li>')
    invite = ""
    if t["invite_url"]:
        link = escape(f"{site_root or ''}{t['invite_url']}")
        label = escape(gettext("Invite link"))
        rotate = ""
        if t.get("may_rotate"):
            # An htmx post (the page's CSRF header); the lobby socket then shows the new link.
            action = escape(reverse("table_rotate_invite", args=[t["id"]]))
            words = escape(gettext("New invite link"))
            title = escape(gettext("The old link stops working; seated players keep their seats."))
            rotate = (
                f' <button type="button" hx-post="{action}" hx-swap="none" title="{title}"'
                f' data-action="rotate-invite">{words}</button>'
            )
        invite = (
            f'\n  <p class="invite"><label>{label} <input type="text" readonly value="{link}"'
            f" data-invite></label>{rotate}</p>"
        )
    html = (
        f'<li class="lobby-table status-{escape(t["status"])}{mine}" data-table="{escape(t["id"])}"'
        f' data-variant="{escape(t["variant"])}">\n'
        f'  <p class="table-head">\n    ' + "\n    ".join(head) + "\n  </p>\n"
        '  <ul class="table-options">\n    ' + "\n    ".join(options) + "\n  </ul>\n"
        '  <ol class="table-seats">\n    ' + "\n    ".join(seats) + "\n  </ol>"
        f"{invite}\n</li>"
    )
    return mark_safe(html)  # noqa: S308 - every value in it is escaped above
