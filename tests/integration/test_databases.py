#!/usr/bin/python3
"""Databases (SELECT 0..15) end to end, first proven on redis-server 7.0, then held against hotkv.

- A client configured with redis://host:port/1 (Laravel's cache, django-redis) works: its keys
  live in database 1 only; DBSIZE, KEYS, SCAN, RANDOMKEY, INFO keyspace and CLIENT LIST db=
  see databases apart; SELECT's errors are Redis's.
- MOVE (deadline kept), COPY ... DB, SWAPDB, FLUSHDB against FLUSHALL, with Redis's replies
  and errors; keys spread over every shard.
- Keyspace events on __keyspace@<db>__ / __keyevent@<db>__, expiry included.
- WATCH remembers the database; SWAPDB and FLUSHDB touch watched keys as on Redis.
- Scripts and transactions run in the caller's database; SELECT inside a script moves only
  the script, SELECT inside MULTI moves the commands after it.
- Clients blocked on a list in one database are woken by a push to that database only, and
  by a SWAPDB that brings them a list.
- 400 concurrent connections spread over the 16 databases increment the same key name:
  every database counts exactly its own clients' increments.
- A kill -9 with appendfsync always, after SWAPDB, MOVE, FLUSHDB and a rewrite, keeps every
  database.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_databases.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (RawClient, Server, Swarm, case, encode_command,  # noqa: E402
                    expect_error, hotkv_only, run_cases, spread_keys, wait_rewrite_done)

DB_RANGE = "ERR DB index is out of range"
NOT_INT = "ERR value is not an integer or out of range"


def db_client(srv, db):
    return redis.Redis.from_url("redis://127.0.0.1:%d/%d" % (srv.port, db), decode_responses=True,
                                socket_timeout=20)


def keyspace_info(c):
    return {k: v for k, v in c.info("keyspace").items() if k.startswith("db")}


def wait_blocked(c, n, deadline_s=10):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if c.info("clients")["blocked_clients"] == n:
            return
        time.sleep(0.01)
    raise AssertionError("never saw %d blocked clients" % n)


@case
def url_with_database_keeps_keys_apart(t, srv):
    """redis://host/1: keys in db 1 only; DBSIZE, KEYS, SCAN, INFO, CLIENT LIST per db."""
    keys = spread_keys("cache:", 8)
    one = db_client(srv, 1)
    zero = db_client(srv, 0)
    for k in keys:
        one.set(k, "in-1")
    one.set("only-1", "x", ex=100)
    zero.set(keys[0], "in-0")
    assert one.get(keys[0]) == "in-1"
    assert zero.get(keys[0]) == "in-0"
    assert zero.get(keys[1]) is None
    assert one.dbsize() == 9 and zero.dbsize() == 1
    assert sorted(one.keys("cache:*")) == sorted(keys)
    assert zero.keys("*") == [keys[0]]
    assert sorted(one.scan_iter(count=3)) == sorted(keys + ["only-1"])
    assert list(zero.scan_iter()) == [keys[0]]
    assert zero.randomkey() == keys[0]
    assert one.randomkey() in keys + ["only-1"]
    info = keyspace_info(zero)
    assert info["db0"]["keys"] == 1 and info["db0"]["expires"] == 0, info
    assert info["db1"]["keys"] == 9 and info["db1"]["expires"] == 1, info
    assert set(info) == {"db0", "db1"}, info
    assert one.client_info()["db"] == 1
    assert zero.client_info()["db"] == 0
    with srv.raw() as c:
        assert c.call("SELECT", "15") == "OK"
        assert c.call("DBSIZE") == 0
        expect_error(c.call("SELECT", "16"), DB_RANGE)
        expect_error(c.call("SELECT", "-1"), DB_RANGE)
        expect_error(c.call("SELECT", "one"), NOT_INT)
        assert "db=15" in c.call("CLIENT", "INFO")
        assert c.call("RESET") == "RESET"
        assert c.call("GET", keys[0]) == "in-0"
        assert c.call("CONFIG", "GET", "databases") == ["databases", "16"]


