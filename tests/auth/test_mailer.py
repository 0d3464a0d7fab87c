"""The SMTP mailer against an SMTP server this test runs on loopback (plain SMTP, no STARTTLS)."""

from __future__ import annotations

import asyncio
from email import message_from_bytes

from auth.mailer import Message, SmtpMailer


async def _smtp_server(received: list[bytes]) -> tuple[asyncio.base_events.Server, int]:
    async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"220 test ESMTP\r\n")
        while line := await reader.readline():
            command = line.strip().upper()
            if command.startswith((b"EHLO", b"HELO")):
                writer.write(b"250-test\r\n250 AUTH PLAIN\r\n")
            elif command.startswith(b"AUTH"):
                writer.write(b"235 ok\r\n")
            elif command.startswith((b"MAIL", b"RCPT", b"RSET", b"NOOP")):
                writer.write(b"250 ok\r\n")
            elif command == b"DATA":
                writer.write(b"354 go on\r\n")
                await writer.drain()
                data = b""
                while (chunk := await reader.readline()) != b".\r\n":
                    data += chunk
                received.append(data)
                writer.write(b"250 queued\r\n")
            elif command == b"QUIT":
                writer.write(b"221 bye\r\n")
                await writer.drain()
                break
            else:
                writer.write(b"502 no\r\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(session, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_smtp_mailer_delivers() -> None:
    received: list[bytes] = []
    server, port = await _smtp_server(received)
    async with server:
        mailer = SmtpMailer("127.0.0.1", port, user="bot", password="secret", starttls=False,
                            sender="Discours <noreply@example.org>")
        await mailer.send(Message("reader@example.org", "Подтвердите адрес", "https://example.org/confirm?token=x"))
    (raw,) = received
    email = message_from_bytes(raw)
    assert email["To"] == "reader@example.org" and email["From"] == "Discours <noreply@example.org>"
    assert "token=x" in email.get_payload(decode=True).decode()
