#!/usr/bin/python3
"""Lists end to end, first proven on redis-server 7.0 and then held against hotkv.

- Seckill: 500 tokens RPUSHed, 5,000 concurrent connections LPOP once each, all released at
  once: exactly 500 winners, every token won once, the list gone.
- The same random sequence of list commands (pushes, pops with counts, LSET, LINSERT, LREM,
  LTRIM, LRANGE, LINDEX, LPOS with RANK/COUNT/MAXLEN, LMOVE, LMPOP) against hotkv and a
  reference redis-server: every reply byte for byte equal, RESP2 and RESP3.
- Misuse gets Redis's exact errors, WRONGTYPE both ways.
- Blocking: BLPOP/BRPOP/BLMOVE/BRPOPLPUSH/BLMPOP served in the order clients blocked, from the
  first non-empty key in argument order, woken by a push from another thread's key, by
  MULTI/EXEC and by a script; float timeouts; CLIENT UNBLOCK; a client that disconnects while
  blocked leaves nothing behind; inside MULTI they answer at once; BLMOVE chains.
- Keyspace events (class l, plus del) in Redis's order.
- A kill -9 with appendfsync always, after a BGREWRITEAOF and more writes, keeps every list.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_lists.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (RawClient, RespError, Server, Swarm, case, encode_command,  # noqa: E402
                    expect_error, raise_nofile, run_cases, spread_keys, wait_rewrite_done)

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SECKILL_TOKENS = 500
SECKILL_SHOPPERS = 5000


def wait_blocked(c, n, deadline_s=10):
    """Waits until INFO clients reports `n` blocked clients."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        info = c.call("INFO", "clients")
        for line in info.splitlines():
            if line.startswith("blocked_clients:") and int(line.split(":")[1]) == n:
                return
        time.sleep(0.01)
    raise AssertionError("never saw %d blocked clients" % n)


def blocked(port, *cmd):
    """Sends a blocking command on a new connection; returns the connection (read it later)."""
    c = RawClient(port, timeout=20)
    c.send(encode_command(*cmd))
    return c


# ----------------------------------------------------------------------------------------------
# The sale.


@case
def seckill_tokens_sold_exactly_once(t, srv):
    """500 tokens, 5,000 connections LPOP at once: exactly 500 winners, each token once."""
    key = "seckill:item:1001:tokens"
    raise_nofile(SECKILL_SHOPPERS + 256)
    with srv.raw() as c:
        tokens = ["token-%d" % i for i in range(SECKILL_TOKENS)]
        for i in range(0, len(tokens), 100):
            c.call("RPUSH", key, *tokens[i:i + 100])
        assert c.call("LLEN", key) == SECKILL_TOKENS
    with Swarm(srv.port, SECKILL_SHOPPERS, deadline_s=120) as swarm:
        replies = swarm.round(encode_command("LPOP", key), 1)
    won = [r[0] for r in replies.values() if r[0] is not None]
    assert len(won) == SECKILL_TOKENS, len(won)
    assert sorted(won) == sorted(tokens)
    assert all(r[0] is None or r[0].startswith("token-") for r in replies.values())
    with srv.raw() as c:
        assert c.call("EXISTS", key) == 0


# ----------------------------------------------------------------------------------------------
# Replies, compared with a reference redis-server.


