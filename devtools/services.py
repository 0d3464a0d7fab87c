"""Throwaway services for tests and benchmarks: a free loopback port, a Redis server of one's own (which a
test can stop and start again), and a uniquely named PostgreSQL database dropped afterwards.

Nothing here is part of the server; it exists so that no test or benchmark has to borrow a database or a
Redis db number that may belong to someone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

LOCAL_POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"


async def wait_until(condition: Callable[[], Awaitable[bool]], what: str, deadline: float = 30.0) -> None:
    """Until `condition()` holds (an error counts as not yet: the service may be on its way), checking every
    50 ms; TimeoutError naming `what` after `deadline` seconds."""
    ends = time.monotonic() + deadline
    while True:
        with contextlib.suppress(Exception):
            if await condition():
                return
        if time.monotonic() > ends:
            raise TimeoutError(f"{what}: not within {deadline:g}s")
        await asyncio.sleep(0.05)


def free_port() -> int:
    """A loopback port nothing listens on, for a server started next, never one this process handed out
    before, and below the range the kernel takes local ports of outgoing connections from (Linux's
    `net.ipv4.ip_local_port_range`). A port of that range, free when asked, could be taken by a connection
    the tests open before the server binds it (or, for a server stopped and started again, while it is
    down): the server then fails to start. Seen once: a Redis Cluster node that never answered."""
    low, high = PORTS
    for _ in range(1000):
        port = random.randint(low, high)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # in use (a server of this machine, another run's)
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port in {low}-{high}")


def _ports() -> tuple[int, int]:
    """Where `free_port` draws from: from 10000 (past the well-known services) to the first port the kernel
    gives outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
            first_outgoing = int(ranges.read().split()[0])
    except (OSError, ValueError, IndexError):
        first_outgoing = 32768  # Linux's default
    return 10000, max(first_outgoing - 1, 10999)


PORTS = _ports()
_handed_out: set[int] = set()


class RedisServer:
    """`redis-server` on a free loopback port, without persistence, in a temporary directory.

    `stop()` and `start()` can be called again and again (the port stays the same), which is how outage
    tests take Redis away from running servers and give it back."""

    def __init__(self, binary: str | None = None, *, options: tuple[str, ...] = ()) -> None:
        """`options`: more redis-server arguments, such as ("--maxmemory", "2mb")."""
        found = binary or shutil.which("redis-server")
        if found is None:
            raise FileNotFoundError("redis-server is not installed (Debian: apt-get install redis-server)")
        self.binary = found
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._directory = tempfile.TemporaryDirectory(prefix="redis-")
        self._process: subprocess.Popen[bytes] | None = None
        self.options = options

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        if self.running:
            return
        self._process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self._directory.name, *self.options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(10)

    def pause(self) -> None:
        """SIGSTOP: a hung machine (it answers nothing, reads nothing) until `resume`."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """What a dead machine does: SIGKILL, no shutdown (nothing more sent to replicas or clients)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(10)

    async def ready(self) -> None:
        """Wait (up to 10 s) until the server answers PING (each attempt bounded too: a connection the
        kernel accepted for a process that does not answer must not hold the wait forever)."""
        client = Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=0.5)
        try:
            for _ in range(200):
                with contextlib.suppress(Exception):
                    if await client.ping():
                        return
                await asyncio.sleep(0.05)
            raise TimeoutError(f"redis-server on port {self.port} did not answer")
        finally:
            await client.aclose()

    def close(self) -> None:
        self.stop()
        self._directory.cleanup()

    async def __aenter__(self) -> RedisServer:
        self.start()
        await self.ready()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


@contextlib.asynccontextmanager
async def scratch_database(server_url: str = LOCAL_POSTGRES, prefix: str = "scratch") -> AsyncIterator[str]:
    """A new, empty PostgreSQL database named `{prefix}_{random}` on the server of `server_url`; yields its
    URL and drops it afterwards (with FORCE: a benchmark's leftover connections do not keep it alive)."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    admin = create_async_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
        finally:
            async with admin.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()




class RunServices:
    """A test run's own PostgreSQL database and redis-server: made when the run starts, removed when it ends,
    so that a run touches nothing it did not make (another run, a developer's data, the services' db
    numbers). The database is `discours_test_{random}` on the local server; databases a test derives from
    its name (`{name}_fuzz`, `{name}_migrations`) are dropped with it."""

    def __init__(self, *, database: bool, redis: bool, server_url: str = LOCAL_POSTGRES) -> None:
        self.server_url = server_url
        self.name = f"discours_test_{secrets.token_hex(4)}"
        self.database_url = make_url(server_url).set(database=self.name).render_as_string(hide_password=False)
        self.redis = RedisServer() if redis else None
        self.made_database = database

    def start(self) -> dict[str, str]:
        """Start what was asked for; the environment variables naming it (TEST_DATABASE_URL, TEST_REDIS_URL),
        which subprocesses of the run inherit."""
        environ: dict[str, str] = {}
        if self.made_database:
            asyncio.run(self._admin(f'CREATE DATABASE "{self.name}"'))
            environ["TEST_DATABASE_URL"] = self.database_url
        if self.redis is not None:
            self.redis.start()
            asyncio.run(self.redis.ready())
            environ["TEST_REDIS_URL"] = self.redis.url
        return environ

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()
        if self.made_database:
            asyncio.run(self._drop_all())

    async def _drop_all(self) -> None:
        admin = create_async_engine(self.server_url, isolation_level="AUTOCOMMIT")
        try:
            async with admin.connect() as conn:
                names = (await conn.execute(text("SELECT datname FROM pg_database WHERE datname = :name "
                                                 "OR datname LIKE :derived"),
                                            {"name": self.name, "derived": self.name + "\\_%"})).scalars().all()
                for name in names:
                    await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            await admin.dispose()

    async def _admin(self, statement: str) -> None:
        admin = create_async_engine(self.server_url, isolation_level="AUTOCOMMIT")
        try:
            async with admin.connect() as conn:
                await conn.execute(text(statement))
        finally:
            await admin.dispose()
