"""`make test`: ruff first (seconds: a lint error fails the run at once), then the suite in the foreground and, beside
it, mypy, the import contracts and the Redis Cluster pass (devtools/on_cluster.py). Each pass runs on services of
its own (tests/conftest.py `RunServices`: a database and a redis-server per run; the cluster pass, a cluster of its
own), so nothing they do meets; run one after the other they took a quarter more of the run's time on two cores,
where the suite leaves most of one idle while it waits on its servers. What runs beside the suite prints when it
ends, in order; the run fails when any pass failed.

    python -m devtools.test_all
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BESIDE = {
    "mypy": [str(BIN / "mypy")],
    "import contracts": [str(BIN / "lint-imports"), "--no-cache"],
    "Redis Cluster pass": [sys.executable, "-m", "devtools.on_cluster"],
}
SUITE = [str(BIN / "pytest"), "-q", "--durations=20"]


def main() -> int:
    if subprocess.run([str(BIN / "ruff"), "check", "."], cwd=ROOT).returncode != 0:
        return 1
    with tempfile.TemporaryDirectory() as logs:
        started = {}
        for name, command in BESIDE.items():
            log = (Path(logs) / name.replace(" ", "-")).open("w+b")
            started[name] = (subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log)
        suite = subprocess.run(SUITE, cwd=ROOT).returncode
        failed = [] if suite == 0 else ["the suite"]
        for name, (process, log) in started.items():
            code = process.wait()
            log.seek(0)
            print(f"\n--- {name} (exit {code}) ---", flush=True)
            sys.stdout.buffer.write(log.read())
            sys.stdout.flush()
            log.close()
            if code != 0:
                failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
