"""The Content-Security-Policy (django-csp, okeysite/settings.py): scripts and styles come
only from the site's own files, so markup that reaches a page or a socket's fragment (a
player's name, a chat line, a bug in a template) can never run a script or restyle the page.

- Every page's header allows no inline script or style and no eval.
- No page, fragment or socket frame needs one: no inline ``<script>`` with code (a JSON data
  block is not run), no ``on*=`` handler, no ``style=`` attribute, no ``<style>`` element, no
  ``javascript:`` link, no htmx attribute that evaluates code (``hx-on``, ``js:`` values).
- In Chromium, a table played through the page reports no violation, and its socket connects
  under ``connect-src 'self'``.
"""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from games import actions
from games.engine import layout
from games.models import Hand, Match, Table
from tests.play import play_random_moves, played_out, seed_of, user_table
from tests.sockets import Players, TableSockets, cookie_for, drain, lobby_sockets
from tests.users import SignedIn, client_for, make_user

# A <script> of these types is a data block: the browser never runs it, and CSP allows it.
DATA_SCRIPT_TYPES = {"application/json"}
# Attributes whose value the browser follows as a URL (a javascript: URL runs as inline script).
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}
# htmx attributes whose "js:"/"javascript:" value htmx evaluates.
HTMX_EVAL_ATTRIBUTES = {"hx-vals", "hx-vars", "hx-headers", "hx-request"}


