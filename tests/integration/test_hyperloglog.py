#!/usr/bin/python3
"""HyperLogLog end to end, first proven on redis-server 7.0 and then held against hotkv.

- PFADD/PFCOUNT/PFMERGE replies, the cached cardinality byte, PFDEBUG, CONFIG
  hll-sparse-max-bytes, and the exact counts Redis gives for known elements.
- The same commands leave the same bytes: a reference redis-server runs beside the target and
  every GET is compared byte for byte, sparse and dense, across the sparse -> dense promotion.
- Values travel: GET from redis-server and SET into the target count the same, and the reverse;
  both go on from there identically (PFADD, PFMERGE).
- Keys of different shards (spread_keys): PFCOUNT of several keys and PFMERGE equal Redis's,
  and stay consistent while writers PFADD concurrently.
- Keyspace events ("pfadd" for PFADD and PFMERGE, nothing for PFCOUNT) and WATCH (a PFCOUNT that
  refreshes the cache is a change to the key).
- A kill -9 with appendfsync always, after a BGREWRITEAOF and more writes, keeps every value
  byte for byte.
- Misuse gets Redis's exact errors (raw client): WRONGTYPE both ways, non-HLL strings, corrupt
  sparse values, PFDEBUG's errors.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_hyperloglog.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (RespError, Server, case, run_cases, spread_keys,  # noqa: E402
                    wait_rewrite_done)

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"


def reference():
    """A redis-server beside the target, for byte comparisons."""
    return Server("redis")


def bclient(srv):
    return srv.client(decode_responses=False)


def elements(prefix, n):
    return ["%s%d" % (prefix, i) for i in range(n)]


def pfadd_batches(r, key, items, batch=500):
    for i in range(0, len(items), batch):
        r.pfadd(key, *items[i:i + batch])


# ----------------------------------------------------------------------------------------------
# Replies.


@case
def pfadd_pfcount_basics(t, srv):
    """PFADD's 0/1, PFCOUNT's estimate and cache byte, and Redis's counts for known elements."""
    r = bclient(srv)
    assert r.pfadd("hll") == 1  # no elements: creates the key
    assert r.exists("hll") == 1
    assert r.pfadd("hll") == 0
    assert r.pfcount("hll") == 0
    assert r.pfcount("missing") == 0
    assert r.pfadd("hll", "a", "b", "c") == 1
    assert r.pfadd("hll", "a", "b", "c") == 0
    assert r.getrange("hll", 15, 15) == b"\x80"  # stale cache
    assert r.pfcount("hll") == 3
    assert r.getrange("hll", 15, 15) == b"\x00"  # cached
    assert r.pfcount("hll") == 3
    assert r.pfadd("hll", "") == 1
    assert r.pfcount("hll") == 4
    assert r.type("hll") == b"string"
    # Counts redis-server 7.0.15 gives for these elements (sparse, then dense).
    pfadd_batches(r, "k1", elements("ele:", 1000))
    assert r.pfcount("k1") == 1002
    assert r.execute_command("PFDEBUG", "ENCODING", "k1") == b"sparse"
    assert r.strlen("k1") == 1896
    pfadd_batches(r, "k2", elements("ele:", 100000), batch=2000)
    assert r.pfcount("k2") == 99778
    assert r.execute_command("PFDEBUG", "ENCODING", "k2") == b"dense"
    assert r.strlen("k2") == 16 + 12288
    # The union of several keys, none modified.
    before = [r.get(k) for k in ("k1", "k2", "hll")]
    union = r.pfcount("k1", "k2", "hll", "missing")
    assert [r.get(k) for k in ("k1", "k2", "hll")] == before
    r.pfmerge("u", "k1", "k2", "hll")
    assert r.pfcount("u") == union
    assert 100000 * 0.98 < union < 100000 * 1.02


@case
def pfmerge_replies(t, srv):
    """PFMERGE takes the union into destkey (created, or kept with its TTL), dense if any is."""
    r = bclient(srv)
    r.pfadd("h1", "a", "b", "c")
    r.pfadd("h2", "b", "c", "d")
    r.pfadd("h3", "c", "d", "e")
    assert r.pfmerge("dst", "h1", "h2", "h3") is True
    assert r.pfcount("dst") == 5
    assert r.execute_command("PFMERGE", "only") is True  # no sources: creates destkey
    assert r.pfcount("only") == 0
    assert r.exists("only") == 1
    r.pfadd("ttl", "z")
    r.expire("ttl", 100)
    r.pfmerge("ttl", "h1")
    assert r.pfcount("ttl") == 4
    assert 0 < r.ttl("ttl") <= 100
    pfadd_batches(r, "big", elements("d", 5000))
    r.pfmerge("small", "h1", "big")
    assert r.execute_command("PFDEBUG", "ENCODING", "small") == b"dense"
    assert r.pfcount("small") == r.pfcount("h1", "big")


