"""`make mutants`: the mutation pass (mutmut, configured in pyproject's [tool.mutmut]) on a database and a
redis-server of its own, so that it can run beside `make test`: Redis pub/sub channels and CLIENT LIST are
server-wide, not per db number, so a shared server would let one suite's events reach the other's
subscribers. Mutants run one at a time: the tests share one database.

    python -m devtools.mutants [mutant names...]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from devtools.services import LOCAL_POSTGRES, RedisServer
from orm.engine import create_database_if_missing

ROOT = Path(__file__).resolve().parent.parent
DATABASE = LOCAL_POSTGRES.rsplit("/", 1)[0] + "/mutmut_test"


async def _run(names: list[str]) -> int:
    await create_database_if_missing(DATABASE)
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    async with RedisServer() as redis:
        env = {**os.environ, "TEST_DATABASE_URL": DATABASE, "TEST_REDIS_URL": redis.url}
        ran = await asyncio.to_thread(subprocess.run, [mutmut, "run", "--max-children", "1", *names],
                                      cwd=ROOT, env=env)
    await asyncio.to_thread(subprocess.run, [mutmut, "results"], cwd=ROOT)
    return ran.returncode


if __name__ == "__main__":
    sys.exit(asyncio.run(_run(sys.argv[1:])))
