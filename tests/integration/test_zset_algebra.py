#!/usr/bin/python3
"""Sorted-set algebra and the newer sorted-set commands, compared with redis-server 7.0.

- ZUNION, ZINTER, ZDIFF (WITHSCORES), ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE (WEIGHTS, AGGREGATE
  SUM|MIN|MAX, plain sets as inputs with score 1, +inf/-inf sums), ZINTERCARD (LIMIT) and
  ZRANGESTORE in every ZRANGE form: the same commands go to hotkv and to a redis-server started
  by the test and the replies must be identical, in RESP2 and RESP3, errors included. On hotkv
  the keys of one command sit on different shards (spread_keys).
- ZRANDMEMBER: counts, negative counts (repeats), WITHSCORES, the RESP3 shape, distribution.
- Keyspace events of the stores (zunionstore, zinterstore, zdiffstore, zrangestore, del).
- Concurrency across shards: writers move members between two sorted sets on different shards
  with ZADD/ZREM inside MULTI while readers run ZUNION/ZINTERCARD and stores; every reader sees
  a whole state.
- zset-max-listpack-entries / -value (and the ziplist aliases) decide OBJECT ENCODING.
- A kill -9 with appendfsync always after stores keeps every destination.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_zset_algebra.py --server build/hotkv --threads 4   (or --kind redis)
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

from server import RespError, Server, case, run_cases, spread_keys  # noqa: E402

WRONGTYPE = RespError("WRONGTYPE Operation against a key holding the wrong kind of value")


def load(c, k):
    """Sources on spread keys: k = [z1, z2, z3, set, str, dst, dst2]."""
    c.call("ZADD", k[0], 1, "a", 2, "b", 3, "c", "inf", "top", "-inf", "bot", 0, "zero")
    c.call("ZADD", k[1], 10, "b", 20, "c", 30, "d", "-inf", "top", "inf", "bot")
    c.call("ZADD", k[2], 0.5, "c", 7, "e", 1.5, "a")
    c.call("SADD", k[3], "a", "c", "x", "y")
    c.call("SET", k[4], "string")


def algebra_commands(k):
    z1, z2, z3, s, st, d, d2 = k
    cmds = []
    for op in ("ZUNION", "ZINTER"):
        for extra in ([], ["WITHSCORES"], ["AGGREGATE", "MIN", "WITHSCORES"],
                      ["AGGREGATE", "max", "WITHSCORES"], ["WEIGHTS", 2, 3, "WITHSCORES"],
                      ["WEIGHTS", 0, 1, "AGGREGATE", "SUM", "WITHSCORES"],
                      ["WEIGHTS", -1, "inf", "WITHSCORES"], ["WITHSCORES", "WITHSCORES"]):
            cmds.append([op, 2, z1, z2] + extra)
        cmds.append([op, 3, z1, z2, z3, "WITHSCORES"])
        cmds.append([op, 2, z1, s, "WITHSCORES"])
        cmds.append([op, 2, s, z3, "WEIGHTS", 5, 1, "WITHSCORES"])
        cmds.append([op, 2, z1, "missing", "WITHSCORES"])
        cmds.append([op, 1, "missing"])
        cmds.append([op, 2, z1, z1, "WITHSCORES"])
        # Errors, in Redis's order.
        cmds += [[op, 0, z1], [op, -1, z1], [op, "x", z1], [op, 3, z1, z2],
                 [op, 2, z1, st], [op, 2, st, "missing", "junk"],
                 [op, 2, z1, z2, "WEIGHTS", 1], [op, 2, z1, z2, "WEIGHTS", 1, "x"],
                 [op, 2, z1, z2, "AGGREGATE", "avg"], [op, 2, z1, z2, "AGGREGATE"],
                 [op, 2, z1, z2, "LIMIT", 1], [op, 2, z1, z2, "junk"]]
    cmds += [["ZDIFF", 2, z1, z2], ["ZDIFF", 2, z1, z2, "WITHSCORES"],
             ["ZDIFF", 3, z1, z2, z3, "WITHSCORES"], ["ZDIFF", 2, z1, s, "WITHSCORES"],
             ["ZDIFF", 2, s, z1, "WITHSCORES"], ["ZDIFF", 1, "missing"],
             ["ZDIFF", 2, "missing", z1], ["ZDIFF", 2, z1, z1],
             ["ZDIFF", 2, z1, z2, "WEIGHTS", 1, 2], ["ZDIFF", 2, z1, z2, "AGGREGATE", "SUM"],
             ["ZDIFF", 0, z1], ["ZDIFF", 2, z1, st]]
    cmds += [["ZINTERCARD", 2, z1, z2], ["ZINTERCARD", 3, z1, z2, z3],
             ["ZINTERCARD", 2, z1, s], ["ZINTERCARD", 2, z1, z2, "LIMIT", 2],
             ["ZINTERCARD", 2, z1, z2, "LIMIT", 0], ["ZINTERCARD", 2, z1, "missing"],
             ["ZINTERCARD", 0, z1], ["ZINTERCARD", 3, z1, z2],
             ["ZINTERCARD", 2, z1, z2, "LIMIT", -1], ["ZINTERCARD", 2, z1, z2, "LIMIT", "x"],
             ["ZINTERCARD", 2, z1, z2, "WITHSCORES"], ["ZINTERCARD", 2, z1, st],
             ["ZINTERCARD", 2, z1, z2, "WEIGHTS", 1, 1]]
    for op in ("ZUNIONSTORE", "ZINTERSTORE"):
        for extra in ([], ["AGGREGATE", "MIN"], ["AGGREGATE", "MAX"], ["WEIGHTS", 2, 0.5],
                      ["WEIGHTS", "-inf", 1]):
            cmds.append([op, d, 2, z1, z2] + extra)
            cmds.append(["ZRANGE", d, 0, -1, "WITHSCORES"])
        cmds += [[op, d, 2, z1, s], ["ZRANGE", d, 0, -1, "WITHSCORES"],
                 [op, z1, 2, z1, z2], ["ZRANGE", z1, 0, -1, "WITHSCORES"],
                 [op, d, 1, "missing"], ["EXISTS", d],
                 [op, d, 2, z1, z2, "WITHSCORES"], [op, d, 0, z1], [op, d, 2, z1, st],
                 [op, st, 2, z2, z3], ["TYPE", st]]
        cmds += [["SET", st, "string"]]
    cmds += [["ZUNIONSTORE", d2, 1, z1, "WEIGHTS", -1], ["ZRANGE", d2, 0, -1, "WITHSCORES"],
             ["ZDIFFSTORE", d2, 2, z2, z3], ["ZRANGE", d2, 0, -1, "WITHSCORES"],
             ["ZDIFFSTORE", d2, 2, z3, s], ["ZRANGE", d2, 0, -1, "WITHSCORES"],
             ["ZDIFFSTORE", d2, 2, z3, z3], ["EXISTS", d2],
             ["ZDIFFSTORE", d2, 2, z3, z2, "WEIGHTS", 1, 1]]
    # ZRANGESTORE in every form, the destination on another shard.
    for args in ([0, -1], [1, 2], [-2, -1], [5, 10], ["(1", "+inf", "BYSCORE"],
                 ["-inf", "3", "BYSCORE", "LIMIT", 1, 2], ["+inf", "-inf", "BYSCORE", "REV"],
                 ["3", "(1", "BYSCORE", "REV", "LIMIT", 0, 1], [0, 1, "REV"]):
        cmds.append(["ZRANGESTORE", d2, z2] + args)
        cmds.append(["ZRANGE", d2, 0, -1, "WITHSCORES"])
    cmds += [["ZADD", "lex" + z3, 0, "a", 0, "b", 0, "c", 0, "d"]]
    for args in (["[b", "+", "BYLEX"], ["-", "(c", "BYLEX", "LIMIT", 1, 1],
                 ["+", "[b", "BYLEX", "REV"]):
        cmds.append(["ZRANGESTORE", d2, "lex" + z3] + args)
        cmds.append(["ZRANGE", d2, 0, -1, "WITHSCORES"])
    cmds += [["ZRANGESTORE", d2, z2, 0, -1, "WITHSCORES"], ["ZRANGESTORE", d2, z2, 0, -1,
                                                            "LIMIT", 0, 1],
             ["ZRANGESTORE", d2, z2, "a", "b", "BYSCORE"], ["ZRANGESTORE", d2, st, 0, -1],
             ["ZRANGESTORE", d2, "missing", 0, -1], ["EXISTS", d2],
             ["ZRANGESTORE", d2, z2, 0, -1, "BYLEX"], ["ZRANGESTORE", d2, z2, 0],
             ["ZRANGESTORE", st, z2, 0, 0], ["TYPE", st]]
    return cmds


@case
def algebra_replies_match_redis(t, srv):
    """Every form, option and error of the algebra and ZRANGESTORE replies as redis-server."""
    k = spread_keys("zalg:", 7)
    with Server("redis") as ref, srv.raw() as ours, ref.raw() as theirs:
        for proto in (2, 3):
            for c in (ours, theirs):
                c.call("FLUSHALL")
                c.call("HELLO", proto)
                load(c, k)
            diffs = []
            for cmd in algebra_commands(k):
                got, want = ours.call(*cmd), theirs.call(*cmd)
                if got != want:
                    diffs.append((proto, cmd, got, want))
            assert not diffs, "\n".join("RESP%d %r\n  hotkv: %r\n  redis: %r" % d
                                        for d in diffs[:8])


@case
def stores_replace_and_delete_the_destination(t, srv):
    """A store drops the destination's TTL and type; an empty result deletes it."""
    z1, z2, d = spread_keys("zst:", 3)
    with srv.raw() as c:
        c.call("ZADD", z1, 1, "a", 2, "b")
        c.call("ZADD", z2, 5, "b", 6, "c")
        c.call("SET", d, "old", "EX", 100)
        assert c.call("ZUNIONSTORE", d, 2, z1, z2) == 3
        assert c.call("TTL", d) == -1
        assert c.call("ZRANGE", d, 0, -1, "WITHSCORES") == ["a", "1", "c", "6", "b", "7"]
        assert c.call("EXPIRE", d, 100) == 1
        assert c.call("ZINTERSTORE", d, 2, z1, z2, "AGGREGATE", "MAX") == 1
        assert c.call("TTL", d) == -1
        assert c.call("ZINTERSTORE", d, 2, z1, "missing") == 0
        assert c.call("EXISTS", d) == 0
        assert c.call("ZRANGESTORE", d, z1, 0, 0) == 1
        assert c.call("ZRANGESTORE", d, z1, 5, 6) == 0
        assert c.call("EXISTS", d) == 0
        # Source and destination the same key.
        assert c.call("ZRANGESTORE", z1, z1, 1, 1) == 1
        assert c.call("ZRANGE", z1, 0, -1, "WITHSCORES") == ["b", "2"]


