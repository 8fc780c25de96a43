"""A data set of every type HotKV and redis-server share, written through commands, and the
means to compare two servers' data: what the tests that check one server's data against
another's (the log as commands, replication) load and compare.

- The writers (strings, hashes, sets, zsets, lists, streams, keyspace, other_databases, atomic)
  each take a redis-py client (and a random generator or the server).
- snapshot(srv): every key of every database with its TYPE, value (read through its type's
  commands) and PTTL; compare(a, b) asserts two snapshots hold the same, PTTLs within a margin.
"""

DATABASES = 16
# Both servers are read a little apart (after a pipe and a restart, or a replication lag).
TTL_MARGIN_MS = 10000
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


def snapshot(srv, dbs=range(DATABASES)):
    out = {}
    for db in dbs:
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
