"""The table's log and the replay speak of tiles in colour words and of the viewer as "you"."""

from __future__ import annotations

from django.utils import translation

from games import messages

NAMES = ["ayse", "mehmet", "zeynep", "can"]


def test_tiles_are_named_in_words_in_the_readers_language() -> None:
    event = {"type": "discard", "seat": 1, "tile": "K4"}
    assert messages.event_text(event, NAMES, 0) == "mehmet threw black 4."
    with translation.override("tr"):
        assert messages.event_text(event, NAMES, 0) == "mehmet siyah 4 taşını attı."
    fake = {"type": "add", "seat": 2, "tile": "F"}
    assert messages.event_text(fake, NAMES, None) == "zeynep added fake okey to a meld."


def test_the_viewers_own_moves_are_told_as_you() -> None:
    assert messages.event_text({"type": "discard", "seat": 0, "tile": "R12"}, NAMES, 0) == (
        "You threw red 12."
    )
    took = {"type": "take", "seat": 1, "from": 0, "tile": "B5"}
    assert messages.event_text(took, NAMES, 0) == "mehmet took your blue 5."
    assert messages.event_text(took, NAMES, 1) == "You took ayse's blue 5."
    assert messages.event_text(took, NAMES, None) == "mehmet took ayse's blue 5."
    opened = {"type": "open", "seat": 3, "with": "melds", "total": 57}
    assert messages.event_text(opened, NAMES, 3) == "You opened with 57."
    over = {"type": "hand_over", "ending": "finish", "finisher": 2}
    assert messages.event_text(over, NAMES, 2) == "You finished the hand."
    with translation.override("tr"):
        assert messages.event_text({"type": "discard", "seat": 0, "tile": "R12"}, NAMES, 0) == (
            "Kırmızı 12 taşını attın."
        )


def test_a_drawn_tile_is_named_only_to_its_drawer_until_the_replay_shows_all() -> None:
    drew = {"type": "draw", "seat": 1}  # as the others see it: no tile
    assert messages.event_text(drew, NAMES, 0) == "mehmet drew from the pile."
    own = {"type": "draw", "seat": 1, "tile": "Y9"}
    assert messages.event_text(own, NAMES, 1) == "You drew yellow 9."
    assert messages.event_text(own, NAMES, None, all_shown=True) == "mehmet drew yellow 9."


def test_a_turkish_line_begins_with_a_capital_and_a_name_stays_as_written() -> None:
    """Turkish puts the tile first: the line still begins with a capital (a dotted İ for
    i), while a line that begins with a player's name keeps the name as its owner wrote it."""
    with translation.override("tr"):
        added = {"type": "add", "seat": 0, "tile": "Y4"}
        assert messages.event_text(added, NAMES, 0) == "Sarı 4 taşını bir pere işledin."
        assert messages.event_text({"type": "discard", "seat": 1, "tile": "K4"}, NAMES, 0) == (
            "mehmet siyah 4 taşını attı."
        )
    assert messages.sentence("istanbul", "tr") == "İstanbul"
    assert messages.sentence("istanbul", "en") == "Istanbul"


def test_a_laying_says_what_was_laid() -> None:
    lay = {
        "type": "lay",
        "seat": 2,
        "melds": [{"tiles": ["R5", "R6", "R7"]}, {"tiles": ["B1", "Y1", "K1"]}],
    }
    assert messages.event_text(lay, NAMES, None) == (
        "zeynep laid red 5, red 6, red 7; blue 1, yellow 1, black 1."
    )
    assert messages.event_text(lay, NAMES, 2) == (
        "You laid red 5, red 6, red 7; blue 1, yellow 1, black 1."
    )
    with translation.override("tr"):
        assert messages.event_text(lay, NAMES, 2).startswith("Kırmızı 5, kırmızı 6, kırmızı 7;")
