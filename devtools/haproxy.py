"""HAProxy of a test's own (Debian's package) in front of servers on loopback ports, as a deployment runs
it for rolling restarts: health checks on `/readyz` (a draining server answers 503 and is taken out), new
connections to a server that refuses them retried on another (`retry-on conn-failure`, `redispatch`: the
only retry that is safe for a POST, since the request never reached a server), nothing else retried.

    async with HAProxy({"a": 8001, "b": 8002}) as balancer:
        balancer.url                    # http://127.0.0.1:PORT
        await balancer.until_up("a")    # its checks pass again
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping

from devtools.services import free_port

CHECK_INTERVAL_MS = 200  # with `fall 2`: a draining server is out within about half a second


class HAProxy:
    def __init__(self, servers: Mapping[str, int], *, retry: bool = True) -> None:
        """`retry`: a connection a server refused is tried again on another (off: a balancer that never
        retries, for controls)."""
        binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.path.exists(binary):
            raise FileNotFoundError("haproxy is not installed (Debian: apt-get install haproxy)")
        self.binary = binary
        self.port = free_port()
        self.servers = dict(servers)
        self._root = tempfile.mkdtemp(prefix="haproxy-")
        self.socket = os.path.join(self._root, "admin.sock")
        self.config = os.path.join(self._root, "haproxy.cfg")
        backends = "\n".join(f"  server {name} 127.0.0.1:{port} check" for name, port in self.servers.items())
        retries = "  retries 3\n  option redispatch 1\n  retry-on conn-failure" if retry else "  retries 0"
        with open(self.config, "w") as cfg:
            cfg.write(f"""global
  maxconn 2000
  stats socket {self.socket} mode 600 level admin

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout check 2s
{retries}

frontend web
  bind 127.0.0.1:{self.port}
  default_backend app

backend app
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter {CHECK_INTERVAL_MS}ms fall 2 rise 2
{backends}
""")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._process = subprocess.Popen([self.binary, "-f", self.config, "-db"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE)

    async def states(self) -> dict[str, str]:
        """Each server's state as HAProxy sees it (UP, DOWN, ...), from its stats socket."""
        reader, writer = await asyncio.open_unix_connection(self.socket)
        try:
            writer.write(b"show stat\n")
            await writer.drain()
            raw = (await reader.read()).decode()
        finally:
            writer.close()
        header, *rows = [line for line in raw.splitlines() if line]
        columns = header.lstrip("# ").split(",")
        states: dict[str, str] = {}
        for row in rows:
            fields = dict(zip(columns, row.split(","), strict=False))
            if fields.get("pxname") == "app" and fields.get("svname") in self.servers:
                states[fields["svname"]] = fields["status"].split(" ")[0]
        return states

    async def until(self, name: str, state: str, deadline: float = 30.0) -> None:
        """Wait until HAProxy sees server `name` in `state` (UP or DOWN)."""
        ends = time.monotonic() + deadline
        while True:
            with contextlib.suppress(OSError):
                if (await self.states()).get(name) == state:
                    return
            if time.monotonic() > ends:
                raise TimeoutError(f"haproxy: server {name} not {state} within {deadline:g}s")
            await asyncio.sleep(CHECK_INTERVAL_MS / 1000)

    async def ready(self, deadline: float = 15.0) -> None:
        ends = time.monotonic() + deadline
        while not await asyncio.to_thread(os.path.exists, self.socket):
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"haproxy exited: {self._process.stderr.read() if self._process.stderr else ''!r}")
            if time.monotonic() > ends:
                raise TimeoutError("haproxy did not start")
            await asyncio.sleep(0.05)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(10)
        shutil.rmtree(self._root, ignore_errors=True)

    async def __aenter__(self) -> HAProxy:
        self.start()
        await self.ready()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()