@case
def pfdebug_and_config(t, srv):
    """PFDEBUG ENCODING/DECODE/GETREG/TODENSE and CONFIG SET hll-sparse-max-bytes."""
    r = bclient(srv)
    assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
    r.pfadd("h", "a", "b", "c")
    assert r.execute_command("PFDEBUG", "DECODE", "h") == \
        b"Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
    regs = r.execute_command("PFDEBUG", "GETREG", "h")
    assert len(regs) == 16384
    assert [(i, v) for i, v in enumerate(regs) if v] == [(8436, 1), (12711, 2), (15780, 1)]
    assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"  # GETREG converted it
    assert r.execute_command("PFDEBUG", "TODENSE", "h") == 0
    r.pfadd("s", "x")
    assert r.execute_command("PFDEBUG", "TODENSE", "s") == 1
    assert r.pfcount("s") == 1
    try:
        r.config_set("hll-sparse-max-bytes", 100)
        r.pfadd("tiny", *elements("t", 30))
        assert r.execute_command("PFDEBUG", "ENCODING", "tiny") == b"dense"
        assert r.pfcount("tiny") == 30
    finally:
        r.config_set("hll-sparse-max-bytes", 3000)
    r.pfadd("tiny2", *elements("t", 30))
    assert r.execute_command("PFDEBUG", "ENCODING", "tiny2") == b"sparse"
    assert r.get("tiny2") != r.get("tiny")
    assert r.pfcount("tiny2") == 30


# ----------------------------------------------------------------------------------------------
# Interoperability with redis-server.


def same_ops(clients, ops):
    """Runs each op on every client; returns the replies, which must agree."""
    out = []
    for op in ops:
        replies = [c.execute_command(*op) for c in clients]
        assert all(x == replies[0] for x in replies), (op[:3], replies)
        out.append(replies[0])
    return out


@case
def same_bytes_as_redis(t, srv):
    """Random PFADD/PFMERGE/PFCOUNT sequences leave the bytes redis-server holds."""
    with reference() as ref:
        a, b = bclient(srv), bclient(ref)
        rnd = random.Random(7)
        keys = ["s%d" % i for i in range(6)]
        deadline = time.monotonic() + 60
        for step in range(400):
            assert time.monotonic() < deadline, "too slow"
            k = rnd.choice(keys)
            kind = rnd.random()
            if kind < 0.75:
                n = rnd.choice([1, 2, 5, 20, 100, 400])
                items = ["e%d" % rnd.randrange(200000) for _ in range(n)]
                same_ops([a, b], [["PFADD", k] + items])
            elif kind < 0.9:
                srcs = rnd.sample(keys, rnd.randint(1, 3))
                same_ops([a, b], [["PFMERGE", k] + srcs])
            else:
                same_ops([a, b], [["PFCOUNT", k]])
            if step % 10 == 0:
                for key in keys:
                    assert a.get(key) == b.get(key), "bytes of %s differ at step %d" % (key, step)
        for key in keys:
            assert a.get(key) == b.get(key), key
            same_ops([a, b], [["PFCOUNT", key], ["PFDEBUG", "ENCODING", key]])
        same_ops([a, b], [["PFCOUNT"] + keys])
        # The promotion point follows hll-sparse-max-bytes on both.
        for c in (a, b):
            c.config_set("hll-sparse-max-bytes", 700)
        try:
            for i in range(40):
                same_ops([a, b], [["PFADD", "p", "x%d" % (i * 7), "y%d" % i]])
                assert a.get("p") == b.get("p"), i
        finally:
            for c in (a, b):
                c.config_set("hll-sparse-max-bytes", 3000)


@case
def values_travel_between_servers(t, srv):
    """GET from redis SET into the target counts the same, and the reverse; both go on alike."""
    with reference() as ref:
        a, b = bclient(srv), bclient(ref)
        sizes = {"v0": 0, "v1": 3, "v2": 900, "v3": 2500, "v4": 30000}
        for k, n in sizes.items():
            pfadd_batches(b, k, elements(k + ":", n))
            if n:
                b.pfadd(k + "c", "x")
                b.pfcount(k + "c")  # a valid cache travels too
        for k in list(sizes) + [k + "c" for k, n in sizes.items() if n]:
            if not b.exists(k):
                continue
            a.set(k, b.get(k))
            assert a.pfcount(k) == b.pfcount(k), k
            assert a.get(k) == b.get(k), k
            same_ops([a, b], [["PFADD", k, "more1", "more2", "more3"], ["PFCOUNT", k]])
            assert a.get(k) == b.get(k), k
        # The reverse: values built by the target, counted by redis-server.
        for k, n in sizes.items():
            key = "t" + k
            a.pfadd(key)
            pfadd_batches(a, key, elements(key + ":", n))
            b.set(key, a.get(key))
            assert b.pfcount(key) == a.pfcount(key), key
            assert b.get(key) == a.get(key), key
        same_ops([a, b], [["PFMERGE", "m", "tv2", "v3", "tv4"], ["PFCOUNT", "m"],
                          ["PFCOUNT", "tv1", "v2", "tv3"]])
        assert a.get("m") == b.get("m")


