#!/usr/bin/env python3
"""Replica link: the server under test follows a real redis-server 7.0 master.

For a master that syncs from disk (repl-diskless-sync no) and one that streams
(repl-diskless-sync yes, delay 0):
- keys of every type both servers have (strings with and without TTLs, hashes, lists, sets,
  sorted sets, streams) in databases 0 and 3 before REPLICAOF; after it the link comes up
  (master_link_status:up, ROLE connected) and every key, value and TTL is the master's;
- 20,000 pipelined mixed writes on the master (SET EX, INCR, HSET, ZADD, XADD, LPUSH, SADD,
  EXPIRE, DEL, SELECT of another database, MULTI/EXEC): once the replica's slave_repl_offset
  equals the master's master_repl_offset the data sets are equal again;
- the replica refuses client writes with -READONLY, lists its master link as flags=M, and
  CLIENT KILL TYPE normal leaves the link alone;
- CLIENT KILL TYPE replica on the master, then more writes: the replica comes back by a
  partial resync (the master's sync_partial_ok goes up) and the data sets are equal;
- REPLICAOF NO ONE keeps the data and takes writes.
- While a slow image streams in (the master's rdb-key-save-delay), INFO replication shows
  master_sync_in_progress:1 and master_sync_total_bytes / read_bytes / left_bytes / perc /
  last_io_seconds_ago as Redis does (total -1 for a streamed image); they go once loaded.

Run: /usr/bin/python3 test_replica_link.py --server build/hotkv --threads 4
"""

import atexit
import os
import random
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, Server, case, encode_command, expect_error, run_cases  # noqa: E402

DBS = (0, 3)
# Every server's files (the masters' RDB for a disk sync, the replicas' dump on shutdown).
WORKDIR = tempfile.mkdtemp(prefix="hotkv-it-repl-")
atexit.register(shutil.rmtree, WORKDIR, True)


def replica_of(t):
    return t.server(config={"dir": WORKDIR})

WRITES = 20000
BATCH = 1000


def info(c, section="replication"):
    text = c.call("INFO", section)
    return dict(ln.split(":", 1) for ln in text.split("\r\n") if ln and not ln.startswith("#"))


