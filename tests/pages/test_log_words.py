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
            "kırmızı 12 taşını attın."
        )


def test_a_drawn_tile_is_named_only_to_its_drawer_until_the_replay_shows_all() -> None:
    drew = {"type": "draw", "seat": 1}  # as the others see it: no tile
    assert messages.event_text(drew, NAMES, 0) == "mehmet drew from the pile."
    own = {"type": "draw", "seat": 1, "tile": "Y9"}
    assert messages.event_text(own, NAMES, 1) == "You drew yellow 9."
    assert messages.event_text(own, NAMES, None, all_shown=True) == "mehmet drew yellow 9."
