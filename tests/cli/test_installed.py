"""The server as an operator installs it: an sdist and a wheel built from the checkout (`uv build`, the
wheel from the sdist), the wheel installed (not editable) into a fresh environment, then `discours
migrate` on a fresh database and `discours serve` answering a query, GraphiQL's page and its files, and
`/healthz` with the version of pyproject.toml. Run outside the checkout, so nothing is imported from it.

The fresh environment takes the dependencies from the development one's site-packages (a path, not its
`.pth` files: the editable install of the checkout stays out), so the test needs no package index."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from devtools.services import free_port
from tests.live import ROOT

BIN = Path(sys.executable).parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]



@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with the wheel installed: its `bin/`."""
    where = tmp_path_factory.mktemp("installed")
    built = subprocess.run([str(BIN / "uv"), "build", "--sdist", "--wheel", "-o", str(where / "dist"), str(ROOT)],
                           capture_output=True, text=True, timeout=240)
    if built.returncode != 0 and "failed to fetch" in built.stderr.lower():
        pytest.skip(f"the build's tools could not be fetched: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr
    sdist, = (where / "dist").glob("*.tar.gz")
    wheel, = (where / "dist").glob("*.whl")
    assert sdist.name == f"discours_core-{VERSION}.tar.gz" and f"-{VERSION}-" in wheel.name
    env = where / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=60)
    site = Path(subprocess.run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                    str(wheel)], check=True, timeout=120, capture_output=True)
    # pip --target writes no console script: the entry point, as an installer would write it
    script = env / "bin" / "discours"
    script.write_text(f"#!{env / 'bin' / 'python'}\nimport sys\nfrom app.cli.commands import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    return env / "bin"


def test_an_installed_wheel_migrates_and_serves(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PYTHONPATH")}
    env["DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}"
    where = subprocess.run([str(installed / "python"), "-c", "import orm, app; print(orm.__file__, app.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert str(ROOT) not in where and str(installed.parent) in where, where  # the wheel's modules, not the checkout's
    version = subprocess.run([str(installed / "discours"), "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == f"discours {VERSION}", version
    migrated = subprocess.run([str(installed / "discours"), "migrate"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
    assert migrated.returncode == 0, migrated.stderr

    port = free_port()
    server = subprocess.Popen([str(installed / "discours"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        assert health.json()["version"] == VERSION
        assert httpx.get(f"{base}/readyz", timeout=5).json()["status"] == "ready"  # migrations at head
        answer = httpx.post(f"{base}/graphql", json={"query": "{ get_topics_all { slug } }"}, timeout=10).json()
        assert answer == {"data": {"get_topics_all": []}}
        page = httpx.get(f"{base}/graphql", headers={"accept": "text/html"}, timeout=10)
        assert page.status_code == 200 and "graphiql" in page.text.lower()
        asset = httpx.get(f"{base}/graphiql-assets/graphiql@3.8.3/graphiql.min.js", timeout=10)
        assert asset.status_code == 200 and len(asset.content) > 100_000
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0, output