@case
def move_copy_swapdb_flushdb(t, srv):
    """MOVE keeps the deadline; COPY ... DB; SWAPDB; FLUSHDB against FLUSHALL; errors."""
    keys = spread_keys("mv:", 6)
    c0 = db_client(srv, 0)
    c2 = db_client(srv, 2)
    for i, k in enumerate(keys):
        c0.set(k, "v%d" % i, ex=500)
    assert c0.move(keys[0], 2) is True
    assert c0.exists(keys[0]) == 0
    assert c2.get(keys[0]) == "v0" and 0 < c2.ttl(keys[0]) <= 500
    c0.set(keys[0], "again")
    assert c0.move(keys[0], 2) is False  # already there
    assert c0.move("missing", 2) is False
    with srv.raw() as r:
        expect_error(r.call("MOVE", keys[1], "0"), "ERR source and destination objects are the same")
        expect_error(r.call("MOVE", keys[1], "16"), DB_RANGE)
        expect_error(r.call("MOVE", keys[1], "x"), NOT_INT)
        expect_error(r.call("SWAPDB", "x", "1"), "ERR invalid first DB index")
        expect_error(r.call("SWAPDB", "1", "y"), "ERR invalid second DB index")
        expect_error(r.call("SWAPDB", "1", "99"), DB_RANGE)
        expect_error(r.call("COPY", keys[1], keys[1], "DB", "99"), DB_RANGE)
        expect_error(r.call("COPY", keys[1], keys[1]),
                     "ERR source and destination objects are the same")
        assert r.call("COPY", keys[1], keys[1], "DB", "3") == 1
        assert r.call("COPY", keys[1], keys[1], "DB", "3") == 0
        assert r.call("COPY", keys[1], keys[1], "DB", "3", "REPLACE") == 1
        assert r.call("SELECT", "3") == "OK"
        assert r.call("GET", keys[1]) == "v1"
        assert 0 < r.call("TTL", keys[1]) <= 500
        c0.hset("h", mapping={"a": "1", "b": "2"})
        c0.rpush("l", "x", "y")
        # SWAPDB: every client sees the other database's data at once.
        assert r.call("SWAPDB", "0", "2") == "OK"
        assert r.call("SWAPDB", "4", "4") == "OK"
        assert c0.get(keys[0]) == "v0"
        assert c2.get(keys[0]) == "again" and c2.hgetall("h") == {"a": "1", "b": "2"}
        assert c2.lrange("l", 0, -1) == ["x", "y"]
        assert c0.exists("h") == 0
        assert sorted(c2.keys("mv:*")) == sorted(keys)
        assert c0.keys("*") == [keys[0]]
        # FLUSHDB empties the selected database only; FLUSHALL every one.
        assert r.call("FLUSHDB") == "OK"
        assert r.call("DBSIZE") == 0
        assert c2.dbsize() == 8 and c0.dbsize() == 1
        expect_error(r.call("FLUSHDB", "NOW"), "ERR syntax error")
        assert c2.flushdb(asynchronous=True) is True
        assert c2.dbsize() == 0 and c0.dbsize() == 1
        c2.set("x", "1")
        assert r.call("FLUSHALL") == "OK"
        assert c0.dbsize() == 0 and c2.dbsize() == 0


@case
def keyspace_events_name_their_database(t, srv):
    """__keyspace@<db>__ and __keyevent@<db>__, expiry included."""
    c = srv.client()
    c.config_set("notify-keyspace-events", "KEA")
    try:
        sub = srv.client()
        p = sub.pubsub()
        p.psubscribe("__key*@*__:*")
        deadline = time.monotonic() + 5
        while p.get_message(timeout=0.2) is None and time.monotonic() < deadline:
            pass
        c5 = db_client(srv, 5)
        c5.set("k", "v")
        c5.pexpire("k", 30)
        c0 = db_client(srv, 0)
        c0.move("nope", 1)
        c0.set("m", "1")
        c0.move("m", 7)
        seen = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(seen) < 12:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "pmessage":
                seen.append((m["channel"], m["data"]))
        want = [("__keyspace@5__:k", "set"), ("__keyevent@5__:set", "k"),
                ("__keyspace@5__:k", "expire"), ("__keyevent@5__:expire", "k"),
                ("__keyspace@0__:m", "set"), ("__keyevent@0__:set", "m"),
                ("__keyspace@0__:m", "move_from"), ("__keyevent@0__:move_from", "m"),
                ("__keyspace@7__:m", "move_to"), ("__keyevent@7__:move_to", "m")]
        got = [e for e in seen if "expired" not in e[0] and "expired" not in e[1]]
        assert got == want, got
        assert ("__keyspace@5__:k", "expired") in seen, seen
        assert ("__keyevent@5__:expired", "k") in seen, seen
        p.close()
    finally:
        c.config_set("notify-keyspace-events", "")


