"""Pages and frames read as a browser would, for the tests. Not a test module.

- HTML parsed into elements found by the markup's ids, classes and ``data-*`` attributes
  (:func:`parse`), and the values a form posts as it stands (:func:`form_values`; an admin
  form's hidden inputs: :func:`form_fields`).
- Hidden information, counted in tiles: every physical tile is in exactly one place, so the
  tiles a viewer may see are the public ones and their own rack (:func:`allowed`); a page that
  draws more (:func:`shown`) has leaked a rack or the pile (:func:`assert_hidden`).
- The chat panel of a table page and the lines it holds.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

from django.urls import reverse

from games import engine
from games.models import Hand
from tests.users import client_for

# ----------------------------------------------------------------------------- reading HTML
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


class Node:
    """An element of a parsed page: its tag, attributes (a bare attribute is ""), children."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Node | str] = []

    def __repr__(self) -> str:
        return f"<{self.tag} {self.attrs}>"

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split())

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def all(self, tag: str | None = None, **attrs: str | bool) -> list[Node]:
        """Elements below (and including) this one; ``data_seat="2"`` matches
        ``data-seat="2"``, ``class_="seat"`` a class token, ``True`` any value."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag) and all(_has(n, k, v) for k, v in wanted.items())
        ]

    def one(self, tag: str | None = None, **attrs: str | bool) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"{len(found)} elements {tag} {attrs}: {found}"
        return found[0]


def _has(node: Node, key: str, value: str | bool) -> bool:
    if key not in node.attrs:
        return False
    if value is True:
        return True
    if key == "class":
        return str(value) in node.attrs[key].split()
    return node.attrs[key] == value


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str | bytes) -> Node:
    builder = _Builder()
    builder.feed(html.decode() if isinstance(html, bytes) else html)
    builder.close()
    return builder.root


def form_values(form: Node) -> dict[str, str]:
    """What a browser posts for ``form`` as it stands (ticked boxes, selected options)."""
    data: dict[str, str] = {}
    for node in form.iter():
        name = node.attrs.get("name")
        if not name or node.tag not in ("input", "select"):
            continue
        if node.tag == "select":
            options = node.all("option")
            chosen = [o for o in options if "selected" in o.attrs] or options[:1]
            if chosen:
                data[name] = chosen[0].attrs.get("value", chosen[0].text())
            continue
        kind = node.attrs.get("type", "text")
        if kind == "checkbox":
            if "checked" in node.attrs:
                data[name] = node.attrs.get("value") or "on"
        elif kind not in ("submit", "button"):
            data[name] = node.attrs.get("value", "")
    return data


def form_fields(page: str) -> dict[str, str]:
    """The hidden inputs of an admin form (the inline formsets' management data)."""
    fields = {}
    for tag in re.findall(r"<input[^>]*>", page):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            fields[name.group(1)] = html.unescape(value.group(1)) if value else ""
    return fields


# ----------------------------------------------------------------------------- tiles shown
TILE = re.compile(r"(?<![A-Za-z0-9])[RYBK](?:1[0-3]|[1-9])(?![0-9])")


def codes(text: str) -> Counter[str]:
    return Counter(TILE.findall(text))


def shown(page: str) -> Counter[str]:
    """The tiles a page draws (each tile element carries ``data-tile``), plus any tile code
    written in its visible text outside the event log (whose sentences may name a tile again,
    and are checked on their own)."""
    drawn = codes(" ".join(re.findall(r'data-tile="([^"]*)"', page)))
    page = re.sub(r'<ol class="event-log".*?</ol>', " ", page, flags=re.S)
    text = codes(re.sub(r"<[^>]+>", " ", page))
    return drawn | text


def allowed(public: dict[str, Any], rack: list[str] | None = None) -> Counter[str]:
    pieces = [public["indicator"], public["okey"]]
    pieces += [t for pile in public["discards"] for t in pile]
    pieces += [t for meld in public["table"] for t in meld["tiles"]]
    pieces += rack or []
    return codes(" ".join(pieces))


def assert_hidden(page: str, hand: Hand, may_see: Counter[str]) -> None:
    eng = hand.engine_hand()
    assert not eng.over
    assert hand.seed not in page
    extra = shown(page) - may_see
    assert not extra, f"tiles shown beyond what this viewer may see: {dict(extra)}"
    # The event log names a drawn tile to the seat that drew it only.
    for line in re.findall(r"<li>([^<]*)</li>", page):
        if "drew" in line:
            assert "from the pile" in line or line.startswith("You drew"), line
    # A leak would show: the other racks and the pile hold far more than the allowance slack.
    hidden = Counter(engine.format_tile(t) for r in eng.racks for t in r)
    hidden += Counter(engine.format_tile(t) for t in eng.pile)
    assert sum(hidden.values()) > 40


# ----------------------------------------------------------------------------- the chat panel
def texts(html_text: str) -> list[str]:
    """The chat lines' texts in a page or frame, unescaped, in order."""
    return [html.unescape(t) for t in re.findall(r'class="chat-text">(.*?)</span>', html_text)]


def page_of(table_id: int, user: Any = None, query: str = "") -> str:
    client = client_for(user)
    url = reverse("table", args=[table_id]) + (f"?{query}" if query else "")
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def chat_panel(page: str) -> str:
    return page.split('id="chat"')[1].split("</aside>")[0]