@case
def zrandmember_counts_and_shapes(t, srv):
    """Distinct members for a positive count, repeats for a negative one, pairs in RESP3."""
    with srv.raw() as c:
        members = ["m%d" % i for i in range(20)]
        c.call("ZADD", "zr", *[x for i, m in enumerate(members) for x in (i, m)])
        assert c.call("ZRANDMEMBER", "zr") in members
        assert c.call("ZRANDMEMBER", "missing") is None
        assert c.call("ZRANDMEMBER", "missing", 5) == []
        assert c.call("ZRANDMEMBER", "zr", 0) == []
        five = c.call("ZRANDMEMBER", "zr", 5)
        assert len(five) == 5 and len(set(five)) == 5 and set(five) <= set(members)
        assert sorted(c.call("ZRANDMEMBER", "zr", 100)) == sorted(members)
        many = c.call("ZRANDMEMBER", "zr", -100)
        assert len(many) == 100 and set(many) <= set(members) and len(set(many)) < 100
        ws = c.call("ZRANDMEMBER", "zr", 3, "WITHSCORES")
        assert len(ws) == 6
        for m, s in zip(ws[::2], ws[1::2]):
            assert s == str(members.index(m)), (m, s)
        # Every member comes up over many draws.
        seen = set()
        for _ in range(50):
            seen.update(c.call("ZRANDMEMBER", "zr", -20))
        assert seen == set(members)
        for bad, err in ((["x"], "ERR value is not an integer or out of range"),
                         ([1, "x"], "ERR syntax error"), ([1, "WITHSCORES", 1],
                                                          "ERR syntax error"),
                         (["-9223372036854775808"],
                          "ERR value is out of range, value must between -9223372036854775807 "
                          "and 9223372036854775807"),
                         (["-9223372036854770000", "WITHSCORES"], "ERR value is out of range")):
            r = c.call("ZRANDMEMBER", "zr", *bad)
            assert r == RespError(err), (bad, r)
        c.call("SET", "str", "x")
        assert c.call("ZRANDMEMBER", "str") == WRONGTYPE
        assert c.call("ZRANDMEMBER", "str", 1) == WRONGTYPE
        assert c.call("HELLO", 3)["proto"] == 3
        pairs = c.call("ZRANDMEMBER", "zr", -4, "WITHSCORES")
        assert len(pairs) == 4 and all(isinstance(p, list) and len(p) == 2 for p in pairs)
        assert all(p[1] == float(members.index(p[0])) for p in pairs)


