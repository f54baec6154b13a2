"""The rules pages: /rules/ and /rules/<variant>/ with each variant's rules, options and
decisions (RULES.md and docs/rules.md)."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from games.engine.variants import OPTIONS, VARIANTS

# A Decision of RULES.md (or of docs/rules.md) for each variant, as the page words it.
DECISIONS = {
    "classic": [
        "Throwing the okey doubles the finish it ends: normal 2 → 4, pairs 4 → 8, colour 8 → 16.",
        "Equal highest scores share the win.",
        "being one colour alone is not a finish",
    ],
    "duz": [
        "A dry wall: nobody scores, and the game has no winner.",
        "A wild okey left over counts the okey’s own number, a fake okey the number it plays as.",
    ],
    "okey51": [
        "Feeding or swapping on your own meld costs nothing (as between partners).",
        "The discarder is punished whether or not they have opened.",
        "A pairs finish and an okey finish do not stack",
    ],
    "gobek17": [
        "There is no okey swap in this variant.",
        "A thrown wild okey that is also workable costs 500 once.",
        "Openings raise against everyone’s openings this hand, partners included.",
    ],
    "okey101": [
        "Nobody declares “going for pairs”",
        "A swap costs the meld’s owner nothing.",
        "The player who threw a tile is never charged when it is taken or used.",
    ],
}
EVERY_VARIANT = [
    "A wild okey may stand for any tile, even one whose two copies are both in sight.",
    "The starter’s first turn has no draw",
    "A dry wall keeps every penalty already scored during the hand.",
    "A high 1 counts 1",
]


def page(variant: str) -> str:
    response = Client().get(reverse("rules", args=[variant]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    return html.unescape(response.content.decode())


def option_row(text: str, key: str) -> str:
    match = re.search(rf'<tr data-option="{key}">(.*?)</tr>', text, re.S)
    assert match, key
    return match.group(1)


def test_the_url_is_rules_slash_variant() -> None:
    assert reverse("rules", args=["okey51"]) == "/rules/okey51/"
    assert reverse("rules_index") == "/rules/"


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_page_states_its_decisions(variant: str) -> None:
    text = page(variant)
    for sentence in DECISIONS[variant] + EVERY_VARIANT:
        assert sentence in text, sentence
    # Only this variant's own decisions.
    for other in VARIANTS:
        if other != variant:
            for sentence in DECISIONS[other]:
                assert sentence not in text, (other, sentence)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_page_lists_its_options_with_defaults(variant: str) -> None:
    text = page(variant)
    rows = re.findall(r'<tr data-option="([a-z_0-9]+)">', text)
    assert rows == list(OPTIONS[variant])
    for key in OPTIONS[variant]:
        # A player reads the option's name, not its key ("Scoring", not "scoring").
        assert f"<code>{key}</code>" not in option_row(text, key)


def test_option_values_and_defaults_come_from_the_engine() -> None:
    classic = page("classic")
    cells = re.findall(r"<td>(.*?)</td>", option_row(classic, "start_score"))
    assert cells == ["1–1000", "20"]
    assert re.findall(r"<td>(.*?)</td>", option_row(classic, "scoring")) == [
        "countdown, plus/minus",
        "countdown",
    ]
    assert re.findall(r"<td>(.*?)</td>", option_row(classic, "timer")) == [
        "off, 15 s, 30 s, 60 s",
        "30 s",
    ]
    gobek = page("gobek17")
    assert re.findall(r"<td>(.*?)</td>", option_row(gobek, "wrap_13_1")) == ["off, on", "off"]
    assert re.findall(r"<td>(.*?)</td>", option_row(gobek, "give_back_penalty")) == ["0, 500", "0"]
    okey51 = page("okey51")
    assert re.findall(r"<td>(.*?)</td>", option_row(okey51, "hands")) == ["1, 3", "1"]
    assert re.findall(r"<td>(.*?)</td>", option_row(okey51, "doubling")) == ["off, on", "on"]


def test_pairs_are_explained_only_where_they_are_played() -> None:
    assert "A <strong>pair</strong> is two identical tiles" not in page("duz")
    assert "A <strong>pair</strong> is two identical tiles" in page("classic")


def test_the_rules_pages_draw_example_tiles() -> None:
    text = page("classic")
    assert 'data-tile="F"' in text
    assert re.search(r'class="tile tile-R tile-wild"[^>]*data-tile="R6"', text)


def test_an_unknown_variant_is_not_found() -> None:
    client = Client()
    assert client.get("/rules/poker/").status_code == 404
    assert client.get("/rules/Classic/").status_code == 404
    assert client.get("/rules/classic/extra/").status_code == 404


def test_the_index_links_the_four_variants() -> None:
    response = Client().get(reverse("rules_index"))
    assert response.status_code == 200
    text = html.unescape(response.content.decode())
    for variant in VARIANTS:
        assert f'href="/rules/{variant}/"' in text
    for name in ("Classic Okey", "Düz Okey", "Okey 51", "Göbek 17"):
        assert name in text


def test_option_values_are_words_in_the_readers_language() -> None:
    client = Client()
    client.cookies["django_language"] = "tr"
    turkish = html.unescape(client.get(reverse("rules", args=["classic"])).content.decode())
    assert re.findall(r"<td>(.*?)</td>", option_row(turkish, "scoring")) == [
        "geri sayım, artı/eksi",
        "geri sayım",
    ]
    assert "plus_minus" not in turkish and "countdown" not in turkish
