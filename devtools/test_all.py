"""`make test`: ruff first (seconds: a lint error fails the run at once), then three lanes side by side, each
command of a lane after the one before it:

- the suite, in the foreground, without the drills and the image;
- the drills and the image (tests/drills, tests/test_container.py: services of their own, started and stopped,
  under load), then the Redis-heavy modules again on a Redis Cluster (devtools/on_cluster.py);
- mypy and the import contracts.

Every pytest run has services of its own (tests/conftest.py `RunServices`: a database and a redis-server per
run; the cluster pass, a cluster of its own), so nothing the lanes do meets, and the suite leaves most of a core
idle while it waits on its servers (the times: bench/RESULTS.md, figures behind the code's rules). What ran
beside the suite prints when it ends, in order; the run fails when any command failed.

    python -m devtools.test_all
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
APART = ["tests/drills", "tests/test_container.py"]  # the second lane's: the longest, on servers of their own
SUITE = [[str(BIN / "pytest"), "-q", "--durations=20", *(f"--ignore={path}" for path in APART)]]
BESIDE = {
    "the drills, the image and the Redis Cluster pass": [[str(BIN / "pytest"), "-q", "--durations=10", *APART],
                                                         [sys.executable, "-m", "devtools.on_cluster"]],
    "mypy and the import contracts": [[str(BIN / "mypy")], [str(BIN / "lint-imports"), "--no-cache"]],
}


def _lane(commands: list[list[str]], out: IO[bytes] | None, failed: list[str], name: str) -> None:
    """Each command in turn, all of them whatever each ends with; `failed` gets the lane's name if one fails."""
    codes = [subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT if out else None).returncode
             for command in commands]
    if any(codes):
        failed.append(name)


def main() -> int:
    if subprocess.run([str(BIN / "ruff"), "check", "."], cwd=ROOT).returncode != 0:
        return 1
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as logs:
        lanes = []
        for number, (name, commands) in enumerate(BESIDE.items()):
            log = (Path(logs) / f"lane-{number}").open("w+b")
            thread = threading.Thread(target=_lane, args=(commands, log, failed, name))
            thread.start()
            lanes.append((name, thread, log))
        _lane(SUITE, None, failed, "the suite")
        for name, thread, log in lanes:
            thread.join()
            log.seek(0)
            print(f"\n--- {name} ---", flush=True)
            sys.stdout.buffer.write(log.read())
            sys.stdout.flush()
            log.close()
    if failed:
        print(f"\nfailed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