@case
def keyspace_events_of_the_stores(t, srv):
    """Stores publish their own event on the destination; an empty result publishes del."""
    z1, z2, d = spread_keys("zev:", 3)
    r = srv.client()
    r.config_set("notify-keyspace-events", "Ezg")
    p = r.pubsub()
    try:
        p.psubscribe("__keyevent@0__:*")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "psubscribe":
                break
        with srv.raw() as c:
            c.call("ZADD", z1, 1, "a")
            c.call("ZADD", z2, 2, "b")
            c.call("ZUNIONSTORE", d, 2, z1, z2)
            c.call("ZINTERSTORE", d, 2, z1, z2)
            c.call("ZINTERSTORE", d, 2, z1, z2)
            c.call("ZDIFFSTORE", d, 2, z1, z2)
            c.call("ZRANGESTORE", d, z2, 0, -1)
            c.call("ZRANGESTORE", d, z2, 5, 6)
            c.call("ZUNION", 2, z1, z2)
            c.call("SET", "done", 1)
            c.call("DEL", "done")
        events = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            m = p.get_message(timeout=0.5)
            if not m or m["type"] != "pmessage":
                continue
            if m["data"] == "done":
                break
            events.append("%s|%s" % (m["channel"].split(":", 1)[1], m["data"]))
        assert events == ["zadd|" + z1, "zadd|" + z2, "zunionstore|" + d, "del|" + d,
                          "zdiffstore|" + d, "zrangestore|" + d, "del|" + d], events
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")


