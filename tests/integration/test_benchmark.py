#!/usr/bin/python3
"""redis-benchmark as a client: it must run to the end against the server with no error, with
and without pipelining, and every INCR/DECR it sent must be counted.

This is a correctness test that happens to use the load generator; throughput is printed for
information only and never asserted (performance is compared in scripts/bench.sh). redis-benchmark
first asks CONFIG GET save/appendonly, so a server that cannot answer prints a warning here,
which fails the test. Expectations hold on redis-server 7.0.

Run: /usr/bin/python3 test_benchmark.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, run_cases  # noqa: E402

REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
RESULT = re.compile(r"^(?P<name>[^:\r\n]+): (?P<rps>[0-9.]+) requests per second")


def bench(srv, *args, timeout=60):
    """Runs redis-benchmark -q; returns {test name: rps}. A hang is a failure, not a wait."""
    args = [str(a) for a in args]
    cmd = [REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(srv.port), "-q"] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("redis-benchmark did not finish in %d s: %s"
                             % (timeout, " ".join(cmd)))
    text = (p.stdout + p.stderr).decode(errors="replace")
    assert p.returncode == 0, "redis-benchmark exited %d:\n%s" % (p.returncode, text)
    low = text.lower()
    assert "err" not in low and "error" not in low, text
    assert "warning" not in low, "redis-benchmark warned (CONFIG GET save/appendonly?):\n" + text
    results = {}
    for piece in re.split(r"[\r\n]", text):
        m = RESULT.match(piece.strip())
        if m:
            results[m.group("name")] = float(m.group("rps"))
    for name, rps in results.items():
        print("    %-16s %12.0f requests per second  (%s)" % (name, rps, " ".join(args)))
    return results


def sum_counters(srv, pattern):
    r = srv.client()
    total = 0
    for k in r.scan_iter(match=pattern, count=1000):
        total += int(r.get(k))
    return total


def run_standard(srv, extra):
    n = 20000
    res = bench(srv, "-t", "set,get,incr,mset", "-n", n, "-c", 20, "-r", 10000, *extra)
    for name in ("SET", "GET", "INCR", "MSET (10 keys)"):
        assert name in res and res[name] > 0, "no result line for %s: %r" % (name, res)
    assert sum_counters(srv, "counter:*") == n, "INCR replies lost or doubled"


@case
def standard_tests(t, srv):
    """-t set,get,incr,mset -n 20000 -c 20 -r 10000: no errors, all INCRs counted."""
    run_standard(srv, [])


@case
def standard_tests_pipelined(t, srv):
    """The same with -P 16."""
    run_standard(srv, ["-P", 16])


@case
def hot_key_custom_command(t, srv):
    """Custom command form: DECR on one hot key from 100 connections, exactly n decrements."""
    n = 20000
    with srv.raw() as c:
        c.call("SET", "hotkey", "0")
    res = bench(srv, "-n", n, "-c", 100, "DECR", "hotkey")
    assert any(k.startswith("DECR") for k in res), res
    res = bench(srv, "-n", n, "-c", 20, "-P", 16, "DECR", "hotkey")
    assert any(k.startswith("DECR") for k in res), res
    with srv.raw() as c:
        assert c.call("GET", "hotkey") == str(-2 * n)


if __name__ == "__main__":
    run_cases(__doc__)
