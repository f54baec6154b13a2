"""101 Okey, the fifth variant: its key among the choices, and its row (games.catalog)."""

from django.db import migrations, models


def create(apps, schema_editor):
    from games.catalog import ensure_variants

    ensure_variants(apps.get_model("games", "Variant"))


def remove(apps, schema_editor):
    apps.get_model("games", "Variant").objects.filter(key="okey101").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0015_unnamed_tables"),
    ]

    operations = [
        migrations.AlterField(
            model_name="variant",
            name="key",
            field=models.CharField(
                choices=[
                    ("classic", "classic"),
                    ("duz", "duz"),
                    ("okey51", "okey51"),
                    ("gobek17", "gobek17"),
                    ("okey101", "okey101"),
                ],
                max_length=16,
                unique=True,
            ),
        ),
        migrations.RunPython(create, remove),
    ]
