"""The reader's language, chosen one way for everything the server writes in words: its own pages (the mail
links' pages, app/routes/mail_links.py) and, with the client-protocols work, its mail and the editors'
panel. The rule: the language the client names (a `lang` argument or parameter), else the first of the
request's Accept-Language that the server writes, by preference, else the deployment's (DEFAULT_LANGUAGE,
Russian unless set)."""

from __future__ import annotations

SUPPORTED = ("ru", "en")
# Accept-Language entries read at most: a header is the client's, and its length is not the server's cost.
MOST_ENTRIES = 16


def supported(tag: str | None) -> str | None:
    """The language of a tag (`ru`, `en-GB`, `RU_ru`) when the server writes it, else None."""
    if not tag:
        return None
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in SUPPORTED else None


def from_accept_language(header: str | None) -> str | None:
    """The most preferred supported language of an Accept-Language header (`ru-RU,ru;q=0.9,en;q=0.8`): by
    quality, then by order; `q=0` means not wanted."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for order, entry in enumerate(header.split(",")[:MOST_ENTRIES]):
        tag, _, parameters = entry.partition(";")
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        language = supported(tag)
        if language is not None and quality > 0:
            ranked.append((-quality, order, language))
    return min(ranked)[2] if ranked else None


def choose(asked: str | None, accept_language: str | None, default: str) -> str:
    """The language to write in: `asked` (the client's `lang`), else the request's Accept-Language, else
    `default`."""
    return supported(asked) or from_accept_language(accept_language) or default
