"""The site speaks Turkish: the catalogues under locale/ are complete (no untranslated or fuzzy
entry), and the table page and the scripts' catalogue (/jsi18n/) come out in Turkish.

The compiled .mo files are build output (the Makefile makes them with msgfmt); the page tests
compile the committed .po files themselves into a temporary LOCALE_PATHS when msgfmt is
installed, so they never read a stale catalogue.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from games import actions, engine
from tests.play import refused_opening, seed_of, user_table
from tests.users import SignedIn

if TYPE_CHECKING:
    from tests.sockets import Players, TableSockets

TURKISH_COLOURS = {"R": "kırmızı", "Y": "sarı", "B": "mavi", "K": "siyah"}
ENGLISH_COLOURS = {"R": "red", "Y": "yellow", "B": "blue", "K": "black"}


def in_turkish(code: str) -> str:
    """A plain tile ("R12") as the Turkish log names it ("kırmızı 12")."""
    return f"{TURKISH_COLOURS[code[0]]} {code[1:]}"


def in_english(code: str) -> str:
    return f"{ENGLISH_COLOURS[code[0]]} {code[1:]}"


ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale"
CATALOGUES = sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))
TABLE_JS = ROOT / "static" / "js" / "table.js"


# ------------------------------------------------------------------------------- .po files
def _unquote(line: str) -> str:
    text = line.strip()
    assert text.startswith('"') and text.endswith('"'), line
    return json.loads(text)  # a PO string is a C string; JSON reads the escapes it uses


def po_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a .po file (gettext's tools separate them by blank lines): ``msgctxt``,
    ``msgid``, ``msgid_plural``, ``msgstr`` (a list, one string per plural form), ``flags``
    and ``line``. Obsolete entries (``#~``) are left out."""
    entries: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    block: list[tuple[int, str]] = []
    for number, line in [*enumerate(lines, 1), (len(lines) + 1, "")]:
        if line.strip():
            if not line.startswith("#~"):
                block.append((number, line))
            continue
        entry: dict[str, Any] = {"flags": set(), "msgstr": []}
        field = ""
        for n, text in block:
            entry.setdefault("line", n)
            if text.startswith("#,"):
                entry["flags"] |= {f.strip() for f in text[2:].split(",")}
            elif text.startswith("#"):
                continue
            elif text.startswith('"'):
                assert field, f"{path}:{n}: a string outside a field"
                if field.startswith("msgstr"):
                    entry["msgstr"][-1] += _unquote(text)
                else:
                    entry[field] += _unquote(text)
            else:
                field, _, rest = text.partition(" ")
                if field.startswith("msgstr"):
                    entry["msgstr"].append(_unquote(rest))
                else:
                    assert field in ("msgctxt", "msgid", "msgid_plural"), f"{path}:{n}: {text}"
                    entry[field] = _unquote(rest)
        if "msgid" in entry:
            entries.append(entry)
        block = []
    return entries


PLACEHOLDER = re.compile(r"%\(\w+\)[-+ #0]*\d*(?:\.\d+)?[sdif]|%[sd]|\{\{\s*\w+\s*\}\}")


def test_there_are_turkish_catalogues_for_the_pages_and_the_scripts() -> None:
    names = {p.relative_to(LOCALE).as_posix() for p in CATALOGUES}
    assert {"tr/LC_MESSAGES/django.po", "tr/LC_MESSAGES/djangojs.po"} <= names


