"""`make mutants`: the mutation pass (mutmut, configured in pyproject's [tool.mutmut]) on a database and a
redis-server of its own, so that it can run beside `make test`: Redis pub/sub channels and CLIENT LIST are
server-wide, not per db number, so a shared server would let one suite's events reach the other's
subscribers. Mutants run one at a time: the tests share one database.

    python -m devtools.mutants triggers.rules cache.store     # those modules' mutants, then their records
    python -m devtools.mutants                                # every module of [tool.mutmut] only_mutate
    python -m devtools.mutants --record triggers.related      # only write the record from what has run
    python -m devtools.mutants --survivors cache.composite    # its unexplained survivors again (new tests)

A pass stopped part way (Ctrl-C, the end of a session) resumes with the mutants not checked yet, on this
machine or on a fresh clone: mutmut's verdicts (its `.meta` file, per mutant and per function's hash) are
kept beside the record as `mutation/<module>.meta.json` and put back before a run, as mutmut would leave
them after making the mutants of the source as it is (`as_generated`): a verdict is kept only while the
hash of its function is unchanged, so an edited function's mutants, its new ones included, are run.

The pass is slow on two cores (minutes per module, an hour and more for all), so it runs module by module
and each module's result is kept in the repository, not only in mutmut's ignored `mutants/` state:
`mutation/<module>.md` holds its score and every surviving mutant, each either explained (an equivalent
mutant: the section "Explained", written by hand, kept from run to run) or listed as not yet killed, with
its diff. A survivor that a new test kills leaves the list at the next run of its module (`--survivors`).

The test selection of [tool.mutmut]: a file added to it keeps every verdict (more tests can only kill
more), so run `--survivors` of each module after; but mutmut, which fingerprints the selection in its
`mutants/` state, forgets every result on a machine that has that state: delete `mutants/` first (a fresh
clone has none; the kept verdicts are put back). A file taken out of it may have been what killed some
mutants: run the modules again whole then.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

from mutmut.stats import status_by_exit_code

from devtools.services import LOCAL_POSTGRES, RedisServer
from orm.engine import create_database_if_missing

ROOT = Path(__file__).resolve().parent.parent
DATABASE = LOCAL_POSTGRES.rsplit("/", 1)[0] + "/mutmut_test"
RECORDS = ROOT / "mutation"
# A mutant whose tests ran past their deadline (a timeout: mutmut's CPU limit, or a test's own deadline,
# devtools/mutant_tests.py) made them hang or crawl: detected, so it counts as killed, as in mutmut's score.
_DETECTED = ("killed", "timeout", "caught by type check")
_EXPLAINED = re.compile(r"^- `([^`]+)`: (.+)$")


def configured_modules() -> list[str]:
    """The dotted names of the modules [tool.mutmut] mutates."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return [path.removesuffix(".py").replace("/", ".") for path in config["only_mutate"]]


def _mutmut() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


async def _run(modules: list[str], *, survivors: bool = False) -> int:
    await create_database_if_missing(DATABASE)
    for module in modules:
        _restore(module)
    wanted = [name for module in modules for name in (surviving(module) if survivors else unchecked(module))]
    if survivors:
        # mutmut runs a mutant against the tests its stats saw calling the mutated function, and measures
        # again only tests it has not seen: a test given a new assertion (a new call) would not be run
        # against the survivor it was written for. Its stats are measured afresh.
        (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    if not wanted:
        for module in modules:
            record(module)
        return 0
    async with RedisServer() as redis:
        env = {**os.environ, "TEST_DATABASE_URL": DATABASE, "TEST_REDIS_URL": redis.url}
        ran = await asyncio.to_thread(subprocess.run, [_mutmut(), "run", "--max-children", "1", *wanted],
                                      cwd=ROOT, env=env)
    for module in modules:
        record(module)
    return ran.returncode


def _meta(module: str) -> Path:
    return ROOT / "mutants" / (module.replace(".", "/") + ".py.meta")


def _kept(module: str) -> Path:
    return RECORDS / f"{module}.meta.json"


def _restore(module: str) -> None:
    """Put the verdicts kept in the repository where mutmut reads them. mutmut writes a state for every
    module whenever it runs any, so a state here may hold no verdict at all for this one: the kept verdicts
    fill in what it lacks (`merged`) rather than only standing in for a missing state."""
    meta, kept = _meta(module), _kept(module)
    if not kept.exists():
        return
    meta.parent.mkdir(parents=True, exist_ok=True)
    local = json.loads(meta.read_text()) if meta.exists() else None
    state = as_generated(merged(local, json.loads(kept.read_text())), *current_mutants(module))
    meta.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")


def current_mutants(module: str) -> tuple[list[str], dict[str, str]]:
    """The mutants mutmut makes of the module's source as it is now (their names) and the hash it gives
    each of its functions."""
    path = Path(module.replace(".", "/") + ".py")
    return mutants_of((ROOT / path).read_text(), path)


def mutants_of(source: str, path: Path) -> tuple[list[str], dict[str, str]]:
    """What `current_mutants` says of `source`, the file at `path`, by mutmut's own generator."""
    from mutmut.__main__ import write_all_mutants_to_file
    from mutmut.utils.format_utils import get_mutant_name

    made = write_all_mutants_to_file(out=io.StringIO(), source=source, filename=path)
    return [get_mutant_name(path, name) for name in made.mutant_names], dict(made.hash_by_function_name)


def as_generated(state: dict[str, Any], names: list[str], hashes: dict[str, str]) -> dict[str, Any]:
    """`state` as mutmut leaves it when it makes the mutants `names` again: a mutant of a function whose
    hash is unchanged keeps its verdict, the others (an edited function's, renumbered) have none. mutmut
    does this only when it runs, and a module whose every mutant has a verdict is not run: without this,
    an edited function would keep the verdicts of its old code, and its new mutants would not be named."""
    old_hashes, codes = state.get("hash_by_function_name", {}), state["exit_code_by_key"]
    unchanged = {name for name, digest in hashes.items() if old_hashes.get(name) == digest}
    state["exit_code_by_key"] = {name: codes.get(name) if _function_of(name) in unchanged else None
                                 for name in names}
    state["hash_by_function_name"] = dict(hashes)
    return state


def _function_of(mutant: str) -> str:
    """mutmut's mangled function name of a mutant (`x_f`, `xǁCǁg`)."""
    return mutant.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]


