#!/usr/bin/python3
"""Per-key access clocks end to end, first proven on redis-server 7.0 and then held against hotkv.

- OBJECT IDLETIME counts real seconds since the last access; GET and TOUCH reset it, while TTL,
  TYPE, EXISTS and OBJECT itself do not; RENAME and COPY access their source.
- RESTORE ... IDLETIME sets it; FREQ is ignored unless an LFU policy is selected.
- Under maxmemory-policy allkeys-lfu: a new key's OBJECT FREQ is 5, accesses raise it, RESTORE
  ... FREQ sets it, and OBJECT IDLETIME answers Redis's error; back under an LRU policy
  OBJECT FREQ answers Redis's error.
- Keys on every shard.

Each case sleeps a bounded couple of seconds; no loop runs unbounded.

Run: /usr/bin/python3 test_access_clock.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import case, run_cases, spread_keys  # noqa: E402

IDLE_ERROR = ("An LFU maxmemory policy is selected, idle time not tracked. Please note that "
              "when switching between policies at runtime LRU and LFU data will take some time "
              "to adjust.")
FREQ_ERROR = ("An LFU maxmemory policy is not selected, access frequency not tracked. Please "
              "note that when switching between policies at runtime LRU and LFU data will take "
              "some time to adjust.")


def error_text(fn):
    try:
        fn()
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("expected an error reply")


def assert_just_accessed(r, key):
    """OBJECT IDLETIME of a key accessed a moment ago: 0, or 1 when a second turned in between
    (the clock counts whole unix seconds, as Redis's LRU clock does)."""
    idle = r.object("idletime", key)
    assert idle in (0, 1), (key, idle)


def policy(r):
    """CONFIG GET maxmemory-policy as text (redis-py decodes CONFIG GET either way)."""
    (value,) = r.config_get("maxmemory-policy").values()
    return value.decode() if isinstance(value, bytes) else value


@case
def idletime_grows_and_resets(t, srv):
    """IDLETIME grows while idle, GET/TOUCH reset it, TTL/TYPE/EXISTS/OBJECT leave it."""
    r = srv.client()
    keys = spread_keys("idle:", 4)
    for k in keys:
        r.set(k, "v")
    r.lpush(keys[0] + ":list", "a")
    time.sleep(2.2)
    for k in keys:
        assert r.object("idletime", k) >= 2, k
        r.ttl(k)
        r.type(k)
        r.exists(k)
        r.object("encoding", k)
        assert r.object("idletime", k) >= 2, k
    assert r.object("idletime", keys[0] + ":list") >= 2
    r.get(keys[0])
    r.touch(keys[1])
    r.append(keys[2], "w")  # a write is an access too
    r.lrange(keys[0] + ":list", 0, -1)
    assert_just_accessed(r, keys[0])
    assert_just_accessed(r, keys[1])
    assert_just_accessed(r, keys[2])
    assert_just_accessed(r, keys[0] + ":list")
    assert r.object("idletime", keys[3]) >= 2
    assert r.object("idletime", "idle:missing") is None


@case
def rename_and_copy_are_accesses(t, srv):
    """RENAME and COPY access their source; a copy starts idle 0; other keys keep theirs."""
    r = srv.client()
    r.set("{c}a", "value")
    r.set("{c}other", "value")
    time.sleep(2.2)
    r.rename("{c}a", "{c}b")
    assert_just_accessed(r, "{c}b")
    r.copy("{c}b", "{c}copy")
    assert_just_accessed(r, "{c}copy")
    assert r.object("idletime", "{c}other") >= 2


@case
def restore_idletime(t, srv):
    """RESTORE IDLETIME 1000 gives an idle time of at least 1000 s; FREQ is ignored under LRU."""
    r = srv.client(decode_responses=False)
    r.set("src", "payload")
    dump = r.dump("src")
    assert r.execute_command("RESTORE", "idle", 0, dump, "IDLETIME", 1000)
    assert 1000 <= r.object("idletime", "idle") <= 1001
    assert r.execute_command("RESTORE", "freq", 0, dump, "FREQ", 100)
    assert_just_accessed(r, "freq")
    assert error_text(lambda: r.object("freq", "freq")) == FREQ_ERROR
    assert r.execute_command("RESTORE", "idle", 0, dump, "REPLACE")
    assert_just_accessed(r, "idle")


@case
def lfu_frequency(t, srv):
    """Under allkeys-lfu: FREQ starts at 5 and grows with accesses; RESTORE FREQ sets it."""
    r = srv.client(decode_responses=False)
    assert r.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        assert policy(r) == "allkeys-lfu"
        keys = spread_keys("lfu:", 4)
        for k in keys:
            r.set(k, "v")
            assert r.object("freq", k) == 5, k
        for _ in range(50):
            r.get(keys[0])
        assert r.object("freq", keys[0]) > 5
        assert r.object("freq", keys[1]) == 5  # OBJECT itself is not an access
        assert error_text(lambda: r.object("idletime", keys[0])) == IDLE_ERROR
        dump = r.dump(keys[0])
        assert r.execute_command("RESTORE", "lfu:restored", 0, dump, "FREQ", 100)
        assert r.object("freq", "lfu:restored") == 100
        assert r.execute_command("RESTORE", "lfu:idle", 0, dump, "IDLETIME", 1000)
        assert r.object("freq", "lfu:idle") == 5  # IDLETIME is ignored under LFU
    finally:
        r.config_set("maxmemory-policy", "noeviction")
    assert policy(r) == "noeviction"
    r.set("after", "v")
    assert error_text(lambda: r.object("freq", "after")) == FREQ_ERROR
    assert_just_accessed(r, "after")


@case
def policy_values(t, srv):
    """maxmemory-policy takes Redis's eight names and refuses others."""
    r = srv.client()
    try:
        for p in ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                  "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"):
            assert r.config_set("maxmemory-policy", p)
            assert policy(r) == p
        err = error_text(lambda: r.config_set("maxmemory-policy", "lru"))
        assert "argument(s) must be one of the following" in err, err
    finally:
        r.config_set("maxmemory-policy", "noeviction")


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
