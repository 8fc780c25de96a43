#!/usr/bin/python3
"""The append-only log as Redis commands: a stock redis-server fed `hotkv-check-aof --resp`
through `redis-cli --pipe` holds the same data as HotKV restarted from that log.

A bounded mixed workload (strings with and without deadlines, counters, hashes, sets, sorted
sets, lists, streams, expiry changes, RENAME/COPY/MOVE, several databases, FLUSHDB, SWAPDB, a
MULTI/EXEC and a Lua script across shards, a rewrite in the middle) runs against HotKV with
appendfsync always; then every key of every database is compared between a restarted HotKV
and the redis-server: TYPE, the value through that type's reads, and PTTL within a margin.

Run: /usr/bin/python3 test_aof_to_redis.py --server build/hotkv --threads 4
"""

import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import DataDir, Server, case, hotkv_only, run_cases, wait_rewrite_done  # noqa: E402

DATABASES = 16
TTL_MARGIN_MS = 10000  # the translation, the pipe and the restart all happen in between
LONG_TTL_S = 3600


def strings(c, rnd):
    for i in range(40):
        c.set("str:%d" % i, "v%d" % rnd.randrange(1000))
    for i in range(10):
        c.set("ttl:%d" % i, "t%d" % i, ex=LONG_TTL_S + i)
        c.set("pttl:%d" % i, "p", px=LONG_TTL_S * 1000 + i)
    c.set("gone", "soon", px=1)  # its deadline is past by the time Redis reads it
    for i in range(20):
        c.incrby("ctr:%d" % (i % 5), rnd.randrange(-50, 50))
    c.incrbyfloat("float", "1.1")
    c.incrbyfloat("float", "2.25")
    c.append("app", "hello")
    c.append("app", " world")
    c.setrange("app", 3, "LO")
    c.setrange("pad", 5, "x")
    c.mset({"m:%d" % i: "mv%d" % i for i in range(8)})
    c.getset("str:1", "swapped")
    c.setnx("str:2", "kept")
    c.decrby("ctr:0", 7)
    c.set("keepttl", "a", ex=LONG_TTL_S)
    c.set("keepttl", "b", keepttl=True)
    c.getex("str:3", ex=LONG_TTL_S)
    c.getdel("str:4")


def hashes(c, rnd):
    for i in range(10):
        c.hset("h:%d" % i, mapping={"f%d" % j: "v%d" % j for j in range(5)})
    c.hincrby("h:0", "n", 5)
    c.hincrby("h:0", "n", -2)
    c.hincrbyfloat("h:1", "x", "0.1")
    c.hincrbyfloat("h:1", "x", "0.2")
    c.hdel("h:2", "f0", "f1")
    c.hsetnx("h:3", "f0", "no")
    c.hsetnx("h:3", "new", "yes")
    c.hset("bighash", mapping={"field%d" % j: "x" * (j % 7) for j in range(300)})
    c.hdel("h:4", *["f%d" % j for j in range(5)])  # emptied: the key goes


def sets(c, rnd):
    for i in range(8):
        c.sadd("s:%d" % i, *["m%d" % rnd.randrange(20) for _ in range(10)])
    c.sadd("ints", *range(50))
    c.srem("ints", 3, 4, 5)
    c.spop("s:0", 3)
    c.spop("s:1")
    c.smove("s:2", "s:3", "m1")
    c.smove("s:2", "fresh", "m2")
    c.sinterstore("inter", ["s:4", "s:5"])
    c.sunionstore("union", ["s:4", "s:5", "s:6"])
    c.sdiffstore("diff", ["s:6", "s:7"])
    c.sinterstore("s:7", ["s:7", "nosuch"])  # empty result deletes the destination
    c.sadd("bigset", *["member-%d" % j for j in range(200)])


def zsets(c, rnd):
    for i in range(6):
        c.zadd("z:%d" % i, {"m%d" % j: rnd.randrange(100) / 7 for j in range(10)})
    for _ in range(7):
        c.zincrby("z:0", 0.1, "m1")
    c.zadd("z:1", {"inf": float("inf"), "ninf": float("-inf"), "tiny": 1e-300})
    c.zadd("z:1", {"m2": 5}, incr=True)
    c.zunionstore("zu", ["z:2", "z:3"], aggregate="MAX")
    c.zinterstore("zi", {"z:2": 2, "z:3": 0.5})
    c.zpopmin("z:4", 2)
    c.zpopmax("z:4")
    c.zrem("z:5", "m0", "m1")
    c.zremrangebyscore("z:5", 0, 5)
    c.zrangestore("zr", "z:0", 0, 4)