@case
def readers_see_whole_moves_across_shards(t, srv):
    """Movers shift members between two sets on two shards in MULTI; readers see no tear."""
    a, b, dst = spread_keys("zmv:", 3)
    n = 40
    with srv.raw() as c:
        c.call("ZADD", a, *[x for i in range(n) for x in (i, "m%d" % i)])
    stop = time.monotonic() + 4
    errors = []

    def mover(seed):
        rng = random.Random(seed)
        with srv.raw() as c:
            while time.monotonic() < stop and not errors:
                m = "m%d" % rng.randrange(n)
                src, to = (a, b) if rng.random() < 0.5 else (b, a)
                c.call("MULTI")
                c.call("ZREM", src, m)
                c.call("ZADD", to, rng.randrange(100), m)
                r = c.call("EXEC")
                if r[0] == 1:
                    continue
                c.call("MULTI")  # the member was on the other side: put it back where it was
                c.call("ZREM", to, m)
                c.call("ZADD", src, rng.randrange(100), m)
                c.call("EXEC")

    def reader():
        with srv.raw() as c:
            while time.monotonic() < stop and not errors:
                u = c.call("ZUNION", 2, a, b)
                card = c.call("ZINTERCARD", 2, a, b)
                stored = c.call("ZUNIONSTORE", dst, 2, a, b)
                if len(u) != n or card != 0 or stored != n:
                    errors.append((len(u), card, stored))

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not errors, errors[:5]


