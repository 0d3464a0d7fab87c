"""Outgoing mail behind a small interface: the default writes each message to the log (and keeps the
last few, which development tools and tests read); `SmtpMailer` sends through the configured server."""

from __future__ import annotations

import asyncio
import logging
import smtplib
from collections import deque
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Message:
    to: str
    subject: str
    body: str


class Mailer(Protocol):
    async def send(self, message: Message) -> None: ...


class LogMailer:
    def __init__(self, keep: int = 50) -> None:
        self.sent: deque[Message] = deque(maxlen=keep)

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        log.info("mail to %s: %s\n%s", message.to, message.subject, message.body)


class SmtpMailer:
    def __init__(self, host: str, port: int, *, user: str | None, password: str | None, starttls: bool,
                 sender: str) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password
        self.starttls, self.sender = starttls, sender

    def _send_blocking(self, message: Message) -> None:
        email = EmailMessage()
        email["From"], email["To"], email["Subject"] = self.sender, message.to, message.subject
        email.set_content(message.body)
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.send_message(email)

    async def send(self, message: Message) -> None:
        await asyncio.to_thread(self._send_blocking, message)
