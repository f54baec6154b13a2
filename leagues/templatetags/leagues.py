"""The leagues' part of pages other apps draw: ``{% player_ratings person %}`` on a profile."""

from __future__ import annotations

from typing import Any

from django import template

from leagues import ratings
from leagues.profile import rating_history

register = template.Library()


@register.inclusion_tag("leagues/_player_ratings.html")
def player_ratings(person: Any) -> dict[str, Any]:
    return {"ratings": rating_history(person), "min_finished": ratings.MIN_FINISHED}
