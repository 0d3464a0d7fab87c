"""Outgoing mail behind a small interface: the default logs that a message went out (and keeps the
last few, which development tools and tests read); `SmtpMailer` sends through the configured server.

A log line never holds the recipient's address or the body (which carries sign-in links): only a
digest of the address and the subject. `MAIL_LOG_LINKS` (on by default with the embedded SQLite
development setup, off otherwise) adds the body, so a newcomer without SMTP can follow the link."""

from __future__ import annotations

import asyncio
import logging
import smtplib
from collections import deque
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Protocol

from auth.throttle import email_digest

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Message:
    to: str
    subject: str
    body: str  # the plain text
    html: str | None = None  # the same as HTML, sent beside it (multipart/alternative)
    lang: str | None = None  # its language (Content-Language)


class Mailer(Protocol):
    async def send(self, message: Message) -> None: ...


def recipient(address: str) -> str:
    """How logs name a recipient: a digest, never the address."""
    return "mailbox " + email_digest(address)[:12]


class LogMailer:
    def __init__(self, keep: int = 50, *, log_bodies: bool = False) -> None:
        self.sent: deque[Message] = deque(maxlen=keep)
        self.log_bodies = log_bodies

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if self.log_bodies:  # a development setting: the body holds a sign-in link
            log.info("mail to %s: %s\n%s", recipient(message.to), message.subject, message.body)
        else:
            log.info("mail to %s: %s", recipient(message.to), message.subject)


class SmtpMailer:
    def __init__(self, host: str, port: int, *, user: str | None, password: str | None, starttls: bool,
                 sender: str) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password
        self.starttls, self.sender = starttls, sender

    def _send_blocking(self, message: Message) -> None:
        email = EmailMessage()
        email["From"], email["To"], email["Subject"] = self.sender, message.to, message.subject
        email.set_content(message.body)
        if message.html is not None:
            email.add_alternative(message.html, subtype="html")
        if message.lang:  # after the content, which sets the Content-* headers anew
            email["Content-Language"] = message.lang
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.send_message(email)

    async def send(self, message: Message) -> None:
        await asyncio.to_thread(self._send_blocking, message)
