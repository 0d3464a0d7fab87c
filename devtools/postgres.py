"""PostgreSQL servers of a test's own: a primary and streaming replicas, each its own `initdb` data directory
on a free loopback port, which a test stops, crashes, promotes and starts again (failover drills, replica
lag). Run as the `postgres` user when the harness runs as root (PostgreSQL refuses to run as root). Waits
are conditions with deadlines, never fixed sleeps.

    async with PostgresServer() as primary, primary.standby(apply_delay=1.5) as replica:
        primary.url, replica.url          # postgresql+asyncpg://postgres@127.0.0.1:PORT/postgres
        primary.crash(); replica.promote(); await replica.writable()
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import asyncpg

from devtools.services import free_port

SERVER_USER = "postgres"


def _binaries() -> Path:
    """The newest installed PostgreSQL's programs (Debian keeps them under /usr/lib/postgresql/N/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise FileNotFoundError("PostgreSQL's initdb is not installed (Debian: apt-get install postgresql)")
    return Path(initdb).parent


class PostgresServer:
    """One PostgreSQL server in a temporary data directory. A primary by default; `standby()` makes a
    streaming replica of it (pg_basebackup), `apply_delay` seconds behind (`recovery_min_apply_delay`)."""

    def __init__(self, *, synchronous: bool = False, _data: str | None = None, _primary: PostgresServer | None = None,
                 _apply_delay: float = 0.0) -> None:
        """`synchronous`: a primary whose commits wait until a standby has the WAL (`synchronous_standby_names`
        = '*', `synchronous_commit` = on): no acknowledged commit is lost when it dies."""
        self.bin = _binaries()
        self.port = free_port()
        self.primary = _primary
        self.apply_delay = _apply_delay
        self.synchronous = synchronous
        self._root = tempfile.mkdtemp(prefix="pg-")
        self.data = _data or os.path.join(self._root, "data")
        self.log = os.path.join(self._root, "server.log")
        self._as_server_user = os.geteuid() == 0
        if self._as_server_user:
            owner = pwd.getpwnam(SERVER_USER)
            os.chown(self._root, owner.pw_uid, owner.pw_gid)
        self._standbys: list[PostgresServer] = []

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    # --- processes -------------------------------------------------------------------------------------

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.bin / program), *arguments]
        if self._as_server_user:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def _configure(self, settings: dict[str, str]) -> None:
        with open(os.path.join(self.data, "postgresql.auto.conf"), "a") as conf:
            for name, value in settings.items():
                conf.write(f"{name} = '{value}'\n")

    def initialise(self) -> None:
        if self.primary is None:
            self._run("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8",
                      "--locale=C.UTF-8")
            settings = {"wal_level": "replica", "max_wal_senders": "10", "hot_standby": "on", "fsync": "off",
                        "full_page_writes": "off", "wal_keep_size": "256MB", "max_connections": "200"}
            if self.synchronous:
                settings |= {"synchronous_standby_names": "*", "synchronous_commit": "on"}
            self._configure(settings)
        else:
            self._run("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres",
                      "-D", self.data, "-R", "-X", "stream", "--no-sync")
            # pg_basebackup copies the primary's settings: a standby keeps `synchronous_standby_names` off,
            # else, once promoted, its commits would wait forever for a standby it does not have (Patroni's
            # synchronous_mode turns it off on the new primary for the same reason).
            self._configure({"synchronous_standby_names": ""})
            if self.apply_delay:
                self._configure({"recovery_min_apply_delay": f"{int(self.apply_delay * 1000)}ms"})
        self._configure({"listen_addresses": "127.0.0.1", "port": str(self.port),
                         "unix_socket_directories": self._root})

    def start(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """A clean shutdown (`fast`: sessions end, the WAL is flushed)."""
        if self.running:
            self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def crash(self) -> None:
        """What a dead machine does: no shutdown checkpoint, connections dropped (`immediate`)."""
        if self.running:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def promote(self) -> None:
        """This standby becomes a primary (what Patroni or an operator does after the primary is lost)."""
        self._run("pg_ctl", "-D", self.data, "-w", "promote")

    @property
    def running(self) -> bool:
        return os.path.exists(os.path.join(self.data, "postmaster.pid"))

    def close(self) -> None:
        for standby in self._standbys:
            standby.close()
        with contextlib.suppress(Exception):
            self.crash()
        shutil.rmtree(self._root, ignore_errors=True)

    # --- conditions --------------------------------------------------------------------------------------

    async def writable(self, deadline: float = 30.0) -> None:
        """Wait until the server takes writes (a started primary, a promoted standby)."""
        await self._until("SELECT NOT pg_is_in_recovery()", deadline)

    async def replaying(self, deadline: float = 30.0) -> None:
        """Wait until this standby streams from its primary."""
        await self._until("SELECT status = 'streaming' FROM pg_stat_wal_receiver", deadline)

    async def caught_up(self, deadline: float = 30.0) -> None:
        """Wait until this standby has replayed all its primary had written when this was called."""
        assert self.primary is not None, "a primary is always caught up with itself"
        target = await self.primary.sql("SELECT pg_current_wal_insert_lsn()::text")
        await self._until(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn", deadline)

    async def _until(self, query: str, deadline: float) -> None:
        ends = time.monotonic() + deadline
        while True:
            with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                connection = await asyncpg.connect(self.dsn(), timeout=2)
                try:
                    if await connection.fetchval(query):
                        return
                finally:
                    await connection.close()
            if time.monotonic() > ends:
                raise TimeoutError(f"PostgreSQL on port {self.port}: `{query}` not true within {deadline:g}s")
            await asyncio.sleep(0.05)

    async def sql(self, statement: str, *arguments: object, database: str = "postgres") -> object:
        connection = await asyncpg.connect(self.dsn(database), timeout=5)
        try:
            return await connection.fetchval(statement, *arguments)
        finally:
            await connection.close()

    # --- replicas ----------------------------------------------------------------------------------------

    def standby(self, *, apply_delay: float = 0.0) -> PostgresServer:
        """A streaming replica of this server, `apply_delay` seconds behind; closed with it."""
        replica = PostgresServer(_primary=self, _apply_delay=apply_delay)
        self._standbys.append(replica)
        return replica

    async def __aenter__(self) -> PostgresServer:
        await asyncio.to_thread(self.initialise)
        await asyncio.to_thread(self.start)
        if self.primary is None:
            await self.writable()
        else:
            await self.replaying()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.close)


def libpq_url(servers: Sequence[PostgresServer], database: str, **parameters: str) -> str:
    """libpq's multi-host URL of `servers` (what operators write for failover)."""
    hosts = ",".join(f"127.0.0.1:{server.port}" for server in servers)
    query = "&".join(f"{name}={value}" for name, value in parameters.items())
    return f"postgresql://postgres@{hosts}/{database}" + (f"?{query}" if query else "")
