#!/usr/bin/python3
"""SORT and SORT_RO end to end, first proven on redis-server 7.0 and then held against hotkv.

- Lists, sets and sorted sets sorted numerically, ALPHA, DESC, with LIMIT; BY a constant keeps
  the native order (a set is sorted by bytes when stored or inside a script, as Redis does).
- BY and GET patterns (weight_*, obj_*->field, #) over keys without hash tags, which land on
  every shard; missing keys weigh 0 and GET nil.
- STORE into a key of another shard: the list, the "sortstore" event, an empty result deleting
  the destination, a BLPOP blocked on the destination woken by it.
- Inside MULTI/EXEC and in a script that declares only the sorted key.
- Consistency under concurrent writers: MSET rewrites every weight at once while readers
  SORT BY them; each reader sees one whole MSET, never half of one.
- Redis's errors: non-double weights, syntax, WRONGTYPE, SORT_RO with STORE.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_sort.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, case, run_cases  # noqa: E402

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_DOUBLE = "ERR One or more scores can't be converted into double"


def client(srv):
    return srv.client(decode_responses=True)


@case
def numeric_alpha_desc_limit(t, srv):
    """Numeric and ALPHA order, DESC, LIMIT on lists, sets and sorted sets."""
    r = client(srv)
    r.rpush("l", 3, 10, 1, 2.5, -4)
    assert r.sort("l") == ["-4", "1", "2.5", "3", "10"]
    assert r.sort("l", desc=True) == ["10", "3", "2.5", "1", "-4"]
    assert r.sort("l", alpha=True) == ["-4", "1", "10", "2.5", "3"]
    assert r.sort("l", start=1, num=2) == ["1", "2.5"]
    assert r.sort("l", start=-5, num=2) == ["-4", "1"]  # a negative offset counts as 0
    assert r.execute_command("SORT", "l", "LIMIT", 3, -1) == ["3", "10"]  # count < 0: all
    assert r.execute_command("SORT", "l", "LIMIT", 9, 2) == []
    assert r.execute_command("SORT_RO", "l", "DESC", "LIMIT", 0, 1) == ["10"]
    r.sadd("s", 5, 50, 500, 0)
    assert r.sort("s") == ["0", "5", "50", "500"]
    assert r.sort("s", alpha=True, desc=True) == ["500", "50", "5", "0"]
    r.zadd("z", {"b": 1, "a": 2, "c": 3})
    assert r.sort("z", alpha=True) == ["a", "b", "c"]
    assert r.sort("missing") == []
    # Equal numeric weights fall back to the elements' bytes.
    r.rpush("ties", "b", "a", "c")
    r.mset({"w_a": 1, "w_b": 1, "w_c": 0})
    assert r.sort("ties", by="w_*") == ["c", "a", "b"]


@case
def by_constant_keeps_native_order(t, srv):
    """BY a pattern without '*' does not sort: list and zset order (LIMIT, DESC) stay."""
    r = client(srv)
    r.rpush("l", "c", "a", "b", "d")
    assert r.sort("l", by="nosort") == ["c", "a", "b", "d"]
    assert r.sort("l", by="nosort", desc=True) == ["d", "b", "a", "c"]
    assert r.sort("l", by="nosort", start=1, num=2) == ["a", "b"]
    assert r.sort("l", by="nosort", start=1, num=2, desc=True) == ["b", "a"]
    r.zadd("z", {"a": 1, "b": 5, "c": 2, "d": 10, "e": 3})
    assert r.sort("z", by="nosort") == ["a", "c", "e", "b", "d"]
    assert r.sort("z", by="nosort", desc=True, start=1, num=3) == ["b", "e", "c"]
    # A set has no order: stored (or in a script) it is sorted by bytes instead.
    r.sadd("s", "x", "10", "2", "y")
    assert r.sort("s", by="nosort", store="dst") == 4
    assert r.lrange("dst", 0, -1) == ["10", "2", "x", "y"]
    assert r.eval("return redis.call('sort', KEYS[1], 'by', 'nosort')", 1, "s") == \
        ["10", "2", "x", "y"]
    # ...but not re-ordered by bytes when it does sort numerically.
    r.sadd("n", 1, 10, 2)
    assert r.eval("return redis.call('sort', KEYS[1])", 1, "n") == ["1", "2", "10"]


@case
def by_and_get_patterns_across_shards(t, srv):
    """Weights and GET values from keys of every shard, hash fields, # and missing keys."""
    r = client(srv)
    ids = list(range(40))
    r.rpush("ids", *ids)
    weights = {i: (i * 37) % 41 for i in ids}
    r.mset({"weight_%d" % i: w for i, w in weights.items()})
    for i in ids:
        r.hset("obj_%d" % i, mapping={"name": "n%02d" % i, "w": -weights[i]})
    by_weight = [str(i) for i in sorted(ids, key=lambda i: weights[i])]
    assert r.sort("ids", by="weight_*") == by_weight
    assert r.sort("ids", by="obj_*->w") == list(reversed(by_weight))
    got = r.sort("ids", by="weight_*", get=["#", "obj_*->name", "weight_*"], start=0, num=3)
    first = [int(x) for x in by_weight[:3]]
    assert got == sum([[str(i), "n%02d" % i, str(weights[i])] for i in first], [])
    # A missing weight counts as 0, a missing GET is nil, a GET without '*' is nil.
    r.rpush("few", "a", "b")
    r.set("wt_b", -1)
    assert r.sort("few", by="wt_*") == ["b", "a"]
    assert r.sort("few", get=["nothing_*", "const"], alpha=True) == [None, None, None, None]
    # ALPHA BY: missing values first, then by the values' bytes.
    r.rpush("al", "p", "q", "r")
    r.mset({"name_p": "zed", "name_r": "amy"})
    assert r.sort("al", by="name_*", alpha=True) == ["q", "r", "p"]
    # "->" with nothing after it is part of the key name; a field of a non-hash is nil.
    r.set("x:a->", 100)
    r.rpush("one", "a")
    assert r.sort("one", by="nosort", get="x:*->") == ["100"]
    assert r.sort("one", by="nosort", get="weight_*->f") == [None]


