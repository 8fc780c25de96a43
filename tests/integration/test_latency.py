#!/usr/bin/python3
"""LATENCY end to end, first proven on redis-server 7.0 and then held against hotkv.

- latency-monitor-threshold 0 (the default) records nothing; with 10 ms, deleting a set of
  500,000 members is a "command" event and its expiry an "expire-cycle" event, with Redis's
  reply shapes for LATEST ([event, time, latest, max]) and HISTORY ([time, latency]); RESET
  answers how many events it forgot; GRAPH and DOCTOR are text reports.
- LATENCY HISTOGRAM after CONFIG RESETSTAT: calls per command and per subcommand ("client|id",
  the way INFO commandstats names them), cumulative counts that end at the number of calls,
  a container command standing for its subcommands, unknown names skipped.
- Errors: arity per subcommand ('latency|help'), unknown subcommands, GRAPH of an unknown event.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_latency.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, case, expect_error, run_cases  # noqa: E402

BIG_SET = 500_000
THRESHOLD_MS = 10


def fill_big_set(c, key):
    batch = 10_000
    for start in range(0, BIG_SET, batch):
        c.call("SADD", key, *[str(i) for i in range(start, start + batch)])


def latest_events(c):
    return {row[0]: row for row in c.call("LATENCY", "LATEST")}


@case
def monitor_records_slow_commands_and_expiry(t, srv):
    """threshold 10 ms: a big DEL is a "command" event, its expiry an "expire-cycle" one."""
    with srv.raw() as c:
        try:
            assert c.call("CONFIG", "GET", "latency-monitor-threshold") == [
                "latency-monitor-threshold", "0"]
            c.call("LATENCY", "RESET")
            fill_big_set(c, "big")
            c.call("DEL", "big")
            assert c.call("LATENCY", "LATEST") == []  # off: nothing recorded

            assert c.call("CONFIG", "SET", "latency-monitor-threshold", str(THRESHOLD_MS)) == "OK"
            fill_big_set(c, "big")
            c.call("LATENCY", "RESET")
            before = int(time.time())
            assert c.call("DEL", "big") == 1
            events = latest_events(c)
            assert "command" in events, events
            name, at, latest, worst = events["command"]
            assert before - 1 <= at <= int(time.time()) + 1, events
            assert THRESHOLD_MS <= latest <= worst, events
            history = c.call("LATENCY", "HISTORY", "command")
            assert history and all(len(s) == 2 and s[1] >= THRESHOLD_MS for s in history), history
            assert history[-1] == [at, latest], (history, events)

            graph = c.call("LATENCY", "GRAPH", "command")
            assert graph.startswith("command - high "), graph
            assert len(c.call("LATENCY", "DOCTOR")) > 0

            fill_big_set(c, "big")
            assert c.call("PEXPIRE", "big", 50) == 1
            deadline = time.monotonic() + 5
            while c.call("DBSIZE") != 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert c.call("DBSIZE") == 0
            events = latest_events(c)
            assert "expire-cycle" in events, events
            assert events["expire-cycle"][2] >= THRESHOLD_MS

            assert c.call("LATENCY", "RESET", "blabla") == 0
            assert c.call("LATENCY", "RESET", "command", "expire-cycle") == 2
            assert "command" not in latest_events(c)
            c.call("LATENCY", "RESET")
            assert c.call("LATENCY", "LATEST") == []
            assert c.call("LATENCY", "HISTORY", "command") == []
        finally:
            c.call("CONFIG", "SET", "latency-monitor-threshold", "0")


def histogram(c, *names):
    flat = c.call("LATENCY", "HISTOGRAM", *names)
    out = {}
    for i in range(0, len(flat), 2):
        body = dict(zip(flat[i + 1][::2], flat[i + 1][1::2]))
        buckets = body["histogram_usec"]
        out[flat[i]] = (body["calls"], list(zip(buckets[::2], buckets[1::2])))
    return out


@case
def histogram_counts_commands_and_subcommands(t, srv):
    """HISTOGRAM: calls per command and subcommand since CONFIG RESETSTAT, cumulative counts."""
    with srv.raw() as c:
        assert c.call("CONFIG", "RESETSTAT") == "OK"
        assert list(histogram(c)) == ["config|resetstat"]
        assert c.call("CONFIG", "RESETSTAT") == "OK"
        for i in range(5):
            c.call("SET", "k%d" % i, "v")
        c.call("GET", "k0")
        c.call("CLIENT", "ID")
        c.call("CLIENT", "GETNAME")
        h = histogram(c)
        assert set(h) == {"config|resetstat", "set", "get", "client|id", "client|getname"}, h
        calls, buckets = h["set"]
        assert calls == 5
        counts = [n for _, n in buckets]
        bounds = [b for b, _ in buckets]
        assert counts == sorted(counts) and counts[-1] == 5, buckets
        assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds), buckets
        assert h["get"][0] == 1 and h["client|id"][0] == 1

        # A container command stands for its subcommands; unknown names are skipped.
        assert set(histogram(c, "client")) == {"client|id", "client|getname"}
        assert list(histogram(c, "client|id")) == ["client|id"]
        assert set(histogram(c, "blabla", "set", "zadd", "get")) == {"set", "get"}
        assert histogram(c, "blabla") == {}
        info = c.call("INFO", "commandstats")
        assert "cmdstat_client|id:calls=1," in info, info
        assert "cmdstat_set:calls=5," in info, info


@case
def errors_follow_redis(t, srv):
    """Subcommand arity, unknown subcommands and GRAPH of an unknown event get Redis's errors."""
    with srv.raw() as c:
        expect_error(c.call("LATENCY", "HELP", "xxx"),
                     "ERR wrong number of arguments for 'latency|help' command")
        expect_error(c.call("LATENCY", "HISTORY"),
                     "ERR wrong number of arguments for 'latency|history' command")
        expect_error(c.call("LATENCY", "LATEST", "x"),
                     "ERR wrong number of arguments for 'latency|latest' command")
        expect_error(c.call("LATENCY", "NOPE"), "ERR unknown subcommand 'NOPE'. Try LATENCY HELP.")
        c.call("LATENCY", "RESET")
        expect_error(c.call("LATENCY", "GRAPH", "nothing"),
                     "ERR No samples available for event 'nothing'")
        helptext = c.call("LATENCY", "HELP")
        assert helptext[0].startswith("LATENCY <subcommand>"), helptext
        for word in ("DOCTOR", "GRAPH", "HISTORY", "LATEST", "RESET", "HISTOGRAM", "HELP"):
            assert any(line.startswith(word) for line in helptext), (word, helptext)
        r = c.call("CONFIG", "SET", "latency-monitor-threshold", "-1")
        assert isinstance(r, RespError), r


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