class InlineFinder(HTMLParser):
    """Every piece of markup that would need 'unsafe-inline' or 'unsafe-eval' to work."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._script: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)
        if tag == "script":
            values = dict(attrs)
            kind = (values.get("type") or "").strip().lower()
            if "src" not in values and kind not in DATA_SCRIPT_TYPES:
                self._script = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs)

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            code = "".join(self._script).strip()
            if code:
                self.found.append(f"inline <script>: {code[:80]!r}")
            self._script = None

    def _check(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "style":
            self.found.append("<style> element")
        for name, value in attrs:
            text = (value or "").strip().lower()
            bare = name.removeprefix("data-")
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}={value!r}>")
            elif name == "style":
                self.found.append(f"<{tag} style={value!r}>")
            elif bare.startswith("hx-on"):
                self.found.append(f"<{tag} {name}={value!r}> (htmx evaluates it)")
            elif bare in HTMX_EVAL_ATTRIBUTES and text.startswith(("js:", "javascript:")):
                self.found.append(f"<{tag} {name}={value!r}> (htmx evaluates it)")
            elif name in URL_ATTRIBUTES and "".join(text.split()).startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")


def inline_code(html: str | bytes) -> list[str]:
    finder = InlineFinder()
    finder.feed(html.decode() if isinstance(html, bytes) else html)
    finder.close()
    return finder.found


def test_the_finder_finds_each_kind_of_inline_code() -> None:
    # The checks below pass only if the finder sees what it looks for.
    assert inline_code('<script src="/static/js/site.js"></script>') == []
    assert inline_code('<script type="application/json">{"a": 1}</script>') == []
    assert inline_code("<script></script>") == []
    assert len(inline_code("<script>alert(1)</script>")) == 1
    assert len(inline_code('<script type="module">alert(1)</script>')) == 1
    assert len(inline_code('<select onchange="this.form.submit()"></select>')) == 1
    assert len(inline_code('<div style="--remaining: 1"></div>')) == 1
    assert len(inline_code('<svg><line style="stroke: red"/></svg>')) == 1
    assert len(inline_code("<style>p { color: red }</style>")) == 1
    assert len(inline_code('<a href=" JavaScript:alert(1)">x</a>')) == 1
    assert len(inline_code('<button hx-on:click="alert(1)"></button>')) == 1
    assert len(inline_code('<div hx-vals="js:{a: 1}"></div>')) == 1
    assert inline_code('<div hx-vals=\'{"a": 1}\' data-style="x" stroke="#555"></div>') == []


# ----------------------------------------------------------------------------- the header
def policy_of(response: Any) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"{response.request['PATH_INFO']}: no Content-Security-Policy header"
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def check_policy(response: Any) -> None:
    """No inline script or style, no eval; sockets only to this site; no framing."""
    path = response.request["PATH_INFO"]
    policy = policy_of(response)
    default = policy.get("default-src")
    assert default == ["'self'"], (path, policy)
    for directive in (
        "script-src",
        "script-src-elem",
        "script-src-attr",
        "style-src",
        "style-src-elem",
        "style-src-attr",
    ):
        sources = policy.get(directive, default)
        for unsafe in ("'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "*", "data:"):
            assert unsafe not in sources, (path, directive, sources)
    assert policy["script-src"] == ["'self'"], (path, policy)
    assert policy["style-src"] == ["'self'"], (path, policy)
    # 'self' covers the site's own ws:/wss: (CSP Level 3); a bare scheme would allow any host.
    assert policy["connect-src"] == ["'self'"], (path, policy)
    assert policy["object-src"] == ["'none'"], (path, policy)
    assert policy["base-uri"] == ["'self'"], (path, policy)
    assert policy["form-action"] == ["'self'"], (path, policy)
    assert policy["frame-ancestors"] == ["'none'"], (path, policy)


# ----------------------------------------------------------------------------- the pages
def live_table() -> tuple[Table, list[Any], Hand]:
    """A duz hand under way at a table of four players (move timer on, assisted play), with a
    line of chat."""
    table, users = user_table("duz", {"assisted": True})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(71))
    play_random_moves(match, users, 6, random.Random(71))
    actions.send_chat(table.pk, users[0], "<b>hello</b> <script>alert(1)</script>")
    return table, users, match.hands.get()


def site_pages() -> list[tuple[str, Client, str]]:
    """(what, who, URL) for every kind of page, with content that exercises its templates."""
    table, users, hand = live_table()
    player, anonymous = client_for(users[0]), client_for()
    done_table, done_users, done_match = played_out("okey51", {"hands": 3}, 7)
    from leagues.ratings import rate_match
    from tests.leagues.helpers import establish

    establish(*done_users)  # accounts that are rated, so that the rating pages have a chart
    assert rate_match(done_match)
    done_hand = done_match.hands.order_by("number").first()
    assert done_hand is not None
    finisher = client_for(done_users[0])
    staff = make_user("boss", superuser=True)
    name = done_users[0].get_username()
    pages = [
        ("lobby, signed out", anonymous, reverse("home")),
        ("lobby, signed in", player, reverse("home")),
        ("new-table form", player, reverse("new_table")),
        ("table, a seat", player, reverse("table", args=[table.pk])),
        ("table, a spectator", anonymous, reverse("table", args=[table.pk])),
        ("seat controls", player, reverse("table_controls", args=[table.pk])),
        ("table, over", finisher, reverse("table", args=[done_table.pk])),
        ("hand replay", finisher, reverse("hand_replay", args=[done_hand.pk])),
        ("hand replay step", finisher, reverse("hand_step", args=[done_hand.pk, 3])),
        ("hand verify", finisher, reverse("hand_verify", args=[done_hand.pk])),
        ("match page", anonymous, reverse("match", args=[done_match.pk])),
        ("profile", anonymous, reverse("profile", args=[name])),
        ("own profile", finisher, reverse("profile", args=[name])),
        ("history", finisher, reverse("player_history", args=[name])),
        ("rules", anonymous, reverse("rules_index")),
        ("leagues", anonymous, reverse("leagues")),
        ("leaderboard", anonymous, reverse("leaderboard", args=["okey51"])),
        ("login", anonymous, reverse("login")),
        ("signup", anonymous, reverse("signup")),
        ("password reset", anonymous, reverse("password_reset")),
        ("password change", finisher, reverse("password_change")),
        ("admin login", anonymous, "/admin/login/"),
    ]
    for variant in ("classic", "duz", "okey51", "gobek17", "okey101"):
        pages.append((f"rules of {variant}", anonymous, reverse("rules", args=[variant])))
    boss = client_for(staff)
    pages.append(("admin index", boss, "/admin/"))
    for model in admin.site._registry:
        meta = model._meta
        pages.append(
            (
                f"admin {meta.label}",
                boss,
                reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"),
            )
        )
        pages.append(
            (
                f"admin add {meta.label}",
                boss,
                reverse(f"admin:{meta.app_label}_{meta.model_name}_add"),
            )
        )
    pages.append(("admin change table", boss, reverse("admin:games_table_change", args=[table.pk])))
    pages.append(("admin change user", boss, reverse("admin:auth_user_change", args=[staff.pk])))
    return pages


@pytest.mark.slow
@pytest.mark.django_db
def test_every_page_sends_the_policy_and_needs_no_inline_code() -> None:
    problems = []
    for what, client, url in site_pages():
        response = client.get(url)
        assert response.status_code in (200, 403), (what, url, response.status_code)
        check_policy(response)
        if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
            found = inline_code(response.content)
            if found:
                problems.append(f"{what} ({url}): {found}")
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_a_move_refused_over_http_answers_without_inline_code(signed_in: SignedIn) -> None:
    table, users, hand = live_table()
    response = signed_in(users[1]).post(
        reverse("table_move", args=[table.pk]),
        {
            "payload": json.dumps(
                {"type": "move", "hand": hand.pk, "move": {"do": "discard", "tile": "nonsense"}}
            )
        },
    )
    assert response.status_code < 500
    check_policy(response)
    assert inline_code(response.content) == []


def test_the_racks_width_in_the_stylesheet_is_the_engines_row() -> None:
    # The rack's slots per row come from table.css (no style= attribute on the page).
    css = (settings.BASE_DIR / "static" / "css" / "table.css").read_text()
    rule = re.search(r"\n\.rack \{[^}]*--slots: (\d+);", css)
    assert rule and int(rule.group(1)) == layout.ROW_SLOTS


# ----------------------------------------------------------------------------- socket frames
@pytest.fixture
def players_at_the_live_table(transactional_db: None) -> Players:
    """The four players of ``live_table``, with their cookies."""
    table, users, hand = live_table()
    return Players(table.pk, users, [cookie_for(u) for u in users], hand)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_the_table_sockets_frames_need_no_inline_code(
    players_at_the_live_table: Players, table_socket: TableSockets
) -> None:
    players = players_at_the_live_table
    table_id, users, hand_id = players.table_id, players.users, players.hand.pk
    frames: list[str] = []
    seat = await table_socket(table_id, players.cookies[1], first_frame=False)
    frames.append(await seat.receive_from())
    spectator = await table_socket(table_id, first_frame=False)
    frames.append(await spectator.receive_from())

    def more() -> None:
        match = Match.objects.get(table_id=table_id)
        play_random_moves(match, users, 8, random.Random(72))
        actions.send_chat(table_id, users[2], 'say "<i style=x>"')

    await database_sync_to_async(more)()
    await seat.send_json_to(
        {"type": "move", "hand": hand_id, "move": {"do": "discard", "tile": "nonsense"}}
    )
    for ws in (seat, spectator):
        frames.extend(await drain(ws, timeout=0.5))
    await seat.disconnect()
    await spectator.disconnect()
    assert len(frames) >= 6, frames
    assert any('class="rack"' in f for f in frames)  # the seat's rack came
    assert any("countdown" in f for f in frames)  # the move timer came
    problems = [(i, inline_code(f)) for i, f in enumerate(frames)]
    assert not [p for p in problems if p[1]], problems


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_the_lobby_sockets_frames_need_no_inline_code(
    players_at_the_live_table: Players,
) -> None:
    async with lobby_sockets("", players_at_the_live_table.cookies[0]) as opened:
        frames = [first for _ws, first in opened]
        maker = await database_sync_to_async(make_user)("maker")
        await database_sync_to_async(actions.open_table)(
            variant="okey51", user=maker, name="<span style='x'>Room</span>"
        )
        for ws, _first in opened:
            frames.extend(await drain(ws, timeout=0.6))
    assert len(frames) >= 4, frames
    problems = [(i, inline_code(f)) for i, f in enumerate(frames)]
    assert not [p for p in problems if p[1]], problems


# ----------------------------------------------------------------------------- in Chromium
# Before any page script runs: every violation the page reports, onto the console (which the
# test collects with Chromium's own "Refused to ... Content Security Policy" messages).
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  console.error("csp-violation: " + e.effectiveDirective + " blocked " + (e.blockedURI || "inline")
    + " at " + e.sourceFile + ":" + e.lineNumber + " " + (e.sample || ""));
});
document.addEventListener("htmx:wsOpen", () => { window.__okeySocketOpen = true; });
"""


