"""Slugs from names people type, most of them in Cyrillic: transliterated (a practical Russian romanisation,
with the Ukrainian and Belarusian letters), accents dropped, everything else a hyphen."""

from __future__ import annotations

import re
import unicodedata

_CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "yo", "ж": "zh", "з": "z", "и": "i",
    "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
    "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "",
    "э": "e", "ю": "yu", "я": "ya", "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "ў": "u",
    # Latin letters that Unicode does not decompose into a base letter and an accent
    "ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "ł": "l", "đ": "d", "þ": "th", "ı": "i",
}
_TABLE = str.maketrans(_CYRILLIC)
MAX_LENGTH = 40


def slugify(text: str, fallback: str = "author") -> str:
    """'Анна Тест' -> 'anna-test'; 'Zoë Ørsted' -> 'zoe-orsted'; nothing usable -> `fallback`."""
    latin = text.lower().translate(_TABLE)
    ascii_text = unicodedata.normalize("NFKD", latin).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-")
    return slug[:MAX_LENGTH].rstrip("-") or fallback
