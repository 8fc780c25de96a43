#!/usr/bin/python3
"""End-to-end command behaviour through real clients: python3-redis for results, the raw RESP
client in server.py where the exact error text or RESP3 encoding matters.

Covers strings, multi-key commands spread over shards, expiry, SET options, error replies,
big pipelines, RESP3/HELLO, SCAN/KEYS, AUTH, CLIENT, CONFIG, INFO and COMMAND. Every case also
passes against redis-server 7.0 (`--kind redis`), which is how the expectations were made.

Run: /usr/bin/python3 test_clients.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (Server, case, encode_command, expect_error,  # noqa: E402
                    expect_error_prefix, hotkv_only, run_cases, spread_keys)

NOT_INT = "ERR value is not an integer or out of range"


@case
def multi_key_commands_over_shards_answer_byte_for_byte_like_redis(t, srv):
    """MGET, EXISTS, TOUCH, DEL, UNLINK and MSET over keys of every shard (repeated keys, keys
    missing, a key of another type), pipelined and alone, in RESP2 and RESP3: the same bytes
    as redis-server."""
    keys = spread_keys("mk:", 4)
    script = [
        ["MSET", keys[0], "a", keys[1], "b", keys[2], "c", keys[3], "d"],
        ["RPUSH", "mk:list", "x"],
        ["MGET", keys[3], "nope", keys[0], keys[2], keys[3], "mk:list", keys[1]],
        ["EXISTS", keys[0], keys[0], "nope", keys[3], "mk:list"],
        ["TOUCH", keys[1], "nope", keys[2]],
        ["MSET", keys[0], "A", keys[3], "D", keys[0], "AA"],
        ["MGET", keys[0], keys[3]],
        ["DEL", keys[0], "nope", keys[1], keys[1]],
        ["UNLINK", keys[2], keys[3], "mk:list"],
        ["MGET", keys[0], keys[1], keys[2], keys[3]],
        ["EXISTS", keys[0], keys[1], keys[2], keys[3]],
        ["MSET", keys[0], "1", keys[1]],
        ["MGET"],
    ]

    def replies(server, proto, together):
        out = []
        with server.raw() as c:
            c.call("FLUSHALL")
            if proto == 3:
                c.call("HELLO", 3)
            if together:
                c.send(b"".join(encode_command(*cmd) for cmd in script))
                out = [c.read_reply_bytes() for _ in script]
            else:
                out = [c.call_bytes(*cmd) for cmd in script]
        return out

    with Server("redis") as ref:
        for proto in (2, 3):
            for together in (False, True):
                got = replies(srv, proto, together)
                want = replies(ref, proto, together)
                for cmd, g, w in zip(script, got, want):
                    assert g == w, "RESP%d %s: %r, redis-server %r" % (proto, cmd, g, w)


@case
def strings_basic(t, srv):
    """SET/GET/INCR/DECR/ECHO/TYPE through redis-py."""
    r = srv.client()
    assert r.set("a", 1) is True
    assert r.incr("a") == 2
    assert r.get("a") == "2"
    assert r.incrby("a", 40) == 42
    assert r.decr("a") == 41
    assert r.decrby("a", 50) == -9
    assert r.incr("fresh") == 1
    assert r.decr("fresh2") == -1
    assert r.get("missing") is None
    assert r.type("a") == "string"
    assert r.type("missing") == "none"
    assert r.echo("hi there") == "hi there"
    assert r.ping() is True
    rb = srv.client(decode_responses=False)
    blob = bytes(range(256)) * 4 + b"\r\n\x00end"
    assert rb.set("bin", blob) is True
    assert rb.get("bin") == blob
    big = b"x" * (1 << 20)
    assert rb.set("big", big) is True
    assert rb.get("big") == big
    assert r.strlen("big") == 1 << 20


@case
def mset_mget_many_keys(t, srv):
    """MSET/MGET/MSETNX over 1,000 untagged keys (all shards) and 1,000 keys sharing a tag."""
    r = srv.client()
    plain = {"plain:%d" % i: "v%d" % i for i in range(1000)}
    tagged = {"{tag}:%d" % i: "t%d" % i for i in range(1000)}
    assert r.mset(plain) is True
    assert r.mset(tagged) is True
    names = list(plain) + ["nope:1"] + list(tagged) + ["nope:2"]
    got = r.mget(names)
    want = list(plain.values()) + [None] + list(tagged.values()) + [None]
    assert got == want, "MGET mismatch"
    assert r.dbsize() == 2000
    # Later values win within one MSET.
    assert r.execute_command("MSET", "dup", "1", "dup", "2") is True
    assert r.get("dup") == "2"
    # MSETNX is all or nothing even when its keys live on different shards.
    k = spread_keys("msetnx:", 4)
    assert r.msetnx({k[0]: "a", k[1]: "b"}) is True
    assert r.msetnx({k[2]: "c", k[3]: "d", k[0]: "z"}) is False
    assert r.mget(k) == ["a", "b", None, None]
    with srv.raw() as c:
        expect_error(c.call("MSET", "a", "1", "b"),
                     "ERR wrong number of arguments for 'mset' command")
        expect_error(c.call("MGET"), "ERR wrong number of arguments for 'mget' command")


@case
def multi_key_counts(t, srv):
    """DEL/EXISTS/UNLINK/TOUCH count keys across shards, duplicates included for EXISTS."""
    r = srv.client()
    k = spread_keys("cnt:", 8)
    r.mset({x: "1" for x in k})
    assert r.exists(*k) == 8
    assert r.exists(k[0], k[0], k[0], "missing") == 3
    assert r.touch(*k, "missing") == 8
    assert r.delete(k[0], k[1], "missing") == 2
    assert r.exists(*k) == 6
    assert r.unlink(k[2], k[3], k[2]) == 2
    assert r.exists(*k) == 4
    assert r.delete(*k) == 4
    assert r.exists(*k) == 0
    assert r.delete("missing") == 0
    assert r.unlink("missing") == 0


@case
def rename_across_keys(t, srv):
    """RENAME/RENAMENX between keys on different slots carry value and TTL."""
    r = srv.client()
    src, dst, other = spread_keys("ren:", 3)
    r.set(src, "payload", ex=100)
    assert r.rename(src, dst) is True
    assert r.get(src) is None
    assert r.get(dst) == "payload"
    assert 90 <= r.ttl(dst) <= 100
    r.set(other, "o")
    assert r.renamenx(dst, other) is False
    assert r.get(dst) == "payload"
    assert r.renamenx(dst, src) is True
    assert r.get(src) == "payload" and r.exists(dst) == 0
    # RENAME over an existing key replaces it and drops the target's TTL in favour of the source's.
    r.set(dst, "old", ex=500)
    r.persist(src)
    assert r.rename(src, dst) is True
    assert r.get(dst) == "payload" and r.ttl(dst) == -1
    assert r.rename(dst, dst) is True
    with srv.raw() as c:
        expect_error(c.call("RENAME", "nosuch", "x"), "ERR no such key")
        expect_error(c.call("RENAMENX", "nosuch", "x"), "ERR no such key")


@case
def expire_ttl_persist(t, srv):
    """EXPIRE/PEXPIRE/EXPIREAT/TTL/PTTL/PERSIST; a 100 ms key disappears."""
    r = srv.client()
    assert r.ttl("missing") == -2
    assert r.pttl("missing") == -2
    assert r.expire("missing", 10) is False
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.persist("k") is False
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert 98000 <= r.pttl("k") <= 100000
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.pexpire("k", 50000) is True
    assert 49 <= r.ttl("k") <= 50
    assert r.expireat("k", int(time.time()) + 1000) is True
    assert 990 <= r.ttl("k") <= 1000
    # A SET without options drops the TTL.
    r.set("k", "v2")
    assert r.ttl("k") == -1
    # Deadlines in the past delete the key at once.
    assert r.expire("k", -1) is True
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.expireat("k", 1) is True
    assert r.get("k") is None
    # A short TTL really expires (bounded wait).
    r.set("short", "v", px=100)
    deadline = time.monotonic() + 3.0
    while r.exists("short") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert r.get("short") is None and r.exists("short") == 0
    assert r.ttl("short") == -2
    with srv.raw() as c:
        expect_error(c.call("EXPIRE", "k", "abc"), NOT_INT)


@case
def string_commands(t, srv):
    """GETEX/GETDEL/SETRANGE/GETRANGE/APPEND/STRLEN/INCRBYFLOAT."""
    r = srv.client()
    r.set("s", "Hello World")
    assert r.getex("s", ex=100) == "Hello World"
    assert 99 <= r.ttl("s") <= 100
    assert r.getex("s", persist=True) == "Hello World"
    assert r.ttl("s") == -1
    assert r.getex("s", px=20000) == "Hello World"
    assert 19 <= r.ttl("s") <= 20
    assert r.getex("s") == "Hello World"
    assert r.getex("missing") is None
    assert r.getrange("s", 0, 4) == "Hello"
    assert r.getrange("s", -5, -1) == "World"
    assert r.getrange("s", 0, -1) == "Hello World"
    assert r.getrange("s", 20, 30) == ""
    assert r.getrange("s", 5, 2) == ""
    assert r.getrange("missing", 0, -1) == ""
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == "Hello Redis"
    assert r.setrange("pad", 5, "x") == 6
    assert r.get("pad") == "\x00" * 5 + "x"
    assert r.append("s", "!!") == 13
    assert r.append("new", "abc") == 3
    assert r.strlen("s") == 13
    assert r.strlen("missing") == 0
    assert r.getdel("s") == "Hello Redis!!"
    assert r.getdel("s") is None
    assert r.exists("s") == 0
    # INCRBYFLOAT formats like Redis (long double, no trailing zeros).
    # redis-py turns the reply into a float, so the text is checked on the raw client.
    with srv.raw() as c:
        c.call("SET", "f", "10.50")
        assert c.call("INCRBYFLOAT", "f", "0.1") == "10.6"
        assert c.call("INCRBYFLOAT", "f", "-5") == "5.6"
        assert c.call("GET", "f") == "5.6"
        c.call("SET", "f", "5.0e3")
        assert c.call("INCRBYFLOAT", "f", "2.0e2") == "5200"
        assert c.call("INCRBYFLOAT", "nf", "3") == "3"
        assert c.call("GET", "nf") == "3"
        assert r.incrbyfloat("nf", 0.5) == 3.5
        c.call("SET", "txt", "abc")
        expect_error(c.call("INCRBYFLOAT", "txt", "1"), "ERR value is not a valid float")
        expect_error(c.call("INCRBYFLOAT", "f", "x"), "ERR value is not a valid float")
        expect_error(c.call("SETRANGE", "s", "-1", "x"), "ERR offset is out of range")
        expect_error(c.call("GETEX", "f", "EX", "0"), "ERR invalid expire time in 'getex' command")
        expect_error(c.call("GETEX", "f", "PERSIST", "EX", "1"), "ERR syntax error")


@case
def set_options(t, srv):
    """SET NX/XX/GET/EX/PX/EXAT/PXAT/KEEPTTL and their error replies."""
    r = srv.client()
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.get("k") == "1"
    assert r.set("k", "3", xx=True) is True
    assert r.set("nk", "3", xx=True) is None
    assert r.exists("nk") == 0
    assert r.set("k", "4", get=True) == "3"
    assert r.set("gk", "x", get=True) is None
    assert r.get("gk") == "x"
    assert r.set("k", "5", ex=100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.set("k", "6", keepttl=True) is True
    assert 98 <= r.ttl("k") <= 100 and r.get("k") == "6"
    assert r.set("k", "7") is True
    assert r.ttl("k") == -1
    assert r.set("k", "8", px=30000) is True
    assert 29 <= r.ttl("k") <= 30
    assert r.set("k", "9", exat=int(time.time()) + 200) is True
    assert 190 <= r.ttl("k") <= 200
    assert r.set("k", "10", pxat=int(time.time() * 1000) + 300000) is True
    assert 290 <= r.ttl("k") <= 300
    with srv.raw() as c:
        # NX and GET together are allowed since Redis 7: the old value comes back, nothing set.
        assert c.call("SET", "k", "other", "NX", "GET") == "10"
        assert c.call("GET", "k") == "10"
        expect_error(c.call("SET", "k", "v", "NX", "XX"), "ERR syntax error")
        expect_error(c.call("SET", "k", "v", "EX", "10", "PX", "100"), "ERR syntax error")
        expect_error(c.call("SET", "k", "v", "KEEPTTL", "EX", "10"), "ERR syntax error")
        expect_error(c.call("SET", "k", "v", "BOGUS"), "ERR syntax error")
        expect_error(c.call("SET", "k", "v", "EX"), "ERR syntax error")
        expect_error(c.call("SET", "k", "v", "EX", "0"), "ERR invalid expire time in 'set' command")
        expect_error(c.call("SET", "k", "v", "PX", "-5"),
                     "ERR invalid expire time in 'set' command")
        expect_error(c.call("SET", "k", "v", "EX", "abc"), NOT_INT)
        expect_error(c.call("SET", "k"), "ERR wrong number of arguments for 'set' command")
        # Options are case-insensitive.
        assert c.call("SET", "k", "lower", "ex", "100", "xx") == "OK"
        assert c.call("GET", "k") == "lower"


@case
def error_replies(t, srv):
    """Integer parsing, overflow, arity and unknown-command errors, word for word."""
    r = srv.client()
    r.set("txt", "abc")
    r.set("max", str(2 ** 63 - 1))
    r.set("min", str(-(2 ** 63)))
    r.set("spaces", " 1")
    with srv.raw() as c:
        expect_error(c.call("INCR", "txt"), NOT_INT)
        expect_error(c.call("INCR", "spaces"), NOT_INT)
        expect_error(c.call("INCRBY", "n", "abc"), NOT_INT)
        expect_error(c.call("INCRBY", "n", "1.5"), NOT_INT)
        expect_error(c.call("INCRBY", "n", "99999999999999999999"), NOT_INT)
        expect_error(c.call("INCR", "max"), "ERR increment or decrement would overflow")
        expect_error(c.call("INCRBY", "max", "1"), "ERR increment or decrement would overflow")
        expect_error(c.call("DECR", "min"), "ERR increment or decrement would overflow")
        expect_error(c.call("DECRBY", "min", "1"), "ERR increment or decrement would overflow")
        assert c.call("GET", "max") == str(2 ** 63 - 1), "failed INCR must not change the value"
        assert c.call("INCRBY", "min", str(2 ** 63 - 1)) == -1
        expect_error(c.call("GET"), "ERR wrong number of arguments for 'get' command")
        expect_error(c.call("GET", "a", "b"), "ERR wrong number of arguments for 'get' command")
        expect_error(c.call("NOSUCHCMD", "a", "b"),
                     "ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b' ")
        expect_error(c.call("nosuchcmd"),
                     "ERR unknown command 'nosuchcmd', with args beginning with: ")
        # The connection is still usable after errors.
        assert c.call("PING") == "PONG"


@case
def pipeline_10000(t, srv):
    """A 10,000-command pipeline (no MULTI): every reply is checked in order."""
    r = srv.client()
    p = r.pipeline(transaction=False)
    n = 2500
    for i in range(n):
        p.set("p:%d" % i, i)
        p.incr("p:%d" % i)
        p.get("p:%d" % i)
        p.incrby("p:counter", 2)
    replies = p.execute()
    assert len(replies) == 4 * n
    for i in range(n):
        s, inc, g, ctr = replies[4 * i:4 * i + 4]
        assert s is True, (i, s)
        assert inc == i + 1, (i, inc)
        assert g == str(i + 1), (i, g)
        assert ctr == 2 * (i + 1), (i, ctr)
    assert r.get("p:counter") == str(2 * n)
    # Errors inside a pipeline stay in place and do not disturb the neighbours.
    p = r.pipeline(transaction=False)
    p.set("txt", "abc")
    p.incr("txt")
    p.get("txt")
    out = p.execute(raise_on_error=False)
    assert out[0] is True and isinstance(out[1], redis.ResponseError) and out[2] == "abc", out


@case
def resp3_hello(t, srv):
    """HELLO 3 map fields, RESP3 null/map encoding, HELLO 2 switches back, NOPROTO."""
    with srv.raw() as c:
        c.call("SET", "present", "x")
        hello = c.call("HELLO", "3")
        assert isinstance(hello, dict), "HELLO 3 must reply with a map, got %r" % (hello,)
        for field in ("server", "version", "proto", "id", "mode", "role", "modules"):
            assert field in hello, "HELLO 3 lacks %r: %r" % (field, hello)
        assert hello["proto"] == 3
        assert isinstance(hello["id"], int)
        assert isinstance(hello["server"], str) and hello["server"]
        assert isinstance(hello["version"], str) and hello["version"]
        assert hello["mode"] in ("standalone", "cluster")
        assert hello["role"] == "master"
        assert hello["modules"] == []
        assert c.call("CLIENT", "ID") == hello["id"]
        assert c.call_bytes("GET", "missing") == b"_\r\n"
        assert c.call_bytes("GET", "present") == b"$1\r\nx\r\n"
        assert c.call_bytes("INCR", "n") == b":1\r\n"
        assert c.call_bytes("PING") == b"+PONG\r\n"
        cfg = c.call_bytes("CONFIG", "GET", "maxclients")
        assert cfg.startswith(b"%1\r\n"), "CONFIG GET in RESP3 is a map: %r" % cfg
        mget = c.call_bytes("MGET", "present", "missing")
        assert mget == b"*2\r\n$1\r\nx\r\n_\r\n", mget
        again = c.call("HELLO")
        assert isinstance(again, dict) and again["proto"] == 3
        back = c.call("HELLO", "2")
        assert isinstance(back, list), "HELLO 2 replies with a flat array: %r" % (back,)
        flat = dict(zip(back[0::2], back[1::2]))
        assert flat["proto"] == 2 and flat["id"] == hello["id"]
        assert c.call_bytes("GET", "missing") == b"$-1\r\n"
        assert c.call_bytes("MGET", "missing") == b"*1\r\n$-1\r\n"
        expect_error(c.call("HELLO", "4"), "NOPROTO unsupported protocol version")
        expect_error(c.call("HELLO", "abc"),
                     "ERR Protocol version is not an integer or out of range")
        assert c.call_bytes("GET", "missing") == b"$-1\r\n", "a failed HELLO keeps RESP2"


@case
def scan_while_inserting(t, srv):
    """SCAN MATCH/COUNT/TYPE over 5,000 keys while more are inserted: every original key seen."""
    r = srv.client()
    originals = {"scan:%d" % i for i in range(5000)}
    p = r.pipeline(transaction=False)
    for k in originals:
        p.set(k, "1")
    p.execute()
    seen = set()
    cursor = "0"
    calls = 0
    added = 0
    while True:
        with_type = calls % 2 == 0
        args = ["SCAN", cursor, "MATCH", "scan:*", "COUNT", "100"]
        if with_type:
            args += ["TYPE", "string"]
        cursor, keys = r.execute_command(*args)
        calls += 1
        seen.update(keys)
        for k in keys:
            assert k.startswith("scan:"), k
        if cursor in ("0", 0, b"0"):
            break
        if added < 2000:
            p = r.pipeline(transaction=False)
            for _ in range(20):
                p.set("scan:new:%d" % added, "1")
                added += 1
            p.execute()
        assert calls < 5000, "SCAN did not finish in 5,000 calls"
    missing = originals - seen
    assert not missing, ("SCAN missed %d original keys, e.g. %r"
                         % (len(missing), sorted(missing)[:5]))
    # MATCH filters, TYPE filters, and other keys are never returned for a narrow pattern.
    r.set("other", "x")
    got = set()
    cursor = 0
    for _ in range(5000):
        cursor, keys = r.scan(cursor=cursor, match="scan:1??", count=1000)
        got.update(keys)
        if cursor == 0:
            break
    assert got == {"scan:%d" % i for i in range(100, 200)}, sorted(got)[:5]
    cursor, keys = 0, []
    for _ in range(5000):
        cursor, part = r.scan(cursor=cursor, count=1000, _type="list")
        keys += part
        if cursor == 0:
            break
    assert keys == [], keys[:5]
    assert r.scan(cursor=0, match="nothing:*", count=10)[1] is not None
    with srv.raw() as c:
        expect_error(c.call("SCAN", "abc"), "ERR invalid cursor")
        expect_error(c.call("SCAN", "0", "COUNT", "0"), "ERR syntax error")
        expect_error(c.call("SCAN", "0", "BOGUS", "1"), "ERR syntax error")


@case
def keys_pattern(t, srv):
    """KEYS with *, ?, [set], [^set], ranges and escapes; DBSIZE counts every shard."""
    r = srv.client()
    names = ["hello", "hallo", "hxllo", "hllo", "heeeello", "hbllo", "h*llo", "user:1", "user:22"]
    r.mset({n: "1" for n in names})
    assert sorted(r.keys("*")) == sorted(names)
    assert sorted(r.keys("h?llo")) == sorted(["hello", "hallo", "hxllo", "hbllo", "h*llo"])
    assert sorted(r.keys("h*llo")) == sorted(["hello", "hallo", "hxllo", "hllo", "heeeello",
                                              "hbllo", "h*llo"])
    assert sorted(r.keys("h[ae]llo")) == ["hallo", "hello"]
    assert sorted(r.keys("h[^e]llo")) == sorted(["hallo", "hxllo", "hbllo", "h*llo"])
    assert sorted(r.keys("h[a-b]llo")) == ["hallo", "hbllo"]
    assert r.keys("h\\*llo") == ["h*llo"]
    assert sorted(r.keys("user:?")) == ["user:1"]
    assert r.keys("nomatch*") == []
    assert r.dbsize() == len(names)


@case
def dbsize_flush(t, srv):
    """DBSIZE/FLUSHALL/FLUSHDB across shards, with and without ASYNC."""
    r = srv.client()
    r.mset({"f:%d" % i: i for i in range(500)})
    assert r.dbsize() == 500
    assert r.flushall() is True
    assert r.dbsize() == 0
    assert r.get("f:1") is None
    r.mset({"f:%d" % i: i for i in range(100)})
    assert r.flushdb() is True
    assert r.dbsize() == 0
    r.mset({"f:%d" % i: i for i in range(100)})
    assert r.execute_command("FLUSHALL", "ASYNC") in (True, "OK")
    assert r.dbsize() == 0
    assert r.execute_command("FLUSHALL", "SYNC") in (True, "OK")


@case
def select_db(t, srv):
    """SELECT 0 works; out-of-range indexes get Redis' error text."""
    with srv.raw() as c:
        assert c.call("SELECT", "0") == "OK"
        expect_error(c.call("SELECT", "99"), "ERR DB index is out of range")
        expect_error(c.call("SELECT", "-1"), "ERR DB index is out of range")
        expect_error(c.call("SELECT", "abc"), NOT_INT)


