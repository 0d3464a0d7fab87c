"""The server's image (deploy/Containerfile, scripts/build-image.sh) as an operator runs it: built with
podman on a base made from Debian's packages (podman and debootstrap installed from Debian's packages
when missing; skipped only where they cannot be), migrations run as a one-shot container of the image,
then the server in another, against the suite's PostgreSQL (a database of its own) and Redis: it answers
a query and the GraphiQL page, reports healthy, runs as a user who is not root, and stops gracefully
(exit 0) within the stop timeout. The whole within five minutes; the times go to the test's output."""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from devtools.services import free_port
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_CLUSTER, TEST_REDIS_URL

ROOT = Path(__file__).resolve().parent.parent
PODMAN = ["podman", "--runtime", "runc"]
# Explicit limits (podman's defaults may exceed what the kernel lets its runtime set): this process's open
# files, and processes enough for a server's threads.
_FILES = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
LIMITS = ["--ulimit", f"nofile={_FILES}:{_FILES}", "--ulimit", "nproc=16384:16384"]
pytestmark = pytest.mark.skipif(TEST_REDIS_CLUSTER, reason="one image test per run, on the plain pass")


def _have_tools() -> bool:
    if shutil.which("podman") and shutil.which("debootstrap") and shutil.which("runc"):
        return True
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    installed = subprocess.run(["apt-get", "install", "-y", "-qq", "podman", "debootstrap", "runc"], env=env,
                               capture_output=True, timeout=600)
    if installed.returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600)
        installed = subprocess.run(["apt-get", "install", "-y", "-qq", "podman", "debootstrap", "runc"], env=env,
                                   capture_output=True, timeout=600)
    return installed.returncode == 0



@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A database of the suite's PostgreSQL server for the image, dropped afterwards."""
    name = f"container_{uuid.uuid4().hex[:8]}"
    admin = TEST_DATABASE_URL.rsplit("/", 1)[0] + "/postgres"

    async def run(statement: str) -> None:
        engine = create_async_engine(admin, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(statement))
        await engine.dispose()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    yield TEST_DATABASE_URL.rsplit("/", 1)[0] + "/" + name
    asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def test_the_image_migrates_serves_and_stops_gracefully(database: str) -> None:
    if not _have_tools():
        pytest.skip("podman, debootstrap and runc are missing and cannot be installed here")
    started = time.monotonic()
    tag = f"localhost/discours-core:test-{uuid.uuid4().hex[:6]}"
    built = subprocess.run(["bash", str(ROOT / "scripts" / "build-image.sh"), tag], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    build_seconds = time.monotonic() - started
    name = f"discours-{uuid.uuid4().hex[:6]}"
    try:
        settings = ["-e", f"DATABASE_URL={database}", "-e", f"REDIS_URL={TEST_REDIS_URL.rsplit('/', 1)[0]}/14",
                    "-e", "JWT_SECRET=" + "j" * 40, "-e", "ENVIRONMENT=production"]
        migrated = subprocess.run([*PODMAN, "run", "--rm", "--network", "host", *LIMITS, *settings, tag, "migrate"],
                                  capture_output=True, text=True, timeout=120)
        assert migrated.returncode == 0, migrated.stderr[-3000:]

        port = free_port()
        subprocess.run([*PODMAN, "run", "-d", "--name", name, "--network", "host", *LIMITS, *settings,
                        "-e", f"PORT={port}", tag, "serve", "--host", "127.0.0.1", "--port", str(port)],
                       check=True, capture_output=True, timeout=60)
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, subprocess.run(["podman", "logs", name], capture_output=True,
                                                                   text=True).stdout[-3000:]
                time.sleep(0.3)
        assert health.json()["status"] == "ok"
        answer = httpx.post(f"{base}/graphql", json={"query": "{ get_topics_all { slug } }"}, timeout=10).json()
        assert answer == {"data": {"get_topics_all": []}}
        page = httpx.get(f"{base}/graphql", headers={"accept": "text/html"}, timeout=10)
        assert page.status_code == 200 and "graphiql" in page.text.lower()
        user = subprocess.run(["podman", "exec", name, "id", "-u"], capture_output=True, text=True, timeout=30)
        assert user.stdout.strip() not in ("", "0"), user
        checked = subprocess.run([*PODMAN, "healthcheck", "run", name], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr  # the image's HEALTHCHECK

        stopping = time.monotonic()
        subprocess.run(["podman", "stop", "-t", "60", name], check=True, capture_output=True, timeout=90)
        stop_seconds = time.monotonic() - stopping
        code = subprocess.run(["podman", "inspect", "--format", "{{.State.ExitCode}}", name], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        assert code == "0", subprocess.run(["podman", "logs", name], capture_output=True, text=True).stdout[-3000:]
        assert stop_seconds < 60  # drained, not killed at the timeout
    finally:
        subprocess.run(["podman", "rm", "-f", name], capture_output=True, timeout=60)
        size = subprocess.run(["podman", "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        subprocess.run(["podman", "rmi", "-f", tag], capture_output=True, timeout=60)
    total = time.monotonic() - started
    print(f"\nimage: built in {build_seconds:.0f} s, {int(size or 0) / 1e6:.0f} MB; stopped in {stop_seconds:.1f} s; "
          f"the whole test {total:.0f} s")
    assert total < 300
