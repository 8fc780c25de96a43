#!/usr/bin/python3
"""Reads what Redis's Tcl suite printed for scripts/redis_suite.sh, and judges a run.

  redis_suite_report.py parse UNIT LOG STATE SECONDS OUT
      appends one row per test of LOG to OUT/tests.tsv (unit, result, test) and the unit's
      status to OUT/units.tsv. STATE is what the runner saw of the server and of runtest:
      ran, crashed, hung or timeout.
  redis_suite_report.py compare BASELINE OUT KNOWN UNIT...
      exits 1 when a unit did not finish, or when a test that passed in BASELINE did not pass
      in OUT and KNOWN does not list it (unit <TAB> test <TAB> reason).

runtest reports each test on a line of its own: "[ok]: NAME (N ms)", "[err]: NAME in FILE"
(followed by the failure's details), "[skip]: NAME" (skip list), "[ignore]: NAME" (tags),
"[exception]: ..." (the unit aborted) and "[TIMEOUT]: ..." (its own watchdog); the unit ends
with "[1/1 done]: UNIT (N seconds)".
"""
import os
import re
import sys

LINE = re.compile(r"^\[(ok|err|skip|ignore|exception|TIMEOUT|\d+/\d+ done)\]:? ?(.*)$")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def parse(unit, log, state, seconds, out):
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    rows, finished, aborted = [], False, False
    for line in (COLOUR.sub("", l) for l in text.splitlines()):
        m = LINE.match(line)
        if not m:
            continue
        kind, rest = m.groups()
        if kind == "ok":
            rows.append(("ok", re.sub(r" \(\d+ ms\)$", "", rest)))
        elif kind == "err":
            rows.append(("err", re.sub(r" in tests/\S+\.tcl$", "", rest)))
        elif kind in ("skip", "ignore"):
            rows.append((kind, rest))
        elif kind in ("exception", "TIMEOUT"):
            aborted = True
            rows.append(("exception", rest.strip()[:300]))
        else:
            finished = True
    if state != "ran":
        status = state
    elif aborted or not finished:
        status = "exception"
    elif any(r == "err" for r, _ in rows):
        status = "fail"
    elif any(r == "ok" for r, _ in rows):
        status = "pass"
    else:
        status = "no_tests"
    with open(os.path.join(out, "tests.tsv"), "a") as f:
        for result, name in rows:
            f.write(f"{unit}\t{result}\t{name.replace(chr(9), ' ')}\n")
    with open(os.path.join(out, "units.tsv"), "a") as f:
        f.write(f"{unit}\t{status}\t{seconds}\n")
    counts = {r: sum(1 for x, _ in rows if x == r) for r in ("ok", "err", "skip", "ignore")}
    print(f"   {status}: {counts['ok']} ok, {counts['err']} failed, {counts['skip']} skipped, "
          f"{counts['ignore']} left out by tag, {seconds} s")


def read_tests(path):
    """(unit, test) -> result; a test that ran several times passes only if it always did."""
    res = {}
    if os.path.exists(path):
        with open(path) as f:
            next(f, None)
            for line in f:
                parts = line.rstrip("\n").split("\t", 2)
                if len(parts) == 3:
                    unit, result, name = parts
                    prev = res.get((unit, name))
                    res[(unit, name)] = result if prev in (None, result) else "mixed"
    return res


def read_known(path):
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                unit, name, reason = (line.split("\t") + ["", ""])[:3]
                if not reason.strip():
                    sys.exit(f"redis_suite: {path}: no reason given for '{name}'")
                known[(unit, name)] = reason
    return known


def compare(baseline_path, out, known_path, units):
    base = read_tests(baseline_path)
    if not base:
        sys.exit(f"redis_suite: no baseline at {baseline_path}")
    here = read_tests(os.path.join(out, "tests.tsv"))
    known = read_known(known_path)
    status = {}
    with open(os.path.join(out, "units.tsv")) as f:
        next(f, None)
        for line in f:
            unit, st, _ = line.rstrip("\n").split("\t")
            status[unit] = st
    bad_units, regressions, listed, fixed = [], [], [], []
    total_ok = total_base = 0
    for unit in units:
        expected = [k for k, r in base.items() if k[0] == unit and r == "ok"]
        st = status.get(unit, "missing")
        # A unit whose every test is left out in external mode runs none on Redis either.
        if st not in ("pass", "fail") and not (st == "no_tests" and not expected):
            bad_units.append((unit, st))
        passed = [k for k in expected if here.get(k) == "ok"]
        total_ok += len(passed)
        total_base += len(expected)
        print(f"{unit}: {len(passed)}/{len(expected)} of redis-server's passing tests pass; {st}")
        for k in expected:
            if here.get(k) == "ok":
                if k in known:
                    fixed.append(k)
            elif k in known:
                listed.append(k)
            else:
                regressions.append((k, here.get(k, "not run")))
    for k in known:
        if k[0] in units and base.get(k) != "ok":
            print(f"note: known failure not among redis-server's passing tests: {k[0]}: {k[1]}")
    print(f"total: {total_ok}/{total_base}; {len(listed)} known failures; output in {out}")
    for k in fixed:
        print(f"now passes, drop it from the known failures: {k[0]}\t{k[1]}")
    for unit, st in bad_units:
        print(f"FAIL unit {unit} ended {st}")
    for (unit, name), result in regressions:
        print(f"FAIL {unit}: {name} ({result})")
    return 1 if bad_units or regressions else 0


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "parse":
        parse(*sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]))
    else:
        sys.exit(__doc__)