def random_list_command(rng, keys):
    k = rng.choice(keys)
    other = rng.choice(keys)
    elem = rng.choice(["a", "b", "c", "d", "", "x" * rng.choice([1, 30, 300]), "12", "-7"])
    n = str(rng.randint(-6, 6))
    side = rng.choice(["LEFT", "RIGHT", "left"])
    choices = [
        ("LPUSH", k, elem, rng.choice(["a", "b"])), ("RPUSH", k, elem), ("LPUSHX", k, elem),
        ("RPUSHX", k, elem), ("LPOP", k), ("RPOP", k), ("LPOP", k, str(rng.randint(0, 4))),
        ("RPOP", k, str(rng.randint(0, 4))), ("LLEN", k), ("LRANGE", k, n, str(rng.randint(-6, 6))),
        ("LRANGE", k, "0", "-1"), ("LINDEX", k, n), ("LSET", k, n, elem),
        ("LINSERT", k, rng.choice(["BEFORE", "AFTER", "after"]), rng.choice(["a", "b", "z"]), elem),
        ("LREM", k, n, rng.choice(["a", "b", "c"])), ("LTRIM", k, n, str(rng.randint(-6, 6))),
        ("LPOS", k, rng.choice(["a", "b"])),
        ("LPOS", k, rng.choice(["a", "b"]), "RANK", rng.choice(["1", "2", "-1", "-2"])),
        ("LPOS", k, "a", "COUNT", str(rng.randint(0, 3)), "MAXLEN", str(rng.randint(0, 5))),
        ("LPOS", k, "b", "RANK", "-1", "COUNT", "0"),
        ("LMOVE", k, other, side, rng.choice(["LEFT", "RIGHT"])), ("RPOPLPUSH", k, other),
        ("LMPOP", "2", k, other, side), ("LMPOP", "1", k, "RIGHT", "COUNT", str(rng.randint(1, 5))),
        ("BLPOP", k, other, "0.01"), ("BRPOP", k, "0.01"),
        ("TYPE", k), ("EXISTS", k), ("OBJECT", "ENCODING", k),
    ]
    return rng.choice(choices)


@case
def replies_match_redis(t, srv):
    """A random sequence of list commands: replies byte for byte equal to redis-server's."""
    if not t.is_hotkv:
        return  # this case compares hotkv with the reference
    keys = ["l1", "l2", "{l}3"] + spread_keys("lst", 2)
    ref = Server("redis").start()
    try:
        for proto in (2, 3):
            rng = random.Random(1000 + proto)
            with srv.raw() as a, ref.raw() as b:
                if proto == 3:
                    a.call("HELLO", "3")
                    b.call("HELLO", "3")
                a.call("FLUSHALL")
                b.call("FLUSHALL")
                for i in range(1500):
                    cmd = random_list_command(rng, keys)
                    ra, rb = a.call_bytes(*cmd), b.call_bytes(*cmd)
                    assert ra == rb, "step %d %r: hotkv %r, redis %r" % (i, cmd, ra, rb)
                for k in keys:
                    whole = ("LRANGE", k, "0", "-1")
                    assert a.call_bytes(*whole) == b.call_bytes(*whole)
    finally:
        ref.stop()


@case
def compressed_lists_match_redis(t, srv):
    """list-compress-depth 1 and 2 with 4-entry nodes: long lists whose interior nodes are
    compressed answer every list command, DUMP/RESTORE and SORT ... STORE as redis-server does."""
    if not t.is_hotkv:
        return  # this case compares hotkv with the reference
    keys = ["l1", "l2", "{l}3"] + spread_keys("lst", 2)
    ref = Server("redis").start()
    try:
        for depth in (1, 2):
            rng = random.Random(2000 + depth)
            with srv.raw() as a, ref.raw() as b:
                for c in (a, b):
                    c.call("FLUSHALL")
                    c.call("CONFIG", "SET", "list-max-listpack-size", "4")
                    c.call("CONFIG", "SET", "list-compress-depth", str(depth))
                    for k in keys:
                        c.call("RPUSH", k, *("item:%03d:%s" % (i, "x" * 40) for i in range(200)))
                for i in range(1500):
                    cmd = random_list_command(rng, keys)
                    ra, rb = a.call_bytes(*cmd), b.call_bytes(*cmd)
                    assert ra == rb, "depth %d step %d %r: hotkv %r, redis %r" % (
                        depth, i, cmd, ra, rb)
                for k in keys:
                    whole = ("LRANGE", k, "0", "-1")
                    assert a.call_bytes(*whole) == b.call_bytes(*whole)
                # Copies made from the compressed lists, while the depth is still set.
                ca, cb = srv.client(), ref.client()
                for k in keys:
                    for c in (ca, cb):
                        dump = c.dump(k)
                        if dump is not None:
                            c.restore(k + ":copy", 0, dump)
                            c.sort(k, alpha=True, store=k + ":sorted")
                    for suffix in ("", ":copy", ":sorted"):
                        assert ca.lrange(k + suffix, 0, -1) == cb.lrange(k + suffix, 0, -1)
                for c in (a, b):
                    c.call("CONFIG", "SET", "list-max-listpack-size", "-2")
                    c.call("CONFIG", "SET", "list-compress-depth", "0")
    finally:
        ref.stop()


