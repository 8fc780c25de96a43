#!/usr/bin/python3
"""Sets end to end, first proven on redis-server 7.0 and then held against hotkv.

- Flash-sale buyers: a `buyers` set decides who may buy. 200 connections each SADD the same 50
  customers (each in its own order, all released at once); SADD's reply 1 is the permission, so
  every customer must get exactly one 1 over all connections, and SCARD ends at 50.
- Single-key commands (SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD), OBJECT ENCODING
  (intset up to 512 integers, then hashtable), SPOP and SRANDMEMBER with and without counts,
  SSCAN with MATCH and COUNT over a hashtable.
- RESP3: SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count reply a set ('~'); SRANDMEMBER
  with a count an array.
- Set algebra, the *STORE forms, SINTERCARD and SMOVE with their keys on different shards
  (spread_keys), and their atomicity: movers SMOVE members between two sets on different shards
  while readers check that SUNION always sees every member and SINTERCARD never sees one twice.
- Keyspace events (class s, plus del) in Redis's order.
- A kill -9 with appendfsync always, after a BGREWRITEAOF and more writes, keeps every set,
  SPOP's removals and the encodings.
- Misuse gets Redis's exact errors (raw client), WRONGTYPE both ways.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_sets.py --server build/hotkv --threads 4   (or --kind redis)
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

from server import (case, encode_command, expect_error, raise_nofile, run_cases,  # noqa: E402
                    spread_keys, wait_rewrite_done)

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
BUYER_CONNECTIONS = 200
CUSTOMERS = 50


def read_replies(c, n):
    return [c.read_reply() for _ in range(n)]


# ----------------------------------------------------------------------------------------------
# The flash sale.


@case
def flash_sale_buyers_added_exactly_once(t, srv):
    """200 connections SADD the same 50 customers: each customer is admitted exactly once."""
    key = "{item:1001}:buyers"
    raise_nofile(4 * BUYER_CONNECTIONS)
    clients = [srv.raw() for _ in range(BUYER_CONNECTIONS)]
    try:
        start = threading.Barrier(BUYER_CONNECTIONS)
        wins = [dict() for _ in range(BUYER_CONNECTIONS)]
        errors = []

        def buyer(i):
            try:
                order = ["customer:%d" % n for n in range(CUSTOMERS)]
                random.Random(i).shuffle(order)
                payload = b"".join(encode_command("SADD", key, who) for who in order)
                start.wait(timeout=30)
                clients[i].send(payload)
                for who, r in zip(order, read_replies(clients[i], CUSTOMERS)):
                    assert r in (0, 1), r
                    wins[i][who] = r
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=buyer, args=(i,)) for i in range(BUYER_CONNECTIONS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=60)
        assert not any(th.is_alive() for th in threads), "buyers did not finish"
        assert not errors, errors[:3]
        for n in range(CUSTOMERS):
            who = "customer:%d" % n
            admitted = sum(w[who] for w in wins)
            assert admitted == 1, "%s admitted %d times" % (who, admitted)
        with srv.raw() as c:
            assert c.call("SCARD", key) == CUSTOMERS
            assert sorted(c.call("SMEMBERS", key)) == sorted(
                "customer:%d" % n for n in range(CUSTOMERS))
            # A late buyer is refused: SADD answers 0 for someone already admitted.
            assert c.call("SADD", key, "customer:7") == 0
            assert c.call("SISMEMBER", key, "customer:7") == 1
    finally:
        for c in clients:
            c.close()


# ----------------------------------------------------------------------------------------------
# Commands one by one.


@case
def single_key_commands_and_encodings(t, srv):
    """SADD/SREM/SCARD/SISMEMBER/SMISMEMBER/SMEMBERS and OBJECT ENCODING as Redis 7.0."""
    r = srv.client()
    assert r.sadd("s", 3, 1, 2, 2) == 3
    assert r.type("s") == "set"
    assert r.object("encoding", "s") == "intset"
    assert r.smembers("s") == {"1", "2", "3"}
    with srv.raw() as c:
        assert c.call("SMEMBERS", "s") == ["1", "2", "3"]  # an intset replies in order
    assert r.scard("s") == 3 and r.scard("missing") == 0
    assert r.sismember("s", 2) is True and r.sismember("s", 9) is False
    assert r.smismember("s", [1, 9, 3]) == [1, 0, 1]
    assert r.smismember("missing", [1]) == [0]
    assert r.srem("s", 1, 9) == 1
    assert r.sadd("s", "x") == 1
    assert r.object("encoding", "s") == "hashtable"
    assert r.srem("s", "x") == 1
    assert r.object("encoding", "s") == "hashtable"  # never converts back
    assert r.srem("s", 2, 3) == 2
    assert r.exists("s") == 0
    assert r.sadd("big", *range(512)) == 512
    assert r.object("encoding", "big") == "intset"
    assert r.sadd("big", 512) == 1
    assert r.object("encoding", "big") == "hashtable"
    assert r.scard("big") == 513
    assert r.sadd("bin", b"a\x00b", b"\xff") == 2
    assert r.sismember("bin", b"a\x00b") is True
    assert r.sismember("bin", "a") is False


@case
def spop_and_srandmember(t, srv):
    """SPOP removes distinct random members; SRANDMEMBER never changes the set."""
    r = srv.client()
    members = {"m%d" % i for i in range(40)}
    r.sadd("s", *members)
    assert r.spop("missing") is None and r.spop("missing", 3) == []
    assert r.srandmember("missing") is None and r.srandmember("missing", -3) == []
    popped = set()
    one = r.spop("s")
    assert one in members
    popped.add(one)
    for n in (2, 30):  # a small share, then most of what is left
        got = r.spop("s", n)
        assert len(got) == n and len(set(got)) == n and not (set(got) & popped), got
        popped |= set(got)
    rest = r.smembers("s")
    assert rest | popped == members and not (rest & popped)
    assert r.spop("s", 0) == []
    for n in (1, 4, 7, 100):
        got = r.srandmember("s", n)
        assert len(got) == min(n, 7) and len(set(got)) == len(got) and set(got) <= rest
    got = r.srandmember("s", -50)
    assert len(got) == 50 and set(got) <= rest and len(set(got)) < 50
    assert r.srandmember("s") in rest
    assert r.scard("s") == 7
    assert sorted(r.spop("s", 100)) == sorted(rest)
    assert r.exists("s") == 0


@case
def sscan_walks_every_member(t, srv):
    """SSCAN over 1,000 members with COUNT returns each; MATCH filters; an intset comes whole."""
    r = srv.client()
    r.sadd("h", *("member:%d" % i for i in range(1000)))
    seen = set()
    cursor, calls = 0, 0
    while True:
        cursor, items = r.sscan("h", cursor, count=25)
        seen |= set(items)
        calls += 1
        if cursor == 0 or calls > 10000:
            break
    assert cursor == 0 and calls > 1
    assert len(seen) == 1000
    matched = set()
    for m in r.sscan_iter("h", match="member:9?", count=100):
        matched.add(m)
    assert matched == {"member:9%d" % i for i in range(10)}
    r.sadd("ints", 5, 1, 3)
    assert r.sscan("ints", 0) == (0, ["1", "3", "5"])
    assert r.sscan("ints", 0, match="[13]") == (0, ["1", "3"])
    assert r.sscan("missing", 0) == (0, [])


@case
def resp3_replies_sets(t, srv):
    """RESP3: SMEMBERS/SINTER/SUNION/SDIFF/SPOP count reply '~'; SRANDMEMBER count '*'."""
    with srv.raw() as c:
        c.call("HELLO", "3")
        assert c.call("SADD", "a", "1", "2", "3") == 3
        assert c.call("SADD", "b", "2", "3", "4") == 3
        assert c.call_bytes("SMEMBERS", "a") == b"~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"
        assert c.call_bytes("SMEMBERS", "missing") == b"~0\r\n"
        assert c.call_bytes("SINTER", "a", "b") == b"~2\r\n$1\r\n2\r\n$1\r\n3\r\n"
        assert c.call_bytes("SUNION", "a", "b").startswith(b"~4\r\n")
        assert c.call_bytes("SDIFF", "a", "b") == b"~1\r\n$1\r\n1\r\n"
        assert c.call_bytes("SINTER", "missing", "a") == b"~0\r\n"
        assert c.call_bytes("SPOP", "a", "0") == b"~0\r\n"
        assert c.call_bytes("SPOP", "missing", "2") == b"~0\r\n"
        assert c.call_bytes("SPOP", "missing") == b"_\r\n"
        assert c.call_bytes("SRANDMEMBER", "missing", "2") == b"*0\r\n"
        assert c.call_bytes("SRANDMEMBER", "b", "1").startswith(b"*1\r\n")
        assert c.call_bytes("SPOP", "b", "1").startswith(b"~1\r\n")
        assert c.call_bytes("SMISMEMBER", "a", "1", "9") == b"*2\r\n:1\r\n:0\r\n"


# ----------------------------------------------------------------------------------------------
# Several keys, several shards.


@case
def algebra_across_shards(t, srv):
    """SINTER/SUNION/SDIFF, *STORE, SINTERCARD and SMOVE with keys on four different shards."""
    a, b, c_, d = spread_keys("set:", 4)
    r = srv.client()
    r.sadd(a, 1, 2, 3, "x")
    r.sadd(b, 2, 3, 4, "x")
    r.sadd(c_, 3, "x", 9)
    assert r.sinter(a, b, c_) == {"3", "x"}
    assert r.sunion(a, b, c_) == {"1", "2", "3", "4", "9", "x"}
    assert r.sdiff(a, b, c_) == {"1"}
    assert r.sdiff("missing", a) == set() and r.sinter(a, "missing") == set()
    assert r.sintercard(3, [a, b, c_]) == 2
    assert r.sintercard(2, [a, b], limit=1) == 1
    r.set(d, "was a string", ex=100)
    assert r.sinterstore(d, [a, b]) == 3
    assert r.type(d) == "set" and r.ttl(d) == -1
    assert r.smembers(d) == {"2", "3", "x"}
    assert r.object("encoding", d) == "hashtable"
    assert r.sunionstore(d, [a, c_]) == 5
    assert r.sdiffstore(d, [a, b]) == 1 and r.smembers(d) == {"1"}
    assert r.object("encoding", d) == "intset"
    assert r.sinterstore(d, [a, "missing"]) == 0 and r.exists(d) == 0
    assert r.smove(a, d, "1") is True
    assert r.smembers(a) == {"2", "3", "x"} and r.smembers(d) == {"1"}
    assert r.smove(d, c_, "1") is True and r.exists(d) == 0
    assert r.smove(a, c_, "nope") is False
    assert r.smembers(c_) == {"1", "3", "x", "9"}


@case
def cross_shard_moves_are_atomic(t, srv):
    """Movers SMOVE members between sets on two shards; SUNION/SINTERCARD never see a half move."""
    a, b = spread_keys("atomic:", 2)
    total = 40
    with srv.raw() as c:
        assert c.call("SADD", a, *range(total)) == total
    stop = threading.Event()
    errors = []
    counts = {"moves": 0, "checks": 0}
    lock = threading.Lock()
    deadline = time.monotonic() + 20

    def mover(seed):
        rng = random.Random(seed)
        try:
            with srv.raw() as c:
                for _ in range(1500):
                    if stop.is_set() or time.monotonic() > deadline:
                        break
                    m = rng.randrange(total)
                    src, dst = (a, b) if rng.random() < 0.5 else (b, a)
                    n = c.call("SMOVE", src, dst, m)
                    assert n in (0, 1), n
                    with lock:
                        counts["moves"] += n
        except Exception as e:  # noqa: BLE001
            errors.append("mover: %r" % e)

    def reader():
        try:
            with srv.raw() as c:
                for _ in range(1500):
                    if stop.is_set() or time.monotonic() > deadline:
                        break
                    union = c.call("SUNION", a, b)
                    assert len(union) == total, "SUNION saw %d members" % len(union)
                    both = c.call("SINTERCARD", 2, a, b)
                    assert both == 0, "a member in both sets: %r" % both
                    with lock:
                        counts["checks"] += 1
        except Exception as e:  # noqa: BLE001
            errors.append("reader: %r" % e)
            stop.set()

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in threads), "workers did not finish"
    assert not errors, errors[:3]
    assert counts["moves"] > 100 and counts["checks"] > 50, counts
    with srv.raw() as c:
        assert c.call("SCARD", a) + c.call("SCARD", b) == total
        assert sorted(int(x) for x in c.call("SUNION", a, b)) == list(range(total))


# ----------------------------------------------------------------------------------------------
# Keyspace events.


@case
def keyspace_events(t, srv):
    """sadd, srem, spop, smove (srem + sadd), *store and del events in Redis's order."""
    a, b = spread_keys("ev:", 2)
    with srv.raw() as c, srv.raw() as sub:
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "Esg") == "OK"
        try:
            sub.call("PSUBSCRIBE", "__keyevent@0__:*")
            steps = [
                ("SADD", a, "1", "2"),
                ("SADD", a, "1"),           # nothing added: no event
                ("SREM", a, "9"),           # nothing removed: no event
                ("SREM", a, "1"),
                ("SMOVE", a, b, "2"),       # srem a, del a, sadd b
                ("SMOVE", b, b, "2"),       # same key: no event
                ("SADD", "x", "5", "6"),
                ("SPOP", "x"),
                ("SPOP", "x", "5"),         # spop x, del x
                ("SET", "str", "v"),
                ("SINTERSTORE", "str", b, "missing"),  # del str
                ("SINTERSTORE", "d", b, b),
                ("SUNIONSTORE", "d", b),
                ("SDIFFSTORE", "d", b, b),  # del d
            ]
            for cmd in steps:
                c.call(*cmd)
            expected = [("sadd", a), ("srem", a), ("srem", a), ("del", a), ("sadd", b),
                        ("sadd", "x"), ("spop", "x"), ("spop", "x"), ("del", "x"),
                        ("del", "str"), ("sinterstore", "d"), ("sunionstore", "d"), ("del", "d")]
            got = []
            deadline = time.monotonic() + 5
            while len(got) < len(expected) and time.monotonic() < deadline:
                m = sub.read_reply()
                if m and m[0] == "pmessage":
                    got.append((m[2].split(":", 1)[1], m[3]))
            assert got == expected, got
        finally:
            c.call("CONFIG", "SET", "notify-keyspace-events", "")


