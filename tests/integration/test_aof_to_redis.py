#!/usr/bin/python3
"""The append-only log as Redis commands: a stock redis-server fed `hotkv-check-aof --resp`
through `redis-cli --pipe` holds the same data as HotKV restarted from that log.

A bounded mixed workload (strings with and without deadlines, counters, hashes, sets, sorted
sets, lists, streams, expiry changes, RENAME/COPY/MOVE, several databases, FLUSHDB, SWAPDB, a
MULTI/EXEC and a Lua script across shards, a rewrite in the middle) runs against HotKV with
appendfsync always; then every key of every database is compared between a restarted HotKV
and the redis-server: TYPE, the value through that type's reads, and PTTL within a margin.

Run: /usr/bin/python3 test_aof_to_redis.py --server build/hotkv --threads 4
"""

import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dataset import (atomic, compare, hashes, keyspace, lists, other_databases, sets,  # noqa: E402
                     snapshot, streams, strings, zsets)
from server import DataDir, Server, case, hotkv_only, run_cases, wait_rewrite_done  # noqa: E402

def workload(srv):
    rnd = random.Random(7)
    c = srv.client()
    strings(c, rnd)
    hashes(c, rnd)
    sets(c, rnd)
    # A rewrite in the middle: what came before is read back from a base snapshot.
    c.bgrewriteaof()
    wait_rewrite_done(c)
    zsets(c, rnd)
    lists(c, rnd)
    streams(c, rnd)
    keyspace(c, rnd)
    other_databases(srv, rnd)
    atomic(c, srv)
    c.set("last", "write")


@case
@hotkv_only("translates HotKV's own log")
def redis_fed_the_log_as_commands_holds_the_same_data(t, srv):
    """hotkv-check-aof --resp | redis-cli --pipe rebuilds every key of every database."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            workload(s)
        finally:
            s.stop()
        with Server("redis") as r:
            stream, text = translate_and_pipe(check, d, r)
            assert stream.startswith(b"*"), stream[:200]
            assert "errors: 0," in text, text
            s2 = t.server(extra_args=d.args("always")).start()
            try:
                hot = snapshot(s2)
                red = snapshot(r)
            finally:
                s2.stop()
        assert len(hot) > 100, len(hot)
        assert any(db == 5 for db, _ in hot), "SWAPDB's keys are missing"
        compare(hot, red)
        # A HotKV fed the same stream (as a HotKV replica would be) holds the same data too.
        with t.server() as replica:
            _, text = translate_and_pipe(check, d, replica)
            assert "errors: 0," in text, text
            compare(hot, snapshot(replica))


def translate_and_pipe(check, d, r):
    """The log in d as commands, piped into the redis-server r; returns (stream, pipe output)."""
    out = subprocess.run([check, "--resp", os.path.join(d.path, "appendonlydir")],
                         capture_output=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr.decode())
    piped = subprocess.run(["redis-cli", "-p", str(r.port), "--pipe"], input=out.stdout,
                           capture_output=True, timeout=120)
    return out.stdout, piped.stdout.decode(errors="replace")


@case
@hotkv_only("inventory items are HotKV's own")
def inventory_items_reach_redis_as_refused_internal_commands(t, srv):
    """Item ops travel as HOTKV.EFFECT, which redis-server refuses one by one; every other key
    still arrives."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            c.set("before", "1")
            c.execute_command("INV.CREATE", "item", 10)
            c.execute_command("INV.RESERVE", "item", "h1", 2, 600000, "OWNER", "alice")
            c.execute_command("INV.RESERVE", "item", "h2", 1, 600000)
            c.execute_command("INV.COMMIT", "item", "h1")
            c.execute_command("INV.RELEASE", "item", "h2")
            c.execute_command("INV.RESTOCK", "item", 5)
            c.rpush("after", "a", "b")
        finally:
            s.stop()
        with Server("redis") as r:
            stream, text = translate_and_pipe(check, d, r)
            internal = stream.count(b"\r\nHOTKV.EFFECT\r\n")
            assert internal == 6, (internal, stream)
            assert "errors: %d," % internal in text, text
            rc = r.client()
            assert rc.get("before") == "1"
            assert rc.lrange("after", 0, -1) == ["a", "b"]
            assert rc.exists("item") == 0


def item_state(c, key):
    """INV.GET and each hold's INV.HOLD fields, but ttl_ms (which moves with the clock;
    expires_at is compared)."""
    holds = {}
    for h in ("h1", "h2", "h3"):
        fields = c.execute_command("INV.HOLD", key, h)
        holds[h] = {k: v for k, v in zip(fields[::2], fields[1::2]) if k != "ttl_ms"}
    return c.execute_command("INV.GET", key), holds


@case
@hotkv_only("a HotKV replica applies HOTKV.EFFECT")
def hotkv_fed_the_log_as_commands_holds_the_same_items(t, srv):
    """The same stream piped into a fresh HotKV applies HOTKV.EFFECT as replay does: the items
    and their holds match a HotKV restarted from the log."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            c.set("plain", "1")
            c.execute_command("INV.CREATE", "item", 10, "MAXPEROWNER", 5)
            c.execute_command("INV.RESERVE", "item", "h1", 2, 600000, "OWNER", "alice")
            c.execute_command("INV.RESERVE", "item", "h2", 1, 600000)
            c.execute_command("INV.RESERVE", "item", "h3", 3, 600000, "OWNER", "bob")
            c.execute_command("INV.COMMIT", "item", "h1")
            c.execute_command("INV.RELEASE", "item", "h2")
            c.execute_command("INV.EXTEND", "item", "h3", 900000)
            c.execute_command("INV.RESTOCK", "item", 5)
            c.copy("item", "item-copy")
        finally:
            s.stop()
        with t.server() as replica:
            stream, text = translate_and_pipe(check, d, replica)
            assert "errors: 0," in text, text
            s2 = t.server(extra_args=d.args("always")).start()
            try:
                rc, hc = replica.client(), s2.client()
                assert rc.get("plain") == "1"
                for key in ("item", "item-copy"):
                    got, want = item_state(rc, key), item_state(hc, key)
                    assert got == want, (key, got, want)
            finally:
                s2.stop()
            with replica.raw() as raw:
                r = raw.call("EVAL", "return redis.call('HOTKV.EFFECT', 'x', '68', '1')", 0)
                assert "not allowed from script" in str(r), r


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