@case
def select_past_the_last_database_rejected(t, srv):
    """SELECT 16 → ERR DB index is out of range (databases 16); the connection stays usable."""
    with srv.raw() as c:
        expect_error(c.call("SELECT", "16"), "ERR DB index is out of range")
        assert c.call("PING") == "PONG"


@case
def auth_requirepass(t, srv):
    """A second server with --requirepass: NOAUTH before AUTH, WRONGPASS on a bad password."""
    with srv.raw() as c:
        expect_error(c.call("AUTH", "x"),
                     "ERR AUTH <password> called without any password configured for the "
                     "default user. Are you sure your configuration is correct?")
    with t.server(requirepass="s3cret pass") as sp:
        with sp.raw(auth=False) as c:
            expect_error(c.call("PING"), "NOAUTH Authentication required.")
            expect_error(c.call("GET", "a"), "NOAUTH Authentication required.")
            expect_error(c.call("SET", "a", "1"), "NOAUTH Authentication required.")
            expect_error_prefix(c.call("HELLO", "3"), "NOAUTH ")
            expect_error(c.call("AUTH", "wrong"),
                         "WRONGPASS invalid username-password pair or user is disabled.")
            expect_error(c.call("AUTH", "default", "wrong"),
                         "WRONGPASS invalid username-password pair or user is disabled.")
            expect_error(c.call("AUTH", "a", "b", "c"), "ERR syntax error")
            assert c.call("AUTH", "s3cret pass") == "OK"
            assert c.call("PING") == "PONG"
            assert c.call("SET", "a", "1") == "OK"
        with sp.raw(auth=False) as c:
            assert c.call("AUTH", "default", "s3cret pass") == "OK"
            assert c.call("GET", "a") == "1"
        with sp.raw(auth=False) as c:
            expect_error(c.call("HELLO", "3", "AUTH", "default", "nope"),
                         "WRONGPASS invalid username-password pair or user is disabled.")
            hello = c.call("HELLO", "3", "AUTH", "default", "s3cret pass")
            assert isinstance(hello, dict) and hello["proto"] == 3, hello
            assert c.call_bytes("GET", "missing") == b"_\r\n"
        r = sp.client()  # redis-py sends AUTH itself
        assert r.incr("a") == 2
        bad = sp.client(password="wrong")
        try:
            bad.ping()
        except redis.AuthenticationError:
            pass
        except redis.ResponseError as e:
            assert "WRONGPASS" in str(e), e
        else:
            raise AssertionError("a wrong password must be refused")