@pytest.mark.parametrize("po", CATALOGUES, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_every_entry_is_translated_and_none_is_fuzzy(po: Path) -> None:
    entries = po_entries(po)
    header = [e for e in entries if e["msgid"] == "" and "msgctxt" not in e]
    assert header and "fuzzy" not in header[0]["flags"], f"{po}: the header is fuzzy"
    problems = []
    for e in entries:
        if e is header[0]:
            continue
        where = f"{po.relative_to(ROOT)}:{e['line']}: {e['msgid'][:60]!r}"
        if "fuzzy" in e["flags"]:
            problems.append(f"{where} is fuzzy")
        elif not e["msgstr"] or any(s == "" for s in e["msgstr"]):
            problems.append(f"{where} is not translated")
        elif sorted(PLACEHOLDER.findall(e["msgid"])) != sorted(PLACEHOLDER.findall(e["msgstr"][0])):
            problems.append(f"{where} does not keep its placeholders")
    assert not problems, "\n".join(problems)


# The formal "siz" forms: second-person plural endings ("ayrılıyor musunuz", "uzaktasınız"),
# possessives ("sıranızı", "adresinizden") and imperatives ("deneyin", "bekleyin").
FORMAL = re.compile(
    r"\b\w*(?:sınız|siniz|sunuz|sünüz|ınız|iniz|unuz|ünüz)\w*\b"
    r"|\b\w*[aeıioöuü]n[ıiuü]z[ıiuüaed]\w*\b"
    r"|\b(?:deneyin|bekleyin|tıklayın|oynayın|ekleyin|başlayın|saklayın|izleyin|girin|seçin"
    r"|yapın|kapatın|bitirin|ayrılın|edin|alın|atın|verin|bakın|yazın|oturun|kalkın)\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("po", sorted(LOCALE.glob("tr/LC_MESSAGES/*.po")), ids=lambda p: p.name)
def test_the_turkish_site_says_sen_to_the_player_throughout(po: Path) -> None:
    """The site speaks to a player as "sen" (as players do at a table), never as "siz"."""
    formal = [
        f"{po.name}:{e['line']}: {word!r} in {text[:70]!r}"
        for e in po_entries(po)
        for text in e["msgstr"]
        for word in FORMAL.findall(text)
    ]
    assert not formal, "\n".join(formal)


@pytest.mark.parametrize("po", CATALOGUES, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_msgfmt_finds_nothing_untranslated_or_fuzzy(po: Path) -> None:
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        pytest.skip("msgfmt (GNU gettext) is not installed; the parse above still checks")
    run = subprocess.run(
        [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(po)],
        capture_output=True,
        text=True,
        check=False,
        env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "untranslated" not in run.stderr and "fuzzy" not in run.stderr, run.stderr


def test_every_string_of_the_table_script_is_in_its_catalogue() -> None:
    """makemessages -d djangojs has been run since the last gettext("...") was added."""
    literals = set(re.findall(r'gettext\("((?:[^"\\]|\\.)+)"\)', TABLE_JS.read_text()))
    assert literals, "table.js marks no strings?"
    msgids = {e["msgid"] for e in po_entries(LOCALE / "tr" / "LC_MESSAGES" / "djangojs.po")}
    missing = {json.loads(f'"{s}"') for s in literals} - msgids
    assert not missing, f"run makemessages -d djangojs: {sorted(missing)}"


# Where the site's strings are: what `make messages` reads (its MESSAGES_IGNORE leaves out the
# rest of the checkout).
SOURCES = [
    "manage.py",
    "okeysite",
    "games",
    "accounts",
    "leagues",
    "tournaments",
    "templates",
    "static/js",
]


def _fresh_catalogues(tmp_path: Path) -> Path:
    """makemessages run now, on a copy of the sources with the committed catalogues: every
    string of the templates, the Python code and the scripts, merged into them."""
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, tmp_path / name)
    shutil.copytree(LOCALE, tmp_path / "locale")
    env = {"PATH": "/usr/bin:/bin", "SECRET_KEY": "x", "LC_ALL": "C.UTF-8"}
    for domain in ("django", "djangojs"):
        subprocess.run(
            [
                sys.executable,
                "manage.py",
                "makemessages",
                "-l",
                "tr",
                "-d",
                domain,
                "--no-obsolete",
            ],
            cwd=tmp_path,
            env=env,
            check=True,
            capture_output=True,
        )
    return tmp_path / "locale"


@pytest.mark.slow
def test_every_string_of_the_site_is_in_the_turkish_catalogue(tmp_path: Path) -> None:
    """A string added to a template, a Python module or a script without `make messages` and
    a translation fails here, named with where it is used."""
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        pytest.skip("GNU gettext (xgettext, msgmerge) is not installed")
    fresh = _fresh_catalogues(tmp_path)
    missing = []
    for po in sorted(fresh.glob("tr/LC_MESSAGES/*.po")):
        committed = {e["msgid"] for e in po_entries(LOCALE / po.relative_to(fresh))}
        for e in po_entries(po):
            if not e["msgid"]:
                continue  # the header
            if e["msgid"] not in committed or "fuzzy" in e["flags"] or not all(e["msgstr"]):
                missing.append(f"{po.name}: {e['msgid']!r}")
    assert not missing, "run `make messages` and translate:\n" + "\n".join(missing)


# ------------------------------------------------------------------------------- pages
@pytest.fixture
def compiled(settings: Any, tmp_path: Path) -> None:
    """The committed catalogues, compiled now into a temporary LOCALE_PATHS (Django drops its
    translation caches when LOCALE_PATHS changes). Without msgfmt the compiled files in
    locale/ are used, and the test skips when there are none."""
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        if not all(po.with_suffix(".mo").exists() for po in CATALOGUES):
            pytest.skip("msgfmt is missing and the catalogues are not compiled")
        return
    for po in CATALOGUES:
        mo = tmp_path / po.relative_to(LOCALE).with_suffix(".mo")
        mo.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([msgfmt, "--check", "-o", str(mo), str(po)], check=True)
    settings.LOCALE_PATHS = [tmp_path]


@pytest.mark.django_db
def test_the_table_page_speaks_turkish(compiled: None, signed_in: SignedIn) -> None:
    table, users = user_table("okey51")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(71)).hands.get()
    starter = hand.starter
    tile = engine.format_tile(hand.engine_hand().racks[starter][0])
    actions.play(hand, starter, {"do": "discard", "tile": tile}, by=users[starter])
    player = users[(starter + 1) % 4]  # on turn now: the move buttons are live

    page = signed_in(player, language="tr").get(reverse("table", args=[table.pk])).content.decode()

    assert '<html lang="tr">' in page
    for turkish in (
        "Kurallar",  # the rules link
        "Gösterge",  # the indicator
        "Deste",  # the pile
        "Desteden çek",
        "Atılan taşı al",
        "Seçili taşı at",
        "Seçili taşlarla el aç",
        "Serilere göre diz",
        "hamle başına 30 sn",
        f"{in_turkish(tile)} taşını attı.",  # the event log, tiles in words (games/messages.py)
    ):
        assert turkish in page, turkish
    for english in ("Take the discard", "Discard the selected tile", "Sort by runs", "Indicator"):
        assert english not in page, english
    # Tile labels are in words, in Turkish.
    assert re.search(r'aria-label="(kırmızı|sarı|mavi|siyah) \d+"', page)

    english = Client().get(reverse("table", args=[table.pk])).content.decode()
    assert "Take the discard" in english or "Draw from the pile" in english


@pytest.mark.django_db
def test_the_scripts_catalogue_is_loaded_before_the_table_script(
    compiled: None, signed_in: SignedIn
) -> None:
    table, _users = user_table("duz")
    page = signed_in(language="tr").get(reverse("table", args=[table.pk])).content.decode()
    catalogue = f'src="{reverse("javascript-catalog")}"'
    assert catalogue in page
    assert page.index(catalogue) < page.index("js/table.js")


@pytest.mark.django_db
def test_the_scripts_catalogue_speaks_turkish(compiled: None, signed_in: SignedIn) -> None:
    url = reverse("javascript-catalog")
    assert url == "/jsi18n/"
    response = signed_in(language="tr").get(url)
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]
    body = response.content.decode()
    # The catalogue is JSON inside the script (non-ASCII letters as \\u escapes).
    assert json.dumps("Select one tile first.") + ": " + json.dumps("Önce bir taş seç.") in body
    assert '"%s s": "%s sn"' in body
    # Only the site's own strings: not the admin's.
    assert "January" not in body

    english = Client(headers={"accept-language": "en"}).get(url).content.decode()
    assert "Önce bir taş seç." not in english and json.dumps("Önce bir taş seç.") not in english


# ------------------------------------------------------------------------------- sockets
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.players("duz", seed=72)
async def test_a_turkish_and_an_english_player_each_get_frames_in_their_language(
    compiled: None, players: Players, table_socket: TableSockets
) -> None:
    """One table, one move: the same broadcast renders in Turkish for the player whose
    browser asked for Turkish and in English for the other, and a refusal comes back in its
    asker's language."""
    from channels.db import database_sync_to_async

    from tests.sockets import drain

    table_id, users, cookies, hand = players.table_id, players.users, players.cookies, players.hand
    starter = hand.starter
    turkish_seat, english_seat = (starter + 2) % 4, (starter + 3) % 4  # neither on turn next
    language = settings.LANGUAGE_COOKIE_NAME
    turkish = await table_socket(table_id, f"{cookies[turkish_seat]}; {language}=tr")
    await drain(turkish)
    english = await table_socket(table_id, f"{cookies[english_seat]}; {language}=en")
    await drain(english)

    def move() -> str:
        tile = engine.format_tile(hand.engine_hand().racks[starter][0])
        actions.play(hand, starter, {"do": "discard", "tile": tile}, by=users[starter])
        return tile

    tile = await database_sync_to_async(move)()
    tr_frame = [f for f in await drain(turkish) if 'id="table-live"' in f][-1]
    en_frame = [f for f in await drain(english) if 'id="table-live"' in f][-1]
    assert f"{in_turkish(tile)} taşını attı." in tr_frame and "Gösterge" in tr_frame
    assert "Indicator" not in tr_frame and "threw" not in tr_frame
    assert f"threw {in_english(tile)}." in en_frame and "Indicator" in en_frame
    assert "Gösterge" not in en_frame

    # Out of turn: each is told why in their own language.
    for ws in (turkish, english):
        await ws.send_json_to({"type": "move", "hand": hand.pk, "move": {"do": "draw"}})
    tr_error = [f for f in await drain(turkish) if 'id="move-error"' in f][-1]
    en_error = [f for f in await drain(english) if 'id="move-error"' in f][-1]
    assert "It is not your turn." in en_error
    assert "Sıra sende değil." in tr_error and "your turn" not in tr_error


@pytest.mark.django_db
def test_a_refused_opening_names_its_group_and_why_in_turkish(
    compiled: None, signed_in: SignedIn
) -> None:
    answer = refused_opening(signed_in, "tr")
    assert "Kırmızı 5, kırmızı 6, kırmızı 8 bir seri ya da grup değil: " in answer
