"""The name policy: what a username, a display name and a table name may be.

- **Cleaning** (every name, and chat text: ``games.chat`` uses ``clean``): line breaks and tabs
  become spaces; control, format (direction marks, overrides and isolates, zero-width
  characters) and other invisible characters are dropped; the rest is NFC-normalised and
  stripped. A name's runs of spaces become one (``clean_name``). Stored names are cleaned again
  when shown (``shown``), for rows written before the policy or behind the forms.
- **Usernames** hold ASCII letters, digits and @.+-_ only (``USERNAME_VALIDATOR``).
- **Usernames and display names** are refused (``check_username``, ``check_display_name``)
  when reserved (``RESERVED_WORDS``, ``RESERVED_NAMES``, the guest prefix), when a display
  name mixes scripts with letters that look like another script's (the Unicode confusables
  data, through ``confusable-homoglyphs``), and when the name is, or looks like, another
  player's username or display name: one of its keys is theirs. So a name in one script only
  (a player's usual script or any other) is refused exactly when it copies an existing name:
  "МЕМО" in Cyrillic capitals is "Memo"'s copy; "Иван" copies nobody and is welcome.
- **Keys are stored**, one row per key and player (``accounts.models.NameKey``, unique), kept
  in step with the names whenever one is saved (``store_keys``, from ``accounts.signals``).
  The check is then one indexed lookup (``looks_taken``), and of two look-alike names saved
  at the same moment the unique key lets one in: the forms ``claim`` the name after saving it
  and undo the save when another holds a key. Look-alike names from before the rule are
  kept; the key stays the oldest account's.
- **Look-alikes** are found by a name's ``keys``: each character that is not Latin becomes the
  first Latin look-alike the confusables data lists for it (Cyrillic "а" becomes "a", a digit
  zero "O"), a Latin letter beyond ASCII the ASCII letter it imitates ("ɑ", a small capital
  "ᴀ"), compatibility forms are folded (NFKC: full-width letters) and the result is
  lowercased. The Turkish ç, ğ, ı, İ, ö, ş, ü are letters of their own, so "Ayşe" is not a
  look-alike of "ayse"; but a reserved word is found with them as ASCII ("Admın"), and with a
  word's trailing digits left out ("Bot3 (strong)").
- **Visible**: a display name needs a letter or a digit (a blank braille pattern, or combining
  marks alone, show nothing one could read).
- **Table names** are cleaned only (``games.actions.tables``).
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from typing import Any

from confusable_homoglyphs import categories, confusables
from django.apps import apps
from django.contrib.auth.validators import ASCIIUsernameValidator
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# Names made for guests start with this; nobody else may take one.
GUEST_PREFIX = "guest-"

# Refused when one of a name's words is one of these (compared by keys, so look-alikes too):
# they would pass a player off as the site's staff or the site itself, in English and Turkish
# (with and without the Turkish letters, as usernames have none); "bot" because the tables
# show bots as "Bot (level)".
RESERVED_WORDS = frozenset(
    {
        "admin",
        "administrator",
        "root",
        "superuser",
        "sysop",
        "staff",
        "moderator",
        "mod",
        "support",
        "system",
        "official",
        "bot",
        "yönetici",
        "yonetici",
        "moderatör",
        "destek",
        "sistem",
        "yetkili",
        "görevli",
        "gorevli",
        "resmi",
    }
)
# Refused as the whole name only (spaces and punctuation left out): the site's name, which
# players may well use within theirs ("Okey Sevdalısı").
RESERVED_NAMES = frozenset({"okey"})

USERNAME_VALIDATOR = ASCIIUsernameValidator()
USERNAME_HELP = _(
    "Required. 150 characters or fewer: letters a–z without accents, digits and @/./+/-/_ "
    "only. The display name on your profile may use any letters."
)

NOTHING_VISIBLE = _("The name needs at least one visible character.")
RESERVED = _("This name is reserved: choose another.")
GUEST_NAME = _("Names starting with “%(prefix)s” are kept for guests: choose another.")
MIXED_SCRIPTS = _(
    "This name mixes alphabets with letters that look alike: write it in one alphabet."
)
LOOKS_TAKEN = _("This name is, or looks too like, another player's name: choose another.")

# Turned into a space: line and paragraph breaks, tabs.
_SPACES = frozenset("\t\n\r\v\f\x85\u2028\u2029")
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which Python's
# unicodedata lacks: characters that show nothing, or only change how their neighbours show
# (soft hyphen, fillers, zero-width characters, direction marks, variation selectors, tags).
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_IGNORABLE = frozenset(chr(c) for low, high in _IGNORABLE_RANGES for c in range(low, high + 1))
# Control, format and lone surrogate characters (a socket's JSON may carry the last).
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})

_WORD = re.compile(r"[^\W_]+")


# ----------------------------------------------------------------------------- cleaning
def clean(text: str) -> str:
    """``text`` as it is stored: line breaks and tabs as spaces, invisible characters (control,
    format, default-ignorable) dropped, NFC-normalised, stripped. Runs of spaces are kept."""
    if text.isascii() and text.isprintable():  # nothing to drop (most text)
        return text.strip()
    kept = []
    for ch in text:
        if ch in _SPACES:
            kept.append(" ")
        elif ch not in _IGNORABLE and unicodedata.category(ch) not in _DROPPED_CATEGORIES:
            kept.append(ch)
    # After the drop, so that a letter and its accent split by an invisible one compose.
    return unicodedata.normalize("NFC", "".join(kept)).strip()


def clean_name(text: str) -> str:
    """A name as it is stored: ``clean``, with each run of spaces made one ("" when nothing
    visible is left)."""
    return " ".join(clean(text).split())


def shown(name: str) -> str:
    """A stored name as it is shown: cleaned again (a row may predate the policy)."""
    return clean_name(name) if name else ""


# ----------------------------------------------------------------------------- look-alikes
# The Turkish letters, which are letters of their own in a name ("Ayşe" is not "ayse"), and
# the ASCII letters they become where a word is compared with the reserved ones ("Admın" is
# "admin").
TURKISH = "çğıöşüÇĞİÖŞÜ"
_TURKISH_TO_ASCII = str.maketrans("çğıöşüÇĞİÖŞÜ", "cgiosuCGIOSU")
_SMALL_CAPITAL = re.compile(r"LATIN LETTER SMALL CAPITAL ([A-Z])$")


@functools.lru_cache(maxsize=4096)
def _latin(ch: str) -> str:
    """The first Latin look-alike the confusables data lists for ``ch``. A Latin character
    beyond ASCII that is not a Turkish letter becomes the ASCII letter it imitates (the
    data's look-alike, "ɑ" as "a"; a small capital, "ᴀ" as "a"); a Turkish letter, or a
    character with no look-alike, stays."""
    if ch in TURKISH:
        return ch
    if not ch.isascii() and categories.alias(ch) == "LATIN":
        found = confusables.is_confusable(ch, greedy=True)
        for homoglyph in found[0]["homoglyphs"] if found else ():
            if homoglyph["c"].isascii() and homoglyph["c"].isalpha():
                return str(homoglyph["c"])
        capital = _SMALL_CAPITAL.match(unicodedata.name(ch, ""))
        return capital.group(1).lower() if capital else ch
    found = confusables.is_confusable(ch, greedy=True, preferred_aliases=["latin"])
    for homoglyph in found[0]["homoglyphs"] if found else ():
        latin = all(categories.alias(c) == "LATIN" for c in homoglyph["c"])
        # An ASCII character (a digit) only as an ASCII letter: "0" as "O", never "3" as "ɜ".
        if latin and (homoglyph["c"].isascii() or not ch.isascii()):
            return str(homoglyph["c"])
    return ch


def _lower(text: str) -> str:
    # Python lowercases "İ" to "i" and a combining dot (its rule is not Turkish): as "i".
    return text.lower().replace("i\u0307", "i")


def _fold(text: str) -> str:
    return _lower("".join(_latin(ch) for ch in text))


def keys(name: str) -> frozenset[str]:
    """What ``name`` looks like, for comparing names: non-Latin look-alikes made Latin,
    compatibility forms folded, lowercased. Two keys, folded before and after lowercasing,
    since a capital and its small letter may imitate different Latin letters (Cyrillic "І"
    looks like "l", its "і" like "i")."""
    text = unicodedata.normalize("NFKC", clean_name(name))
    return frozenset({_fold(text), _fold(_lower(text))})


def _name_keys() -> Any:
    """The ``NameKey`` model (accounts.models imports this module: asked of the app registry,
    not imported)."""
    return apps.get_model("accounts", "NameKey")


def keys_of(username: str, display_name: str = "") -> frozenset[str]:
    """The keys a player holds: those of their username and of their display name."""
    held = keys(username)
    return held | keys(display_name) if display_name else held


def looks_taken(name: str, user: Any = None) -> bool:
    """Whether ``name`` is, or looks like, another player's username or display name: one of
    its keys is another's (one indexed lookup). ``user``: the player choosing it."""
    NameKey = _name_keys()
    found = NameKey.objects.filter(key__in=keys(name))
    if user is not None and user.pk is not None:
        found = found.exclude(user_id=user.pk)
    return found.exists()


def store_keys(user_id: int, username: str, display_name: str) -> None:
    """The player's keys made those of their names now (``accounts.signals`` calls it when a
    name is saved). A key another player holds is left theirs: the name that wanted it was
    saved at the same moment as theirs, after it (``claim`` refuses it then), or before the
    rule (an older name is kept)."""
    NameKey = _name_keys()
    wanted = keys_of(username, display_name)
    held = set(NameKey.objects.filter(user_id=user_id).values_list("key", flat=True))
    if held - wanted:
        NameKey.objects.filter(user_id=user_id, key__in=held - wanted).delete()
    if wanted - held:
        NameKey.objects.bulk_create(
            [NameKey(user_id=user_id, key=key) for key in sorted(wanted - held)],
            ignore_conflicts=True,
        )


def claim(user: Any, name: str) -> None:
    """After ``user`` saved ``name`` (in the same transaction): raises ``ValidationError`` if
    another player holds one of its keys, which happens when two look-alike names pass their
    checks at the same moment (the unique key lets one of them in). The caller rolls back."""
    NameKey = _name_keys()
    wanted = keys(name)
    if NameKey.objects.filter(user_id=user.pk, key__in=wanted).count() < len(wanted):
        raise ValidationError(LOOKS_TAKEN, code="taken")


# ----------------------------------------------------------------------------- the checks
def reserved(name: str) -> bool:
    """Whether one of the words of ``name`` is reserved, or the whole of it (by keys, the
    Turkish letters as their ASCII look-alikes, and a word's trailing digits left out: "Admın",
    "Bot3 (strong)")."""
    for key in keys(name):
        words = [word.rstrip(string.digits) for word in _WORD.findall(key)]
        words += [word.translate(_TURKISH_TO_ASCII) for word in words]
        whole = "".join(_WORD.findall(key))
        if {whole, whole.translate(_TURKISH_TO_ASCII)} & (RESERVED_NAMES | RESERVED_WORDS):
            return True
        if any(word in RESERVED_WORDS for word in words):
            return True
    return False


def visible(name: str) -> bool:
    """Whether ``name`` (cleaned) shows a letter or a digit: a blank braille pattern or
    combining marks alone show nothing one could read."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in name)


def check_not_guest_name(name: str) -> None:
    if any(key.startswith(GUEST_PREFIX) for key in keys(name)):
        raise ValidationError(GUEST_NAME, code="reserved", params={"prefix": GUEST_PREFIX})


def check_username(username: str, user: Any = None) -> None:
    """A new username (already ASCII, and not another's but for case: the form checked those)
    for ``user`` (None: a new account). Raises ``ValidationError``."""
    check_not_guest_name(username)
    if reserved(username):
        raise ValidationError(RESERVED, code="reserved")
    if looks_taken(username, user):
        raise ValidationError(LOOKS_TAKEN, code="taken")


def check_display_name(name: str, user: Any) -> None:
    """A cleaned display name ``user`` chooses. Their own username (case aside) is always
    theirs to show: the profile form offers it when there is no display name. Raises
    ``ValidationError``."""
    own = user.get_username() if user is not None else ""
    if own and _lower(name) == _lower(own):
        return
    if confusables.is_dangerous(name):
        raise ValidationError(MIXED_SCRIPTS, code="mixed_scripts")
    check_not_guest_name(name)
    if reserved(name):
        raise ValidationError(RESERVED, code="reserved")
    if looks_taken(name, user):
        raise ValidationError(LOOKS_TAKEN, code="taken")
