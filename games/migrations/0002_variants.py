"""Create the four variants with their default table options (RULES.md)."""

from django.db import migrations


def create(apps, schema_editor):
    from games.catalog import ensure_variants

    ensure_variants(apps.get_model("games", "Variant"))


def remove(apps, schema_editor):
    from games.catalog import VARIANTS

    apps.get_model("games", "Variant").objects.filter(key__in=[v[0] for v in VARIANTS]).delete()


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [migrations.RunPython(create, remove)]
