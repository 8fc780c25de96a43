#!/usr/bin/python3
"""Lua scripts end to end: the flash-sale script designs backends run on Redis, rebuilt here,
under 2,000 concurrent connections, with the same replies as redis-server.

- check-and-decrement with a hold key (EVALSHA on one hot key): exactly the stock is sold,
  a second attempt with the same hold is refused, sold-out answers are the script's;
- per-warehouse hash counters with an expiry sorted set and sweepers whose claims are SET NX:
  every expired reservation is released exactly once and the counters come back whole;
- reserve/release with a buyers set: one unit per buyer, and a release never returns stock
  twice even when two connections release for the same buyer at once;
- python3-redis Script objects (EVALSHA, then EVAL after SCRIPT FLUSH), error texts, RESP3,
  large and nested replies, a long script answered -BUSY and stopped by SCRIPT KILL.

Keys of one script share a {hash tag}, so at --threads 4 each script runs on one shard.
Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_scripts.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (ConnectionClosed, DataDir, RawClient, RespError, Swarm, case, encode_command,  # noqa: E402
                    expect_error, raise_nofile, run_cases)

CONNECTIONS = 2000

CHECK_AND_DECREMENT = """
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil or stock <= 0 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end
redis.call('DECR', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[1])
return stock - 1
"""

WAREHOUSE_RESERVE = """
local available = tonumber(redis.call('HGET', KEYS[1], 'available') or '0')
local qty = tonumber(ARGV[1])
if available < qty then return {err = 'INSUFFICIENT only ' .. available .. ' left'} end
redis.call('HINCRBY', KEYS[1], 'available', -qty)
redis.call('HINCRBY', KEYS[1], 'reserved', qty)
redis.call('HSET', KEYS[2], 'qty', qty, 'status', 'held')
local now = redis.call('TIME')
local due_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], due_ms, ARGV[3])
return available - qty
"""

WAREHOUSE_RELEASE = """
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then return 0 end
local qty = tonumber(redis.call('HGET', KEYS[2], 'qty') or '0')
redis.call('HINCRBY', KEYS[1], 'available', qty)
redis.call('HINCRBY', KEYS[1], 'reserved', -qty)
redis.call('DEL', KEYS[2])
return qty
"""

BUYER_RESERVE = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return -2 end
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
if stock <= 0 then return -1 end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return stock - 1
"""

BUYER_RELEASE = """
if redis.call('SREM', KEYS[2], ARGV[1]) == 1 then
  return redis.call('INCR', KEYS[1])
end
return -1
"""


def load(c, body):
    sha = c.call("SCRIPT", "LOAD", body)
    assert isinstance(sha, str) and len(sha) == 40, sha
    return sha


def evalsha(sha, keys, args):
    return encode_command("EVALSHA", sha, len(keys), *keys, *args)


@case
def check_and_decrement_sells_exactly_the_stock(t, srv):
    """2,000 connections EVALSHA the check-and-decrement on one hot key holding 500."""
    raise_nofile(CONNECTIONS + 256)
    with srv.raw() as c:
        c.call("SET", "{sku}:stock", "500")
        sha = load(c, CHECK_AND_DECREMENT)
    with Swarm(srv.port, CONNECTIONS, deadline_s=120) as swarm:
        out = swarm.round(lambda i: evalsha(sha, ["{sku}:stock", "{sku}:hold:%d" % i],
                                            ["600", "customer:%d" % i]), 1)
        replies = {i: r[0] for i, r in out.items()}
        winners = sorted(v for v in replies.values() if v >= 0)
        assert winners == list(range(500)), "winners saw %d distinct stock levels" % len(winners)
        assert sum(1 for v in replies.values() if v == -1) == CONNECTIONS - 500
        # The winners try again with the same hold: refused, nothing taken.
        again = swarm.round(lambda i: evalsha(sha, ["{sku}:stock", "{sku}:hold:%d" % i],
                                              ["600", "customer:%d" % i]), 1,
                            only=[i for i, v in replies.items() if v >= 0][:100])
        assert all(r == [-1] for r in again.values()), "sold out is checked first"
    with srv.raw() as c:
        assert c.call("GET", "{sku}:stock") == "0"
        holds = [k for k in c.call("KEYS", "{sku}:hold:*")]
        assert len(holds) == 500
        assert 595 <= c.call("TTL", holds[0]) <= 600
        c.call("SET", "{sku}:stock", "5")
        assert c.call("EVALSHA", sha, 2, "{sku}:stock", holds[0], "600", "x") == -2