def lists(c, rnd):
    for i in range(6):
        c.rpush("l:%d" % i, *["e%d" % j for j in range(12)])
    c.lpush("l:0", "head1", "head2")
    c.lmove("l:0", "l:1", "LEFT", "RIGHT")
    c.lmove("l:1", "newlist", "RIGHT", "LEFT")
    c.blmove("l:2", "l:3", 0.1, "LEFT", "LEFT")
    c.rpoplpush("l:3", "l:3")
    c.ltrim("l:4", 2, -3)
    c.ltrim("l:5", 20, 30)  # keeps nothing: the key goes
    c.rpush("rem", *["a", "b", "a", "c", "a", "b"])
    c.lrem("rem", 2, "a")
    c.lrem("rem", -1, "b")
    c.linsert("l:1", "BEFORE", "e5", "ins")
    c.linsert("l:1", "AFTER", "e7", "ins2")
    c.lset("l:1", -1, "last")
    c.lpop("l:3", 2)
    c.rpop("l:3")


def streams(c, rnd):
    for i in range(20):
        c.xadd("st", {"n": str(i)}, id="%d-%d" % (1000 + i, i % 3))
    c.xadd("st2", {"a": "1"})
    c.xadd("st2", {"a": "2"}, maxlen=1, approximate=False)
    c.xgroup_create("st", "g1", id="0")
    c.xgroup_create("st", "g2", id="$")
    c.xreadgroup("g1", "alice", {"st": ">"}, count=5)
    c.xreadgroup("g1", "bob", {"st": ">"}, count=3)
    c.xack("st", "g1", "1000-0", "1001-1")
    c.xclaim("st", "g1", "bob", 0, ["1002-2"])
    c.xgroup_createconsumer("st", "g2", "carol")
    c.xgroup_delconsumer("st", "g2", "carol")
    c.xdel("st", "1019-1")
    c.xtrim("st", minid="1001-0", approximate=False)
    c.xgroup_create("st", "gone", id="0")
    c.xgroup_destroy("st", "gone")
    c.xgroup_setid("st", "g2", "1010-1")
    c.xadd("st3", {"x": "y"}, id="5-5")
    c.execute_command("XSETID", "st3", "9-9", "ENTRIESADDED", 4, "MAXDELETEDID", "3-0")
    c.xgroup_create("empty", "g", id="$", mkstream=True)


def keyspace(c, rnd):
    c.expire("str:5", LONG_TTL_S)
    c.pexpire("str:6", LONG_TTL_S * 1000)
    c.expireat("str:7", 4102444800)
    c.expire("ttl:0", LONG_TTL_S * 2)
    c.persist("ttl:1")
    c.delete("str:8", "str:9", "h:5")
    c.rename("str:10", "renamed")
    c.rename("h:6", "renamed-hash")
    c.copy("z:0", "z-copy")
    c.copy("l:0", "l-copy")
    c.copy("s:3", "s-copy-db1", destination_db=1)
    c.move("str:11", 1)
    c.move("st2", 1)
    c.unlink("str:12")


def other_databases(srv, rnd):
    c2 = srv.client(db=2)
    for i in range(15):
        c2.set("db2:%d" % i, "x%d" % i)
    c2.hset("db2:h", "f", "v")
    c2.rpush("db2:l", "a", "b")
    c3 = srv.client(db=3)
    for i in range(15):
        c3.set("db3:%d" % i, "gone")
    c3.flushdb()
    for i in range(10):
        c3.set("after-flush:%d" % i, "kept")
    # A flush of a database only one shard holds keys in, then writes on every shard: the
    # flush must come before all of them in the merged stream, not only before its shard's.
    c6 = srv.client(db=6)
    c6.set("only-one", "x")
    c6.flushdb()
    for i in range(12):
        c6.set("db6:%d" % i, "after")
    c4 = srv.client(db=4)
    for i in range(10):
        c4.set("db4:%d" % i, "was four")
    c4.swapdb(4, 5)
    c4.set("in-four", "after swap")


