#!/usr/bin/python3
"""Hashes end to end, as per-warehouse stock counters: many shoppers decrement one hash's fields
with HINCRBY at the same time, and not one decrement is lost.

- 200 connections x 5 HINCRBY -1 on four warehouse fields of one hash: every field ends at 0,
  and every value from 249 down to 0 was handed out exactly once per warehouse.
- Commands answer as Redis: small hashes keep insertion order (HGETALL, HKEYS, HVALS, HSCAN),
  HDEL of the last field deletes the key, OBJECT ENCODING goes listpack -> hashtable past 128
  fields or 64 bytes and never back, HINCRBYFLOAT formats like INCRBYFLOAT.
- RESP3: HGETALL is a map, HRANDFIELD WITHVALUES gives [field, value] pairs, nulls are nulls.
- HSCAN of a 2,000-field hash returns every field that stays for the whole scan while another
  connection adds and deletes other fields between calls.
- HRANDFIELD: negative counts repeat and return exactly |count| fields, positive ones are
  distinct.
- Keyspace events hset, hdel (and del for an emptied hash), hincrby, hincrbyfloat.
- A kill -9 with appendfsync always, then a BGREWRITEAOF and a clean restart, keep every hash
  with its values (HINCRBYFLOAT results to the digit) and its encoding.
- Misuse gets Redis's exact errors, WRONGTYPE both ways.

Every loop is bounded by a count and a deadline. Expectations hold on redis-server 7.0 (HSCAN
NOVALUES is Redis 7.4, so that case runs against hotkv only).

Run: /usr/bin/python3 test_hashes.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (RespError, case, expect_error, hotkv_only, run_cases,  # noqa: E402
                    spread_keys, wait_rewrite_done)

import server as harness  # noqa: E402

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
CONNECTIONS = 200
DECREMENTS = 5
WAREHOUSES = 4


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


@case
def flash_sale_stock_counters_lose_no_decrement(t, srv):
    """200 connections x 5 HINCRBY -1 on warehouse fields: no lost update, no repeated value."""
    key = "stock:{sku-1001}"
    per_field = CONNECTIONS * DECREMENTS // WAREHOUSES
    with srv.raw() as c:
        args = []
        for w in range(WAREHOUSES):
            args += ["wh:%d" % w, per_field]
        assert c.call("HSET", key, *args) == WAREHOUSES
    results = [[] for _ in range(CONNECTIONS)]
    errors = []
    start = threading.Barrier(CONNECTIONS, timeout=60)
    harness.raise_nofile(CONNECTIONS + 100)

    def shopper(n):
        try:
            with srv.raw() as c:
                start.wait()
                for _ in range(DECREMENTS):
                    field = "wh:%d" % (n % WAREHOUSES)
                    r = c.call("HINCRBY", key, field, -1)
                    if not isinstance(r, int):
                        raise AssertionError("HINCRBY replied %r" % (r,))
                    results[n].append((field, r))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("shopper %d: %r" % (n, e))

    threads = [threading.Thread(target=shopper, args=(n,)) for n in range(CONNECTIONS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "shoppers still running after 120 s"
    assert not errors, errors[:5]
    handed_out = {"wh:%d" % w: [] for w in range(WAREHOUSES)}
    for rs in results:
        assert len(rs) == DECREMENTS
        for field, r in rs:
            handed_out[field].append(r)
    for field, values in handed_out.items():
        assert sorted(values) == list(range(per_field)), (field, sorted(values)[:10])
    with srv.raw() as c:
        final = pairs(c.call("HGETALL", key))
        assert final == {"wh:%d" % w: "0" for w in range(WAREHOUSES)}, final
        # One more shopper finds nothing left: the counter goes negative, as HINCRBY does.
        assert c.call("HINCRBY", key, "wh:0", -1) == -1


@case
def commands_reply_as_redis(t, srv):
    """HSET/HGET/HMGET/HGETALL/HKEYS/HVALS/HDEL/HLEN/HSTRLEN/HEXISTS/HSETNX/HMSET replies."""
    r = srv.client()
    assert r.hset("h", mapping={"c": "3", "a": "1", "b": "2"}) == 3
    assert r.hset("h", "a", "10") == 0
    assert r.hget("h", "a") == "10"
    assert r.hget("h", "zz") is None
    assert r.hmget("h", ["a", "zz", "c"]) == ["10", None, "3"]
    with srv.raw() as c:
        assert c.call("HGETALL", "h") == ["c", "3", "a", "10", "b", "2"]
        assert c.call("HKEYS", "h") == ["c", "a", "b"]
        assert c.call("HVALS", "h") == ["3", "10", "2"]
        assert c.call("HSCAN", "h", 0) == ["0", ["c", "3", "a", "10", "b", "2"]]
        assert c.call("HSCAN", "h", 0, "MATCH", "[ab]", "COUNT", 1) == ["0", ["a", "10", "b",
                                                                             "2"]]
        assert c.call("HMSET", "h", "d", "4", "e", "5") == "OK"
        assert c.call("HSETNX", "h", "d", "x") == 0
        assert c.call("HSETNX", "h", "f", "hello") == 1
        assert c.call("HLEN", "h") == 6
        assert c.call("HSTRLEN", "h", "f") == 5
        assert c.call("HSTRLEN", "h", "nope") == 0
        assert c.call("HEXISTS", "h", "f") == 1
        assert c.call("HEXISTS", "nokey", "f") == 0
        assert c.call("TYPE", "h") == "hash"
        assert c.call("HDEL", "h", "a", "a", "zz") == 1
        assert c.call("HDEL", "h", "b", "c", "d", "e", "f") == 5
        assert c.call("EXISTS", "h") == 0
        assert c.call("HGETALL", "h") == []
        assert c.call("HRANDFIELD", "h") is None
        assert c.call("HRANDFIELD", "h", 3) == []
        assert c.call("HSCAN", "h", 0) == ["0", []]
        # Counters.
        assert c.call("HINCRBY", "n", "i", 5) == 5
        assert c.call("HINCRBY", "n", "i", -8) == -3
        assert c.call("HINCRBYFLOAT", "n", "x", "10.5") == "10.5"
        assert c.call("HINCRBYFLOAT", "n", "x", "0.1") == "10.6"
        assert c.call("HINCRBYFLOAT", "n", "x", "-10.6") == "0"
        assert c.call("HINCRBYFLOAT", "n", "y", "5.0e3") == "5000"
        assert c.call("HINCRBYFLOAT", "n", "i", "1.5") == "-1.5"
        assert c.call("HGET", "n", "i") == "-1.5"


def use_128_entries(t, c):
    """HotKV uses the thresholds redis.conf ships with (128 entries, 64 bytes); redis-server
    started without a config file compiles in 512 entries, so the reference is told."""
    if not t.is_hotkv:
        assert c.call("CONFIG", "SET", "hash-max-listpack-entries", 128) == "OK"


@case
def encodings_follow_redis_thresholds(t, srv):
    """listpack up to 128 fields and 64-byte strings, then hashtable for good."""
    with srv.raw() as c:
        use_128_entries(t, c)
        args = []
        for i in range(128):
            args += ["f%d" % i, "v"]
        assert c.call("HSET", "e", *args) == 128
        assert c.call("OBJECT", "ENCODING", "e") == "listpack"
        assert c.call("HSET", "e", "f128", "v") == 1
        assert c.call("OBJECT", "ENCODING", "e") == "hashtable"
        assert c.call("HDEL", "e", *["f%d" % i for i in range(120)]) == 120
        assert c.call("OBJECT", "ENCODING", "e") == "hashtable"
        assert c.call("HSET", "v", "f", "x" * 64, "x" * 64, "v") == 2
        assert c.call("OBJECT", "ENCODING", "v") == "listpack"
        assert c.call("HSETNX", "v", "g", "x" * 65) == 1
        assert c.call("OBJECT", "ENCODING", "v") == "hashtable"
        assert c.call("HINCRBYFLOAT", "fl", "x", "1e100") is not None
        assert c.call("OBJECT", "ENCODING", "fl") == "hashtable"


@case
def resp3_reply_shapes(t, srv):
    """HELLO 3: HGETALL map, HRANDFIELD WITHVALUES pairs, null for a missing field or key."""
    with srv.raw() as c:
        assert isinstance(c.call("HELLO", "3"), dict)
        assert c.call("HSET", "h", "a", "1", "b", "2") == 2
        assert c.call("HGETALL", "h") == {"a": "1", "b": "2"}
        assert c.call("HGETALL", "nokey") == {}
        assert c.call("HKEYS", "h") == ["a", "b"]
        assert c.call_bytes("HGET", "h", "zz") == b"_\r\n"
        assert c.call_bytes("HRANDFIELD", "nokey") == b"_\r\n"
        assert c.call("HMGET", "h", "a", "zz") == ["1", None]
        assert c.call("HRANDFIELD", "h", 5, "WITHVALUES") == [["a", "1"], ["b", "2"]]
        assert c.call("HRANDFIELD", "h", 0, "WITHVALUES") == []
        rep = c.call("HRANDFIELD", "h", -5, "WITHVALUES")
        assert len(rep) == 5 and all(p in (["a", "1"], ["b", "2"]) for p in rep), rep
        assert c.call("HSCAN", "h", 0) == ["0", ["a", "1", "b", "2"]]
        assert c.call_bytes("HINCRBYFLOAT", "h", "a", "1.5") == b"$3\r\n2.5\r\n"


@case
def hscan_returns_every_stable_field_while_hash_changes(t, srv):
    """2,000 stable fields, others added and deleted between calls: each stable one is seen."""
    key = "big"
    stable = 2000
    with srv.raw() as c, srv.raw() as writer:
        for start in range(0, stable, 500):
            args = []
            for i in range(start, start + 500):
                args += ["s:%d" % i, i]
            c.call("HSET", key, *args)
        seen = {}
        cursor = "0"
        calls = 0
        churn = 0
        deadline = time.monotonic() + 60
        while True:
            cursor, items = c.call("HSCAN", key, cursor, "COUNT", 50)
            for f, v in zip(items[0::2], items[1::2]):
                seen[f] = v
            calls += 1
            # Churn between calls: grow the table a lot, then shrink it back.
            if calls < 20:
                writer.call("HSET", key, *sum([["t:%d" % (churn + j), j] for j in range(200)], []))
                churn += 200
            elif churn > 0:
                batch = ["t:%d" % j for j in range(max(0, churn - 400), churn)]
                writer.call("HDEL", key, *batch)
                churn = max(0, churn - 400)
            if cursor == "0" or calls > 5000 or time.monotonic() > deadline:
                break
        assert cursor == "0", "scan did not finish in %d calls" % calls
        missing = [i for i in range(stable) if seen.get("s:%d" % i) != str(i)]
        assert not missing, "stable fields never returned: %r" % missing[:10]
        assert calls > 10


@case
@hotkv_only("HSCAN NOVALUES arrived in Redis 7.4; the reference here is 7.0")
def hscan_novalues_returns_fields_only(t, srv):
    """HSCAN NOVALUES lists fields only, for listpack and hashtable hashes."""
    with srv.raw() as c:
        assert c.call("HSET", "h", "a", "1", "b", "2") == 2
        assert c.call("HSCAN", "h", 0, "NOVALUES") == ["0", ["a", "b"]]
        args = []
        for i in range(300):
            args += ["f%d" % i, i]
        assert c.call("HSET", "big", *args) == 300
        seen = set()
        cursor = "0"
        for _ in range(1000):
            cursor, items = c.call("HSCAN", "big", cursor, "NOVALUES")
            seen.update(items)
            if cursor == "0":
                break
        assert seen == {"f%d" % i for i in range(300)}


@case
def hrandfield_counts(t, srv):
    """Negative counts repeat and return exactly |count|; positive counts are distinct."""
    with srv.raw() as c:
        args = []
        for i in range(200):
            args += ["f%d" % i, "v%d" % i]
        assert c.call("HSET", "h", *args) == 200
        assert c.call("HSET", "small", "a", "1", "b", "2", "c", "3") == 3
        rep = c.call("HRANDFIELD", "small", -30)
        assert len(rep) == 30 and set(rep) <= {"a", "b", "c"}, rep
        assert sorted(c.call("HRANDFIELD", "small", 10)) == ["a", "b", "c"]
        for n in (1, 10, 100, 150, 199, 200, 500):
            rep = c.call("HRANDFIELD", "h", n, "WITHVALUES")
            m = pairs(rep)
            assert len(rep) == 2 * min(n, 200) and len(m) == min(n, 200), n
            assert all(v == "v" + f[1:] for f, v in m.items())
        rep = c.call("HRANDFIELD", "h", -500, "WITHVALUES")
        assert len(rep) == 1000
        assert all(v == "v" + f[1:] for f, v in zip(rep[0::2], rep[1::2]))
        assert c.call("HRANDFIELD", "h") in {"f%d" % i for i in range(200)}


@case
def keyspace_events_for_hash_writes(t, srv):
    """hset, hdel, del (emptied), hincrby, hincrbyfloat on __keyevent@0__."""
    with srv.raw() as sub, srv.raw() as c:
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "Egh") == "OK"
        try:
            assert sub.call("PSUBSCRIBE", "__keyevent@0__:*")[0] == "psubscribe"
            c.call("HSET", "ev", "a", "1", "b", "2")
            c.call("HSETNX", "ev", "a", "x")
            c.call("HMSET", "ev", "c", "3")
            c.call("HINCRBY", "ev", "n", 2)
            c.call("HINCRBYFLOAT", "ev", "n", "0.5")
            c.call("HDEL", "ev", "zz")
            c.call("HDEL", "ev", "a", "b", "c", "n")
            want = ["hset", "hset", "hincrby", "hincrbyfloat", "hdel", "del"]
            got = []
            for _ in want:
                m = sub.read_reply()
                assert m[0] == "pmessage" and m[3] == "ev", m
                got.append(m[2].split(":", 1)[1])
            assert got == want, got
        finally:
            c.call("CONFIG", "SET", "notify-keyspace-events", "")


@case
def kill9_then_rewrite_keeps_hashes(t, srv):
    """appendfsync always, kill -9, restart, BGREWRITEAOF, restart: same hashes, encodings."""
    d = tempfile.mkdtemp(prefix="hotkv-hashes-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    if not t.is_hotkv:
        args += ["--hash-max-listpack-entries", "128"]  # see use_128_entries
    keys = spread_keys("persist:h:", 3)

    def snapshot(c):
        out = {}
        for k in keys + ["big", "fl"]:
            out[k] = (c.call("TYPE", k), c.call("OBJECT", "ENCODING", k),
                      sorted(pairs(c.call("HGETALL", k)).items()))
        return out

    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            c = s.raw()
            for n, k in enumerate(keys):
                assert c.call("HSET", k, "a", n, "b", "x", "c", "y") == 3
                assert c.call("HINCRBY", k, "a", 10) == n + 10
            assert c.call("HDEL", keys[0], "b") == 1
            assert c.call("HINCRBYFLOAT", "fl", "x", "0.1") == "0.1"
            assert c.call("HINCRBYFLOAT", "fl", "x", "0.2") == "0.3"
            assert c.call("HINCRBYFLOAT", "fl", "y", "1.1e3") == "1100"
            for i in range(0, 300, 100):
                c.call("HSET", "big", *sum([["f%d" % j, j] for j in range(i, i + 100)], []))
            assert c.call("HDEL", "big", *["f%d" % j for j in range(290)]) == 290
            assert c.call("OBJECT", "ENCODING", "big") == "hashtable"
            assert c.call("HSET", "gone", "a", "1") == 1
            assert c.call("HDEL", "gone", "a") == 1
            before = snapshot(c)
            c.close()
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            with s2.raw() as c:
                after = snapshot(c)
                if not t.is_hotkv:
                    # Redis rebuilds a hash from its log without the conversion history, so a
                    # shrunk hashtable comes back as a listpack; HotKV keeps the encoding.
                    after["big"] = (after["big"][0], "hashtable", after["big"][2])
                assert after == before, (before, after)
                assert c.call("EXISTS", "gone") == 0
                assert c.call("BGREWRITEAOF") is not None
                wait_rewrite_done(s2.client())
                assert c.call("HSET", "fl", "z", "after-rewrite") == 1
        finally:
            s2.stop()
        s3 = t.server(extra_args=args).start()
        try:
            with s3.raw() as c:
                assert c.call("HGET", "fl", "z") == "after-rewrite"
                assert c.call("HDEL", "fl", "z") == 1
                after = snapshot(c)
                if not t.is_hotkv:
                    after["big"] = (after["big"][0], "hashtable", after["big"][2])
                assert after == before, (before, after)
        finally:
            s3.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def misuse_gets_redis_errors(t, srv):
    """Exact error texts for arity, numbers, floats, cursors, counts and WRONGTYPE."""
    with srv.raw() as c:
        assert c.call("HSET", "h", "s", "hello", "big", "9223372036854775807", "n", "1") == 3
        expect_error(c.call("HSET", "h", "a", "1", "b"),
                     "ERR wrong number of arguments for 'hset' command")
        expect_error(c.call("HMSET", "h", "a"), "ERR wrong number of arguments for 'hmset' command")
        expect_error(c.call("HGET", "h"), "ERR wrong number of arguments for 'hget' command")
        expect_error(c.call("HINCRBY", "h", "n", "x"),
                     "ERR value is not an integer or out of range")
        expect_error(c.call("HINCRBY", "h", "s", 1), "ERR hash value is not an integer")
        expect_error(c.call("HINCRBY", "h", "big", 1), "ERR increment or decrement would overflow")
        expect_error(c.call("HINCRBYFLOAT", "h", "n", "x"), "ERR value is not a valid float")
        expect_error(c.call("HINCRBYFLOAT", "h", "n", "inf"), "ERR value is NaN or Infinity")
        expect_error(c.call("HINCRBYFLOAT", "h", "s", 1), "ERR hash value is not a float")
        expect_error(c.call("HSCAN", "h", "x"), "ERR invalid cursor")
        expect_error(c.call("HSCAN", "h", 0, "COUNT", 0), "ERR syntax error")
        expect_error(c.call("HSCAN", "h", 0, "BOGUS"), "ERR syntax error")
        expect_error(c.call("HRANDFIELD", "h", "x"), "ERR value is not an integer or out of range")
        expect_error(c.call("HRANDFIELD", "h", 1, "WITHSCORES"), "ERR syntax error")
        expect_error(c.call("HRANDFIELD", "h", "-9223372036854775808"),
                     "ERR value is out of range, value must between -9223372036854775807 and "
                     "9223372036854775807")
        expect_error(c.call("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"),
                     "ERR value is out of range")
        assert c.call("SET", "str", "v") == "OK"
        assert c.call("XADD", "stream", "1-0", "f", "v") == "1-0"
        for k in ("str", "stream"):
            for cmd in (("HSET", k, "f", "v"), ("HGET", k, "f"), ("HGETALL", k),
                        ("HDEL", k, "f"), ("HINCRBY", k, "f", 1), ("HSCAN", k, 0),
                        ("HRANDFIELD", k, 2), ("HLEN", k)):
                expect_error(c.call(*cmd), WRONGTYPE)
        for cmd in (("GET", "h"), ("INCR", "h"), ("APPEND", "h", "x"),
                    ("XADD", "h", "*", "f", "v"), ("XLEN", "h")):
            expect_error(c.call(*cmd), WRONGTYPE)
        assert c.call("HGET", "h", "s") == "hello"
        assert isinstance(c.call("HGET", "h", "n"), str)
        assert not isinstance(c.call("HLEN", "h"), RespError)


if __name__ == "__main__":
    harness.READY_TIMEOUT_S = 60
    run_cases(__doc__.splitlines()[0])
