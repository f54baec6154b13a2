"""A private table is, to anyone who may not see it, no table at all: every endpoint under
``/tables/<id>/``, the table's socket and the pages of its hands and matches answer a visitor
without its invite exactly as they answer an id that no table has (same status, same body,
same redirect, same refusal), and change nothing. The host may rotate the invite: the old
link then answers like a missing table, seated players keep their seats, and a spectator who
came in with the old link loses the table at once.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import dataclass
from html import unescape
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from games import actions, policy
from games.catalog import ensure_variants
from games.errors import GameError, NotAllowed
from games.models import Hand, Seat, Table
from tests.play import random_move, seed_of, store_random_hand
from tests.sockets import (
    Loss,
    TableSockets,
    cookie_for,
    drain,
    live_frames,
    loss,  # noqa: F401 - the fixture
    socket,
    version_of,
)
from tests.users import SignedIn, client_for, make_user

pytestmark = pytest.mark.django_db

MISSING = 999_999  # an id no table, hand or match has
HTMX = {"HX-Request": "true"}
WRONG = "not-the-invite"
NOT_HOST = "Only the table's host may do that."
_NAMES = itertools.count()


@dataclass
class Private:
    table: Table
    host: Any
    players: list[Any]  # seated, the host first
    hand: Hand | None


def open_private() -> Private:
    """A private table before its match: the host on seat 0, a guest (who came with the
    invite) on seat 1, a bot on seat 2, seat 3 free."""
    ensure_variants()
    host, guest = make_user("host"), make_user("guest")
    table = actions.open_table(variant="duz", user=host, name="Family room", is_private=True)
    actions.sit(table, guest, 1, invite=table.invite_token)
    actions.add_bot(table, 2, "greedy", by=host)
    return Private(table, host, [host, guest], None)


def playing_private(n: int = 1) -> Private:
    """A private table whose match is being played by four players (the host on seat 0)."""
    ensure_variants()
    host = make_user(f"host{n}")
    table = actions.open_table(variant="duz", user=host, name="Family room", is_private=True)
    players = [host]
    for p in range(1, 4):
        user = make_user(f"player{n}-{p}")
        actions.sit(table, user, p, invite=table.invite_token)
        players.append(user)
    match = actions.start_match(table, by=host, seed=seed_of(300 + n))
    return Private(table, host, players, match.hands.get())


def state_of(table_id: int) -> tuple[Any, ...]:
    """What an answer must not change: the table, its seats, its hands, its chat."""
    table = Table.objects.get(pk=table_id)
    seats = list(
        Seat.objects.filter(table_id=table_id)
        .order_by("position")
        .values_list("position", "user_id", "bot_level", "away")
    )
    hands = list(
        Hand.objects.filter(match__table_id=table_id)
        .order_by("pk")
        .values_list("pk", "version", "hidden", "visibility", "status")
    )
    chat = list(table.chat_messages.values_list("pk", flat=True))
    return table.status, table.invite_token, seats, hands, chat


# ----------------------------------------------------------------------------- the answers
# A CSRF token is masked afresh in every response (it tells nothing about the request).
_CSRF = re.compile(r'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[A-Za-z0-9]+')


def _same_ids(text: str, ids: dict[int, str]) -> str:
    for number, name in ids.items():
        text = re.sub(rf"(?<=/){number}(?!\w)", name, text)  # in a path: /tables/12/
    return _CSRF.sub(r"\1CSRF", text)


def answer(
    client: Client,
    method: str,
    path: str,
    data: Any = None,
    *,
    htmx: bool = False,
    content_type: str | None = None,
    ids: dict[int, str] | None = None,
) -> tuple[Any, ...]:
    """Everything a visitor learns from one request: status, body, where it redirects, the
    htmx redirect, the content type and the messages it leaves in the session (the ids it
    was asked about written as names, so that two ids compare)."""
    headers = HTMX if htmx else {}
    kwargs: dict[str, Any] = {"headers": headers}
    if content_type is not None:
        kwargs["content_type"] = content_type
    call = getattr(client, method)
    response = call(path, data if data is not None else {}, **kwargs)
    ids = ids or {}
    said = [str(m) for m in get_messages(response.wsgi_request)]  # type: ignore[attr-defined]
    return (
        response.status_code,
        _same_ids(response.content.decode(errors="replace"), ids),
        _same_ids(response.get("Location", ""), ids),
        _same_ids(response.get("HX-Redirect", ""), ids),
        response.get("Content-Type", ""),
        said,
    )


def table_requests(p: Private, invite: str | None) -> list[tuple[str, str, Any, dict[str, Any]]]:
    """Every request under ``/tables/<id>/`` (GET and POST, every form and payload), as
    (method, path after ``/tables/<id>/``, data, extra) with the invite (if any) in the
    query and in the form."""
    hand_id = p.hand.pk if p.hand is not None else MISSING
    form: dict[str, Any] = {"invite": invite} if invite else {}
    query = f"?invite={invite}" if invite else ""
    someone = p.host.pk
    payloads = [
        {"type": "move", "hand": hand_id, "move": {"do": "draw"}, "expected_version": 0},
        {"type": "ready"},
        {"type": "rematch"},
        {"type": "hide"},
        {"type": "dance"},
    ]
    chat_payloads = [
        {"type": "chat", "text": "merhaba"},
        {"type": "chat", "canned": "good_luck"},
        {"type": "mute", "user": someone},
        {"type": "unmute", "user": someone},
        {"type": "dance"},
    ]
    out: list[tuple[str, str, Any, dict[str, Any]]] = []
    for path in (
        "",
        "controls/",
        "sit/",
        "stand/",
        "bots/add/",
        "bots/remove/",
        "start/",
        "move/",
        "chat/",
        "invite/rotate/",
    ):
        out.append(("get", path + query, None, {}))
        out.append(("post", path + query, dict(form), {}))
    out += [
        ("post", "sit/", {**form, "position": "3"}, {}),
        ("post", "sit/", {**form, "position": "1"}, {}),
        ("post", "sit/", {**form, "position": "x"}, {}),
        ("post", "bots/add/", {**form, "position": "3", "level": "greedy"}, {}),
        ("post", "bots/add/", {**form, "position": "3", "level": "nobody"}, {}),
        ("post", "bots/remove/", {**form, "position": "2"}, {}),
        ("post", "start/", form, {}),
        ("post", "invite/rotate/", form, {}),
        ("post", "move/" + query, {**form, "payload": "not json"}, {}),
        ("post", "chat/" + query, {**form, "text": "merhaba"}, {}),
        ("post", "chat/" + query, {**form, "canned": "good_luck"}, {}),
        ("post", "chat/" + query, {**form, "text": "x" * 300}, {}),
        ("post", "chat/" + query, {**form, "payload": "[[[["}, {}),
    ]
    for payload in payloads:
        out.append(("post", "move/" + query, {**form, "payload": json.dumps(payload)}, {}))
        out.append(
            ("post", "move/" + query, json.dumps(payload), {"content_type": "application/json"})
        )
    for payload in chat_payloads:
        out.append(("post", "chat/" + query, {**form, "payload": json.dumps(payload)}, {}))
    return out


def viewers() -> dict[str, Client]:
    """Who may not see the table: an anonymous visitor and a signed-in stranger."""
    return {"anonymous": Client(), "stranger": client_for(make_user(f"stranger{next(_NAMES)}"))}


def assert_like_missing(p: Private, invite: str | None) -> int:
    """Every request of :func:`table_requests`, by every viewer, answers for ``p``'s table as
    for an id no table has, and leaves the table as it was. Returns how many were compared."""
    before = state_of(p.table.pk)
    compared = 0
    for who, client in viewers().items():
        for method, path, data, extra in table_requests(p, invite):
            for htmx in (False, True):
                got = answer(
                    client,
                    method,
                    f"/tables/{p.table.pk}/{path}",
                    data,
                    htmx=htmx,
                    ids={p.table.pk: "TABLE"},
                    **extra,
                )
                missing = answer(
                    client,
                    method,
                    f"/tables/{MISSING}/{path}",
                    data,
                    htmx=htmx,
                    ids={MISSING: "TABLE"},
                    **extra,
                )
                assert got == missing, (who, method, path, data, htmx)
                compared += 1
    assert state_of(p.table.pk) == before
    return compared


@pytest.mark.slow
@pytest.mark.parametrize("invite", [None, WRONG])
def test_every_table_endpoint_answers_an_open_private_table_like_a_missing_one(
    invite: str | None,
) -> None:
    p = open_private()
    assert assert_like_missing(p, invite) > 100


@pytest.mark.slow
@pytest.mark.parametrize("invite", [None, WRONG])
def test_every_table_endpoint_answers_a_playing_private_table_like_a_missing_one(
    invite: str | None,
) -> None:
    p = playing_private()
    assert assert_like_missing(p, invite) > 100


def test_the_same_requests_with_the_invite_are_answered_as_the_table_it_is(
    signed_in: SignedIn,
) -> None:
    """The comparison above can fail: with the invite the table is there."""
    p = open_private()
    stranger = signed_in(make_user("fan"))
    token = p.table.invite_token
    page = answer(stranger, "get", f"/tables/{p.table.pk}/?invite={token}")
    assert page[0] == 200 and "Family room" in page[1]
    controls = answer(stranger, "get", f"/tables/{p.table.pk}/controls/?invite={token}")
    assert controls[0] == 200 and "seat-controls" in controls[1]
    missing = answer(stranger, "get", f"/tables/{MISSING}/controls/")
    assert controls != missing
    # Not the host: refused in words, the table plainly there.
    add = answer(
        stranger,
        "post",
        f"/tables/{p.table.pk}/bots/add/",
        {"invite": token, "position": "3", "level": "greedy"},
        htmx=True,
    )
    assert add[0] == 200 and NOT_HOST in unescape(add[1])
    sat = answer(stranger, "post", f"/tables/{p.table.pk}/sit/", {"invite": token, "position": "3"})
    assert sat[0] == 302 and sat[2] == f"/tables/{p.table.pk}/?invite={token}"
    assert Seat.objects.get(table=p.table, position=3).user is not None


def test_the_policy_refuses_an_unseen_table_before_anything_else() -> None:
    """Whatever else would be wrong (not signed in, a taken seat, a running match), a table
    one may not see is refused as no table: the refusal says nothing of the table."""
    p = playing_private(2)
    table, seats = p.table, list(p.table.seats.all())
    stranger = make_user("stranger")
    for user in (AnonymousUser(), stranger):
        for check in (
            lambda u: policy.check_sit(table, seats, u, 0, None),
            lambda u: policy.check_chat(table, seats, u),
            lambda u: policy.check_mute(table, seats, u, p.host.pk),
            lambda u: policy.check_see(table, seats, u, WRONG),
        ):
            with pytest.raises(NotAllowed) as refused:
                check(user)
            assert refused.value.code == "no_table", refused.value.code
    with pytest.raises(GameError) as refused:
        actions.send_chat(table.pk, AnonymousUser(), text="hi")
    assert refused.value.code == "no_table"
    with pytest.raises(GameError) as refused:
        actions.sit(table, stranger, 0)
    assert refused.value.code == "no_table"


def test_hand_and_match_pages_of_a_private_table_answer_like_missing_ones() -> None:
    p = playing_private(3)
    finished = store_random_hand(p.table, seed_of(77), 77)
    live = p.hand
    assert live is not None
    pages = [
        "/hands/{hand}/",
        "/hands/{hand}/step/1/",
        "/hands/{hand}/verify/",
        "/hands/{hand}/scenario.json",
        "/matches/{match}.json",
        "/matches/{match}/",
    ]
    for who, client in viewers().items():
        for hand in (finished, live):
            for page in pages:
                for query in ("", f"?invite={WRONG}"):
                    path = page.format(hand=hand.pk, match=hand.match_id) + query
                    got = answer(client, "get", path, ids={hand.pk: "ID", hand.match_id: "ID"})
                    path = page.format(hand=MISSING, match=MISSING) + query
                    missing = answer(client, "get", path, ids={MISSING: "ID"})
                    assert got == missing, (who, page, hand.status, query)
    # With the invite, the finished hand's replay is there.
    token = p.table.invite_token
    assert Client().get(f"/hands/{finished.pk}/?invite={token}").status_code == 200


@pytest.fixture
def a_private_match(transactional_db: None) -> Private:
    return playing_private(4)


@pytest.fixture
def stranger_cookie(transactional_db: None) -> str:
    return cookie_for(make_user("stranger"))


@pytest.mark.django_db(transaction=True)
async def test_the_table_socket_refuses_a_private_table_like_a_missing_one(
    a_private_match: Private, stranger_cookie: str
) -> None:
    table_id, stranger = a_private_match.table.pk, stranger_cookie
    for cookie in ("", stranger):
        for query in ("", f"invite={WRONG}"):
            answers = []
            for tid in (table_id, MISSING):
                ws = socket(tid, cookie, query)
                answers.append(await ws.connect())
                await ws.disconnect()
            assert answers[0] == answers[1] and not answers[0][0], (cookie, query, answers)


# ----------------------------------------------------------------------------- invite rotation
def rotate_url(table: Table) -> str:
    return reverse("table_rotate_invite", args=[table.pk])


@pytest.mark.slow
def test_the_host_rotates_the_invite_and_the_old_link_is_like_a_missing_table(
    signed_in: SignedIn,
) -> None:
    p = open_private()
    old = p.table.invite_token
    seats_before = state_of(p.table.pk)[2]
    host = signed_in(p.host)
    # The host sees the button beside the invite link, on the table and in the lobby.
    controls = host.get(reverse("table_controls", args=[p.table.pk])).content.decode()
    assert 'data-action="rotate-invite"' in controls
    lobby = host.get(reverse("lobby")).content.decode()
    assert 'data-action="rotate-invite"' in lobby
    # The seated guest sees the link, not the button.
    theirs = signed_in(p.players[1]).get(reverse("lobby")).content.decode()
    assert f"?invite={old}" in theirs and 'data-action="rotate-invite"' not in theirs
    response = host.post(rotate_url(p.table), {"invite": old})
    assert response.status_code == 302
    assert response["Location"] == reverse("table", args=[p.table.pk])
    new = Table.objects.get(pk=p.table.pk).invite_token
    assert new and new != old
    # People already seated keep their seats (and still see the table without any link).
    assert state_of(p.table.pk)[2] == seats_before
    assert signed_in(p.players[1]).get(reverse("table", args=[p.table.pk])).status_code == 200
    # The old link is no table at all; the new one opens it.
    stranger = signed_in(make_user("late"))
    got = answer(stranger, "get", f"/tables/{p.table.pk}/?invite={old}", ids={p.table.pk: "T"})
    missing = answer(stranger, "get", f"/tables/{MISSING}/?invite={old}", ids={MISSING: "T"})
    assert got == missing and got[0] == 404
    sit_old = answer(
        stranger,
        "post",
        f"/tables/{p.table.pk}/sit/",
        {"invite": old, "position": "3"},
        ids={p.table.pk: "T"},
    )
    sit_missing = answer(
        stranger,
        "post",
        f"/tables/{MISSING}/sit/",
        {"invite": old, "position": "3"},
        ids={MISSING: "T"},
    )
    assert sit_old == sit_missing
    assert assert_like_missing(p, old) > 100
    page = stranger.get(f"/tables/{p.table.pk}/?invite={new}")
    assert page.status_code == 200
    # The host's controls show the new link (htmx answers with the fresh controls).
    fresh = host.post(rotate_url(p.table), headers=HTMX)
    newest = Table.objects.get(pk=p.table.pk).invite_token
    assert fresh.status_code == 200 and newest != new
    assert f"?invite={newest}" in fresh.content.decode()
    assert f"?invite={newest}" in host.get(reverse("lobby")).content.decode()


def test_only_the_host_may_rotate_and_a_refusal_changes_nothing(signed_in: SignedIn) -> None:
    p = open_private()
    token = p.table.invite_token
    before = state_of(p.table.pk)
    # A seated player who is not the host: told so, nothing changes, no button.
    guest = signed_in(p.players[1])
    controls = guest.get(reverse("table_controls", args=[p.table.pk])).content.decode()
    assert 'data-action="rotate-invite"' not in controls
    refused = guest.post(rotate_url(p.table), headers=HTMX)
    assert refused.status_code == 200 and NOT_HOST in unescape(refused.content.decode())
    plain = guest.post(rotate_url(p.table))
    assert [str(m) for m in get_messages(plain.wsgi_request)] == [NOT_HOST]  # type: ignore[attr-defined]
    # A spectator who holds the invite: may see the table, may not rotate its invite.
    fan = signed_in(make_user("fan"))
    refused = fan.post(rotate_url(p.table), {"invite": token}, headers=HTMX)
    assert refused.status_code == 200 and NOT_HOST in unescape(refused.content.decode())
    assert state_of(p.table.pk) == before
    # The service says the same, by code.
    with pytest.raises(NotAllowed) as no:
        actions.rotate_invite(p.table.pk, by=p.players[1])
    assert no.value.code == "not_host"
    with pytest.raises(GameError) as no:
        actions.rotate_invite(p.table.pk, by=AnonymousUser())
    assert no.value.code == "no_table"
    # A public table has no invite to rotate: refused, in words.
    public = actions.open_table(variant="duz", user=make_user("owner"))
    with pytest.raises(GameError) as no:
        actions.rotate_invite(public.pk, by=public.created_by)
    assert no.value.code == "not_private"
    words = signed_in(public.created_by).post(rotate_url(public), headers=HTMX)
    assert words.status_code == 200 and "public" in words.content.decode()
    assert state_of(p.table.pk) == before


def test_rotating_during_a_hand_counts_as_a_change_of_who_may_see_what() -> None:
    p = playing_private(5)
    assert p.hand is not None
    before = Hand.objects.get(pk=p.hand.pk).visibility
    actions.rotate_invite(p.table, by=p.host)
    assert Hand.objects.get(pk=p.hand.pk).visibility == before + 1
    with pytest.raises(NotAllowed):
        actions.rotate_invite(p.table, by=p.players[2])
    assert Hand.objects.get(pk=p.hand.pk).visibility == before + 1


def _play_one(table_id: int, users: list[Any], rng: random.Random) -> int:
    hand = Hand.objects.get(match__table_id=table_id, status=Hand.Status.PLAYING)
    seat, move = random_move(hand, rng)
    return actions.play(hand, seat, move, by=users[seat]).version


async def _closed(ws: Any) -> int | None:
    """The close code the socket got after whatever frames came first (None: still open)."""
    while True:
        try:
            out = await ws.receive_output(timeout=2)
        except TimeoutError:
            return None
        if out["type"] == "websocket.close":
            return out.get("code")
        assert 'class="discards"' not in out.get("text", ""), "a frame of the board came"


@pytest.fixture
def a_watched_private_match(transactional_db: None) -> tuple[Private, str, str]:
    """A private match, the cookie of its seat 1, and a fan's (who came with the invite)."""
    p = playing_private(6)
    return p, cookie_for(p.players[1]), cookie_for(make_user("fan"))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lost", [False, True])
