"""What an operator installs with: the systemd unit loads (`systemd-analyze verify` says nothing: an
unknown key or a bad value is a line of its output), runs as its own user, hardened, restarted on failure;
and the version is the one of pyproject.toml wherever it shows (`discours --version`, `/healthz`, the
metrics)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from telemetry.metrics import BUILD_INFO
from telemetry.version import VERSION

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "deploy" / "discours.service"
INSTALLED = "/srv/discours/.venv/bin/discours"


def _verify(unit_text: str, tmp_path: Path) -> str:
    """systemd-analyze verify's output for the unit, its commands pointed at this checkout's `discours`."""
    unit = tmp_path / "discours.service"
    unit.write_text(unit_text.replace(INSTALLED, str(Path(sys.executable).parent / "discours")))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    return (done.stdout + done.stderr).strip()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze on this machine")
def test_the_systemd_unit_verifies_clean(tmp_path: Path) -> None:
    assert _verify(UNIT.read_text(), tmp_path) == ""
    # the control: the README's old snippet had an inline comment, and a misspelt key is reported
    assert "Unknown key" in _verify(UNIT.read_text().replace("NoNewPrivileges=", "NoNewPrivilege="), tmp_path)


def test_the_unit_runs_hardened_as_its_own_user() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(UNIT.read_text())
    service = unit["Service"]
    assert service["User"] == "discours" and service["Restart"] == "on-failure"
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"
    assert service["ExecStart"].startswith(INSTALLED + " serve") and unit["Install"]["WantedBy"]
    assert all("#" not in value for section in unit.values() for value in section.values())  # no inline comments


def test_the_version_is_pyprojects_everywhere() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert VERSION == declared
    shown = subprocess.run([str(Path(sys.executable).parent / "discours"), "--version"], capture_output=True,
                           text=True, timeout=60)
    assert shown.stdout.strip() == f"discours {declared}"
    assert BUILD_INFO.labels(version=declared)._value.get() == 1
    assert (ROOT / "CHANGELOG.md").read_text().split("\n## ", 2)[1].startswith(declared)  # the newest entry


def test_the_compose_file_runs_the_server_with_its_services() -> None:
    """deploy/compose.yaml: PostgreSQL, an evicting cache Redis and a no-eviction state Redis kept on disk,
    migrations as a one-shot service of the server's image that the server waits for, PgBouncer optional,
    the data on volumes, the stop within the server's drain."""
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"postgres", "redis-cache", "redis-state", "migrate", "server", "pgbouncer"} <= set(services)
    assert "allkeys-lru" in services["redis-cache"]["command"]
    assert "noeviction" in services["redis-state"]["command"] and "--appendonly" in services["redis-state"]["command"]
    assert services["migrate"]["command"] == ["migrate"] and services["migrate"]["image"] == services["server"]["image"]
    assert services["server"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["postgres"]["image"].startswith("${POSTGRES_IMAGE:-")  # another image of the same interface
    assert services["server"]["environment"]["REDIS_STATE_URL"].startswith("redis://redis-state")
    assert services["pgbouncer"]["profiles"] == ["pgbouncer"]
    assert set(compose["volumes"]) == {"pgdata", "redis-state"}
    assert services["server"]["stop_grace_period"] == "60s"