@case
def store_across_shards_and_wakes(t, srv):
    """STORE writes a list on another shard, fires "sortstore", deletes on empty, wakes BLPOP."""
    r = client(srv)
    r.rpush("src", 3, 1, 2)
    r.set("dst", "old")
    r.expire("dst", 100)
    assert r.sort("src", store="dst") == 3
    assert r.lrange("dst", 0, -1) == ["1", "2", "3"]
    assert r.ttl("dst") == -1
    r.mset({"g_1": "one", "g_3": "three"})
    assert r.sort("src", get="g_*", store="dst2") == 3
    assert r.lrange("dst2", 0, -1) == ["one", "", "three"]  # a missing GET is stored as ""
    assert r.sort("empty", store="dst") == 0
    assert r.exists("dst") == 0

    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    deadline = time.monotonic() + 5
    while p.get_message(timeout=0.2) is None and time.monotonic() < deadline:
        pass  # the psubscribe confirmation
    r.sort("src", store="evt")
    r.sort("empty", store="evt")
    events = []
    while len(events) < 2 and time.monotonic() < deadline:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            events.append((m["channel"], m["data"]))
    assert events == [("__keyevent@0__:sortstore", "evt"), ("__keyevent@0__:del", "evt")]
    p.close()
    r.config_set("notify-keyspace-events", "")

    # A client blocked on the destination is woken by the stored list.
    got = []
    waiter = threading.Thread(target=lambda: got.append(client(srv).blpop("woken", timeout=10)))
    waiter.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        blocked = [c for c in r.client_list() if c.get("cmd") == "blpop"]
        if blocked:
            break
        time.sleep(0.02)
    r.rpush("w_src", "z", "y")
    assert r.sort("w_src", alpha=True, store="woken") == 2
    waiter.join(12)
    assert got == [("woken", "y")]
    assert r.lrange("woken", 0, -1) == ["z"]


