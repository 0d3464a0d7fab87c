"""The documentation's copy-paste sequences work when pasted (issue 73): the sign-in sequence of
docs/accounts.md runs in bash, as written, against a served app; only its address (and, so that runs do
not collide, its e-mail address) is replaced."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.live import ROOT, serve

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="the sequences are curl commands")


def sequence(page: str, heading: str) -> str:
    """The first ```sh block under `heading` in docs/`page`."""
    text = (ROOT / "docs" / page).read_text()
    section = text.split(f"## {heading}", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S)[1]  # type: ignore[index]


def run(script: str, cwd: Path) -> list[dict[str, Any]]:
    """Run `script` in bash (stopping at the first failing command); the JSON answers it printed."""
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.replace("}{", "}\n{").splitlines() if line.strip()]


async def test_the_sign_in_sequence_signs_in_by_cookie_and_by_token(app: Any, tmp_path: Path) -> None:
    script = sequence("accounts.md", "Signing in (a copy-paste sequence)")
    assert "$TOKEN" in script and "TOKEN=" in script
    email = f"me-{uuid.uuid4().hex[:8]}@example.org"
    async with serve(app) as base:
        answers = await asyncio.to_thread(
            run, script.replace("http://127.0.0.1:8000", base).replace("me@example.org", email), tmp_path)
    assert [a.get("errors") for a in answers] == [None, None, None], answers
    registered, by_cookie, by_token = answers
    assert registered["data"]["registerUser"]["success"]
    assert by_cookie["data"]["me"]["author"]["email"] == email
    assert by_token["data"]["me"]["author"]["slug"] == by_cookie["data"]["me"]["author"]["slug"]


async def test_control_the_token_step_is_what_signs_the_last_request_in(app: Any, tmp_path: Path) -> None:
    """Without the line that sets TOKEN (as the sequence was written before), the last request is refused."""
    script = sequence("accounts.md", "Signing in (a copy-paste sequence)")
    email = f"me-{uuid.uuid4().hex[:8]}@example.org"
    unset = "\n".join(line if not line.startswith("TOKEN=") else line.split("$(", 1)[1].rsplit(" | ", 1)[0]
                      for line in script.splitlines())
    async with serve(app) as base:
        answers = await asyncio.to_thread(
            run, unset.replace("http://127.0.0.1:8000", base).replace("me@example.org", email), tmp_path)
    assert answers[-1]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
