"""The mutation pass's bookkeeping (devtools/mutants.py): verdicts kept in the repository survive a run of
another module, which leaves mutmut a fresh state, without verdicts, for every module."""

from __future__ import annotations

from pathlib import Path

from devtools.mutants import as_generated, merged, mutants_of


def _state(codes: dict[str, int | None], hashes: dict[str, str]) -> dict[str, object]:
    return {"exit_code_by_key": dict(codes), "hash_by_function_name": dict(hashes), "durations_by_key": {}}


def test_kept_verdicts_fill_a_fresh_state_for_unchanged_functions_only() -> None:
    kept = _state({"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 0, "m.xǁCǁg__mutmut_1": 1, "m.x_h__mutmut_1": 1},
                  {"x_f": "aa", "xǁCǁg": "bb", "x_h": "cc"})
    fresh = _state({"m.x_f__mutmut_1": None, "m.x_f__mutmut_2": None, "m.xǁCǁg__mutmut_1": None,
                    "m.x_h__mutmut_1": None, "m.x_new__mutmut_1": None},
                   {"x_f": "aa", "xǁCǁg": "bb", "x_h": "changed", "x_new": "dd"})
    codes = merged(fresh, kept)["exit_code_by_key"]
    assert codes == {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 0, "m.xǁCǁg__mutmut_1": 1,
                     "m.x_h__mutmut_1": None,  # its function changed: checked again
                     "m.x_new__mutmut_1": None}


def test_a_verdict_of_this_machine_wins_and_no_state_takes_the_kept_one() -> None:
    kept = _state({"m.x_f__mutmut_1": 0}, {"x_f": "aa"})
    here = _state({"m.x_f__mutmut_1": 1}, {"x_f": "aa"})
    assert merged(here, kept)["exit_code_by_key"] == {"m.x_f__mutmut_1": 1}
    assert merged(None, kept) is kept


def test_a_function_edited_since_its_verdicts_is_checked_again_with_its_new_mutants() -> None:
    """A fresh clone has no mutmut state: the kept one is put back whole, every verdict in it. A function
    edited since has another hash now: its mutants, as mutmut makes them now (more, or fewer, renumbered),
    have no verdict, so they are run; an unchanged function's keep theirs."""
    source = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n"
    names, hashes = mutants_of(source, Path("m.py"))
    kept = _state(dict.fromkeys(names, 1), hashes)
    edited, edited_hashes = mutants_of(source.replace("x * 2", "x * 2 if x else 3"), Path("m.py"))
    state = as_generated(merged(None, kept), edited, edited_hashes)
    codes = state["exit_code_by_key"]
    assert set(codes) == set(edited) and len(edited) > len(names)
    assert {name for name, code in codes.items() if code is None} == {n for n in edited if ".x_g__" in n}
    assert all(code == 1 for name, code in codes.items() if ".x_f__" in name)
    assert state["hash_by_function_name"] == edited_hashes