@case
def in_transactions_and_scripts(t, srv):
    """SORT BY a pattern inside MULTI/EXEC, and in a script that declares only its list."""
    r = client(srv)
    r.rpush("items", "a", "b", "c")
    r.mset({"price_a": 30, "price_b": 10, "price_c": 20})
    pipe = r.pipeline(transaction=True)
    pipe.set("price_a", 5)
    pipe.sort("items", by="price_*", get="price_*")
    pipe.sort("items", by="price_*", store="sorted")
    assert pipe.execute() == [True, ["5", "10", "20"], 3]
    assert r.lrange("sorted", 0, -1) == ["a", "b", "c"]
    body = "return redis.call('sort', KEYS[1], 'by', 'price_*', 'desc')"
    sha = r.script_load(body)
    for _ in range(3):  # the first run, and the runs after it learned the script's keys
        assert r.evalsha(sha, 1, "items") == ["c", "b", "a"]
    ro = "return redis.call('sort_ro', KEYS[1], 'by', 'price_*', 'get', '#', 'get', 'price_*')"
    assert r.eval_ro(ro, 1, "items") == ["a", "5", "b", "10", "c", "20"]


@case
def consistent_under_concurrent_writers(t, srv):
    """Readers SORT BY weights that writers rewrite with one MSET: each sees one whole MSET."""
    r = client(srv)
    n = 16
    r.rpush("ring", *range(n))

    def weights(k):
        return {"rw_%d" % i: (i + k) % n for i in range(n)}

    def order(k):
        return [str(i) for i in sorted(range(n), key=lambda i: (i + k) % n)]

    r.mset(weights(0))
    valid = {tuple(order(k)) for k in range(n)}
    stop = time.monotonic() + 3
    errors = []
    counts = []

    def writer(offset):
        w = client(srv)
        k = offset
        while time.monotonic() < stop:
            w.mset(weights(k % n))
            k += 2

    def reader():
        c = client(srv)
        seen = 0
        while time.monotonic() < stop and seen < 5000:
            got = c.sort("ring", by="rw_*")
            if tuple(got) not in valid:
                errors.append(got)
                return
            seen += 1
        counts.append(seen)

    threads = [threading.Thread(target=writer, args=(o,)) for o in (0, 1)]
    threads += [threading.Thread(target=reader) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert not errors, errors[:1]
    assert len(counts) == 6 and min(counts) > 0, counts


@case
def errors(t, srv):
    """Redis's errors: bad doubles, syntax, WRONGTYPE, SORT_RO STORE, LIMIT not integers."""
    with srv.raw() as c:
        c.call("SADD", "s", 1, 2, "not-a-double")
        assert c.call("SORT", "s") == RespError(NOT_DOUBLE)
        c.call("SADD", "t", 1, 2)
        c.call("MSET", "sc_1", 10, "sc_2", "x")
        assert c.call("SORT", "t", "BY", "sc_*") == RespError(NOT_DOUBLE)
        assert c.call("SORT", "t", "BY", "sc_*", "ALPHA") == ["1", "2"]
        c.call("SET", "str", "v")
        assert c.call("SORT", "str") == RespError(WRONGTYPE)
        assert c.call("SORT", "t", "BOGUS") == RespError("ERR syntax error")
        assert c.call("SORT", "t", "LIMIT", 1) == RespError("ERR syntax error")
        assert c.call("SORT", "t", "LIMIT", "a", 1) == \
            RespError("ERR value is not an integer or out of range")
        assert c.call("SORT_RO", "t", "STORE", "d") == RespError("ERR syntax error")
        assert c.call("SORT") == RespError("ERR wrong number of arguments for 'sort' command")
        assert c.call("COMMAND", "GETKEYS", "SORT", "abc", "STORE", "x", "STORE", "def") == \
            ["abc", "def"]
        assert c.call("PING") == "PONG"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