def atomic(c, srv):
    p = c.pipeline(transaction=True)
    for i in range(8):
        p.set("tx:%d" % i, "t%d" % i)
    p.incr("tx:counter")
    p.hset("tx:h", "a", "1")
    p.rename("str:13", "tx:renamed")
    p.delete("str:14")
    p.execute()
    script = """
        for i, k in ipairs(KEYS) do
          redis.call('SET', k, ARGV[1] .. i)
          redis.call('EXPIRE', k, tonumber(ARGV[2]))
        end
        redis.call('RPUSH', KEYS[1] .. ':list', 'a', 'b')
        return #KEYS
    """
    keys = ["lua:%d" % i for i in range(6)]
    c.eval(script, len(keys), *keys, "val", LONG_TTL_S)


def workload(srv):
    rnd = random.Random(7)
    c = srv.client()
    strings(c, rnd)
    hashes(c, rnd)
    sets(c, rnd)
    # A rewrite in the middle: what came before is read back from a base snapshot.
    c.bgrewriteaof()
    wait_rewrite_done(c)
    zsets(c, rnd)
    lists(c, rnd)
    streams(c, rnd)
    keyspace(c, rnd)
    other_databases(srv, rnd)
    atomic(c, srv)
    c.set("last", "write")


def value(c, key, kind):
    if kind == "string":
        return c.get(key)
    if kind == "hash":
        return c.hgetall(key)
    if kind == "list":
        return c.lrange(key, 0, -1)
    if kind == "set":
        return sorted(c.smembers(key))
    if kind == "zset":
        return c.zrange(key, 0, -1, withscores=True)
    if kind == "stream":
        info = c.xinfo_stream(key)
        meta = {f: info.get(f) for f in ("length", "last-generated-id", "entries-added",
                                         "max-deleted-entry-id")}
        groups = []
        for g in c.xinfo_groups(key):
            pending = c.xpending_range(key, g["name"], "-", "+", 1000)
            groups.append((g["name"], g["last-delivered-id"], g["entries-read"],
                           sorted((p["message_id"], p["consumer"], p["times_delivered"])
                                  for p in pending),
                           sorted(x["name"] for x in c.xinfo_consumers(key, g["name"]))))
        return (c.xrange(key), meta, sorted(groups))
    raise AssertionError("unexpected type %s of %r" % (kind, key))


def snapshot(srv):
    out = {}
    for db in range(DATABASES):
        c = srv.client(db=db)
        for key in c.keys("*"):
            kind = c.type(key)
            out[(db, key)] = (kind, value(c, key, kind), c.pttl(key))
    return out


def compare(hot, red):
    problems = []
    for k in sorted(set(hot) | set(red), key=repr):
        if k not in hot or k not in red:
            problems.append("%r only in %s" % (k, "hotkv" if k in hot else "redis"))
            continue
        (ht, hv, hp), (rt, rv, rp) = hot[k], red[k]
        if (ht, hv) != (rt, rv):
            problems.append("%r: hotkv %r vs redis %r" % (k, (ht, hv), (rt, rv)))
        elif (hp < 0) != (rp < 0) or abs(hp - rp) > TTL_MARGIN_MS:
            problems.append("%r: pttl hotkv %d vs redis %d" % (k, hp, rp))
    assert not problems, "%d differences:\n%s" % (len(problems), "\n".join(problems[:40]))