def violations(page: Any) -> list[str]:
    return violations_in(page.okey_console)


def violations_in(console: list[str]) -> list[str]:
    return [
        line for line in console if "csp-violation" in line or "Content Security Policy" in line
    ]


def visit(page: Any, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.ok, url
    header = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in header and "unsafe-inline" not in header, (url, header)


def test_chromium_reports_no_violation_at_the_lobby_a_table_and_a_move(
    daphne_live_server: Any, chromium: Any
) -> None:
    from games.catalog import ensure_variants
    from tests import ui

    server = daphne_live_server
    ensure_variants()  # a transactional test before this one flushed them
    player = make_user("csp-player")
    page = ui.signed_in_page(chromium, server, player)
    page.add_init_script(REPORT_VIOLATIONS)

    visit(page, f"{server.url}/")
    ui.wait_for_socket(page)  # the lobby's socket connected under connect-src 'self'
    # htmx is told (site.js) not to eval, add its <style> or run swapped-in scripts.
    assert page.evaluate(
        "() => [htmx.config.allowEval, htmx.config.includeIndicatorStyles,"
        " htmx.config.allowScriptTags, document.querySelectorAll('style').length]"
    ) == [False, False, False, 0]
    page.locator("#lobby-status.connected").wait_for(timeout=10_000)
    with page.expect_navigation(url="**/tables/*/"):
        page.locator('[data-action="practice"][data-variant="duz"]').click()
    ui.wait_for_socket(page)
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    ui.wait_for_first_frame(page)  # it draws the rack again: a tile dragged before is not kept

    # A drag on the rack (SortableJS styles the dragged tile), then moves: each lands by a
    # frame of the table socket, and the bots' moves after it arrive the same way.
    layout = ui.rack_layout(page)
    ui.drag_tile(page, layout.index(next(t for t in layout if t)), layout.index(None))
    ui.wait_for_turn(page)
    assert ui.simple_turn(page), ui.state(page)
    after = ui.version(page)
    ui.wait_version(page, after + 1)  # a bot's move, pushed by the server
    # The table socket opened (frames() shows the last few: pongs and weights come between).
    assert page.evaluate("() => window.__okeyFrames.includes('open')"), ui.frames(page)

    # The language menu sends its form without an inline handler.
    with page.expect_navigation():
        page.select_option('select[name="language"]', "tr")
    assert page.locator("html").get_attribute("lang") == "tr"
    ui.wait_for_socket(page)

    table = Table.objects.get(seats__user=player)
    for path in (
        reverse("match", args=[table.matches.get().pk]),
        reverse("profile", args=[player.get_username()]),
        reverse("rules", args=["duz"]),
        "/admin/login/",
    ):
        visit(page, f"{server.url}{path}")
    assert violations(page) == [], violations(page)
    assert page.okey_errors == [], page.okey_errors

    # The watch works: a style attribute set from a script is refused, and reported.
    with page.expect_console_message(lambda m: bool(violations_in([f"{m.type}: {m.text}"]))):
        page.evaluate("() => document.body.setAttribute('style', 'outline: 3px solid red')")
    page.wait_for_function("() => getComputedStyle(document.body).outlineStyle !== 'solid'")
    assert violations(page), page.okey_console
    assert not server.errors(), server.output_of_this_test()


def test_chromium_reports_no_violation_in_the_admin(daphne_live_server: Any, chromium: Any) -> None:
    from games.catalog import ensure_variants
    from tests import ui

    server = daphne_live_server
    ensure_variants()
    table, _users = user_table("duz")
    staff = make_user("csp-boss", superuser=True)
    page = ui.signed_in_page(chromium, server, staff)
    page.add_init_script(REPORT_VIOLATIONS)
    for path in (
        "/admin/",
        reverse("admin:games_table_changelist"),
        reverse("admin:games_table_change", args=[table.pk]),
        reverse("admin:auth_user_changelist"),
        reverse("admin:auth_user_change", args=[staff.pk]),
    ):
        visit(page, f"{server.url}{path}")
    # The user's form: the date shortcuts and the two-box permission chooser, built by the
    # admin's scripts.
    page.locator(".datetimeshortcuts a").first.click()
    page.locator("#id_user_permissions_from").wait_for()
    page.locator(".calendarbox, .clockbox").first.wait_for(state="attached")
    assert violations(page) == [], violations(page)
    assert page.okey_errors == [], page.okey_errors
    assert not server.errors(), server.output_of_this_test()
