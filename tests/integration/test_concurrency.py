#!/usr/bin/python3
"""Concurrency end to end: many real connections racing on one counter, and multi-key writes
spanning shards observed by concurrent readers.

The flash-sale promise is "never oversell": 1,000 connections each DECR a stock of 500 once,
so exactly 500 of them may see a value >= 0, every reply is distinct, and the counter ends at
-500. Cross-shard MSET/DEL must be atomic (DESIGN.md), so a reader's MGET may never see a mix
of two writes, and writers taking the same shards in different key orders must not deadlock.
Every loop is bounded by a count and a deadline. Expectations hold on redis-server 7.0.

Run: /usr/bin/python3 test_concurrency.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Swarm, case, encode_command, raise_nofile, run_cases, spread_keys  # noqa: E402

CONNECTIONS = 1000


@case
def thousand_connections_decr_once(t, srv):
    """1,000 concurrent connections DECR a stock of 500 once: 500 winners, final -500."""
    raise_nofile(CONNECTIONS + 256)
    with srv.raw() as c:
        assert c.call("SET", "stock", "500") == "OK"
    swarm = Swarm(srv.port, CONNECTIONS)
    try:
        # Every connection is accepted and registered before the race starts.
        pongs = swarm.round(b"PING\r\n", 1)
        assert all(p == ["PONG"] for p in pongs.values())
        replies = [r[0] for r in swarm.round(encode_command("DECR", "stock"), 1).values()]
    finally:
        swarm.close()
    winners = sorted(v for v in replies if v >= 0)
    losers = sorted(v for v in replies if v < 0)
    assert len(replies) == CONNECTIONS
    assert len(winners) == 500, "%d connections saw stock >= 0 (oversell if > 500)" % len(winners)
    assert winners == list(range(500)), "winner replies are not 0..499 exactly once"
    assert losers == list(range(-500, 0)), "loser replies are not -500..-1 exactly once"
    with srv.raw() as c:
        assert c.call("GET", "stock") == "-500"


@case
def pipelined_decr_from_many_connections(t, srv):
    """200 connections each pipeline 10 DECRs on a stock of 1,000: no value is seen twice."""
    with srv.raw() as c:
        c.call("SET", "{item:1}:stock", "1000")
    swarm = Swarm(srv.port, 200)
    try:
        out = list(swarm.round(encode_command("DECR", "{item:1}:stock") * 10, 10).values())
    finally:
        swarm.close()
    values = sorted(v for per in out for v in per)
    assert values == list(range(-1000, 1000)), "each DECR must see a distinct value"
    for per in out:
        assert per == sorted(per, reverse=True), "replies on one connection are in order"
    with srv.raw() as c:
        assert c.call("GET", "{item:1}:stock") == "-1000"


@case
def cross_shard_mset_is_atomic(t, srv):
    """Writers MSET (and DEL) 8 keys on different shards while readers MGET: never a mix."""
    keys = spread_keys("atom:", 8)
    stop = threading.Event()
    errors = []
    stats = {"writes": 0, "reads": 0, "deletes": 0}
    lock = threading.Lock()
    deadline = time.monotonic() + 2.0

    def writer(w):
        try:
            with srv.raw() as c:
                for i in range(200000):
                    if stop.is_set() or time.monotonic() > deadline:
                        break
                    if i % 10 == 9:
                        c.call("DEL", *keys)
                        with lock:
                            stats["deletes"] += 1
                        continue
                    args = []
                    order = keys[:] if w == 0 else keys[::-1]
                    for k in order:
                        args += [k, "w%d:%d" % (w, i)]
                    assert c.call("MSET", *args) == "OK"
                    with lock:
                        stats["writes"] += 1
        except Exception as e:  # reported by the main thread
            errors.append("writer %d: %r" % (w, e))
            stop.set()

    def reader(rn):
        try:
            with srv.raw() as c:
                for _ in range(200000):
                    if stop.is_set() or time.monotonic() > deadline:
                        break
                    vals = c.call("MGET", *keys)
                    with lock:
                        stats["reads"] += 1
                    if len(set(vals)) != 1:
                        errors.append("reader %d saw a partial write: %r" % (rn, vals))
                        stop.set()
                        break
        except Exception as e:
            errors.append("reader %d: %r" % (rn, e))
            stop.set()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    threads += [threading.Thread(target=reader, args=(r,)) for r in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=15)
    assert not any(th.is_alive() for th in threads), "threads did not finish (deadlock?)"
    assert not errors, errors[:3]
    print("    %d MSET, %d DEL, %d MGET" % (stats["writes"], stats["deletes"], stats["reads"]))
    assert stats["writes"] >= 20 and stats["reads"] >= 20, stats


@case
def crossing_multi_key_writes_do_not_deadlock(t, srv):
    """Four threads MSET/DEL/MGET the same cross-shard keys in random orders; all finish."""
    keys = spread_keys("lockorder:", 8)
    errors = []
    done = [0] * 4

    def worker(w):
        rnd = random.Random(w)
        try:
            with srv.raw() as c:
                for i in range(300):
                    ks = rnd.sample(keys, rnd.randint(2, 8))
                    op = i % 3
                    if op == 0:
                        args = []
                        for k in ks:
                            args += [k, str(i)]
                        assert c.call("MSET", *args) == "OK"
                    elif op == 1:
                        assert 0 <= c.call("DEL", *ks) <= len(ks)
                    else:
                        assert len(c.call("MGET", *ks)) == len(ks)
                    done[w] += 1
        except Exception as e:
            errors.append("worker %d: %r" % (w, e))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=20)
    assert not any(th.is_alive() for th in threads), "workers stuck (deadlock?) %r" % done
    assert not errors, errors[:3]
    assert done == [300] * 4, done


@case
def concurrent_incr_counts_exactly(t, srv):
    """16 threads x 250 INCR on one key and 16 x 250 INCRBY on spread keys add up exactly."""
    keys = spread_keys("sum:", 4)
    errors = []

    def worker(w):
        try:
            with srv.raw() as c:
                for i in range(250):
                    c.send(encode_command("INCR", "hot")
                           + encode_command("INCRBY", keys[i % 4], "3"))
                    a = c.read_reply()
                    b = c.read_reply()
                    assert isinstance(a, int) and isinstance(b, int), (a, b)
        except Exception as e:
            errors.append("worker %d: %r" % (w, e))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=20)
    assert not any(th.is_alive() for th in threads)
    assert not errors, errors[:3]
    with srv.raw() as c:
        assert c.call("GET", "hot") == "4000"
        assert sum(int(v) for v in c.call("MGET", *keys)) == 16 * 250 * 3


if __name__ == "__main__":
    run_cases(__doc__)