@case
def client_commands(t, srv):
    """CLIENT SETNAME/GETNAME/ID/LIST/INFO."""
    with srv.raw() as a, srv.raw() as b:
        ida = a.call("CLIENT", "ID")
        idb = b.call("CLIENT", "ID")
        assert isinstance(ida, int) and isinstance(idb, int) and ida != idb
        assert a.call("CLIENT", "GETNAME") is None
        assert a.call("CLIENT", "SETNAME", "worker-a") == "OK"
        assert a.call("CLIENT", "GETNAME") == "worker-a"
        expect_error(a.call("CLIENT", "SETNAME", "has space"),
                     "ERR Client names cannot contain spaces, newlines or special characters.")
        assert a.call("CLIENT", "GETNAME") == "worker-a"
        listing = b.call("CLIENT", "LIST")
        assert isinstance(listing, str)
        lines = [ln for ln in listing.split("\n") if ln]
        assert len(lines) >= 2, listing
        by_id = {}
        for ln in lines:
            fields = dict(f.split("=", 1) for f in ln.split(" ") if "=" in f)
            by_id[int(fields["id"])] = fields
        assert ida in by_id and idb in by_id, listing
        assert by_id[ida]["name"] == "worker-a"
        assert by_id[idb]["name"] == ""
        assert "addr" in by_id[ida] and by_id[ida]["addr"].startswith("127.0.0.1:")
        info = a.call("CLIENT", "INFO")
        assert "id=%d " % ida in info and "name=worker-a" in info, info
        assert a.call("CLIENT", "SETNAME", "") == "OK"
        assert a.call("CLIENT", "GETNAME") is None
    r = srv.client(client_name="named-by-redis-py")
    assert r.client_getname() == "named-by-redis-py"
    assert isinstance(r.client_id(), int)


