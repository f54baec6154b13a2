"""The Jinja2 side of the templates: what a socket renders for every viewer after every move
(the table's live fragments, games/frames.py, and their parts: a tile, the seats, discard spots
and melds; a lobby row) lives as Jinja2 templates under ``templates/jinja2/`` and is rendered
through Django's ``Jinja2`` backend (``settings.TEMPLATES``). Every other page is a Django
template.

Why two languages: the seats' loop drawn by Django's template language takes about 2.5 times
as long as the same markup in Jinja2 (docs/PERFORMANCE.md, "Markup"), and a table socket renders
it for each viewer on each move. The words in these partials are looked up in Python and passed
in (``makemessages`` reads Django templates and Python, not Jinja2's ``{% trans %}``), so the
catalogue stays complete; the partials hold the markup, the Python around them the words.

The environment escapes everything (``autoescape``) and refuses undefined names
(``StrictUndefined``: a misspelt key fails loudly instead of drawing nothing). The partials read
their dicts with subscripts (``seat['display']``), which Jinja2 tries first as an item lookup,
and get tiles already drawn (games/templatetags/tiles.py keeps each tile's HTML): a Python call
from a partial costs several microseconds, and a frame draws dozens of tiles.
"""

from __future__ import annotations

from typing import Any

from django.template import engines
from django.utils.safestring import SafeString, mark_safe
from jinja2 import Environment, StrictUndefined


def environment(**options: Any) -> Environment:
    """The environment Django's ``Jinja2`` backend builds (``OPTIONS["environment"]``)."""
    options["undefined"] = StrictUndefined
    options.setdefault("trim_blocks", True)
    options.setdefault("lstrip_blocks", True)
    return Environment(**options)


def render(name: str, **context: Any) -> SafeString:
    """The partial ``name`` (under ``templates/jinja2/``) rendered with ``context``, as safe
    HTML for a Django template (the partial escapes every value it is given)."""
    template = engines["jinja2"].env.get_template(name)  # type: ignore[attr-defined]
    return mark_safe(template.render(context))  # noqa: S308 - autoescaped by Jinja2
