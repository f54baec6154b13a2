from django.db import migrations, models


def forget_english_default_names(apps, schema_editor):
    """Tables that were given their variant's English default name ("Düz Okey table") are
    unnamed now: each reader sees the default in their own language."""
    Table = apps.get_model("games", "Table")
    for table in Table.objects.select_related("variant").only("name", "variant__name"):
        if table.name == f"{table.variant.name} table":
            Table.objects.filter(pk=table.pk).update(name="")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0014_table_created_from"),
    ]

    operations = [
        migrations.AlterField(
            model_name="table",
            name="name",
            field=models.CharField(blank=True, max_length=80),
        ),
        migrations.RunPython(forget_english_default_names, migrations.RunPython.noop),
    ]