@case
def errors_match_redis(t, srv):
    """Misuse gets Redis 7.0's error texts; WRONGTYPE both ways."""
    with srv.raw() as c:
        c.call("SET", "str", "x")
        c.call("RPUSH", "l", "a", "b")
        for cmd in (("LPUSH", "str", "a"), ("LPOP", "str"), ("LRANGE", "str", "0", "-1"),
                    ("LLEN", "str"), ("BLPOP", "str", "0"), ("LMOVE", "l", "str", "LEFT", "LEFT"),
                    ("LPOS", "str", "a"), ("LMPOP", "1", "str", "LEFT")):
            expect_error(c.call(*cmd), WRONGTYPE)
        expect_error(c.call("GET", "l"), WRONGTYPE)
        expect_error(c.call("LPOP", "l", "-1"), "ERR value is out of range, must be positive")
        expect_error(c.call("LINDEX", "l", "x"), "ERR value is not an integer or out of range")
        expect_error(c.call("LSET", "l", "5", "x"), "ERR index out of range")
        expect_error(c.call("LSET", "nokey", "0", "x"), "ERR no such key")
        expect_error(c.call("LINSERT", "l", "middle", "a", "x"), "ERR syntax error")
        expect_error(c.call("LMOVE", "l", "l2", "UP", "LEFT"), "ERR syntax error")
        expect_error(c.call("LPOS", "l", "a", "RANK", "0"),
                     "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                     "second ... or use negative to start from the end of the list")
        expect_error(c.call("LPOS", "l", "a", "COUNT", "-1"), "ERR COUNT can't be negative")
        expect_error(c.call("LPOS", "l", "a", "MAXLEN", "-1"), "ERR MAXLEN can't be negative")
        expect_error(c.call("LPOS", "l", "a", "FOO", "1"), "ERR syntax error")
        expect_error(c.call("BLPOP", "l", "x"), "ERR timeout is not a float or out of range")
        expect_error(c.call("BLPOP", "l", "-1"), "ERR timeout is negative")
        expect_error(c.call("LMPOP", "0", "l", "LEFT"), "ERR numkeys should be greater than 0")
        expect_error(c.call("LMPOP", "3", "l", "LEFT"), "ERR syntax error")
        expect_error(c.call("LMPOP", "x", "l", "LEFT"), "ERR numkeys should be greater than 0")
        expect_error(c.call("BLPOP", "l", "inf"), "ERR timeout is negative")
        expect_error(c.call("LMPOP", "1", "l", "LEFT", "COUNT", "0"),
                     "ERR count should be greater than 0")
        expect_error(c.call("LMPOP", "1", "l", "MIDDLE"), "ERR syntax error")
        expect_error(c.call("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "1", "COUNT", "2"),
                     "ERR syntax error")
        expect_error(c.call("LPUSH", "l"), "ERR wrong number of arguments for 'lpush' command")
        assert c.call("LRANGE", "l", "0", "-1") == ["a", "b"]


# ----------------------------------------------------------------------------------------------
# Blocking.


@case
def blocked_clients_served_in_order_from_first_nonempty_key(t, srv):
    """Three clients BLPOP the same keys; pushes serve them in the order they blocked, each
    from the first non-empty key in its argument order; a float timeout expires as nil."""
    k1, k2 = spread_keys("bq", 2)
    with srv.raw() as c:
        waiters = []
        for i in range(3):
            waiters.append(blocked(srv.port, "BLPOP", k1, k2, "0"))
            wait_blocked(c, i + 1)
        assert c.call("RPUSH", k2, "x1", "x2") == 2
        assert waiters[0].read_reply() == [k2, "x1"]
        assert waiters[1].read_reply() == [k2, "x2"]
        # Both keys filled in one transaction: served from the key that became ready first,
        # as Redis does (keys of one slot, so of one shard: across shards the two wake-ups
        # race, docs/lists.md); a new BLPOP takes the first non-empty key in argument order.
        t1, t2 = "{bq}one", "{bq}two"
        waiters.append(blocked(srv.port, "BLPOP", t1, t2, "0"))
        wait_blocked(c, 2)
        c.call("MULTI")
        c.call("RPUSH", t2, "y")
        c.call("RPUSH", t1, "z")
        c.call("RPUSH", k1, "q")
        assert c.call("EXEC") == [1, 1, 1]
        assert waiters[2].read_reply() == [k1, "q"]
        assert waiters[3].read_reply() == [t2, "y"]
        assert c.call("RPUSH", t2, "w") == 1
        assert c.call("BLPOP", t2, t1, "0") == [t2, "w"]
        assert c.call("BLPOP", t2, t1, "0") == [t1, "z"]
        for w in waiters:
            w.close()
        t0 = time.monotonic()
        assert c.call("BLPOP", "never", "0.2") is None
        assert 0.15 < time.monotonic() - t0 < 5
        wait_blocked(c, 0)


@case
def a_queue_with_many_waiters_serves_them_in_turn(t, srv):
    """Twenty workers in BRPOP on one queue: one push serves the first only and the others
    keep their places; one push of nineteen serves the rest in the order they blocked. A
    BLMOVE from the queue onto itself puts the element back, so the worker behind it is served
    in the same round."""
    q = "jobs"
    with srv.raw() as c:
        workers = []
        for i in range(20):
            workers.append(blocked(srv.port, "BRPOP", q, "0"))
            wait_blocked(c, i + 1)
        assert c.call("LPUSH", q, "v0") == 1
        assert workers[0].read_reply() == [q, "v0"]
        wait_blocked(c, 19)
        assert c.call("LPUSH", q, *["v%d" % i for i in range(1, 20)]) == 19
        for i in range(1, 20):
            assert workers[i].read_reply() == [q, "v%d" % i]
        wait_blocked(c, 0)
        assert c.call("EXISTS", q) == 0
        for w in workers:
            w.close()
        rotate = blocked(srv.port, "BLMOVE", q, q, "RIGHT", "LEFT", "0")
        wait_blocked(c, 1)
        last = blocked(srv.port, "BRPOP", q, "0")
        wait_blocked(c, 2)
        assert c.call("LPUSH", q, "item") == 1
        assert rotate.read_reply() == "item"
        assert last.read_reply() == [q, "item"]
        wait_blocked(c, 0)
        assert c.call("EXISTS", q) == 0
        rotate.close()
        last.close()


@case
def a_pipeline_is_answered_before_its_last_command_blocks(t, srv):
    """A client pipelines LPUSH and BLPOP of a list another client already waits on: the
    waiting client takes the element, and the pipelining one reads its LPUSH's reply at once,
    byte for byte, while its BLPOP waits for the next push. The same for SET and INCR before a
    BRPOP of an empty list, on lists of every thread. A waiter is served as soon as the push
    that feeds it ends: a pop pipelined right behind the push finds nothing."""
    for q in spread_keys("piped", 3):
        with srv.raw() as c:
            first = blocked(srv.port, "BLPOP", q, "0")
            wait_blocked(c, 1)
            # A short timeout: a reply held back until the BLPOP is served fails here.
            p = RawClient(srv.port, timeout=5)
            p.send(encode_command("LPUSH", q, "1") + encode_command("BLPOP", q, "0"))
            assert p.read_reply_bytes() == b":1\r\n"
            assert first.read_reply() == [q, "1"]
            wait_blocked(c, 1)
            assert c.call("RPUSH", q, "2") == 1
            assert p.read_reply() == [q, "2"]
            p.send(encode_command("SET", q + ":flag", "on") + encode_command("INCR", q + ":n") +
                   encode_command("BRPOP", q, "0"))
            assert p.read_reply_bytes() == b"+OK\r\n"
            assert p.read_reply_bytes() == b":1\r\n"
            wait_blocked(c, 1)
            assert c.call("LPUSH", q, "3") == 1
            assert p.read_reply() == [q, "3"]
            # A waiter is served when the push ends, before the pipeline's next command: a pop
            # right behind the push finds nothing.
            first.send(encode_command("BLPOP", q, "0"))
            wait_blocked(c, 1)
            p.send(encode_command("RPUSH", q, "4") + encode_command("LPOP", q))
            assert p.read_reply() == 1
            assert p.read_reply() is None
            assert first.read_reply() == [q, "4"]
            first.close()
            p.close()
            c.call("DEL", q, q + ":flag", q + ":n")


@case
def waiters_fed_by_exec_or_an_atomic_run_are_served_before_the_next_command(t, srv):
    """A client pipelines MULTI, RPUSH, EXEC and an LPOP of a list another client waits on:
    the waiter is served when EXEC ends, so the LPOP finds nothing, as on redis-server. The
    same for a transaction over two shards, an LMOVE into the waited list from another
    shard's list, and a script that pushes; on lists of every thread."""
    lists = spread_keys("fed", 3)
    others = spread_keys("fedsrc", 3)
    for j, q in enumerate(lists):
        other = others[(j + 1) % 3]
        feeds = [
            [("MULTI",), ("RPUSH", q, "a"), ("EXEC",)],
            [("MULTI",), ("SET", other, "x"), ("RPUSH", q, "b"), ("EXEC",)],
            [("RPUSH", other + ":l", "c"), ("LMOVE", other + ":l", q, "LEFT", "RIGHT")],
            [("EVAL", "return redis.call('RPUSH', KEYS[1], ARGV[1])", 1, q, "d")],
        ]
        with srv.raw() as c:
            for feed in feeds:
                waiter = blocked(srv.port, "BLPOP", q, "0")
                wait_blocked(c, 1)
                p = RawClient(srv.port, timeout=5)
                p.send(b"".join(encode_command(*cmd) for cmd in feed) +
                       encode_command("LPOP", q))
                for _ in feed:
                    p.read_reply()
                assert p.read_reply() is None, (q, feed)
                got = waiter.read_reply()
                assert got[0] == q and got[1] in "abcd", got
                waiter.close()
                p.close()
            c.call("DEL", q, other, other + ":l")


@case
def blocked_pop_woken_by_script_and_other_threads(t, srv):
    """A client blocked on a key of another thread is woken by a plain push from a third
    connection, by a script's RPUSH and by LMOVE; BRPOP takes from the tail."""
    keys = spread_keys("wk", 3)
    with srv.raw() as c:
        w = blocked(srv.port, "BRPOP", keys[0], "5")
        wait_blocked(c, 1)
        assert c.call("EVAL", "return redis.call('RPUSH', KEYS[1], 'a', 'b')", 1, keys[0]) == 2
        assert w.read_reply() == [keys[0], "b"]
        w.send(encode_command("BLPOP", keys[1], "5"))
        wait_blocked(c, 1)
        assert c.call("LMOVE", keys[0], keys[1], "LEFT", "RIGHT") == "a"
        assert w.read_reply() == [keys[1], "a"]
        w.close()


@case
def blmove_chains_and_brpoplpush(t, srv):
    """BLMOVE a->b blocked, BLMOVE b->c blocked: one push to a reaches c; BRPOPLPUSH too."""
    a, b, cc = spread_keys("chain", 3)
    with srv.raw() as c:
        w1 = blocked(srv.port, "BLMOVE", a, b, "LEFT", "RIGHT", "0")
        wait_blocked(c, 1)
        w2 = blocked(srv.port, "BRPOPLPUSH", b, cc, "0")
        wait_blocked(c, 2)
        assert c.call("LPUSH", a, "item") == 1
        assert w1.read_reply() == "item"
        assert w2.read_reply() == "item"
        assert c.call("LRANGE", cc, "0", "-1") == ["item"]
        assert c.call("EXISTS", a, b) == 0
        w1.close()
        w2.close()


@case
def blmpop_with_count(t, srv):
    """BLMPOP waits, then pops up to COUNT from the first non-empty list."""
    k1, k2 = spread_keys("mp", 2)
    with srv.raw() as c:
        w = blocked(srv.port, "BLMPOP", "0", "2", k1, k2, "RIGHT", "COUNT", "2")
        wait_blocked(c, 1)
        c.call("RPUSH", k2, "1", "2", "3")
        assert w.read_reply() == [k2, ["3", "2"]]
        assert c.call("BLMPOP", "0.05", "1", k1, "LEFT") is None
        w.close()


@case
def unblock_disconnect_and_multi(t, srv):
    """CLIENT UNBLOCK answers nil (TIMEOUT) or -UNBLOCKED (ERROR); a client that disconnects
    while blocked takes nothing later; in MULTI the blocking pops answer at once."""
    with srv.raw() as c:
        w = blocked(srv.port, "BLPOP", "ub", "0")
        wait_blocked(c, 1)
        w2 = RawClient(srv.port)
        w2_id = w2.call("CLIENT", "ID")
        w2.send(encode_command("BRPOP", "ub", "0"))
        wait_blocked(c, 2)
        w.close()  # gone while blocked
        wait_blocked(c, 1)
        assert c.call("CLIENT", "UNBLOCK", w2_id) == 1
        assert w2.read_reply() is None
        w2.send(encode_command("BRPOP", "ub", "0"))
        wait_blocked(c, 1)
        assert c.call("CLIENT", "UNBLOCK", w2_id, "ERROR") == 1
        expect_error(w2.read_reply(), "UNBLOCKED client unblocked via CLIENT UNBLOCK")
        assert c.call("RPUSH", "ub", "kept") == 1
        time.sleep(0.1)
        assert c.call("LRANGE", "ub", "0", "-1") == ["kept"]
        c.call("MULTI")
        for cmd in (("BLPOP", "empty", "0"), ("BRPOP", "empty", "0"),
                    ("BLMOVE", "empty", "e2", "LEFT", "LEFT", "0"),
                    ("BRPOPLPUSH", "empty", "e2", "0"), ("BLMPOP", "0", "1", "empty", "LEFT")):
            assert c.call(*cmd) == "QUEUED"
        assert c.call("EXEC") == [None, None, None, None, None]
        expect_error(c.call("EVAL", "return redis.pcall('BLPOP', 'x', 0)", 0),
                     "ERR This Redis command is not allowed from script")
        w2.close()


# ----------------------------------------------------------------------------------------------
# Events and persistence.


@case
def keyspace_events_in_redis_order(t, srv):
    """Class l events plus del, as Redis publishes them."""
    with srv.raw() as c, srv.raw() as sub:
        c.call("CONFIG", "SET", "notify-keyspace-events", "Elg")
        sub.call("SUBSCRIBE", "__keyevent@0__:lpush")
        sub.send(encode_command("PSUBSCRIBE", "__keyevent@0__:*"))
        sub.read_reply()
        try:
            c.call("RPUSH", "ev", "a", "b")
            c.call("LPUSH", "ev", "c")
            c.call("LSET", "ev", "0", "z")
            c.call("LINSERT", "ev", "BEFORE", "z", "y")
            c.call("LREM", "ev", "1", "y")
            c.call("LTRIM", "ev", "0", "1")
            c.call("LMOVE", "ev", "ev2", "LEFT", "LEFT")
            c.call("RPOP", "ev", "5")
            seen = []
            deadline = time.monotonic() + 5
            while len(seen) < 10 and time.monotonic() < deadline:
                m = sub.read_reply()
                if m[0] == "pmessage":
                    seen.append((m[2].split(":", 1)[1], m[3]))
            assert seen == [("rpush", "ev"), ("lpush", "ev"), ("lset", "ev"), ("linsert", "ev"),
                            ("lrem", "ev"), ("ltrim", "ev"), ("lpush", "ev2"), ("lpop", "ev"),
                            ("rpop", "ev"), ("del", "ev")], seen
        finally:
            c.call("CONFIG", "SET", "notify-keyspace-events", "")


@case
def kill9_keeps_lists(t, srv):
    """appendfsync always, a rewrite, kill -9: every list, pops and moves included, stays."""
    d = tempfile.mkdtemp(prefix="hotkv-lists-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    k1, k2, k3 = spread_keys("persist:", 3)
    keys = [k1, k2, k3, "big"]
    s = t.server(extra_args=args, expect_exit=None).start()
    try:
        r = s.client()
        r.rpush(k1, *("e%d" % i for i in range(300)))
        r.lpop(k1, 20)
        r.rpop(k1)
        r.lset(k1, 5, "five")
        r.linsert(k1, "AFTER", "five", "six")
        r.lrem(k1, 0, "e100")
        r.rpush(k2, *range(10))
        r.lmove(k1, k2, "LEFT", "RIGHT")
        r.rpush("big", *("x" * 100 for _ in range(2000)))
        r.bgrewriteaof()
        wait_rewrite_done(r)
        r.ltrim("big", 10, 1500)
        r.rpoplpush(k2, k3)
        r.expire(k2, 1000)
        before = {k: r.lrange(k, 0, -1) for k in keys}
        os.kill(s.pid(), signal.SIGKILL)
        s.wait(timeout=10)
    finally:
        s.cleanup()
    s2 = t.server(extra_args=args).start()
    try:
        r = s2.client()
        after = {k: r.lrange(k, 0, -1) for k in keys}
        assert after == before
        assert 0 < r.ttl(k2) <= 1000
    finally:
        s2.stop()


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