@case
def config_get_set(t, srv):
    """CONFIG GET exact name and globs; CONFIG SET timeout round-trips."""
    r = srv.client()
    with srv.raw() as c:
        got = c.call("CONFIG", "GET", "maxclients")
        assert isinstance(got, list) and len(got) == 2 and got[0] == "maxclients", got
        assert int(got[1]) > 0
        glob = c.call("CONFIG", "GET", "*max*")
        pairs = dict(zip(glob[0::2], glob[1::2]))
        assert "maxclients" in pairs and "maxmemory" in pairs, sorted(pairs)
        assert all("max" in k for k in pairs), sorted(pairs)
        assert c.call("CONFIG", "GET", "nosuchparam*") == []
        multi = c.call("CONFIG", "GET", "maxclients", "timeout")
        assert sorted(multi[0::2]) == ["maxclients", "timeout"], multi
        assert c.call("CONFIG", "SET", "timeout", "300") == "OK"
        assert c.call("CONFIG", "GET", "timeout") == ["timeout", "300"]
        assert c.call("CONFIG", "SET", "timeout", "0") == "OK"
        assert c.call("CONFIG", "GET", "timeout") == ["timeout", "0"]
        expect_error_prefix(c.call("CONFIG", "SET", "nosuch", "1"),
                            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
        expect_error_prefix(c.call("CONFIG", "SET", "timeout", "abc"), "ERR CONFIG SET failed")
        assert c.call("CONFIG", "GET", "timeout") == ["timeout", "0"]
    assert r.config_get("maxclients")["maxclients"] == got[1]


def _info_fields(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


@case
def info_sections(t, srv):
    """INFO fields and counters: version, clients, commands, keyspace hits, db0 line."""
    with srv.raw() as c:
        full = _info_fields(c.call("INFO"))
        for field in ("redis_version", "connected_clients", "total_commands_processed",
                      "keyspace_hits", "keyspace_misses", "uptime_in_seconds", "tcp_port",
                      "used_memory"):
            assert field in full, "INFO lacks %s" % field
        assert int(full["tcp_port"]) == srv.port
        assert int(full["connected_clients"]) >= 1
        for i in range(10):
            c.call("SET", "i:%d" % i, "v")
        before = _info_fields(c.call("INFO", "stats"))
        assert c.call("GET", "i:1") == "v"
        assert c.call("GET", "i:2") == "v"
        assert c.call("GET", "nope") is None
        after = _info_fields(c.call("INFO", "stats"))
        assert int(after["keyspace_hits"]) - int(before["keyspace_hits"]) == 2, (before, after)
        assert int(after["keyspace_misses"]) - int(before["keyspace_misses"]) == 1
        assert int(after["total_commands_processed"]) >= int(before["total_commands_processed"]) + 4
        ks = c.call("INFO", "keyspace")
        assert "db0:keys=10," in ks, ks
        server_only = c.call("INFO", "server")
        assert "redis_version:" in server_only and "db0:" not in server_only
        assert "keyspace_hits" not in server_only
        both = c.call("INFO", "server", "clients")
        assert "redis_version:" in both and "connected_clients:" in both
        with srv.raw() as other:
            other.call("PING")
            n = int(_info_fields(c.call("INFO", "clients"))["connected_clients"])
            assert n >= 2, n
        c.call("FLUSHALL")
        assert "db0:" not in c.call("INFO", "keyspace")


@case
def client_kill_and_list_by_type(t, srv):
    """CLIENT LIST/KILL TYPE pubsub|normal (slave = replica), SKIPME, and sub=/psub= counts."""
    with srv.raw() as me, srv.raw() as sub, srv.raw() as plain:
        my_id = me.call("CLIENT", "ID")
        sub_id = sub.call("CLIENT", "ID")
        plain_id = plain.call("CLIENT", "ID")
        sub.call("SUBSCRIBE", "a", "b")
        sub.read_reply()  # the second channel's confirmation
        sub.call("PSUBSCRIBE", "c*")
        listed = me.call("CLIENT", "LIST", "TYPE", "pubsub")
        assert "id=%d " % sub_id in listed and "id=%d " % plain_id not in listed, listed
        line = next(ln for ln in listed.splitlines() if ln.startswith("id=%d " % sub_id))
        assert " sub=2 psub=1 " in line and " flags=P " in line, line
        normal = me.call("CLIENT", "LIST", "TYPE", "normal")
        assert "id=%d " % plain_id in normal and "id=%d " % sub_id not in normal, normal
        assert me.call("CLIENT", "LIST", "TYPE", "slave") == ""
        expect_error(me.call("CLIENT", "KILL", "TYPE", "nosuch"),
                     "ERR Unknown client type 'nosuch'")
        assert me.call("CLIENT", "KILL", "TYPE", "replica") == 0
        assert me.call("CLIENT", "KILL", "TYPE", "pubsub") == 1
        sub.wait_closed()
        # TYPE normal skips the caller by default (SKIPME yes) and takes the others.
        assert me.call("CLIENT", "KILL", "TYPE", "normal") >= 1
        plain.wait_closed()
        assert me.call("CLIENT", "ID") == my_id


@case
def command_introspection(t, srv):
    """COMMAND COUNT/DOCS/INFO/GETKEYS."""
    with srv.raw() as c:
        n = c.call("COMMAND", "COUNT")
        assert isinstance(n, int) and n > 50, n
        docs = c.call("COMMAND", "DOCS", "get")
        assert isinstance(docs, list) and docs[0] == "get", docs
        body = dict(zip(docs[1][0::2], docs[1][1::2]))
        assert body["summary"] and body["group"] == "string", body
        info = c.call("COMMAND", "INFO", "get")
        assert isinstance(info, list) and len(info) == 1
        entry = info[0]
        assert entry[0] == "get" and entry[1] == 2, entry
        assert "readonly" in entry[2] and "fast" in entry[2], entry
        assert entry[3:6] == [1, 1, 1], entry
        mset = c.call("COMMAND", "INFO", "mset")[0]
        assert mset[0] == "mset" and mset[1] == -3 and mset[3:6] == [1, -1, 2], mset
        assert "write" in mset[2]
        assert c.call("COMMAND", "INFO", "nosuchcommand") == [None]
        assert c.call("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == ["a", "b"]
        assert c.call("COMMAND", "GETKEYS", "GET", "k") == ["k"]
        assert c.call("COMMAND", "GETKEYS", "SET", "k", "v", "EX", "10") == ["k"]
        expect_error_prefix(c.call("COMMAND", "GETKEYS", "PING", "x"),
                            "ERR The command has no key arguments")
        expect_error(c.call("COMMAND", "GETKEYS", "NOSUCH", "x"), "ERR Invalid command specified")
        everything = c.call("COMMAND")
        assert isinstance(everything, list) and len(everything) == n
        names = {e[0] for e in everything}
        for must in ("get", "set", "mset", "mget", "incr", "del", "scan", "hello", "info"):
            assert must in names, must
        # COMMAND LIST names subcommands too, as Redis 7 does, and filters them by pattern.
        listed = c.call("COMMAND", "LIST")
        assert names <= set(listed) and "config|get" in listed and "client|kill" in listed
        assert sorted(c.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "config*")) == [
            "config", "config|get", "config|help", "config|resetstat", "config|rewrite",
            "config|set"]


if __name__ == "__main__":
    run_cases(__doc__)