async def test_a_spectator_who_came_with_the_old_invite_loses_the_table(
    lost: bool,
    loss: Loss,  # noqa: F811 - the fixture
    a_watched_private_match: tuple[Private, str, str],
    table_socket: TableSockets,
) -> None:
    """At once when the rotation's message arrives; if it is lost, at the next move (the
    rotation counts as a change of who may see what)."""
    rng = random.Random(5)
    p, player_cookie, fan_cookie = a_watched_private_match
    table_id, players, old = p.table.pk, p.players, p.table.invite_token
    player = await table_socket(table_id, player_cookie)
    fans = [
        await table_socket(table_id, cookie, f"invite={old}", first_frame=False)
        for cookie in (fan_cookie, "")
    ]
    await drain(player)
    for fan in fans:
        seen = live_frames(await drain(fan))
        assert seen and 'class="discards"' in seen[-1]
    loss.armed = lost
    await database_sync_to_async(actions.rotate_invite)(table_id, by=players[0])
    if lost:
        assert [m["type"] for m in loss.lost] == ["table.changed"]
        for fan in fans:
            assert live_frames(await drain(fan)) == []  # nothing told them yet
        loss.armed = False
    version = await database_sync_to_async(_play_one)(table_id, players, rng)
    for fan in fans:
        assert await _closed(fan) == 4404
    # The seated player goes on receiving the hand.
    frames = live_frames(await drain(player))
    assert frames and version_of(frames[-1]) == version
    # And the old link opens no socket any more.
    again = socket(table_id, fan_cookie, f"invite={old}")
    assert not (await again.connect())[0]
    await again.disconnect()


