"""Characters nobody types in a path, a query, a form or a message are refused cleanly, never
with a 500 or a traceback: a NUL (PostgreSQL refuses it) or a lone surrogate (UTF-8 cannot
encode it) with a 400 or the message's refusal; other control characters pass to the fields'
own cleaners."""

from __future__ import annotations

import json
import logging

import pytest
from django.urls import reverse

from games import actions, protocol
from games.errors import GameError
from tests.users import SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

UNREADABLE = ["\x00", "a\x00b", "\ud800"]


# A lone surrogate cannot travel in an HTTP request (it is not UTF-8): only in JSON's escapes.
@pytest.mark.parametrize("text", UNREADABLE[:-1], ids=["nul", "nul-inside"])
def test_paths_queries_and_forms_with_them_get_a_400_in_the_readers_language(
    signed_in: SignedIn, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    caplog.set_level(logging.WARNING)
    anonymous, player = signed_in(), signed_in(make_user("reader", language="tr"))
    table = actions.open_table(variant="duz", user=make_user("host"), name="Open")
    answers = [
        anonymous.get(f"/players/{text}/"),
        anonymous.get("/", {"variant": text}),
        anonymous.post(reverse("play_now"), {"variant": text}),
        anonymous.post(reverse("login"), {"username": f"x{text}", "password": "y"}),
        player.post(reverse("practice"), {"variant": text}),
        player.post(reverse("table_chat", args=[table.pk]), {"text": f"hi {text}"}),
        player.post(reverse("new_table"), {"variant": "duz", "name": text}),
    ]
    for response in answers:
        assert response.status_code == 400, (response.request, response.status_code)
    assert "okunamayan" in answers[-1].content.decode()  # the reader's language
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("text", ["\x07", "\x1b", "\x7f", "\t"], ids=["bell", "esc", "del", "tab"])
def test_other_control_characters_pass_to_the_fields_own_cleaners(
    signed_in: SignedIn, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    caplog.set_level(logging.WARNING)
    anonymous, player = signed_in(), signed_in(make_user("writer"))
    table = actions.open_table(variant="duz", user=make_user("host"), name="Open")
    answers = [
        anonymous.get(f"/players/{text}/"),
        anonymous.post(reverse("play_now"), {"variant": text}),
        player.post(reverse("practice"), {"variant": text}),
        player.post(reverse("table_chat", args=[table.pk]), {"text": f"hi{text}there"}),
        player.post(reverse("new_table"), {"variant": "duz", "name": text}),
    ]
    assert all(r.status_code < 500 for r in answers), [r.status_code for r in answers]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("text", UNREADABLE, ids=["nul", "nul-inside", "surrogate"])
def test_a_message_holding_them_anywhere_is_refused_with_its_familys_code(text: str) -> None:
    for data, code in [
        ({"type": "move", "hand": 1, "move": {"do": "draw"}, "client_move_id": text}, "bad_move"),
        ({"type": "move", "hand": 1, "move": {"do": "discard", "tile": text}}, "bad_move"),
        ({"type": "arrange", "hand": 1, "layout": ["R1", text]}, "bad_move"),
        ({"type": "move", "hand": 1, "move": {text: 1}}, "bad_move"),
        ({"type": "chat", "text": f"hello {text}"}, "bad_chat"),
    ]:
        with pytest.raises(GameError) as exc:
            protocol.parse(json.loads(json.dumps(data)))
        assert exc.value.code == code


def test_the_http_move_endpoint_refuses_them_without_a_server_error(
    signed_in: SignedIn, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    player = signed_in(make_user("mover"))
    table = actions.open_table(variant="duz", user=make_user("host"), name="Open")
    for text in UNREADABLE:
        payload = json.dumps({"type": "move", "hand": 1, "move": {}, "client_move_id": text})
        response = player.post(reverse("table_move", args=[table.pk]), {"payload": payload})
        assert response.status_code == 200 and 'data-error="bad_move"' in response.content.decode()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
