"""Create the four variants with their default table options (RULES.md)."""

from django.db import migrations

VARIANTS = [
    (
        "classic",
        "Classic Okey",
        "Closed hand: arrange 14 tiles into runs and sets (or seven pairs) and throw the 15th. "
        "Everyone starts at 20; finishes cost the others 2, 4 or 8, doubled by throwing the okey.",
    ),
    (
        "duz",
        "Düz Okey",
        "Closed hand, no pairs or colour finishes: the others score the face value left outside "
        "their best grouping. Lowest wins.",
    ),
    (
        "okey51",
        "Okey 51",
        "Open table: open with melds totalling 51 (doubling raises the bar) or five pairs, feed "
        "tiles onto any meld, steal the okey. Penalty points; lowest total wins.",
    ),
    (
        "gobek17",
        "Göbek 17",
        "A fast 101 with 14 tiles: openings of 51 that always raise, four pairs that raise too, "
        "500-point penalties and doubling finishes.",
    ),
]


def create(apps, schema_editor):
    from games.engine import default_options

    Variant = apps.get_model("games", "Variant")
    for key, name, description in VARIANTS:
        Variant.objects.update_or_create(
            key=key,
            defaults={
                "name": name,
                "description": description,
                "default_options": default_options(key),
            },
        )


def remove(apps, schema_editor):
    apps.get_model("games", "Variant").objects.filter(key__in=[v[0] for v in VARIANTS]).delete()


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [migrations.RunPython(create, remove)]
