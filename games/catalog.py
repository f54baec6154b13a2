"""The five variants as the site first offers them (the admin may edit them afterwards).

The names and descriptions are stored in English; pages show them in the viewer's language
through ``games.messages.variant_name``/``variant_description`` (the names are translated
with the context "variant name", as in ``games.pages.rules.NAMES``; the descriptions are
marked here for makemessages). A text the admin has changed is shown as it is."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from games.engine import default_options

VARIANTS: list[tuple[str, str, str]] = [
    (
        "classic",
        "Classic Okey",
        gettext_noop(
            "Closed hand: arrange 14 tiles into runs and sets (or seven pairs) and throw the "
            "15th. Everyone starts at 20; finishes cost the others 2, 4 or 8, doubled by "
            "throwing the okey."
        ),
    ),
    (
        "duz",
        "Düz Okey",
        gettext_noop(
            "Closed hand, no pairs or colour finishes: the others score the face value left "
            "outside their best grouping. Lowest wins."
        ),
    ),
    (
        "okey51",
        "Okey 51",
        gettext_noop(
            "Open table: open with melds totalling 51 (doubling raises the bar) or five pairs, "
            "feed tiles onto any meld, steal the okey. Penalty points; lowest total wins."
        ),
    ),
    (
        "gobek17",
        "Göbek 17",
        gettext_noop(
            "A fast 101 with 14 tiles: openings of 51 that always raise, four pairs that raise "
            "too, 500-point penalties and doubling finishes."
        ),
    ),
    (
        "okey101",
        "101 Okey",
        gettext_noop(
            "Turkey's favourite: 21 tiles, open with melds worth 101 or five pairs, add to any "
            "meld, swap okeys. Every mistake costs 101; lowest total wins."
        ),
    ),
]


def ensure_variants(model: Any = None) -> None:
    """Create any of the five variants that is missing; existing rows are left as they are."""
    if model is None:
        from games.models import Variant as model
    for key, name, description in VARIANTS:
        model.objects.get_or_create(
            key=key,
            defaults={
                "name": name,
                "description": description,
                "default_options": default_options(key),
            },
        )
