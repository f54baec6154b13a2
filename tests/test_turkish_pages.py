"""Every page of a whole hand and a whole match, rendered in Turkish, has no English sentence
from the catalogue's sources left untranslated and no raw option key or value: the lobby, the
table (mid-hand, at the end of a hand and of the match), the replay, the deal check, the rules
pages, a profile and the leaderboard."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from games.models import Hand, Match
from leagues.ratings import rate_match
from tests.play import played_out, playing_table
from tests.test_translations import LOCALE, po_entries
from tests.users import SignedIn

pytestmark = pytest.mark.django_db

# Raw option keys and values a player should never read (they are words on the pages).
RAW = ["plus_minus", "wrap_13_1", "give_back_penalty", "start_score", "indicator_show"]


def english_sentences() -> list[str]:
    """The catalogue's English sources worth looking for: several words, translated to
    something else (a name like "Okey 51" reads the same in both languages)."""
    found = []
    for entry in po_entries(LOCALE / "tr" / "LC_MESSAGES" / "django.po"):
        source, translated = entry.get("msgid", ""), entry["msgstr"]
        if "%" in source or "{" in source or len(source.split()) < 3:
            continue  # placeholders: the rendered text differs; short words match by chance
        if translated and translated[0] and translated[0] != source:
            found.append(source)
    return found


def visible_text(page: str) -> str:
    """What a reader meets: the text and the labels (aria-label, title, placeholder, alt)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    labels = re.findall(r'(?:aria-label|title|placeholder|alt)="([^"]*)"', page)
    text = re.sub(r"<[^>]+>", " ", page)
    return html.unescape(" ".join([text, *labels]))


@pytest.mark.slow
def test_turkish_pages_of_a_whole_match_leave_no_english_and_no_raw_option(
    signed_in: SignedIn,
) -> None:
    table, users, match = played_out("okey51", {"hands": 3}, 7)
    rate_match(match)
    first = Hand.objects.filter(match=match).order_by("number").first()
    assert first is not None and Match.objects.get(pk=match.pk).status == "finished"
    live_table, live_users, _hand = playing_table("okey51", 3)
    player = signed_in(users[0], language="tr")
    urls = [
        # mid-hand
        (reverse("table", args=[live_table.pk]), signed_in(live_users[1], language="tr")),
        *[
            (url, player)
            for url in (
                reverse("home"),
                reverse("table", args=[table.pk]),  # the end of the match
                reverse("hand_replay", args=[first.pk]),
                reverse("hand_verify", args=[first.pk]),
                reverse("rules_index"),
                *[
                    reverse("rules", args=[v])
                    for v in ("classic", "duz", "okey51", "gobek17", "okey101")
                ],
                reverse("profile", args=[users[0].get_username()]),
                reverse("leaderboard", args=["okey51"]),
            )
        ],
        (reverse("home"), signed_in(language="tr")),  # a visitor
    ]
    sentences = english_sentences()
    # The check can fail: the same pages in English are full of these sentences.
    english = signed_in(users[0])
    for url in (reverse("table", args=[table.pk]), reverse("rules", args=["okey51"])):
        text = " ".join(visible_text(english.get(url).content.decode()).split())
        assert len([s for s in sentences if s in text]) >= 3, url
    for url, client in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        text = " ".join(visible_text(response.content.decode()).split())
        left = [s for s in sentences if s in text]
        assert not left, f"{url}: English left: {left[:5]}"
        raw = [r for r in RAW if r in text]
        assert not raw, f"{url}: raw option words: {raw}"
