"""The lobby: a table may start by itself once full (``Table.auto_start``), and lobby
sockets are counted for "players online" (``LobbyPresence``).

It follows ``0006_participant_layout`` (written at the same time), so the graph has one leaf.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_participant_layout"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="table",
            name="auto_start",
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name="LobbyPresence",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("channel_name", models.CharField(max_length=200, unique=True)),
                ("seen_at", models.DateTimeField(db_index=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
    ]