@case
def watch_remembers_the_database(t, srv):
    """A write to the same key name elsewhere leaves EXEC alone; SWAPDB/FLUSHDB touch it."""
    w = db_client(srv, 1)
    other0 = db_client(srv, 0)
    other1 = db_client(srv, 1)
    pipe = w.pipeline()
    pipe.watch("stock")
    other0.set("stock", "0")
    pipe.multi()
    pipe.set("done", "1")
    assert pipe.execute() == [True]
    pipe.watch("stock")
    other1.set("stock", "5")
    pipe.multi()
    pipe.set("done", "2")
    try:
        pipe.execute()
        raise AssertionError("EXEC ran although the watched key changed")
    except redis.WatchError:
        pass
    with srv.raw() as r:
        # SWAPDB touches watched keys that exist in either database.
        for swap in (("1", "9"), ("9", "1")):
            pipe.watch("stock")
            r.call("SWAPDB", *swap)
            pipe.multi()
            pipe.get("stock")
            try:
                pipe.execute()
                raise AssertionError("SWAPDB did not touch the watched key")
            except redis.WatchError:
                pass
        # FLUSHDB of another database does not.
        pipe.watch("stock")
        assert r.call("SELECT", "3") == "OK"
        assert r.call("FLUSHDB") == "OK"
        pipe.multi()
        pipe.get("stock")
        assert pipe.execute() == ["5"]
    pipe.reset()


@case
def scripts_and_transactions_run_in_the_callers_database(t, srv):
    """EVAL and MULTI/EXEC see the caller's db; SELECT inside them as Redis 7."""
    keys = spread_keys("s:", 4)
    c4 = db_client(srv, 4)
    c5 = db_client(srv, 5)
    c0 = db_client(srv, 0)
    script = "for i, k in ipairs(KEYS) do redis.call('SET', k, ARGV[1]) end return #KEYS"
    assert c4.eval(script, len(keys), *keys, "four") == 4
    assert [c4.get(k) for k in keys] == ["four"] * 4
    assert c0.exists(*keys) == 0
    # Undeclared keys too (the script names none in KEYS).
    assert c4.eval("return redis.call('GET', ARGV[1])", 0, keys[2]) == "four"
    # SELECT inside a script moves the script, not its caller.
    assert c4.eval("redis.call('SELECT', 5) redis.call('SET', KEYS[1], 'five') "
                   "return redis.call('GET', KEYS[1])", 1, keys[0]) == "five"
    assert c4.get(keys[0]) == "four" and c5.get(keys[0]) == "five"
    with srv.raw() as r:
        assert r.call("SELECT", "4") == "OK"
        r.send(encode_command("MULTI") + encode_command("INCR", "n") +
               encode_command("SELECT", "5") + encode_command("INCR", "n") +
               encode_command("INCR", keys[3]) + encode_command("EXEC"))
        replies = [r.read_reply() for _ in range(6)]
        assert replies[:5] == ["OK", "QUEUED", "QUEUED", "QUEUED", "QUEUED"], replies
        assert replies[5][0] == 1 and replies[5][1] == "OK" and replies[5][2] == 1, replies
        assert replies[5][3] == 1, replies  # keys[3] of database 5 is new
        assert "db=5" in r.call("CLIENT", "INFO")
    assert c4.get("n") == "1" and c5.get("n") == "1"
    assert c4.get(keys[3]) == "four" and c5.get(keys[3]) == "1"
    sha = c5.script_load("return redis.call('DBSIZE')")
    assert c5.evalsha(sha, 0) == c5.dbsize() == 3


@case
def blocked_clients_wait_in_their_database(t, srv):
    """BLPOP in db 1: a push to db 0 leaves it waiting; db 1 or SWAPDB serves it."""
    mon = srv.client()
    b = RawClient(srv.port, timeout=20)
    assert b.call("SELECT", "1") == "OK"
    b.send(encode_command("BLPOP", "jobs", "other", "10"))
    wait_blocked(mon, 1)
    c0 = db_client(srv, 0)
    c1 = db_client(srv, 1)
    c0.rpush("jobs", "wrong-db")
    time.sleep(0.2)
    assert mon.info("clients")["blocked_clients"] == 1
    c1.rpush("other", "job-1")
    assert b.read_reply() == ["other", "job-1"]
    # SWAPDB brings a list to a waiting client (Redis 7 serves it).
    b.send(encode_command("BLPOP", "jobs", "5"))
    wait_blocked(mon, 1)
    assert c0.execute_command("SWAPDB", "0", "1") in ("OK", True)
    assert b.read_reply() == ["jobs", "wrong-db"]
    b.close()
    assert c0.exists("jobs") == 0 and c1.exists("jobs") == 0


