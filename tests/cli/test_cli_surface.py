"""What the command line offers a newcomer (issue 73): help on every option of every command, a completion
script for the shell, a reload mode that restarts the worker when a module changes, and progress bars on a
terminal only (a log never receives a carriage return)."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.cli.commands import build_parser
from app.cli.progress import Bars
from devtools.services import free_port
from tests.cli.test_cli import BASE_ENV, discours
from tests.helpers import until
from tests.live import ROOT


def _parsers(parser: argparse.ArgumentParser, name: str = "discours") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_option_of_every_command_says_what_it_does() -> None:
    seen, bare = 0, []
    for name, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                bare += [f"{name} {choice.dest}" for choice in action._choices_actions if not choice.help]
                continue
            seen += 1
            if not action.help or action.help == argparse.SUPPRESS:
                bare.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert seen > 30 and not bare, f"options without help: {bare}"


def test_a_completion_script_names_every_command_and_loads_in_bash(tmp_path: Path) -> None:
    result = discours("--print-completion", "bash", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for command in ("serve", "migrate", "seed", "queue", "rebuild", "cache", "adopt", "export-schema"):
        assert command in result.stdout
    script = tmp_path / "discours.bash"
    script.write_text(result.stdout)
    loaded = subprocess.run(["bash", "-c", f"source {script} && complete -p discours"], capture_output=True,
                            text=True, timeout=30)
    assert loaded.returncode == 0 and "discours" in loaded.stdout, loaded.stderr
    assert discours("--print-completion", "zsh", cwd=tmp_path).stdout.startswith("#compdef discours")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream, shown", [(_Terminal(), True), (io.StringIO(), False)])
def test_progress_is_drawn_on_a_terminal_only(stream: io.StringIO, shown: bool) -> None:
    bars = Bars(True, stream)
    for done in range(0, 101, 25):
        bars.show("authors", done, 100)
    bars.count("keys scanned")(7)
    bars.close()
    written = stream.getvalue()
    assert ("authors" in written and "100/100" in written and "keys scanned" in written) is shown
    assert ("\r" in written) is shown
    quiet = _Terminal()
    Bars(False, quiet).show("authors", 1, 2)
    assert quiet.getvalue() == ""


def test_a_seed_written_to_a_log_has_no_carriage_return(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path}/db.sqlite3"
    assert discours("migrate", cwd=tmp_path, DATABASE_URL=database).returncode == 0
    result = discours("seed", cwd=tmp_path, DATABASE_URL=database)
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "seeded in" in result.stderr


async def test_reload_restarts_the_worker_when_a_module_changes(tmp_path: Path) -> None:
    port, database = free_port(), f"sqlite+aiosqlite:///{tmp_path}/db.sqlite3"
    assert discours("migrate", cwd=tmp_path, DATABASE_URL=database).returncode == 0
    server = subprocess.Popen(  # noqa: ASYNC220 - the server runs beside the test
        [sys.executable, "-m", "app.cli.commands", "serve", "--reload", "--port", str(port)], cwd=tmp_path,
        env={**BASE_ENV, "PYTHONPATH": str(ROOT), "DATABASE_URL": database, "EXPOSE_WORKER": "true",
             "JWT_SECRET": "r" * 40}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = ROOT / "schema" / f"_reload_probe_{uuid.uuid4().hex}.py"
    base = f"http://127.0.0.1:{port}"

    async def worker() -> int | None:
        try:
            async with httpx.AsyncClient(base_url=base) as client:
                return int((await client.get("/healthz")).json()["worker"])
        except (httpx.TransportError, ValueError, KeyError):
            return None

    async def answered(not_: int | None = None) -> bool:
        found = await worker()
        return found is not None and found != not_

    try:
        await until(answered, "the reloading server answers", deadline=60)
        first = await worker()
        assert first is not None and first != server.pid, "the supervisor runs the worker in a process of its own"
        assert await worker() == first, "control: an unchanged tree keeps its worker"
        probe.write_text("# a module of the server changes\n")
        await until(lambda: answered(not_=first), "a new worker after the change", deadline=60)
    finally:
        probe.unlink(missing_ok=True)
        server.terminate()
        server.wait(20)



def test_reload_watches_every_package_the_wheel_installs() -> None:
    import tomllib

    from app.cli.commands import SERVER_PACKAGES

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert sorted(SERVER_PACKAGES) == sorted(name.rstrip("*") for name in found["include"])