# ----------------------------------------------------------------------------------------------
# Several shards.


@case
def keys_on_several_shards(t, srv):
    """PFCOUNT of several keys and PFMERGE across shards equal Redis's, also under writers."""
    keys = spread_keys("hll:", 4)
    dst = spread_keys("dst:", 4)[1]
    with reference() as ref:
        a, b = bclient(srv), bclient(ref)
        for i, k in enumerate(keys):
            items = elements("k%d:" % i, 500 * (i + 1)) + elements("common:", 300)
            for c in (a, b):
                pfadd_batches(c, k, items)
        same_ops([a, b], [["PFCOUNT"] + keys, ["PFMERGE", dst] + keys, ["PFCOUNT", dst],
                          ["PFCOUNT", dst] + keys])
        assert a.get(dst) == b.get(dst)
        assert all(a.get(k) == b.get(k) for k in keys)

    # Writers add to every key while readers count the union: the union never shrinks and the
    # final state is what the adds alone give.
    r = bclient(srv)
    r.delete(dst, *keys)
    stop = time.monotonic() + 20
    errors = []
    added = [[] for _ in keys]

    def writer(j):
        try:
            c = bclient(srv)
            for n in range(200):
                if time.monotonic() > stop:
                    break
                items = ["w%d:%d:%d" % (j, n, m) for m in range(20)]
                c.pfadd(keys[j], *items)
                added[j].extend(items)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(repr(e))

    def reader():
        try:
            c = bclient(srv)
            last = 0
            for _ in range(300):
                if time.monotonic() > stop:
                    break
                n = c.pfcount(*keys)
                assert n >= last, (n, last)
                last = n
                c.pfmerge(dst, *keys)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(j,)) for j in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in threads), "threads did not finish"
    assert not errors, errors[:3]
    r.pfmerge(dst, *keys)
    # Rebuild the same sets serially: the registers depend only on the elements.
    for j, k in enumerate(keys):
        pfadd_batches(r, "again%d" % j, added[j])
        assert r.get("again%d" % j)[16:] == r.get(k)[16:], k
    assert r.pfcount(dst) == r.pfcount(*keys) == r.pfcount(*["again%d" % j for j in range(4)])


# ----------------------------------------------------------------------------------------------
# Events and WATCH.


@case
def keyspace_events_and_watch(t, srv):
    """PFADD and PFMERGE publish "pfadd" (class $); PFCOUNT none, but it breaks a WATCH."""
    c = srv.raw()
    sub = srv.raw()
    try:
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "KEA") == "OK"
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")
        c.call("PFADD", "e1", "a")
        c.call("PFADD", "e1", "a")  # no change: no event
        c.call("PFCOUNT", "e1")
        c.call("PFADD", "e2", "b")
        c.call("PFMERGE", "e3", "e1", "e2")
        c.call("SET", "end", "1")
        got = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = sub.read_reply()
            if m and m[0] == "pmessage":
                got.append((m[2].split(":", 1)[1], m[3]))
                if m[3] == "end":
                    break
        assert got == [("pfadd", "e1"), ("pfadd", "e2"), ("pfadd", "e3"), ("set", "end")], got
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
    # A PFCOUNT that refreshes the cache modifies the key: EXEC after WATCH fails.
    w = srv.raw()
    try:
        c.call("PFADD", "w", "x", "y")
        assert w.call("WATCH", "w") == "OK"
        assert c.call("PFCOUNT", "w") == 2
        w.call("MULTI")
        w.call("PING")
        assert w.call("EXEC") is None
        # A cached count changes nothing.
        assert w.call("WATCH", "w") == "OK"
        assert c.call("PFCOUNT", "w") == 2
        w.call("MULTI")
        w.call("PING")
        assert w.call("EXEC") == ["PONG"]
    finally:
        w.close()
        c.close()


# ----------------------------------------------------------------------------------------------
# Persistence.


