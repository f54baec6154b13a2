"""The table chat as two people use it, in two browsers: one in English at a desktop, one in
Turkish on a phone. A typed line and a quick phrase reach the other page without a reload,
each reader gets the phrase in their own language and the time as their language writes it,
and a player who mutes the other no longer sees their lines (nor does the muted player learn
of it). Screenshots are written under ``test-artifacts/``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from games import actions
from games.catalog import ensure_variants
from games.models import Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

PHONE = {"width": 390, "height": 844}


def lines(page: Any) -> list[str]:
    """The chat's lines as shown: "author text"."""
    return [
        f"{li.locator('.chat-author').inner_text()} {li.locator('.chat-text').inner_text()}"
        for li in page.locator("#chat-lines .chat-line:visible").all()
    ]


def wait_line(page: Any, line: str) -> None:
    page.wait_for_function(
        """want => [...document.querySelectorAll('#chat-lines .chat-line')].some(li =>
            `${li.querySelector('.chat-author').textContent} ${li.querySelector('.chat-text')
            .textContent}` === want)""",
        arg=line,
        timeout=15_000,
    )


def two_players(server: DaphneServer, chromium: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    """A classic match between two people and two bots, no move timer: the first player
    (English) at a desktop, the second (Turkish) on a phone, each page at the table."""
    ada = in_thread(lambda: make_user(names[0], language="en"))
    can = in_thread(lambda: make_user(names[1], language="tr"))

    def make() -> Table:
        ensure_variants()
        table = actions.open_table(variant="classic", user=ada, name="Chatters")
        actions.sit(table, can, 1)
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=ada)
        Table.objects.filter(pk=table.pk).update(move_timer=0)
        actions.start_match(table.pk, by=ada)
        return table

    table = in_thread(make)
    mine = ui.signed_in_page(chromium, server, ada)
    theirs = ui.signed_in_page(chromium, server, can, PHONE)
    for page in (mine, theirs):
        ui.open_table(page, server, table.pk)
    return mine, theirs


def test_two_players_chat_in_their_languages_and_one_mutes_the_other(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    mine, theirs = two_players(daphne_live_server, chromium, ("ada", "can"))

    # A typed line, sent with Enter: both pages show it, and the sender's box is empty again.
    box = mine.locator('#chat-form input[name="text"]')
    box.fill("Good luck, Can <b>!</b>")
    box.press("Enter")
    wait_line(theirs, "ada Good luck, Can <b>!</b>")
    wait_line(mine, "ada Good luck, Can <b>!</b>")
    assert box.input_value() == ""
    # A quick phrase: each reader reads it in their own language.
    theirs.locator("#chat-form [data-canned='thanks']").click()
    wait_line(theirs, "can Teşekkürler")
    wait_line(mine, "can Thanks")
    # Times as each language writes them: 24-hour in Turkish, with AM/PM in English.
    turkish_time = theirs.locator(".chat-time[data-local]").first.inner_text()
    english_time = mine.locator(".chat-time[data-local]").first.inner_text()
    assert re.fullmatch(r"\d\d:\d\d", turkish_time), turkish_time
    assert re.fullmatch(r"\d\d:\d\d [AP]M", english_time), english_time
    mine.screenshot(path=str(artifacts / "chat-desktop-en.png"))
    theirs.screenshot(path=str(artifacts / "chat-phone-tr.png"), full_page=True)

    # Ada mutes Can: Can's lines go from Ada's page, and what Can says next never shows there.
    their_line = mine.locator("#chat-lines .chat-line", has_text="Thanks")
    their_line.hover()
    their_line.locator('[data-action="mute"]').click()
    mine.locator("#chat-muted", has_text="can").wait_for(timeout=15_000)
    mine.wait_for_function(
        "() => ![...document.querySelectorAll('#chat-lines .chat-line')]"
        ".some(li => li.textContent.includes('Thanks'))",
        timeout=15_000,
    )
    theirs.locator('#chat-form input[name="text"]').fill("Duyuyor musun?")
    theirs.locator('#chat-form [data-action="chat-send"]').click()
    wait_line(theirs, "can Duyuyor musun?")
    mine.locator('#chat-form input[name="text"]').fill("Still here")
    mine.locator('#chat-form input[name="text"]').press("Enter")
    wait_line(theirs, "ada Still here")  # the muted player still reads the other
    assert not any("Duyuyor" in line for line in lines(mine))
    for page in (mine, theirs):
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_a_line_that_comes_while_the_chat_is_out_of_sight_is_counted_by_the_tables_name(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    """On a phone the chat is under the rack, out of sight while one plays: a line from the
    other player is counted on a button by the table's name, which brings the chat into view.
    At a desktop the chat is beside the board, in sight: nothing is counted there."""
    mine, theirs = two_players(daphne_live_server, chromium, ("ada-unread", "can-unread"))
    unread = theirs.locator("#chat-unread")
    assert unread.is_hidden()

    box = mine.locator('#chat-form input[name="text"]')
    for n, text in enumerate(("Hello", "Your turn"), 1):
        box.fill(text)
        box.press("Enter")
        wait_line(theirs, f"ada-unread {text}")
        unread.filter(has_text=f"{n} yeni mesaj").wait_for(timeout=5_000)
    assert mine.locator("#chat-unread").is_hidden()  # the sender's own lines, in sight
    box_on_phone = unread.bounding_box()
    assert box_on_phone is not None and box_on_phone["y"] >= 0  # on the first screen
    theirs.screenshot(path=str(artifacts / "chat-unread-phone-tr.png"))

    unread.click()
    unread.wait_for(state="hidden", timeout=5_000)
    assert theirs.locator('#chat-form input[name="text"]').is_visible()
    mine.locator('#chat-form input[name="text"]').fill("Still there?")
    mine.locator('#chat-form input[name="text"]').press("Enter")
    wait_line(theirs, "ada-unread Still there?")
    assert unread.is_hidden()  # in sight now: nothing to count
    for page in (mine, theirs):
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