def test_the_host_rotates_the_invite_from_the_table_page_and_the_lobby_in_a_browser(
    daphne_live_server: Any, chromium: Any
) -> None:
    """The buttons work as the page posts them (htmx, the page's CSRF header, the site's
    Content-Security-Policy): the table's controls and the lobby's row show the new link."""
    from tests.live_daphne import in_thread
    from tests.ui import signed_in_page

    p = in_thread(open_private)  # out of Playwright's thread, where publishing works
    first = p.table.invite_token
    page = signed_in_page(chromium, daphne_live_server, p.host)
    page.goto(f"{daphne_live_server.url}/tables/{p.table.pk}/")
    link = page.locator("#seat-controls [data-invite]")
    link.wait_for()
    assert link.input_value().endswith(f"?invite={first}")
    page.click('#seat-controls [data-action="rotate-invite"]')
    page.wait_for_function(
        "old => { const el = document.querySelector('#seat-controls [data-invite]');"
        " return el !== null && !el.value.endsWith(old); }",
        arg=first,
    )
    second = Table.objects.get(pk=p.table.pk).invite_token
    assert second != first
    assert page.locator("#seat-controls [data-invite]").input_value().endswith(f"?invite={second}")
    # From the lobby: its socket shows the new link once the table has changed.
    page.goto(f"{daphne_live_server.url}/")
    row = page.locator(f'.lobby-table[data-table="{p.table.pk}"]')
    assert row.locator("[data-invite]").input_value().endswith(f"?invite={second}")
    # (A socket that connects after the click is sent the list as it is by then.)
    row.locator('[data-action="rotate-invite"]').click()
    page.wait_for_function(
        "([id, old]) => { const el = document.querySelector("
        '`.lobby-table[data-table="${id}"] [data-invite]`);'
        " return el !== null && !el.value.endsWith(old); }",
        arg=[p.table.pk, second],
    )
    third = Table.objects.get(pk=p.table.pk).invite_token
    assert third not in (first, second)
    assert row.locator("[data-invite]").input_value().endswith(f"?invite={third}")
    assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_an_outsider_is_told_the_table_is_private_in_their_language(
    private_table: Any, signed_in: SignedIn
) -> None:
    """Not a bare "Not Found": the page says the table is private (or gone) and how to get in,
    in the reader's language, with the same answer for a table that does not exist."""
    outsider = make_user("outsider")
    for language, words in (("en", "This table is private"), ("tr", "Bu masa özel")):
        client = signed_in(outsider, language=language)
        for path in (f"/tables/{private_table.pk}/", f"/tables/{MISSING}/"):
            response = client.get(path)
            assert response.status_code == 404
            page = response.content.decode()
            assert f"<h1>{words}</h1>" in page, (language, path)
            assert 'data-action="lobby"' in page