def merged(local: dict[str, Any] | None, kept: dict[str, Any]) -> dict[str, Any]:
    """mutmut's state `local` with the verdicts of `kept` it lacks: a mutant not checked here takes the
    kept verdict if its function is unchanged (the same hash in both; mutmut itself drops a verdict when its
    function changes). No local state: the kept one as it is."""
    if local is None:
        return kept
    unchanged = {name for name, digest in local.get("hash_by_function_name", {}).items()
                 if kept.get("hash_by_function_name", {}).get(name) == digest}
    codes = local["exit_code_by_key"]
    for key, code in kept["exit_code_by_key"].items():
        if code is not None and codes.get(key, 0) is None and _function_of(key) in unchanged:
            codes[key] = code
    return local


def unchecked(module: str) -> list[str]:
    """What is left to run of a module: its mutants not checked yet (a pass stopped part way resumes where it
    stopped), or all of them when it never ran."""
    meta = _meta(module)
    if not meta.exists():
        return [f"{module}.*"]
    results: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return [name for name, code in results.items() if code is None]


def surviving(module: str) -> list[str]:
    """The module's mutants that survived their last run, or that no test of the selection reached, except
    those explained as equivalent in its record (no test can kill them): run again, a new test may kill
    them."""
    results: dict[str, int | None] = json.loads(_meta(module).read_text())["exit_code_by_key"]
    explained = _explanations(RECORDS / f"{module}.md")
    return [name for name, code in results.items()
            if status_by_exit_code[code] in ("survived", "no tests") and name not in explained]


def record(module: str) -> Path:
    """Write `mutation/<module>.md` from mutmut's state for that module's file; returns its path."""
    meta = json.loads(_meta(module).read_text())
    results: dict[str, int | None] = meta["exit_code_by_key"]
    statuses = Counter(status_by_exit_code[code] for code in results.values())
    # a mutant no test of the selection reaches survives too: it is listed with the others
    survivors = sorted(name for name, code in results.items() if status_by_exit_code[code] in ("survived", "no tests"))
    target = RECORDS / f"{module}.md"
    explained = _explanations(target)
    killed, checked = sum(statuses[status] for status in _DETECTED), len(results) - statuses["not checked"]
    lines = [f"# Mutation results: `{module}`", "",
             f"Written by `python -m devtools.mutants {module}` (mutmut, the tests of [tool.mutmut] in "
             "pyproject.toml). Score: killed / checked; killed counts the timeouts (the mutant made a test hang) "
             "and the mutants the type check caught.", "",
             ", ".join([f"- mutants: {len(results)}", f"checked: {checked}", f"killed: {killed}",
                        f"survived: {len(survivors)}",
                        *(f"{status}: {n}" for status, n in sorted(statuses.items())
                          if status not in ("killed", "survived", "no tests"))]),
             f"- score: {killed / checked:.1%}" if checked else "- score: not run", "",
             "## Explained", "",
             "Survivors that no test of the selection can kill: equivalent to the original (same behaviour), or",
             "killed only by a named test outside the selection (too slow to run per mutant), written by hand as",
             "`- `name`: why`; kept from run to run while the mutant survives.", ""]
    lines += [f"- `{name}`: {explained[name]}" for name in survivors if name in explained] or ["(none)"]
    # An explanation outlives a state that has not checked its mutant yet (a fresh state, a function
    # changed): it is dropped only once its mutant is killed.
    waiting = sorted(name for name, code in results.items() if code is None and name in explained)
    if waiting:
        lines += ["", "### Explained, not checked in this state", ""]
        lines += [f"- `{name}`: {explained[name]}" for name in waiting]
    lines += ["", "## Not yet killed or explained", ""]
    unexplained = [name for name in survivors if name not in explained]
    for name in unexplained:
        shown = subprocess.run([_mutmut(), "show", name], cwd=ROOT, capture_output=True, text=True).stdout
        lines += [f"### `{name}`", "", "```diff", shown.strip(), "```", ""]
    if not unexplained:
        lines.append("(none)")
    RECORDS.mkdir(exist_ok=True)
    target.write_text("\n".join(lines).rstrip() + "\n")
    _kept(module).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return target


def _explanations(target: Path) -> dict[str, str]:
    if not target.exists():
        return {}
    section = target.read_text().split("## Explained", 1)[-1].split("## Not yet killed", 1)[0]
    return {m[1]: m[2] for line in section.splitlines() if (m := _EXPLAINED.match(line))}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        for name in sys.argv[2:] or configured_modules():
            print(record(name))
        sys.exit(0)
    if sys.argv[1:2] == ["--survivors"]:
        sys.exit(asyncio.run(_run(sys.argv[2:] or configured_modules(), survivors=True)))
    sys.exit(asyncio.run(_run(sys.argv[1:] or configured_modules())))