@case
@hotkv_only("translates HotKV's own log")
def redis_fed_the_log_as_commands_holds_the_same_data(t, srv):
    """hotkv-check-aof --resp | redis-cli --pipe rebuilds every key of every database."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            workload(s)
        finally:
            s.stop()
        with Server("redis") as r:
            stream, text = translate_and_pipe(check, d, r)
            assert stream.startswith(b"*"), stream[:200]
            assert "errors: 0," in text, text
            s2 = t.server(extra_args=d.args("always")).start()
            try:
                hot = snapshot(s2)
                red = snapshot(r)
            finally:
                s2.stop()
        assert len(hot) > 100, len(hot)
        assert any(db == 5 for db, _ in hot), "SWAPDB's keys are missing"
        compare(hot, red)
        # A HotKV fed the same stream (as a HotKV replica would be) holds the same data too.
        with t.server() as replica:
            _, text = translate_and_pipe(check, d, replica)
            assert "errors: 0," in text, text
            compare(hot, snapshot(replica))


def translate_and_pipe(check, d, r):
    """The log in d as commands, piped into the redis-server r; returns (stream, pipe output)."""
    out = subprocess.run([check, "--resp", os.path.join(d.path, "appendonlydir")],
                         capture_output=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr.decode())
    piped = subprocess.run(["redis-cli", "-p", str(r.port), "--pipe"], input=out.stdout,
                           capture_output=True, timeout=120)
    return out.stdout, piped.stdout.decode(errors="replace")


@case
@hotkv_only("inventory items are HotKV's own")
def inventory_items_reach_redis_as_refused_internal_commands(t, srv):
    """Item ops travel as HOTKV.EFFECT, which redis-server refuses one by one; every other key
    still arrives."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            c.set("before", "1")
            c.execute_command("INV.CREATE", "item", 10)
            c.execute_command("INV.RESERVE", "item", "h1", 2, 600000, "OWNER", "alice")
            c.execute_command("INV.RESERVE", "item", "h2", 1, 600000)
            c.execute_command("INV.COMMIT", "item", "h1")
            c.execute_command("INV.RELEASE", "item", "h2")
            c.execute_command("INV.RESTOCK", "item", 5)
            c.rpush("after", "a", "b")
        finally:
            s.stop()
        with Server("redis") as r:
            stream, text = translate_and_pipe(check, d, r)
            internal = stream.count(b"\r\nHOTKV.EFFECT\r\n")
            assert internal == 6, (internal, stream)
            assert "errors: %d," % internal in text, text
            rc = r.client()
            assert rc.get("before") == "1"
            assert rc.lrange("after", 0, -1) == ["a", "b"]
            assert rc.exists("item") == 0


def item_state(c, key):
    """INV.GET and each hold's INV.HOLD fields, but ttl_ms (which moves with the clock;
    expires_at is compared)."""
    holds = {}
    for h in ("h1", "h2", "h3"):
        fields = c.execute_command("INV.HOLD", key, h)
        holds[h] = {k: v for k, v in zip(fields[::2], fields[1::2]) if k != "ttl_ms"}
    return c.execute_command("INV.GET", key), holds


@case
@hotkv_only("a HotKV replica applies HOTKV.EFFECT")
def hotkv_fed_the_log_as_commands_holds_the_same_items(t, srv):
    """The same stream piped into a fresh HotKV applies HOTKV.EFFECT as replay does: the items
    and their holds match a HotKV restarted from the log."""
    check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            c.set("plain", "1")
            c.execute_command("INV.CREATE", "item", 10, "MAXPEROWNER", 5)
            c.execute_command("INV.RESERVE", "item", "h1", 2, 600000, "OWNER", "alice")
            c.execute_command("INV.RESERVE", "item", "h2", 1, 600000)
            c.execute_command("INV.RESERVE", "item", "h3", 3, 600000, "OWNER", "bob")
            c.execute_command("INV.COMMIT", "item", "h1")
            c.execute_command("INV.RELEASE", "item", "h2")
            c.execute_command("INV.EXTEND", "item", "h3", 900000)
            c.execute_command("INV.RESTOCK", "item", 5)
            c.copy("item", "item-copy")
        finally:
            s.stop()
        with t.server() as replica:
            stream, text = translate_and_pipe(check, d, replica)
            assert "errors: 0," in text, text
            s2 = t.server(extra_args=d.args("always")).start()
            try:
                rc, hc = replica.client(), s2.client()
                assert rc.get("plain") == "1"
                for key in ("item", "item-copy"):
                    got, want = item_state(rc, key), item_state(hc, key)
                    assert got == want, (key, got, want)
            finally:
                s2.stop()
            with replica.raw() as raw:
                r = raw.call("EVAL", "return redis.call('HOTKV.EFFECT', 'x', '68', '1')", 0)
                assert "not allowed from script" in str(r), r


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