@case
def concurrent_clients_count_in_their_own_databases(t, srv):
    """400 connections over 16 databases INCR one key name 25 times: each db counts its own."""
    conns = 400
    rounds = 25
    with Swarm(srv.port, conns, deadline_s=60) as swarm:
        selects = swarm.round(lambda i: encode_command("SELECT", str(i % 16)), 1)
        assert all(r == ["OK"] for r in selects.values()), selects
        for _ in range(rounds):
            replies = swarm.round(encode_command("INCR", "visits"), 1)
            assert all(isinstance(r[0], int) for r in replies.values()), replies
    for db in range(16):
        want = len([i for i in range(conns) if i % 16 == db]) * rounds
        assert db_client(srv, db).get("visits") == str(want), db


@case
def kill9_keeps_every_database(t, srv):
    """appendfsync always, MOVE, SWAPDB, FLUSHDB, a rewrite, kill -9: every db as it was."""
    d = tempfile.mkdtemp(prefix="hotkv-dbs-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    keys = spread_keys("p:", 6)
    s = t.server(extra_args=args, expect_exit=None).start()
    try:
        cs = {db: db_client(s, db) for db in (0, 1, 3, 7, 15)}
        for db, c in cs.items():
            for k in keys:
                c.set(k, "%s@%d" % (k, db))
            c.rpush("list", *range(db + 1))
            c.hset("h", "db", db)
        cs[3].expire(keys[0], 900)
        cs[3].move(keys[0], 4)
        cs[0].swapdb(1, 15)
        cs[7].flushdb()
        cs[1].bgrewriteaof()
        wait_rewrite_done(cs[1])
        cs[15].swapdb(0, 3)
        cs[15].set("after", "rewrite")
        cs[1].lpush("list", "front")
        cs[0].move(keys[1], 7)
        before = {}
        for db in range(16):
            c = db_client(s, db)
            before[db] = {k: _value(c, k) for k in c.keys("*")}
        os.kill(s.pid(), signal.SIGKILL)
        s.wait(timeout=10)
    finally:
        s.cleanup()
    s2 = t.server(extra_args=args).start()
    try:
        for db in range(16):
            c = db_client(s2, db)
            after = {k: _value(c, k) for k in c.keys("*")}
            assert after == before[db], (db, after, before[db])
        assert 0 < db_client(s2, 4).ttl(keys[0]) <= 900
    finally:
        s2.stop()


@case
@hotkv_only("replays its own log under another thread count")
def swapdb_replays_under_another_thread_count(t, srv):
    """Written at --threads 4 with SWAPDB and FLUSHDB, replayed at 1 and 3: the same dbs."""
    d = tempfile.mkdtemp(prefix="hotkv-dbs-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    keys = spread_keys("r:", 8)
    s = Server("hotkv", binary=t.binary, threads=4, extra_args=args).start()
    try:
        for db in (0, 2, 5):
            c = db_client(s, db)
            for k in keys:
                c.set(k, "%s@%d" % (k, db))
        db_client(s, 0).swapdb(2, 5)
        db_client(s, 0).swapdb(0, 2)
        db_client(s, 5).delete(keys[3])
        db_client(s, 9).set("nine", "9")
        db_client(s, 9).swapdb(9, 10)
        db_client(s, 0).flushdb()
        before = {db: {k: _value(db_client(s, db), k) for k in db_client(s, db).keys("*")}
                  for db in range(16)}
        s.stop()
    finally:
        s.cleanup()
    for threads in (1, 3):
        s2 = Server("hotkv", binary=t.binary, threads=threads, extra_args=args).start()
        try:
            for db in range(16):
                c = db_client(s2, db)
                after = {k: _value(c, k) for k in c.keys("*")}
                assert after == before[db], (threads, db, after, before[db])
        finally:
            s2.stop()


def _value(c, k):
    kind = c.type(k)
    if kind == "string":
        return (kind, c.get(k))
    if kind == "list":
        return (kind, c.lrange(k, 0, -1))
    if kind == "hash":
        return (kind, c.hgetall(k))
    return (kind, None)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