@case
def listpack_thresholds_decide_the_encoding(t, srv):
    """zset-max-listpack-entries/-value and their ziplist aliases, as OBJECT ENCODING shows."""
    with srv.raw() as c:
        try:
            assert c.call("CONFIG", "GET", "zset-max-listpack-entries") == [
                "zset-max-listpack-entries", "128"]
            assert c.call("CONFIG", "SET", "zset-max-ziplist-entries", 4) == "OK"
            assert c.call("CONFIG", "GET", "zset-max-listpack-entries")[1] == "4"
            c.call("ZADD", "small", 1, "a", 2, "b", 3, "c", 4, "d")
            assert c.call("OBJECT", "ENCODING", "small") == "listpack"
            c.call("ZADD", "small", 5, "e")
            assert c.call("OBJECT", "ENCODING", "small") == "skiplist"
            assert c.call("CONFIG", "SET", "zset-max-listpack-value", 3) == "OK"
            assert c.call("CONFIG", "GET", "zset-max-ziplist-value")[1] == "3"
            c.call("ZADD", "long", 1, "abcd")
            assert c.call("OBJECT", "ENCODING", "long") == "skiplist"
            c.call("ZADD", "short", 1, "abc")
            assert c.call("OBJECT", "ENCODING", "short") == "listpack"
            assert c.call("ZUNIONSTORE", "u", 2, "small", "short") == 6
            assert c.call("OBJECT", "ENCODING", "u") == "skiplist"
            assert c.call("ZRANGESTORE", "r", "small", 0, 1) == 2
            assert c.call("OBJECT", "ENCODING", "r") == "listpack"
            assert c.call("CONFIG", "SET", "zset-max-ziplist-entries", 0) == "OK"
            c.call("ZADD", "zero", 1, "a")
            assert c.call("OBJECT", "ENCODING", "zero") == "skiplist"
            assert c.call("CONFIG", "SET", "zset-max-listpack-entries", -1) != "OK"
        finally:
            c.call("CONFIG", "SET", "zset-max-listpack-entries", 128)
            c.call("CONFIG", "SET", "zset-max-listpack-value", 64)


def snapshot(c, keys):
    return {k: (c.call("TYPE", k), c.call("ZRANGE", k, 0, -1, "WITHSCORES")) for k in keys}


@case
def kill9_keeps_every_stored_destination(t, srv):
    """appendfsync always, stores to destinations on other shards, kill -9: all come back."""
    d = tempfile.mkdtemp(prefix="hotkv-zalg-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    keys = spread_keys("zalgp:", 6)
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            c = s.raw()
            c.call("ZADD", keys[0], *[x for i in range(200) for x in (i * 0.5, "m%d" % i)])
            c.call("ZADD", keys[1], 1, "m1", 2, "m2", "inf", "m3")
            assert c.call("ZUNIONSTORE", keys[2], 2, keys[0], keys[1], "WEIGHTS", 2, 3) == 200
            assert c.call("ZINTERSTORE", keys[3], 2, keys[0], keys[1], "AGGREGATE", "MAX") == 3
            assert c.call("ZDIFFSTORE", keys[4], 2, keys[0], keys[1]) == 197
            assert c.call("ZRANGESTORE", keys[5], keys[0], "(10", 20, "BYSCORE") == 20
            c.call("SET", "gone", 1)
            c.call("ZINTERSTORE", "gone", 2, keys[0], "missing")
            before = snapshot(c, keys + ["gone"])
            assert before["gone"] == ("none", [])
            c.close()
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            with s2.raw() as c:
                after = snapshot(c, keys + ["gone"])
                assert after == before, (before, after)
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