@case
def kill9_keeps_hlls(t, srv):
    """appendfsync always, a rewrite, kill -9: every HLL comes back byte for byte."""
    d = tempfile.mkdtemp(prefix="hotkv-hll-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    k1, k2, k3 = spread_keys("persist:", 3)
    keys = [k1, k2, k3, "dense", "cached"]
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            r = bclient(s)
            r.pfadd(k1, *elements("a", 200))
            pfadd_batches(r, "dense", elements("d", 20000))
            r.pfadd("cached", "x", "y")
            r.bgrewriteaof()
            wait_rewrite_done(r)
            r.pfadd(k2, *elements("b", 50))
            r.pfmerge(k3, k1, k2, "dense")
            r.pfadd(k1, "late")
            r.pfcount("cached")  # the refreshed cache is logged too
            r.expire(k2, 1000)
            # Counting caches the estimates in the values: before the bytes are taken.
            counts = {k: r.pfcount(k) for k in keys}
            before = {k: r.get(k) for k in keys}
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            r = bclient(s2)
            after = {k: r.get(k) for k in keys}
            for k in keys:
                assert after[k] == before[k], "%s differs after restart" % k
            assert {k: r.pfcount(k) for k in keys} == counts
            assert 0 < r.ttl(k2) <= 1000
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# Misuse.


@case
def errors_as_redis(t, srv):
    """WRONGTYPE, non-HLL strings, corrupt sparse values and PFDEBUG errors, word for word."""
    c = srv.raw()
    try:
        c.call("SADD", "set", "x")
        for cmd in (["PFADD", "set", "a"], ["PFCOUNT", "set"], ["PFCOUNT", "set", "nope"],
                    ["PFMERGE", "set", "nope"], ["PFMERGE", "d", "set"]):
            assert c.call(*cmd) == RespError(WRONGTYPE), cmd
        c.call("SET", "str", "hello")
        c.call("SET", "num", "12345")
        for k in ("str", "num"):
            for cmd in (["PFADD", k, "a"], ["PFCOUNT", k], ["PFMERGE", "d", k],
                        ["PFMERGE", k], ["PFDEBUG", "ENCODING", k]):
                assert c.call(*cmd) == RespError(NOT_HLL), cmd
        assert c.call("EXISTS", "d") == 0
        c.call("PFADD", "h", "a", "b", "c")
        c.call("SETRANGE", "h", 4, "x")
        assert c.call("PFCOUNT", "h") == RespError(NOT_HLL)
        c.call("DEL", "h")
        c.call("PFADD", "h", "a", "b", "c")
        c.call("SETRANGE", "h", 4, "\x00")  # dense with a sparse length
        assert c.call("PFCOUNT", "h") == RespError(NOT_HLL)
        c.call("DEL", "h")
        c.call("PFADD", "h", "a", "b", "c")
        c.call("APPEND", "h", "hello")
        assert c.call("PFCOUNT", "h") == RespError(CORRUPT)
        assert c.call("PFCOUNT", "h", "h") == RespError(CORRUPT)
        assert c.call("PFMERGE", "d", "h") == RespError(CORRUPT)
        assert c.call("EXISTS", "d") == 0
        assert c.call("PFDEBUG", "TODENSE", "h") == RespError(CORRUPT)
        # Redis adds to the registers its opcodes do cover, and only counting fails.
        assert c.call("PFADD", "h", "zz") == 1
        assert c.call("PFCOUNT", "h") == RespError(CORRUPT)
        assert c.call("PFDEBUG", "ENCODING", "missing") == \
            RespError("ERR The specified key does not exist")
        c.call("PFADD", "ok", "a")
        assert c.call("PFDEBUG", "NOPE", "ok") == RespError("ERR Unknown PFDEBUG subcommand 'NOPE'")
        c.call("PFDEBUG", "TODENSE", "ok")
        assert c.call("PFDEBUG", "DECODE", "ok") == RespError("ERR HLL encoding is not sparse")
        for cmd, name in ((["PFADD"], "pfadd"), (["PFCOUNT"], "pfcount"),
                          (["PFMERGE"], "pfmerge"), (["PFDEBUG", "GETREG"], "pfdebug"),
                          (["PFSELFTEST", "x"], "pfselftest")):
            assert c.call(*cmd) == \
                RespError("ERR wrong number of arguments for '%s' command" % name), cmd
        # Random corruption is detected or tolerated, never a crash.
        rnd = random.Random(3)
        for i in range(300):
            c.call("DEL", "f")
            c.call("PFADD", "f", *elements("f", rnd.randrange(1, 3000)))
            for _ in range(rnd.randint(1, 5)):
                n = c.call("STRLEN", "f")
                c.call("SETRANGE", "f", rnd.randrange(n), bytes([rnd.randrange(256)]))
            c.call("PFCOUNT", "f")
            c.call("PFADD", "f", "one-more")
        assert c.call("PING") == "PONG"
    finally:
        c.close()


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