@case
def warehouse_counters_sweeper_releases_each_expired_hold_once(t, srv):
    """Hash counters + expiry zset; 4 sweepers claim with SET NX; every hold released once."""
    inv, zset = "{wh1}:inv:sku-9", "{wh1}:reservation_expiry"
    with srv.raw() as c:
        c.call("HSET", inv, "available", "300", "reserved", "0")
        reserve = load(c, WAREHOUSE_RESERVE)
        release = load(c, WAREHOUSE_RELEASE)
    with Swarm(srv.port, CONNECTIONS, deadline_s=120) as swarm:
        out = swarm.round(lambda i: evalsha(reserve, [inv, "{wh1}:hold:%d" % i, zset],
                                            ["1", "300", "r%d" % i]), 1)
    ok = sorted(r[0] for r in out.values() if isinstance(r[0], int))
    refused = [r[0] for r in out.values() if isinstance(r[0], RespError)]
    assert ok == list(range(300)), "%d reservations for 300 units" % len(ok)
    assert len(refused) == CONNECTIONS - 300
    assert str(refused[0]) == "INSUFFICIENT only 0 left", refused[0]
    with srv.raw() as c:
        assert c.call("HMGET", inv, "available", "reserved") == ["0", "300"]
        assert c.call("ZCARD", zset) == 300
    time.sleep(0.35)  # every reservation is now due

    released, claimed, errors = [], [], []
    lock = threading.Lock()

    def sweeper(n):
        try:
            with RawClient(srv.port) as c:
                deadline = time.monotonic() + 30
                for _ in range(1000):
                    if time.monotonic() > deadline:
                        errors.append("sweeper %d ran out of time" % n)
                        return
                    now_ms = int(time.time() * 1000)
                    due = c.call("ZRANGEBYSCORE", zset, "-inf", now_ms, "LIMIT", 0, 25)
                    if not due:
                        return
                    for rid in due:
                        if c.call("SET", "{wh1}:claim:" + rid, n, "NX", "EX", 60) != "OK":
                            continue  # another sweeper has it
                        with lock:
                            claimed.append(rid)
                        qty = c.call("EVALSHA", release, 3, inv, "{wh1}:hold:" + rid[1:], zset, rid)
                        with lock:
                            released.append(qty)
        except Exception as e:  # reported below
            errors.append("sweeper %d: %r" % (n, e))

    threads = [threading.Thread(target=sweeper, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not errors, errors[:3]
    assert len(claimed) == len(set(claimed)) == 300, "claims: %d" % len(claimed)
    assert released == [1] * 300, "each hold releases its one unit once"
    with srv.raw() as c:
        assert c.call("HMGET", inv, "available", "reserved") == ["300", "0"]
        assert c.call("ZCARD", zset) == 0
        assert c.call("KEYS", "{wh1}:hold:*") == []


@case
def buyers_set_release_never_returns_stock_twice(t, srv):
    """One unit per buyer; two connections per buyer release at once: stock comes back once."""
    with srv.raw() as c:
        c.call("SET", "{drop}:stock", "200")
        reserve = load(c, BUYER_RESERVE)
        release = load(c, BUYER_RELEASE)
    keys = ["{drop}:stock", "{drop}:buyers"]
    with Swarm(srv.port, CONNECTIONS, deadline_s=120) as swarm:
        # Connections i and i+1000 are the same buyer.
        out = swarm.round(lambda i: evalsha(reserve, keys, ["user:%d" % (i % 1000)]), 1)
        got = {i: r[0] for i, r in out.items()}
        winners = [i for i, v in got.items() if v >= 0]
        assert sorted(got[i] for i in winners) == list(range(200))
        assert len({i % 1000 for i in winners}) == 200, "a buyer got two units"
        assert all(v in (-1, -2) for v in got.values() if v < 0)
        out = swarm.round(lambda i: evalsha(release, keys, ["user:%d" % (i % 1000)]), 1)
        returned = sorted(r[0] for r in out.values() if r[0] >= 0)
        assert returned == list(range(1, 201)), "stock returned %d times" % len(returned)
    with srv.raw() as c:
        assert c.call("GET", "{drop}:stock") == "200"
        assert c.call("SCARD", "{drop}:buyers") == 0


@case
def redis_py_script_objects_fall_back_to_eval(t, srv):
    """register_script: EVALSHA, and after SCRIPT FLUSH the NOSCRIPT answer makes it EVAL."""
    c = srv.client()
    c.set("{s}:stock", 3)
    script = c.register_script(CHECK_AND_DECREMENT)
    assert script(keys=["{s}:stock", "{s}:h1"], args=[600, "a"]) == 2
    c.script_flush()
    assert c.script_exists(script.sha) == [False]
    assert script(keys=["{s}:stock", "{s}:h2"], args=[600, "b"]) == 1
    assert c.script_exists(script.sha) == [True]
    c.close()


@case
def replies_and_errors_match_redis(t, srv):
    """Conversions, error texts, pcall, nested and large replies, RESP3 types."""
    with srv.raw() as c:
        c.call("SET", "s", "text")
        body = "return redis.call('INCR', KEYS[1])"
        sha = c.call("SCRIPT", "LOAD", body)
        expect_error(c.call("EVAL", body, 1, "s"),
                     "ERR value is not an integer or out of range script: %s, on @user_script:1." % sha)
        expect_error(c.call("EVAL", "return redis.pcall('INCR', KEYS[1])", 1, "s"),
                     "ERR value is not an integer or out of range")
        assert c.call("EVAL", "return {1, 2, 3.7, 'x', nil, 5}", 0) == [1, 2, 3, "x"]
        assert c.call("EVAL", "return {1, {2, {3, {'four'}}}}", 0) == [1, [2, [3, ["four"]]]]
        big = c.call("EVAL", "local t = {} for i = 1, 10000 do t[i] = i end return t", 0)
        assert big == list(range(1, 10001))
        assert c.call("EVAL", "return redis.status_reply('FINE')", 0) == "FINE"
        expect_error(c.call("EVAL", "return redis.error_reply('MY error')", 0), "MY error")
        expect_error(c.call("EVALSHA", "0" * 40, 0), "NOSCRIPT No matching script. Please use EVAL.")
        expect_error(c.call("EVAL", "return 1", -1), "ERR Number of keys can't be negative")
        expect_error(c.call("EVAL_RO", "return redis.call('SET', KEYS[1], 'x')", 1, "k"),
                     "ERR Write commands are not allowed from read-only scripts. script: %s, "
                     "on @user_script:1." % c.call("SCRIPT", "LOAD",
                                                   "return redis.call('SET', KEYS[1], 'x')"))
        assert c.call("EVAL", "return cjson.decode(ARGV[1]).sku", 0, '{"sku": "sneaker-x"}') == \
            "sneaker-x"
        assert c.call("EVAL", "return redis.call('TIME')[1] + 0 > 1600000000", 0) == 1
        c.call("HELLO", "3")
        assert c.call("EVAL", "return {map={a=1}}", 0) == {"a": 1}
        assert c.call("EVAL", "return {double=1.5}", 0) == 1.5
        assert c.call("EVAL", "return true", 0) == 1
        assert c.call("EVAL", "return false", 0) is None
        assert c.call("EVAL", "redis.setresp(3); return true", 0) is True


SALE_LIBRARY = """#!lua name=sale
redis.register_function('reserve', function(keys, args)
  local left = tonumber(redis.call('GET', keys[1]) or '0')
  if left <= 0 then return -1 end
  return redis.call('DECR', keys[1])
end)
redis.register_function{function_name = 'stock', callback = function(keys)
  return tonumber(redis.call('GET', keys[1]) or '0') end, flags = {'no-writes'}}
"""


@case
def functions_load_call_and_survive_a_restart(t, srv):
    """FUNCTION LOAD / FCALL / FCALL_RO / LIST / DELETE through redis-py; the library is
    still there after a restart with appendonly."""
    c = srv.client()
    assert c.function_load(SALE_LIBRARY) == "sale"
    c.set("{f}:stock", 2)
    assert c.fcall("reserve", 1, "{f}:stock") == 1
    assert c.fcall_ro("stock", 1, "{f}:stock") == 1
    with srv.raw() as r:
        expect_error(r.call("FCALL_RO", "reserve", 1, "{f}:stock"),
                     "ERR Can not execute a script with write flag using *_ro command.")
        expect_error(r.call("FCALL", "nosuch", 0), "ERR Function not found")
        expect_error(r.call("FUNCTION", "LOAD", SALE_LIBRARY), "ERR Library 'sale' already exists")
    listed = c.function_list()
    lib = dict(zip(listed[0][0::2], listed[0][1::2]))  # RESP2: a flat array per library
    assert lib["library_name"] == "sale" and len(lib["functions"]) == 2, listed
    assert c.function_delete("sale") in ("OK", True)
    c.close()
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        try:
            s.client().function_load(SALE_LIBRARY)
        finally:
            s.stop()
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            c2 = s2.client()
            c2.set("{f}:stock", 5)
            assert c2.fcall("reserve", 1, "{f}:stock") == 4, "library lost in the restart"
        finally:
            s2.stop()


@case
def scripts_reading_time_and_random_replay_identically(t, srv):
    """A script that writes TIME and math.random values: after kill -9 and a restart the
    values are exactly those acknowledged (the log holds effects, not the script)."""
    body = ("local t = redis.call('TIME') "
            "local v = t[1] .. '.' .. t[2] .. ':' .. math.random(1, 1000000000) "
            "redis.call('SET', KEYS[1], v) redis.call('HSET', KEYS[2], 'at', v) return v")
    with DataDir() as d:
        s = t.server(extra_args=d.args("always"), expect_exit=None).start()
        with s.raw() as c:
            written = [c.call("EVAL", body, 2, "{r}:k%d" % i, "{r}:h%d" % i) for i in range(20)]
        s.send_signal(signal.SIGKILL)
        s.wait(timeout=10)
        s.cleanup()
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            with s2.raw() as c:
                for i, v in enumerate(written):
                    assert c.call("GET", "{r}:k%d" % i) == v, "script replayed, not its effects"
                    assert c.call("HGET", "{r}:h%d" % i, "at") == v
        finally:
            s2.stop()


def first_busy_connection(port, conns, timeout_s=10):
    """Among `conns`, the first that answers -BUSY to PING (those on a thread busy with the
    script cannot answer until it ends)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for c in conns:
            c.sock.settimeout(0.5)
            try:
                r = c.call("PING")
            except (socket.timeout, TimeoutError, OSError):
                continue
            if isinstance(r, RespError) and str(r).startswith("BUSY"):
                return c
        time.sleep(0.05)
    return None


@case
def long_script_gets_busy_and_script_kill(t, srv):
    """A script past busy-reply-threshold: new clients get -BUSY; SCRIPT KILL stops it (also
    with one thread, where the script's thread is the one that accepts)."""
    with srv.raw() as admin:
        assert admin.call("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    result = {}

    def runner():
        with RawClient(srv.port, timeout=60) as c:
            result["reply"] = c.call("EVAL", "local i = 0 while true do i = i + 1 end", 0)

    th = threading.Thread(target=runner)
    th.start()
    others = []
    try:
        time.sleep(0.3)
        # Connections made now land on an idle thread or on the busy-script responder; one
        # placed on the script's own thread cannot answer, so try a few.
        others = [RawClient(srv.port) for _ in range(6)]
        killer = first_busy_connection(srv.port, others)
        assert killer is not None, "no connection was answered BUSY"
        killer.sock.settimeout(10)
        assert killer.call("SCRIPT", "KILL") == "OK"
        th.join(timeout=20)
        assert not th.is_alive(), "the script did not stop"
        assert str(result["reply"]).startswith("ERR Script killed by user with SCRIPT KILL"), result
        deadline = time.monotonic() + 5
        while True:  # the responder's connections close once the script is over
            try:
                with RawClient(srv.port, timeout=2) as c:
                    expect_error(c.call("SCRIPT", "KILL"), "NOTBUSY No scripts in execution right now.")
                    assert c.call("PING") == "PONG"
                break
            except (ConnectionClosed, OSError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        for c in others:
            c.close()
        with RawClient(srv.port) as admin:
            admin.call("CONFIG", "SET", "busy-reply-threshold", "5000")


if __name__ == "__main__":
    raise_nofile(CONNECTIONS + 512)
    run_cases(__doc__.splitlines()[0])
