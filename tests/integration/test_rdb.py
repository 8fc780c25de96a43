#!/usr/bin/python3
"""RDB files end to end, between HotKV and a real redis-server 7.0.

- HotKV -> redis-server: HotKV is filled with strings, integers, hashes, lists, sets and sorted
  sets in their small and large encodings, streams with consumer groups (pending entries,
  consumers), keys with TTLs in databases 0 and 3 and a function library; SAVE writes
  dir/dbfilename, redis-check-rdb calls the file OK, and a redis-server started on it holds
  every key with the same type, value and TTL (within a margin).
- redis-server -> HotKV: redis-server SAVEs the same kind of data set and HotKV, started with
  appendonly no on the same dir/dbfilename, loads it with equal content.
- SHUTDOWN SAVE writes the file before the server exits, SHUTDOWN NOSAVE does not.
- BGSAVE: a forked child writes the file while the server keeps answering; INFO persistence's
  rdb_* fields and LASTSAVE follow, and a restart loads what was saved (HotKV's own inventory
  items included).

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_rdb.py --server build/hotkv --threads 4
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Server, case, encode_command, hotkv_only, run_cases  # noqa: E402

DBS = (0, 3)
TTL_MARGIN_MS = 20000  # restarts and saves in between; deadlines are absolute in the file
LIBRARY = "#!lua name=rdblib\nredis.register_function('rdbf', function() return 'rdb' end)"


def fill(srv):
    """One key per type and encoding in database 0, a few with TTLs in databases 0 and 3."""
    r = srv.client()
    r.set("str", "hello world")
    r.set("int", 12345)
    r.set("negint", -7)
    r.set("big", "x" * 20000)
    r.rpush("list", "a", 1, -200, 70000, 2 ** 40, "z" * 100)
    r.rpush("biglist", *["item%d" % i for i in range(3000)])
    r.sadd("intset", 1, 2, -3, 2 ** 40)
    r.sadd("set", "a", "b", 3)
    r.sadd("bigset", *["m%d" % i for i in range(1000)])
    r.hset("hash", mapping={"a": 1, "b": "hello", "n": -7})
    r.hset("bighash", mapping={"f%d" % i: "v" * (i % 90) for i in range(300)})
    r.zadd("zset", {"a": 1.5, "b": -2, "c": 3e100, "inf": float("inf")})
    r.zadd("bigzset", {"m%d" % i: i / 7 for i in range(500)})
    for i in range(250):
        r.xadd("stream", {"f": i, "g": "v%d" % i}, id="%d-%d" % (1000 + i // 3, i % 3))
    r.xdel("stream", "1001-1")
    r.xgroup_create("stream", "grp", id="0")
    r.xgroup_create("stream", "other", id="$")
    r.xreadgroup("grp", "alice", {"stream": ">"}, count=5)
    r.xreadgroup("grp", "bob", {"stream": ">"}, count=3)
    r.xack("stream", "grp", "1000-0")
    r.set("ttl:str", "v", px=3600 * 1000)
    r.hset("ttl:hash", "f", "v")
    r.pexpireat("ttl:hash", int(time.time() * 1000) + 7200 * 1000)
    r3 = srv.client(db=3)
    r3.set("db3:str", "three", ex=5000)
    r3.rpush("db3:list", "x", "y")
    r3.zadd("db3:zset", {"p": 1})
    r.function_load(LIBRARY)


def stream_view(r, key):
    info = r.xinfo_stream(key)
    groups = []
    for g in sorted(r.xinfo_groups(key), key=lambda g: g["name"]):
        pending = r.xpending_range(key, g["name"], "-", "+", 1000)
        consumers = sorted((c["name"], c["pending"])
                           for c in r.xinfo_consumers(key, g["name"]))
        groups.append((g["name"], g["last-delivered-id"], g.get("entries-read"),
                       g.get("lag"), g["pending"],
                       [(p["message_id"], p["consumer"], p["times_delivered"])
                        for p in pending], consumers))
    head = {k: info.get(k) for k in ("length", "last-generated-id", "max-deleted-entry-id",
                                     "entries-added", "recorded-first-entry-id")}
    return (head, r.xrange(key), groups)


def value_of(r, key, kind):
    if kind == "string":
        return r.get(key)
    if kind == "list":
        return r.lrange(key, 0, -1)
    if kind == "set":
        return sorted(r.smembers(key))
    if kind == "hash":
        return sorted(r.hgetall(key).items())
    if kind == "zset":
        return r.zrange(key, 0, -1, withscores=True)
    if kind == "stream":
        return stream_view(r, key)
    if kind == "inventory":  # HotKV's stock items
        return r.execute_command("INV.GET", key)
    raise AssertionError("unexpected type %s of %s" % (kind, key))


def snapshot(srv):
    """{(db, key): (type, value, pttl)} for every key of DBS, and the function libraries."""
    out = {}
    for db in DBS:
        r = srv.client(db=db)
        keys = r.keys("*")
        assert len(keys) < 10000
        for key in keys:
            kind = r.type(key)
            out[(db, key)] = (kind, value_of(r, key, kind), r.pttl(key))
    libs = sorted(dict(zip(lib[::2], lib[1::2]))["library_name"]
                  for lib in srv.client().function_list())
    return out, libs


def assert_same(want, got):
    want_keys, want_libs = want
    got_keys, got_libs = got
    assert sorted(want_keys) == sorted(got_keys), \
        "keys differ: only first %s, only second %s" % (
            sorted(set(want_keys) - set(got_keys)), sorted(set(got_keys) - set(want_keys)))
    for k, (kind, value, pttl) in want_keys.items():
        gkind, gvalue, gpttl = got_keys[k]
        assert kind == gkind, "%s: type %s vs %s" % (k, kind, gkind)
        assert value == gvalue, "%s: value differs:\n%r\n%r" % (k, value, gvalue)
        if pttl < 0:
            assert gpttl == pttl, "%s: pttl %s vs %s" % (k, pttl, gpttl)
        else:
            assert gpttl > 0 and abs(gpttl - pttl) < TTL_MARGIN_MS, \
                "%s: pttl %s vs %s" % (k, pttl, gpttl)
    assert want_libs == got_libs, "libraries %s vs %s" % (want_libs, got_libs)


def check_rdb(path):
    p = subprocess.run(["redis-check-rdb", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    text = p.stdout.decode(errors="replace")
    assert p.returncode == 0 and "RDB looks OK" in text, "redis-check-rdb:\n" + text


def file_config(d, name):
    return {"dir": d, "dbfilename": name}


def redis_on(d, name):
    return Server("redis", config=file_config(d, name))


@case
def hotkv_save_loads_in_redis_server(t, _srv):
    """SAVE writes an RDB file redis-check-rdb calls OK and redis-server loads key for key."""
    d = tempfile.mkdtemp(prefix="hotkv-rdb-")
    try:
        with t.server(config=file_config(d, "out.rdb")) as s:
            fill(s)
            want = snapshot(s)
            c = s.client()
            assert c.save() is True
            info = c.info("persistence")
            assert info["rdb_changes_since_last_save"] == 0
            assert info["rdb_last_bgsave_status"] == "ok"
            assert os.path.exists(os.path.join(d, "out.rdb"))
            assert not [f for f in os.listdir(d) if f.startswith("temp-")]
        check_rdb(os.path.join(d, "out.rdb"))
        with redis_on(d, "out.rdb") as ref:
            assert_same(want, snapshot(ref))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def redis_server_save_loads_in_hotkv(t, _srv):
    """A dump.rdb redis-server SAVEd is loaded at start-up (appendonly no), content equal."""
    d = tempfile.mkdtemp(prefix="hotkv-rdb-")
    try:
        with redis_on(d, "dump.rdb") as ref:
            fill(ref)
            want = snapshot(ref)
            assert ref.client().save() is True
        with t.server(config=file_config(d, "dump.rdb")) as s:
            assert_same(want, snapshot(s))
            info = s.client().info("persistence")
            assert info["loading"] == 0
            assert info["rdb_changes_since_last_save"] == 0
            if t.is_hotkv:
                assert info["rdb_last_load_keys_loaded"] == len(want[0])
            assert s.client().fcall("rdbf", 0) == "rdb"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def bgsave_writes_in_the_background_and_reloads(t, _srv):
    """BGSAVE: the child's file holds the data set of its instant; INFO and LASTSAVE follow;
    a restart loads it."""
    d = tempfile.mkdtemp(prefix="hotkv-rdb-")
    try:
        with t.server(config=file_config(d, "bg.rdb")) as s:
            fill(s)
            c = s.client()
            if t.is_hotkv:
                c.execute_command("INV.CREATE", "inv:item", 10)
                c.execute_command("INV.RESERVE", "inv:item", "hold1", 2, 60000, "OWNER", "buyer")
            before = c.info("persistence")
            assert before["rdb_bgsave_in_progress"] == 0
            assert c.bgsave() is True
            deadline = time.monotonic() + 30
            for _ in range(3000):
                info = c.info("persistence")
                if info["rdb_bgsave_in_progress"] == 0 and \
                        info["rdb_changes_since_last_save"] == 0:
                    break
                assert time.monotonic() < deadline, "BGSAVE still running"
                time.sleep(0.02)
            info = c.info("persistence")
            assert info["rdb_last_bgsave_status"] == "ok"
            assert info["rdb_changes_since_last_save"] == 0
            assert c.lastsave().timestamp() >= before["rdb_last_save_time"]
            if "rdb_saves" in before:
                assert info["rdb_saves"] == before["rdb_saves"] + 1
            c.set("after", "not in the file")
            assert c.info("persistence")["rdb_changes_since_last_save"] == 1
            want = snapshot(s)
            del want[0][(0, "after")]
        if not t.is_hotkv:  # redis-check-rdb refuses HotKV's inventory type
            check_rdb(os.path.join(d, "bg.rdb"))
        with t.server(config=file_config(d, "bg.rdb")) as s2:
            assert_same(want, snapshot(s2))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
def shutdown_save_writes_the_file(t, _srv):
    """SHUTDOWN SAVE writes the file before exiting (SHUTDOWN NOSAVE does not); a restart
    loads it."""
    d = tempfile.mkdtemp(prefix="hotkv-rdb-")
    try:
        path = os.path.join(d, "down.rdb")
        s = t.server(config=file_config(d, "down.rdb")).start()
        try:
            s.client().set("k", "v")
            with s.raw() as c:
                c.send(encode_command("SHUTDOWN", "NOSAVE"))
                c.wait_closed()
            assert s.wait(timeout=10) == 0
            assert not os.path.exists(path)
        finally:
            s.cleanup()
        s = t.server(config=file_config(d, "down.rdb")).start()
        try:
            s.client().set("k", "saved")
            s.client(db=3).set("k3", "three")
            with s.raw() as c:
                c.send(encode_command("SHUTDOWN", "SAVE"))
                c.wait_closed()
            assert s.wait(timeout=10) == 0
            assert os.path.exists(path)
        finally:
            s.cleanup()
        if not t.is_hotkv:
            check_rdb(path)
        with t.server(config=file_config(d, "down.rdb")) as s:
            assert s.client().get("k") == "saved"
            assert s.client(db=3).get("k3") == "three"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@case
@hotkv_only("the file's errors are HotKV's log lines")
def corrupt_file_refuses_to_start(t, _srv):
    """A dump whose checksum is wrong stops start-up with a message, loading nothing."""
    d = tempfile.mkdtemp(prefix="hotkv-rdb-")
    try:
        with redis_on(d, "dump.rdb") as ref:
            ref.client().set("k", "v" * 100)
            assert ref.client().save() is True
        path = os.path.join(d, "dump.rdb")
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[len(data) // 2] ^= 0x01
            f.seek(0)
            f.write(data)
        s = t.server(config=file_config(d, "dump.rdb"), expect_exit=None)
        try:
            s.start()
            raise AssertionError("started on a corrupt file")
        except AssertionError as e:
            assert "checksum" in str(e).lower(), str(e)
        finally:
            s.cleanup()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
