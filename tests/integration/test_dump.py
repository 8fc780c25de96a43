#!/usr/bin/python3
"""DUMP and RESTORE end to end, first proven on redis-server 7.0 and then held against hotkv.

- Every type both servers have (strings, lists, sets, hashes, sorted sets), small and large
  (each of redis-server's encodings): DUMP on a reference redis-server and RESTORE on the
  target gives the same contents, and the reverse.
- RESTORE's TTL, ABSTTL, REPLACE, BUSYKEY, an expired TTL deleting a replaced key, the
  "restore" event, WATCH seeing a RESTORE, keys on every shard.
- A kill -9 with appendfsync always keeps restored values and their TTLs.
- Redis's errors: bad payloads, checksums, syntax, TTL/IDLETIME/FREQ ranges.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_dump.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import RespError, Server, case, run_cases, spread_keys  # noqa: E402


OK = (True, b"OK")  # what redis-py gives for RESTORE's +OK


def bclient(srv):
    return srv.client(decode_responses=False)


def fill(r, prefix):
    """One key per type and encoding, named prefix + what it is."""
    r.set(prefix + "str", "hello world")
    r.set(prefix + "int", 12345)
    r.set(prefix + "big", "x" * 20000)  # redis-server writes it LZF-compressed
    r.rpush(prefix + "list", "a", 1, -200, 70000, 2 ** 40, "z" * 100)
    r.rpush(prefix + "biglist", *["item%d" % i for i in range(3000)])
    r.sadd(prefix + "intset", 1, 2, -3, 2 ** 40)
    r.sadd(prefix + "set", "a", "b", 3)
    r.hset(prefix + "hash", mapping={"a": 1, "b": "hello", "n": -7})
    r.hset(prefix + "bighash", mapping={"f%d" % i: "v" * (i % 90) for i in range(300)})
    r.zadd(prefix + "zset", {"a": 1.5, "b": -2, "c": 3e100, "inf": float("inf")})
    r.zadd(prefix + "bigzset", {"m%d" % i: i / 7 for i in range(500)})
    return [prefix + k for k in ("str", "int", "big", "list", "biglist", "intset", "set",
                                 "hash", "bighash", "zset", "bigzset")]


def contents(r, key):
    t = r.type(key)
    if t == b"string":
        return r.get(key)
    if t == b"list":
        return r.lrange(key, 0, -1)
    if t == b"set":
        return sorted(r.smembers(key))
    if t == b"hash":
        return sorted(r.hgetall(key).items())
    if t == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    raise AssertionError("unexpected type %r" % t)


@case
def round_trip_and_interop(t, srv):
    """Every type: DUMP here RESTOREs there and the reverse, contents equal."""
    with Server("redis") as ref:
        here, there = bclient(srv), bclient(ref)
        keys = fill(here, "h:")
        keys_ref = fill(there, "h:")
        assert keys == keys_ref
        for k in keys:
            want = contents(here, k)
            assert contents(there, k) == want, k
            # Target -> target, target -> redis-server, redis-server -> target.
            payload = here.dump(k)
            assert here.restore(k + ":copy", 0, payload) in OK
            assert contents(here, k + ":copy") == want, k
            assert there.restore(k + ":from-target", 0, payload) in OK, k
            assert contents(there, k + ":from-target") == want, k
            assert here.restore(k + ":from-redis", 0, there.dump(k)) in OK, k
            assert contents(here, k + ":from-redis") == want, k
        assert here.dump("missing") is None


@case
def ttl_replace_and_busykey(t, srv):
    """TTL relative and ABSTTL, REPLACE, BUSYKEY, an expired TTL, the restore event, WATCH."""
    r = bclient(srv)
    r.set("foo", "bar")
    p = r.dump("foo")
    assert r.restore("foo2", 5000, p) in OK
    assert 3000 <= r.pttl("foo2") <= 5000
    assert r.restore("foo3", 2569591501, p) in OK
    assert 2569591501 - 3000 <= r.pttl("foo3") <= 2569591501
    at = int(time.time() * 1000) + 3000
    assert r.restore("foo4", at, p, absttl=True) in OK
    assert 2000 <= r.pttl("foo4") <= 3100
    try:
        r.restore("foo", 0, p)
        raise AssertionError("RESTORE over an existing key succeeded")
    except redis.ResponseError as e:
        assert str(e) == "BUSYKEY Target key name already exists."
    r.set("foo", "other")
    r.expire("foo", 100)
    assert r.restore("foo", 0, p, replace=True) in OK
    assert r.get("foo") == b"bar" and r.ttl("foo") == -1
    # An absolute TTL in the past: the replaced key is deleted, nothing created.
    assert r.restore("foo", 1000, p, replace=True, absttl=True) in OK
    assert r.exists("foo") == 0
    assert r.restore("fresh", 1000, p, absttl=True) in OK
    assert r.exists("fresh") == 0
    # IDLETIME and FREQ are accepted (one of them).
    assert r.execute_command("RESTORE", "idle", 0, p, "IDLETIME", 1000) == b"OK"
    assert r.execute_command("RESTORE", "freq", 0, p, "FREQ", 100) == b"OK"

    r.config_set("notify-keyspace-events", "KEA")
    ps = r.pubsub()
    ps.psubscribe("__keyevent@0__:restore")
    deadline = time.monotonic() + 5
    while ps.get_message(timeout=0.2) is None and time.monotonic() < deadline:
        pass
    r.restore("evt", 0, p)
    msg = None
    while msg is None and time.monotonic() < deadline:
        m = ps.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            msg = m
    assert msg["data"] == b"evt"
    ps.close()
    r.config_set("notify-keyspace-events", "")

    pipe = r.pipeline(transaction=True)
    pipe.watch("watched")
    r.restore("watched", 0, p)
    pipe.multi()
    pipe.get("watched")
    try:
        pipe.execute()
        raise AssertionError("EXEC ran although a watched key was restored")
    except redis.WatchError:
        pass


@case
def keys_on_every_shard(t, srv):
    """RESTORE and DUMP of keys spread over every shard, from one connection."""
    r = bclient(srv)
    keys = spread_keys("dumped:", 8)
    for i, k in enumerate(keys):
        r.rpush("src", i)
        r.restore(k, 0, r.dump("src"), replace=True)
    for i, k in enumerate(keys):
        assert r.lrange(k, 0, -1) == [str(j).encode() for j in range(i + 1)]


@case
def kill9_keeps_restored(t, srv):
    """appendfsync always, kill -9: restored values and their TTLs come back."""
    d = tempfile.mkdtemp(prefix="hotkv-dump-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            r = bclient(s)
            keys = fill(r, "p:")
            payloads = {k: r.dump(k) for k in keys}
            for k in keys:
                r.restore(k + ":r", 100000, payloads[k])
            before = {k: contents(r, k + ":r") for k in keys}
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            r = bclient(s2)
            for k in keys:
                assert contents(r, k + ":r") == before[k], k
                assert 0 < r.pttl(k + ":r") <= 100000, k
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def errors(t, srv):
    """Redis's errors for bad payloads and options."""
    with srv.raw() as c:
        c.call("SET", "foo", "bar")
        good = c.call("DUMP", "foo")
        good = good if isinstance(good, bytes) else good.encode("latin-1")
        assert c.call("RESTORE", "foo", 0, "...") == \
            RespError("BUSYKEY Target key name already exists.")
        assert c.call("RESTORE", "k", 0, "...") == \
            RespError("ERR DUMP payload version or checksum are wrong")
        bad = bytearray(good)
        bad[1] ^= 0x01
        assert c.call("RESTORE", "k", 0, bytes(bad)) == \
            RespError("ERR DUMP payload version or checksum are wrong")
        assert c.call("RESTORE", "k", 0, "...", "invalid-option") == RespError("ERR syntax error")
        assert c.call("RESTORE", "k", -1, good) == RespError("ERR Invalid TTL value, must be >= 0")
        assert c.call("RESTORE", "k", "x", good) == \
            RespError("ERR value is not an integer or out of range")
        assert c.call("RESTORE", "k", 0, good, "IDLETIME", -1) == \
            RespError("ERR Invalid IDLETIME value, must be >= 0")
        assert c.call("RESTORE", "k", 0, good, "FREQ", 256) == \
            RespError("ERR Invalid FREQ value, must be >= 0 and <= 255")
        assert c.call("RESTORE", "k", 0, good, "FREQ", 1, "IDLETIME", 1) == \
            RespError("ERR syntax error")
        assert c.call("RESTORE", "k", 0) == \
            RespError("ERR wrong number of arguments for 'restore' command")
        assert c.call("EXISTS", "k") == 0
        assert c.call("PING") == "PONG"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
