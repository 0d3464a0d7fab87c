"""PgBouncer of a test's own (Debian's package), in front of a PostgreSQL server, on a free loopback port,
in transaction pooling with a small pool: many client connections share a few server connections, a
transaction at a time, as a deployment runs it. Run as the `postgres` user when the harness runs as root
(PgBouncer refuses to run as root).

    async with PgBouncer(server_port=5432) as bouncer:
        bouncer.url("test")     # postgresql+asyncpg://postgres@127.0.0.1:PORT/test
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import asyncpg

from devtools.services import free_port

SERVER_USER = "postgres"


class PgBouncer:
    def __init__(self, *, server_port: int, server_host: str = "127.0.0.1", pool_mode: str = "transaction",
                 pool_size: int = 2) -> None:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not os.path.exists(binary):
            raise FileNotFoundError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
        self.binary = binary
        self.port = free_port()
        self._root = tempfile.mkdtemp(prefix="pgbouncer-")
        self._process: subprocess.Popen[bytes] | None = None
        self._as_server_user = os.geteuid() == 0
        config = os.path.join(self._root, "pgbouncer.ini")
        with open(os.path.join(self._root, "users.txt"), "w") as users:
            users.write('"postgres" ""\n')
        with open(config, "w") as ini:
            ini.write(f"""[databases]
* = host={server_host} port={server_port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {self._root}/users.txt
pool_mode = {pool_mode}
default_pool_size = {pool_size}
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
logfile = {self._root}/pgbouncer.log
pidfile = {self._root}/pgbouncer.pid
""")
        self.config = config
        if self._as_server_user:
            owner = pwd.getpwnam(SERVER_USER)
            for path in (self._root, config, os.path.join(self._root, "users.txt")):
                os.chown(path, owner.pw_uid, owner.pw_gid)

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        command = [self.binary, self.config]
        if self._as_server_user:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def ready(self, deadline: float = 15.0) -> None:
        """Wait until a query goes through it to the server."""
        ends = time.monotonic() + deadline
        while True:
            with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                connection = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres",
                                                   timeout=2, statement_cache_size=0)
                try:
                    await connection.fetchval("SELECT 1")
                    return
                finally:
                    await connection.close()
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {self.log()}")
            if time.monotonic() > ends:
                raise TimeoutError(f"pgbouncer on port {self.port} did not answer: {self.log()}")
            await asyncio.sleep(0.05)

    def log(self) -> str:
        with contextlib.suppress(OSError), open(os.path.join(self._root, "pgbouncer.log")) as log:
            return log.read()[-2000:]
        return ""

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(10)
        shutil.rmtree(self._root, ignore_errors=True)

    async def __aenter__(self) -> PgBouncer:
        self.start()
        await self.ready()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()
