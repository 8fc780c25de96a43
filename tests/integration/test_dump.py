#!/usr/bin/python3
"""DUMP and RESTORE end to end, first proven on redis-server 7.0 and then held against hotkv.

- Every type both servers have (strings, lists, sets, hashes, sorted sets), small and large
  (each of redis-server's encodings): DUMP on a reference redis-server and RESTORE on the
  target gives the same contents, and the reverse.
- RESTORE's TTL, ABSTTL, REPLACE, BUSYKEY, an expired TTL deleting a replaced key, the
  "restore" event, WATCH seeing a RESTORE, keys on every shard.
- Streams (several nodes, deleted entries, consumer groups with pending entries and
  consumers): DUMP on redis-server RESTOREs here with every counter and PEL entry, and the
  reverse; the restored stream goes on working (reads, acks, new entries).
- Inventory items (HotKV only) move between two HotKV servers with their holds, records and
  sold counts, and a restored hold still expires at its deadline; redis-server refuses the
  payload as bad data.
- A kill -9 with appendfsync always keeps restored values (a stream with its groups and an
  inventory item too) and their TTLs.
- Redis's errors: bad payloads, checksums, syntax, TTL/IDLETIME/FREQ ranges.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_dump.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (RespError, Server, case, hotkv_only, run_cases,  # noqa: E402
                    spread_keys)


OK = (True, b"OK")  # what redis-py gives for RESTORE's +OK


def bclient(srv):
    return srv.client(decode_responses=False)


def fill(r, prefix):
    """One key per type and encoding, named prefix + what it is."""
    r.set(prefix + "str", "hello world")
    r.set(prefix + "int", 12345)
    r.set(prefix + "big", "x" * 20000)  # redis-server writes it LZF-compressed
    r.rpush(prefix + "list", "a", 1, -200, 70000, 2 ** 40, "z" * 100)
    r.rpush(prefix + "biglist", *["item%d" % i for i in range(3000)])
    r.sadd(prefix + "intset", 1, 2, -3, 2 ** 40)
    r.sadd(prefix + "set", "a", "b", 3)
    r.hset(prefix + "hash", mapping={"a": 1, "b": "hello", "n": -7})
    r.hset(prefix + "bighash", mapping={"f%d" % i: "v" * (i % 90) for i in range(300)})
    r.zadd(prefix + "zset", {"a": 1.5, "b": -2, "c": 3e100, "inf": float("inf")})
    r.zadd(prefix + "bigzset", {"m%d" % i: i / 7 for i in range(500)})
    return [prefix + k for k in ("str", "int", "big", "list", "biglist", "intset", "set",
                                 "hash", "bighash", "zset", "bigzset")]


def contents(r, key):
    t = r.type(key)
    if t == b"string":
        return r.get(key)
    if t == b"list":
        return r.lrange(key, 0, -1)
    if t == b"set":
        return sorted(r.smembers(key))
    if t == b"hash":
        return sorted(r.hgetall(key).items())
    if t == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    raise AssertionError("unexpected type %r" % t)


@case
def round_trip_and_interop(t, srv):
    """Every type: DUMP here RESTOREs there and the reverse, contents equal."""
    with Server("redis") as ref:
        here, there = bclient(srv), bclient(ref)
        keys = fill(here, "h:")
        keys_ref = fill(there, "h:")
        assert keys == keys_ref
        for k in keys:
            want = contents(here, k)
            assert contents(there, k) == want, k
            # Target -> target, target -> redis-server, redis-server -> target.
            payload = here.dump(k)
            assert here.restore(k + ":copy", 0, payload) in OK
            assert contents(here, k + ":copy") == want, k
            assert there.restore(k + ":from-target", 0, payload) in OK, k
            assert contents(there, k + ":from-target") == want, k
            assert here.restore(k + ":from-redis", 0, there.dump(k)) in OK, k
            assert contents(here, k + ":from-redis") == want, k
        assert here.dump("missing") is None


def fill_stream(r, key):
    """A stream of several nodes with deleted entries, two groups, pending entries and
    consumers (one with nothing pending), all with ids chosen here so both servers match."""
    for i in range(1, 331):
        if i % 7 == 0:
            r.xadd(key, {"kind": "odd", "n": i, "blob": "b" * (i % 50)}, id="%d-%d" % (i, i % 3))
        else:
            r.xadd(key, {"f": "v%d" % i, "n": i}, id="%d-%d" % (i, i % 3))
    r.xdel(key, "2-2", "50-2", "51-0", "199-1")
    r.xgroup_create(key, "g1", id="0")
    r.xgroup_create(key, "g2", id="100-1")
    r.xreadgroup("g1", "alice", {key: ">"}, count=40)
    r.xreadgroup("g1", "bob", {key: ">"}, count=25)
    r.xack(key, "g1", "3-0", "4-1", "10-1")
    r.xreadgroup("g2", "carol", {key: ">"}, count=5)
    r.xgroup_createconsumer(key, "g1", "dave")
    r.xtrim(key, minid="20", approximate=False)
    r.xdel(key, "300-0")
    # Values in every listpack encoding: integers of each width, strings that only look like
    # integers, empty and long strings.
    values = ["-9223372036854775808", "9223372036854775807", "-4097", "4095", "127", "-1",
              "8388607", "-8388609", "2147483648", "007", "-0", "1.5", "", "x" * 300, "y" * 5000]
    for i in range(331, 400):
        r.xadd(key, {"v": values[i % len(values)], values[(i + 3) % len(values)]: i},
               id="%d-0" % i)


def stream_state(r, key):
    """What a stream holds, as XINFO STREAM FULL tells it, without the node layout."""
    full = r.execute_command("XINFO", "STREAM", key, "FULL")
    info = dict(zip(full[0::2], full[1::2]))
    groups = []
    for g in info[b"groups"]:
        gd = dict(zip(g[0::2], g[1::2]))
        consumers = []
        for c in gd[b"consumers"]:
            cd = dict(zip(c[0::2], c[1::2]))
            consumers.append((cd[b"name"], cd[b"seen-time"], cd[b"pel-count"], cd[b"pending"]))
        groups.append((gd[b"name"], gd[b"last-delivered-id"], gd[b"entries-read"], gd[b"lag"],
                       gd[b"pel-count"], gd[b"pending"], consumers))
    return {
        "length": info[b"length"],
        "last": info[b"last-generated-id"],
        "max-deleted": info[b"max-deleted-entry-id"],
        "added": info[b"entries-added"],
        "first": info[b"recorded-first-entry-id"],
        "entries": r.xrange(key, "-", "+"),
        "groups": groups,
    }


def without_times(state):
    """The state less delivery and seen times (each server's own clock when it read)."""
    out = dict(state)
    out["groups"] = [(g[0], g[1], g[2], g[3], g[4], [(p[0], p[1], p[3]) for p in g[5]],
                      [(c[0], c[2], [(p[0], p[2]) for p in c[3]]) for c in g[6]])
                     for g in state["groups"]]
    return out


@case
def stream_interop(t, srv):
    """A stream DUMPed on redis-server RESTOREs here as it was, and the reverse."""
    with Server("redis") as ref:
        here, there = bclient(srv), bclient(ref)
        # redis-server checks every listpack of a payload it is given, entry by entry.
        there.config_set("sanitize-dump-payload", "yes")
        for r in (here, there):
            r.config_set("stream-node-max-entries", 37)
        fill_stream(here, "s")
        fill_stream(there, "s")
        want, mine = stream_state(there, "s"), stream_state(here, "s")
        assert want["groups"][0][4] > 0 and len(want["groups"][0][6]) == 3, want["groups"]
        assert without_times(mine) == without_times(want)
        # Times travel in the payload, so each copy equals its source exactly.
        assert here.restore("s:from-redis", 0, there.dump("s")) in OK
        assert stream_state(here, "s:from-redis") == want
        assert there.restore("s:from-target", 0, here.dump("s")) in OK
        assert stream_state(there, "s:from-target") == mine
        assert here.restore("s:copy", 0, here.dump("s")) in OK
        assert stream_state(here, "s:copy") == mine
        # Both restored copies go on working alike.
        for r, k in ((here, "s:from-redis"), (there, "s:from-target")):
            r.xack(k, "g1", "30-0")
            r.xreadgroup("g1", "dave", {k: ">"}, count=3)
            r.xadd(k, {"after": "restore"}, id="400-0")
            # From 20-0: the PEL's first ids were trimmed away, and these two are claimed.
            claimed = r.xautoclaim(k, "g1", "erin", 0, "20-0", count=2, justid=True)
            assert claimed == [b"20-2", b"21-0"], claimed
        assert without_times(stream_state(here, "s:from-redis")) == \
            without_times(stream_state(there, "s:from-target"))
        # An empty stream (all entries deleted) keeps its last id and groups.
        for r in (here, there):
            r.xadd("e", {"a": 1}, id="5-5")
            r.xgroup_create("e", "g", id="$")
            r.xdel("e", "5-5")
        assert here.restore("e:from-redis", 0, there.dump("e")) in OK
        assert there.restore("e:from-target", 0, here.dump("e")) in OK
        assert stream_state(here, "e:from-redis") == stream_state(there, "e")
        assert stream_state(there, "e:from-target") == stream_state(here, "e")
        assert without_times(stream_state(here, "e")) == without_times(stream_state(there, "e"))


def inv_map(c, *args):
    flat = c.execute_command(*args)
    return None if flat is None else dict(zip(flat[0::2], flat[1::2]))


@case
@hotkv_only("INV.* is HotKV's own type")
def inventory_between_servers(t, srv):
    """An item with live holds, settled records and MAXPEROWNER counts moves to a second
    HotKV server intact; its short hold still expires at its deadline there; redis-server
    refuses the payload as bad data."""
    r = bclient(srv)
    key = "{shoe}:stock"
    assert r.execute_command("INV.CREATE", key, 50, "MAXPEROWNER", 3, "MAXHOLD", 600000,
                             "EVENTS", "{shoe}:events", "MAXEVENTS", 100) == b"OK"
    r.execute_command("INV.RESERVE", key, "short", 2, 1500, "OWNER", "ann")
    r.execute_command("INV.RESERVE", key, "long", 1, 300000, "OWNER", "ann")
    r.execute_command("INV.RESERVE", key, "sold", 3, 300000, "OWNER", "bob")
    r.execute_command("INV.COMMIT", key, "sold")
    r.execute_command("INV.RESERVE", key, "back", 4, 300000)
    r.execute_command("INV.RELEASE", key, "back")
    holds = ("short", "long", "sold", "back")
    before = inv_map(r, "INV.GET", key)
    hold_before = {h: inv_map(r, "INV.HOLD", key, h) for h in holds}
    payload = r.dump(key)
    assert payload is not None

    other = t.server().start()
    try:
        o = bclient(other)
        assert o.restore(key, 0, payload) in OK
        assert inv_map(o, "INV.GET", key) == before
        for h in holds:
            got, want = inv_map(o, "INV.HOLD", key, h), hold_before[h]
            assert got[b"state"] == want[b"state"] and got[b"qty"] == want[b"qty"], h
            assert got[b"owner"] == want[b"owner"], h
            for f in (b"created_at", b"expires_at", b"settled_at"):
                assert got[f] == want[f], (h, f)
        # The restored limits hold: bob bought 3 of his 3, ann holds 3 of hers.
        for owner in (b"bob", b"ann"):
            try:
                o.execute_command("INV.RESERVE", key, "more", 1, 1000, "OWNER", owner)
                raise AssertionError("MAXPEROWNER not restored for %r" % owner)
            except redis.ResponseError:
                pass
        assert o.execute_command("INV.AUDIT", key) == []
        # The short hold expires on time on the restored copy, not before its deadline.
        deadline_ms = hold_before["short"][b"expires_at"]
        stop = time.monotonic() + 10
        state = None
        while time.monotonic() < stop:
            state = inv_map(o, "INV.HOLD", key, "short")[b"state"]
            if state == b"expired":
                break
            assert time.time() * 1000 < deadline_ms + 50, "the hold outlived its deadline"
            time.sleep(0.05)
        assert state == b"expired"
        assert time.time() * 1000 >= deadline_ms
        after = inv_map(o, "INV.GET", key)
        assert after[b"available"] == before[b"available"] + 2, after
        assert after[b"held"] == before[b"held"] - 2, after
        assert o.execute_command("INV.AUDIT", key) == []
    finally:
        other.stop()

    with Server("redis") as ref:
        with ref.raw() as c:
            assert c.call("RESTORE", key, 0, payload) == RespError("ERR Bad data format")
            assert c.call("EXISTS", key) == 0


@case
def ttl_replace_and_busykey(t, srv):
    """TTL relative and ABSTTL, REPLACE, BUSYKEY, an expired TTL, the restore event, WATCH."""
    r = bclient(srv)
    r.set("foo", "bar")
    p = r.dump("foo")
    assert r.restore("foo2", 5000, p) in OK
    assert 3000 <= r.pttl("foo2") <= 5000
    assert r.restore("foo3", 2569591501, p) in OK
    assert 2569591501 - 3000 <= r.pttl("foo3") <= 2569591501
    at = int(time.time() * 1000) + 3000
    assert r.restore("foo4", at, p, absttl=True) in OK
    assert 2000 <= r.pttl("foo4") <= 3100
    try:
        r.restore("foo", 0, p)
        raise AssertionError("RESTORE over an existing key succeeded")
    except redis.ResponseError as e:
        assert str(e) == "BUSYKEY Target key name already exists."
    r.set("foo", "other")
    r.expire("foo", 100)
    assert r.restore("foo", 0, p, replace=True) in OK
    assert r.get("foo") == b"bar" and r.ttl("foo") == -1
    # An absolute TTL in the past: the replaced key is deleted, nothing created.
    assert r.restore("foo", 1000, p, replace=True, absttl=True) in OK
    assert r.exists("foo") == 0
    assert r.restore("fresh", 1000, p, absttl=True) in OK
    assert r.exists("fresh") == 0
    # IDLETIME and FREQ are accepted (one of them).
    assert r.execute_command("RESTORE", "idle", 0, p, "IDLETIME", 1000) == b"OK"
    assert r.execute_command("RESTORE", "freq", 0, p, "FREQ", 100) == b"OK"

    r.config_set("notify-keyspace-events", "KEA")
    ps = r.pubsub()
    ps.psubscribe("__keyevent@0__:restore")
    deadline = time.monotonic() + 5
    while ps.get_message(timeout=0.2) is None and time.monotonic() < deadline:
        pass
    r.restore("evt", 0, p)
    msg = None
    while msg is None and time.monotonic() < deadline:
        m = ps.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            msg = m
    assert msg["data"] == b"evt"
    ps.close()
    r.config_set("notify-keyspace-events", "")

    pipe = r.pipeline(transaction=True)
    pipe.watch("watched")
    r.restore("watched", 0, p)
    pipe.multi()
    pipe.get("watched")
    try:
        pipe.execute()
        raise AssertionError("EXEC ran although a watched key was restored")
    except redis.WatchError:
        pass


@case
def keys_on_every_shard(t, srv):
    """RESTORE and DUMP of keys spread over every shard, from one connection."""
    r = bclient(srv)
    keys = spread_keys("dumped:", 8)
    for i, k in enumerate(keys):
        r.rpush("src", i)
        r.restore(k, 0, r.dump("src"), replace=True)
    for i, k in enumerate(keys):
        assert r.lrange(k, 0, -1) == [str(j).encode() for j in range(i + 1)]


@case
def kill9_keeps_restored(t, srv):
    """appendfsync always, kill -9: restored values (a stream with its groups, an inventory
    item) and their TTLs come back."""
    d = tempfile.mkdtemp(prefix="hotkv-dump-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            r = bclient(s)
            keys = fill(r, "p:")
            payloads = {k: r.dump(k) for k in keys}
            for k in keys:
                r.restore(k + ":r", 100000, payloads[k])
            before = {k: contents(r, k + ":r") for k in keys}
            fill_stream(r, "p:stream")
            r.restore("p:stream:r", 100000, r.dump("p:stream"))
            stream_before = stream_state(r, "p:stream:r")
            if t.is_hotkv:
                r.execute_command("INV.CREATE", "p:inv", 10, "MAXPEROWNER", 4)
                r.execute_command("INV.RESERVE", "p:inv", "h1", 3, 300000, "OWNER", "ann")
                r.execute_command("INV.RESERVE", "p:inv", "h2", 2, 300000, "OWNER", "bob")
                r.execute_command("INV.COMMIT", "p:inv", "h2")
                r.restore("p:inv:r", 0, r.dump("p:inv"))
                inv_before = (inv_map(r, "INV.GET", "p:inv:r"),
                              inv_map(r, "INV.HOLD", "p:inv:r", "h1"))
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            r = bclient(s2)
            for k in keys:
                assert contents(r, k + ":r") == before[k], k
                assert 0 < r.pttl(k + ":r") <= 100000, k
            assert stream_state(r, "p:stream:r") == stream_before
            assert 0 < r.pttl("p:stream:r") <= 100000
            if t.is_hotkv:
                inv_after = (inv_map(r, "INV.GET", "p:inv:r"),
                             inv_map(r, "INV.HOLD", "p:inv:r", "h1"))
                assert inv_after[0] == inv_before[0], inv_after
                for f in (b"state", b"qty", b"owner", b"created_at", b"expires_at"):
                    assert inv_after[1][f] == inv_before[1][f], f
                assert r.execute_command("INV.AUDIT", "p:inv:r") == []
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def errors(t, srv):
    """Redis's errors for bad payloads and options."""
    with srv.raw() as c:
        c.call("SET", "foo", "bar")
        good = c.call("DUMP", "foo")
        good = good if isinstance(good, bytes) else good.encode("latin-1")
        assert c.call("RESTORE", "foo", 0, "...") == \
            RespError("BUSYKEY Target key name already exists.")
        assert c.call("RESTORE", "k", 0, "...") == \
            RespError("ERR DUMP payload version or checksum are wrong")
        bad = bytearray(good)
        bad[1] ^= 0x01
        assert c.call("RESTORE", "k", 0, bytes(bad)) == \
            RespError("ERR DUMP payload version or checksum are wrong")
        assert c.call("RESTORE", "k", 0, "...", "invalid-option") == RespError("ERR syntax error")
        assert c.call("RESTORE", "k", -1, good) == RespError("ERR Invalid TTL value, must be >= 0")
        assert c.call("RESTORE", "k", "x", good) == \
            RespError("ERR value is not an integer or out of range")
        assert c.call("RESTORE", "k", 0, good, "IDLETIME", -1) == \
            RespError("ERR Invalid IDLETIME value, must be >= 0")
        assert c.call("RESTORE", "k", 0, good, "FREQ", 256) == \
            RespError("ERR Invalid FREQ value, must be >= 0 and <= 255")
        assert c.call("RESTORE", "k", 0, good, "FREQ", 1, "IDLETIME", 1) == \
            RespError("ERR syntax error")
        assert c.call("RESTORE", "k", 0) == \
            RespError("ERR wrong number of arguments for 'restore' command")
        assert c.call("EXISTS", "k") == 0
        assert c.call("PING") == "PONG"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