# ----------------------------------------------------------------------------------------------
# Persistence.


@case
def kill9_keeps_sets(t, srv):
    """appendfsync always, a rewrite, kill -9: members, SPOP's removals, stores, encodings stay."""
    d = tempfile.mkdtemp(prefix="hotkv-sets-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    k1, k2, k3 = spread_keys("persist:", 3)
    keys = [k1, k2, k3, "shrunk", "big"]
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            r = s.client()
            r.sadd(k1, *("m%d" % i for i in range(100)))
            popped = r.spop(k1, 30)
            r.spop(k1)
            r.srem(k1, "m99", "m98")
            r.sadd(k2, *range(20))
            r.smove(k1, k2, next(iter(r.smembers(k1))))
            r.sunionstore(k3, [k1, k2])
            r.sadd("shrunk", 1, 2, "x")
            r.srem("shrunk", "x")
            r.sadd("big", *range(600))
            # Compact the log mid-way: what follows lands after the rewritten base.
            r.bgrewriteaof()
            wait_rewrite_done(r)
            r.spop("big", 50)
            r.sadd("shrunk", 3)
            r.expire(k2, 1000)
            before = {k: (r.smembers(k), r.object("encoding", k)) for k in keys}
            assert not (before[k1][0] & set(popped))
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            r = s2.client()
            after = {k: (r.smembers(k), r.object("encoding", k)) for k in keys}
            if not t.is_hotkv:
                # Redis 7.0 loads its rewritten base (an RDB preamble) by re-encoding each set,
                # so a hashtable of a few integers comes back as an intset. HotKV logs the
                # encoding and keeps it: compared exactly for hotkv only.
                assert after["shrunk"][1] == "intset", after["shrunk"]
                after["shrunk"] = (after["shrunk"][0], before["shrunk"][1])
            for k in keys:
                assert after[k] == before[k], "%s differs after restart" % k
            assert 0 < r.ttl(k2) <= 1000
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# Misuse.


@case
def misuse_gets_redis_errors(t, srv):
    """Arity, counts, cursors, numkeys, LIMIT and WRONGTYPE both ways: Redis's exact errors."""
    with srv.raw() as c:
        assert c.call("SADD", "s", "1", "2", "3") == 3
        assert c.call("SET", "str", "v") == "OK"
        assert c.call("XADD", "stream", "1-0", "f", "v") == "1-0"
        for cmd in (("SADD", "s"), ("SREM", "s"), ("SISMEMBER", "s"), ("SMOVE", "s", "t"),
                    ("SINTERSTORE", "d"), ("SSCAN", "s"), ("SINTERCARD", "1"), ("SPOP",)):
            expect_error(c.call(*cmd),
                         "ERR wrong number of arguments for '%s' command" % cmd[0].lower())
        for n in ("-1", "x"):
            expect_error(c.call("SPOP", "s", n), "ERR value is out of range, must be positive")
        expect_error(c.call("SPOP", "s", "1", "2"), "ERR syntax error")
        expect_error(c.call("SRANDMEMBER", "s", "x"),
                     "ERR value is not an integer or out of range")
        expect_error(c.call("SRANDMEMBER", "s", "-9223372036854775808"),
                     "ERR value is out of range, value must between -9223372036854775807 and "
                     "9223372036854775807")
        expect_error(c.call("SRANDMEMBER", "s", "1", "2"), "ERR syntax error")
        expect_error(c.call("SSCAN", "s", "x"), "ERR invalid cursor")
        expect_error(c.call("SSCAN", "s", "0", "COUNT", "0"), "ERR syntax error")
        expect_error(c.call("SSCAN", "s", "0", "COUNT", "x"),
                     "ERR value is not an integer or out of range")
        expect_error(c.call("SSCAN", "s", "0", "MATCH"), "ERR syntax error")
        assert c.call("SSCAN", "missing", "0", "COUNT", "0") == ["0", []]
        for n in ("0", "-2", "x"):
            expect_error(c.call("SINTERCARD", n, "s"), "ERR numkeys should be greater than 0")
        expect_error(c.call("SINTERCARD", "3", "s", "t"),
                     "ERR Number of keys can't be greater than number of args")
        for n in ("-1", "x"):
            expect_error(c.call("SINTERCARD", "1", "s", "LIMIT", n), "ERR LIMIT can't be negative")
        expect_error(c.call("SINTERCARD", "1", "s", "LIMIT"), "ERR syntax error")
        for other in ("str", "stream"):
            for cmd in (("SADD", other, "1"), ("SREM", other, "1"), ("SCARD", other),
                        ("SISMEMBER", other, "1"), ("SMISMEMBER", other, "1"),
                        ("SMEMBERS", other), ("SPOP", other), ("SPOP", other, "0"),
                        ("SRANDMEMBER", other), ("SSCAN", other, "0"),
                        ("SINTER", "missing", other), ("SUNION", "s", other),
                        ("SDIFF", "missing", other), ("SINTERSTORE", "d", "missing", other),
                        ("SINTERCARD", "2", "missing", other), ("SMOVE", "s", other, "1"),
                        ("SMOVE", other, "s", "1")):
                expect_error(c.call(*cmd), WRONGTYPE)
        assert c.call("SMOVE", "missing", "str", "1") == 0  # the source is checked first
        for cmd in (("GET", "s"), ("INCR", "s"), ("APPEND", "s", "x"), ("XLEN", "s"),
                    ("XADD", "s", "*", "f", "v")):
            expect_error(c.call(*cmd), WRONGTYPE)
        assert c.call("EXISTS", "d") == 0
        assert sorted(c.call("SMEMBERS", "s")) == ["1", "2", "3"]


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