def wait_for(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def pipeline(c, commands):
    """Sends every command in one write and reads every reply."""
    c.send(b"".join(encode_command(*cmd) for cmd in commands))
    return [c.read_reply() for _ in commands]


def load_every_type(c):
    for db in DBS:
        pipeline(c, [("SELECT", db)] + [
            ("SET", "str:%d" % i, "value-%d-%d" % (db, i)) for i in range(50)] + [
            ("SET", "ttl:%d" % i, "v%d" % i, "EX", 1000 + i) for i in range(20)] + [
            ("PEXPIREAT", "str:%d" % i, int(time.time() * 1000) + 500000) for i in range(5)] + [
            ("HSET", "hash:%d" % i, "a", i, "b", "x" * i, "c", "y") for i in range(10)] + [
            ("RPUSH", "list:%d" % i, *["e%d" % j for j in range(i + 1)]) for i in range(10)] + [
            ("SADD", "set:%d" % i, *["m%d" % j for j in range(i + 2)]) for i in range(10)] + [
            ("SADD", "intset", *range(100))] + [
            ("ZADD", "zset:%d" % i, *[x for j in range(i + 1) for x in (j * 1.5, "z%d" % j)])
            for i in range(10)] + [
            ("XADD", "stream:%d" % i, "*", "f", j) for i in range(3) for j in range(5)] + [
            ("HSET", "bighash", *[x for j in range(300) for x in ("k%d" % j, "v" * 10)])] + [
            ("EXPIRE", "hash:1", 2000), ("EXPIRE", "list:2", 3000)])
    c.call("SELECT", 0)


def snapshot(c):
    """Every key of every database: (db, key) -> (type, value, ttl in ms or -1)."""
    out = {}
    for db in range(16):
        assert c.call("SELECT", db) == "OK"
        for key in c.call("KEYS", "*"):
            t = c.call("TYPE", key)
            if t == "string":
                v = c.call("GET", key)
            elif t == "hash":
                v = sorted(c.call("HGETALL", key))
            elif t == "list":
                v = c.call("LRANGE", key, 0, -1)
            elif t == "set":
                v = sorted(c.call("SMEMBERS", key))
            elif t == "zset":
                v = c.call("ZRANGE", key, 0, -1, "WITHSCORES")
            elif t == "stream":
                v = (c.call("XRANGE", key, "-", "+"), c.call("XLEN", key))
            else:
                raise AssertionError("unexpected type %s of %s" % (t, key))
            out[(db, key)] = (t, v, c.call("PTTL", key))
    c.call("SELECT", 0)
    return out


def assert_same(master, replica):
    a = snapshot(master)
    b = snapshot(replica)
    assert a.keys() == b.keys(), ("keys differ", sorted(set(a) ^ set(b))[:20])
    for k in a:
        ta, va, pa = a[k]
        tb, vb, pb = b[k]
        assert (ta, va) == (tb, vb), (k, a[k], b[k])
        # Deadlines are absolute: the remaining times differ only by when each was asked.
        assert (pa < 0) == (pb < 0) and abs(pa - pb) < 3000, (k, pa, pb)
    return len(a)


def mixed_writes(c, n, seed):
    rng = random.Random(seed)
    db = 0
    sent = 0
    while sent < n:
        cmds = []
        while len(cmds) < BATCH and sent + len(cmds) < n:
            r = rng.random()
            i = rng.randrange(400)
            if r < 0.15:
                cmds.append(("SET", "w:%d" % i, "v%d" % rng.randrange(10 ** 6), "EX",
                             rng.randrange(1000, 5000)))
            elif r < 0.25:
                cmds.append(("SET", "plain:%d" % i, "p" * rng.randrange(1, 40)))
            elif r < 0.35:
                cmds.append(("INCR", "cnt:%d" % (i % 50)))
            elif r < 0.45:
                cmds.append(("HSET", "h:%d" % (i % 30), "f%d" % (i % 7), rng.randrange(100)))
            elif r < 0.55:
                cmds.append(("ZADD", "z:%d" % (i % 20), rng.randrange(1000), "m%d" % i))
            elif r < 0.62:
                cmds.append(("XADD", "x:%d" % (i % 5), "*", "f", i))
            elif r < 0.70:
                cmds.append(("LPUSH", "l:%d" % (i % 25), i))
            elif r < 0.75:
                cmds.append(("SADD", "s:%d" % (i % 10), i))
            elif r < 0.82:
                cmds.append(("EXPIRE", "plain:%d" % i, rng.randrange(1000, 9000)))
            elif r < 0.88:
                cmds.append(("DEL", "w:%d" % i, "plain:%d" % ((i * 7) % 400)))
            elif r < 0.92:
                db = 3 if db == 0 else 0
                cmds.append(("SELECT", db))
            else:
                cmds.extend([("MULTI",), ("INCR", "txn:%d" % (i % 5)),
                             ("HSET", "txn:h", "f%d" % (i % 9), i), ("LPUSH", "txn:l", i),
                             ("EXEC",)])
        replies = pipeline(c, cmds)
        errors = [r for r in replies if isinstance(r, RespError)]
        assert not errors, errors[:3]
        sent += len(cmds)
    c.call("SELECT", 0)


def wait_caught_up(master, replica, timeout=60.0):
    def equal():
        m = int(info(master)["master_repl_offset"])
        f = info(replica)
        return f["master_link_status"] == "up" and int(f["slave_repl_offset"]) == m

    wait_for(equal, "the replica's offset to reach the master's", timeout)


def follow_a_redis_master(t, diskless):
    config = {"dir": WORKDIR, "repl-diskless-sync": "yes" if diskless else "no",
              "repl-diskless-sync-delay": 0}
    with Server("redis", config=config) as master, replica_of(t) as replica, \
            master.raw() as m, replica.raw() as r:
        load_every_type(m)
        assert r.call("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
        wait_for(lambda: info(r)["master_link_status"] == "up", "master_link_status:up")
        wait_caught_up(m, r)
        role = r.call("ROLE")
        assert role[:4] == ["slave", "127.0.0.1", master.port, "connected"], role
        assert role[4] == int(info(m)["master_repl_offset"]), role
        f = info(r)
        assert f["master_sync_in_progress"] == "0" and f["slave_read_only"] == "1", f
        assert int(f["master_last_io_seconds_ago"]) >= 0, f
        assert f["master_replid"] == info(m)["master_replid"], f
        assert assert_same(m, r) > 200

        mixed_writes(m, WRITES, seed=7)
        wait_caught_up(m, r)
        assert_same(m, r)
        assert info(r)["master_repl_offset"] == info(m)["master_repl_offset"]

        # WAIT asks REPLCONF GETACK; the answer and the ACK every second carry the offset.
        m.call("SET", "waited", "1")
        assert m.call("WAIT", 1, 5000) == 1
        wait_for(lambda: "offset=%s," % info(m)["master_repl_offset"] in info(m)["slave0"],
                 "the master to see the replica's acknowledged offset")

        expect_error(r.call("SET", "k", "v"),
                     "READONLY You can't write against a read only replica.")
        links = r.call("CLIENT", "LIST", "TYPE", "master").strip().splitlines()
        assert len(links) == 1 and " flags=M " in links[0], links
        r.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert len(r.call("CLIENT", "LIST", "TYPE", "master").strip().splitlines()) == 1

        partial_before = int(info(m, "stats")["sync_partial_ok"])
        full_before = int(info(m, "stats")["sync_full"])
        assert m.call("CLIENT", "KILL", "TYPE", "replica") >= 1
        mixed_writes(m, 2000, seed=11)
        wait_caught_up(m, r)
        assert int(info(m, "stats")["sync_partial_ok"]) == partial_before + 1
        assert int(info(m, "stats")["sync_full"]) == full_before
        assert_same(m, r)

        assert r.call("REPLICAOF", "NO", "ONE") == "OK"
        assert r.call("ROLE")[0] == "master"
        kept = assert_same(m, r)
        assert r.call("SET", "after", "promotion") == "OK"
        assert r.call("DBSIZE") == len([k for k in snapshot(r) if k[0] == 0])
        assert kept > 200


@case
def follows_a_master_syncing_from_disk(t, srv):
    """Disk-based sync: full sync, the stream, -READONLY, a partial resync, NO ONE."""
    follow_a_redis_master(t, diskless=False)


@case
def follows_a_master_streaming_its_image(t, srv):
    """Diskless sync ($EOF: framing): the same checks."""
    follow_a_redis_master(t, diskless=True)


@case
def follows_a_promoted_sibling_by_partial_resync(t, srv):
    """Failover: a sibling replica is promoted; switching to it continues under its new id."""
    config = {"dir": WORKDIR, "repl-diskless-sync-delay": 0}
    with Server("redis", config=config) as a, Server("redis", config=config) as b, \
            replica_of(t) as replica, a.raw() as ma, b.raw() as mb, replica.raw() as r:
        load_every_type(ma)
        assert mb.call("REPLICAOF", "127.0.0.1", str(a.port)) == "OK"
        assert r.call("REPLICAOF", "127.0.0.1", str(a.port)) == "OK"
        wait_caught_up(ma, mb)
        wait_caught_up(ma, r)
        mixed_writes(ma, 3000, seed=3)
        wait_caught_up(ma, mb)
        wait_caught_up(ma, r)
        old_id = info(ma)["master_replid"]
        # What a sentinel does: promote b, point the others at it.
        assert mb.call("REPLICAOF", "NO", "ONE") == "OK"
        assert ma.call("REPLICAOF", "127.0.0.1", str(b.port)) == "OK"
        assert r.call("REPLICAOF", "127.0.0.1", str(b.port)) == "OK"
        mixed_writes(mb, 2000, seed=5)
        wait_caught_up(mb, r)
        wait_caught_up(mb, ma)
        stats = info(mb, "stats")
        assert stats["sync_full"] == "0" and stats["sync_partial_ok"] == "2", stats
        f = info(r)
        assert f["master_replid"] == info(mb)["master_replid"] and f["master_replid2"] == old_id, f
        assert_same(mb, r)


@case
def authenticates_with_masterauth(t, srv):
    """A master with a password: masterauth (and masteruser) let the link in."""
    config = {"dir": WORKDIR, "repl-diskless-sync-delay": 0}
    with Server("redis", config=config, requirepass="s3cret") as master, \
            replica_of(t) as replica, master.raw() as m, replica.raw() as r:
        m.call("SET", "guarded", "1")
        assert r.call("CONFIG", "SET", "masteruser", "default") == "OK"
        assert r.call("CONFIG", "SET", "masterauth", "s3cret") == "OK"
        assert r.call("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
        wait_caught_up(m, r)
        assert r.call("GET", "guarded") == "1"


@case
def info_shows_the_transfer_while_a_slow_image_streams(t, srv):
    """master_sync_* fields during a diskless transfer slowed by rdb-key-save-delay."""
    # Directories of their own: a dump.rdb an earlier case's server left in WORKDIR would be
    # loaded at start-up and add its keys to the 400 counted below.
    with tempfile.TemporaryDirectory(dir=WORKDIR) as mdir, \
            tempfile.TemporaryDirectory(dir=WORKDIR) as rdir, \
            Server("redis", config={"dir": mdir, "repl-diskless-sync": "yes",
                                    "repl-diskless-sync-delay": 0}) as master, \
            t.server(config={"dir": rdir}) as replica, master.raw() as m, replica.raw() as r:
        pipeline(m, [("SET", "slow:%d" % i, "x" * 100) for i in range(400)])
        # 5 ms per key: the child streams the image over about two seconds.
        assert m.call("CONFIG", "SET", "rdb-key-save-delay", "5000") == "OK"
        assert r.call("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
        seen = {}

        def transferring():
            f = info(r)
            if "master_sync_total_bytes" in f:
                seen.update(f)
                return True
            return False
        wait_for(transferring, "master_sync_* fields during the transfer", 20)
        assert seen["master_sync_in_progress"] == "1", seen
        # A streamed image has no size ahead: -1, and Redis's arithmetic on it.
        assert seen["master_sync_total_bytes"] == "-1", seen
        read = int(seen["master_sync_read_bytes"])
        assert read >= 0 and int(seen["master_sync_left_bytes"]) == -1 - read, seen
        assert seen["master_sync_perc"] == "%.2f" % (-100.0 * read), seen
        assert int(seen["master_sync_last_io_seconds_ago"]) >= 0, seen
        assert m.call("CONFIG", "SET", "rdb-key-save-delay", "0") == "OK"
        wait_caught_up(m, r)
        f = info(r)
        assert "master_sync_total_bytes" not in f and f["master_sync_in_progress"] == "0", f
        # Seen once under ASan on a loaded machine: DBSIZE not yet 400 right after the offsets
        # met (its answer was not recorded). Bounded wait; an early answer is printed so the
        # next occurrence says what it was.
        sizes = []
        wait_for(lambda: sizes.append(r.call("DBSIZE")) or sizes[-1] == 400,
                 "DBSIZE 400 on the replica", 10)
        if sizes[0] != 400:
            print("NOTE: DBSIZE answered %r before 400" % sizes[:3])


@case
def serve_stale_data_no_refuses_while_the_link_is_down(t, srv):
    """replica-serve-stale-data no: -MASTERDOWN while down, INFO/ECHO still served."""
    with Server("redis", config={"dir": WORKDIR, "repl-diskless-sync-delay": 0}) as master, \
            replica_of(t) as replica, replica.raw() as r:
        assert r.call("SET", "k", "v") == "OK"
        assert r.call("CONFIG", "SET", "replica-serve-stale-data", "no") == "OK"
        # A master that does not answer yet: the link stays down.
        master.send_signal(19)  # SIGSTOP
        try:
            assert r.call("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
            expect_error(r.call("GET", "k"), "MASTERDOWN Link with MASTER is down and "
                         "replica-serve-stale-data is set to 'no'.")
            # Redis 7.0 refuses PING too; ECHO and INFO carry the stale flag.
            expect_error(r.call("PING"), "MASTERDOWN Link with MASTER is down and "
                         "replica-serve-stale-data is set to 'no'.")
            assert r.call("ECHO", "e") == "e"
            assert info(r)["master_link_status"] == "down"
        finally:
            master.send_signal(18)  # SIGCONT
        wait_for(lambda: info(r)["master_link_status"] == "up", "master_link_status:up")
        assert r.call("GET", "k") is None, "the master's empty data set replaced ours"
        assert r.call("REPLICAOF", "NO", "ONE") == "OK"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
