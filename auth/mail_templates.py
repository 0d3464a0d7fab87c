"""The mail the server sends, written from templates in each language it writes (auth/language.py): a plain
text and an HTML part for every message, and its subject.

A message is two Jinja templates in the folder: `{message}.{lang}.txt.jinja`, whose `subject` block is the
subject and whose `body` block the text part, and `{message}.{lang}.html.jinja`, the HTML part (escaped:
what a template is given never becomes markup). The server's own are in auth/mail_templates/; an operator
replaces them with a folder of their own (MAIL_TEMPLATES_DIR) holding the same names, and a template may
extend or import another (`_layout.html.jinja`). Every message is rendered in every language when the
server starts, with what it is given when sent: a missing, broken or misspelt template stops the start,
naming its file, instead of failing the mail of the first reader who needs it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

from auth.language import SUPPORTED

OWN = Path(__file__).resolve().parent / "mail_templates"

# Each message and an example of what it is given: the start renders every template with it.
MESSAGES: dict[str, dict[str, Any]] = {
    "confirm": {"link": "https://example.org/confirm?token=t", "name": "Author"},  # an address to confirm
    "signin": {"link": "https://example.org/confirm?token=t", "name": "Author"},  # a link to sign in with
    "reset": {"link": "https://example.org/reset?token=t", "name": "Author"},  # a new password
    "email_change": {"link": "https://example.org/confirm-email-change?token=t", "name": "Author"},
    "taken": {"site": "https://example.org"},  # someone registered with an address that has an account
    "digest": {"count": 3, "threads": [("shout:1", 2), ("shout:2", 1)], "inbox": "https://example.org/inbox"},
}


class MailTemplateError(ValueError):
    """A template that is missing or does not render."""


@dataclass(frozen=True, slots=True)
class Written:
    subject: str
    text: str
    html: str


class MailTemplates:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or OWN
        self.text = Environment(loader=FileSystemLoader(self.folder), undefined=StrictUndefined,
                                autoescape=False, keep_trailing_newline=True)
        self.html = Environment(loader=FileSystemLoader(self.folder), undefined=StrictUndefined, autoescape=True)

    def write(self, message: str, lang: str, **given: Any) -> Written:
        """`message` in `lang` with what it is `given`; MailTemplateError naming the file when it cannot."""
        text_name, html_name = f"{message}.{lang}.txt.jinja", f"{message}.{lang}.html.jinja"
        given = {"lang": lang, **given}
        name = text_name
        try:
            text = self.text.get_template(text_name)
            context = text.new_context(given)
            subject = " ".join("".join(text.blocks["subject"](context)).split())
            body = "".join(text.blocks["body"](text.new_context(given))).strip() + "\n"
            name = html_name
            html = self.html.get_template(html_name).render(given)
        except (TemplateError, KeyError, OSError) as exc:
            raise MailTemplateError(f"{self.folder / name}: {type(exc).__name__}: {exc}") from exc
        if not subject:
            raise MailTemplateError(f"{self.folder / text_name}: its subject block is empty")
        return Written(subject, body, html)

    def check(self) -> None:
        """Write every message in every language, as the start does."""
        for message, example in MESSAGES.items():
            for lang in SUPPORTED:
                self.write(message, lang, **example)


@lru_cache(maxsize=4)
def checked(folder: str | None) -> MailTemplates:
    """The templates of `folder` (the server's own when None), every one of them written once."""
    templates = MailTemplates(Path(folder) if folder else None)
    templates.check()
    return templates
