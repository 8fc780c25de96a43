#!/usr/bin/python3
"""Client-side caching (CLIENT TRACKING) end to end: RESP3 invalidation pushes on the tracking
connection, RESP2 REDIRECT targets subscribed to __redis__:invalidate (through redis-py), BCAST
prefixes, FLUSHALL, expiry, a broken redirect, and the order of a client's own invalidations
relative to its replies.

- A RESP3 client that read a key gets ">2 invalidate [key]" when another client changes it,
  once; its own write's invalidation comes after that write's reply, also when the write is
  inside MULTI/EXEC (after the whole EXEC reply) or in a pipeline whose keys sit on every
  thread.
- A RESP2 tracking client redirects to a redis-py pub/sub connection, which receives each
  invalidated key once as a message of __redis__:invalidate, from writers on several threads.
- BCAST PREFIX: one message with the keys of one MSET under the prefix, none for others.
- FLUSHALL: a null key list. Expiry: the expired key. A REDIRECT target that goes away:
  tracking-redir-broken, and CLIENT TRACKINGINFO says broken_redirect.
- CLIENT TRACKING's errors, GETREDIR, TRACKINGINFO and the t/B flags of CLIENT LIST.

Every wait is bounded by a count and a deadline. Expectations hold on redis-server 7.0.

Run: /usr/bin/python3 test_tracking.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Push, RespError, case, encode_command, run_cases, spread_keys  # noqa: E402

WAIT_S = 5.0


def resp3_tracking(srv, *options):
    """A raw RESP3 connection with CLIENT TRACKING ON `options`."""
    c = srv.raw()
    hello = c.call("HELLO", "3")
    assert hello["proto"] == 3, hello
    assert c.call("CLIENT", "TRACKING", "ON", *options) == "OK"
    return c


def read_push(c, timeout=WAIT_S):
    """The next reply, which must be a push message; bounded by `timeout`."""
    c.sock.settimeout(timeout)
    try:
        r = c.read_reply()
    finally:
        c.sock.settimeout(None)
    assert isinstance(r, Push), "expected a push, got %r" % (r,)
    return r


def nothing_pending(c):
    """True if a PING is answered with PONG and nothing came before it."""
    return c.call("PING") == "PONG"


@case
def invalidation_push_after_another_clients_write(target, srv):
    """A read key is invalidated by another client's write, once; unread keys are not."""
    keys = spread_keys("inv:", 4)
    with resp3_tracking(srv) as a, srv.raw() as b:
        for k in keys:
            assert b.call("SET", k, "1") == "OK"
            assert a.call("GET", k) == "1"
        assert b.call("SET", "unread", "1") == "OK"
        for k in keys:
            assert b.call("INCR", k) == 2
            assert read_push(a) == ["invalidate", [k]]
        for k in keys:
            assert b.call("INCR", k) == 3  # not read again since: nothing to say
        assert nothing_pending(a)


@case
def own_write_invalidation_follows_its_reply(target, srv):
    """HDEL's reply comes first, then the invalidation of the key it changed."""
    with resp3_tracking(srv) as a:
        assert a.call("HSET", "h", "f", "1") == 1
        assert a.call("HGET", "h", "f") == "1"
        assert a.call("HDEL", "h", "f") == 1
        assert read_push(a) == ["invalidate", ["h"]]
        assert nothing_pending(a)


@case
def exec_reply_is_not_interleaved(target, srv):
    """The invalidation caused inside MULTI/EXEC comes after the whole EXEC reply."""
    with resp3_tracking(srv) as a:
        assert a.call("MSET", "a{t}", "1", "b{t}", "2") == "OK"
        assert a.call("GET", "a{t}") == "1"
        assert a.call("MULTI") == "OK"
        assert a.call("INCR", "a{t}") == "QUEUED"
        assert a.call("GET", "b{t}") == "QUEUED"
        assert a.call("EXEC") == [2, "2"]
        assert read_push(a) == ["invalidate", ["a{t}"]]
        assert a.call("MULTI") == "OK"
        assert a.call("FLUSHDB") == "QUEUED"
        assert a.call("EXEC") == ["OK"]
        assert read_push(a) == ["invalidate", None]
        assert nothing_pending(a)


@case
def pipelined_writes_on_every_thread(target, srv):
    """A pipeline of writes to keys on different threads: each invalidation arrives after the
    reply of the write that caused it, and each key is invalidated once."""
    keys = spread_keys("pipe:", 8)
    with resp3_tracking(srv) as a:
        a.send(b"".join(encode_command("GET", k) for k in keys))
        for _ in keys:
            assert a.read_reply() is None
        a.send(b"".join(encode_command("SET", k, "v") for k in keys))
        replies_seen = 0
        invalidated = []
        deadline = time.monotonic() + WAIT_S
        while (replies_seen < len(keys) or len(invalidated) < len(keys)) and \
                time.monotonic() < deadline:
            r = read_push(a) if replies_seen == len(keys) else a.read_reply()
            if isinstance(r, Push):
                assert r[0] == "invalidate" and len(r[1]) == 1, r
                k = r[1][0]
                # Its SET's reply (the replies come in request order) is already here.
                assert keys.index(k) < replies_seen, (k, replies_seen)
                invalidated.append(k)
            else:
                assert r == "OK", r
                replies_seen += 1
        assert sorted(invalidated) == sorted(keys)
        assert nothing_pending(a)


@case
def resp2_redirect_to_a_pubsub_subscriber(target, srv):
    """RESP2 tracking redirected to a redis-py subscriber of __redis__:invalidate: every key
    read and then written by writers on other connections arrives there once."""
    keys = ["redir:%d" % i for i in range(64)]
    # The subscriber's connection is named so that CLIENT LIST gives its id.
    sub_client = srv.client(client_name="invalidation-sink")
    pubsub = sub_client.pubsub()
    pubsub.subscribe("__redis__:invalidate")
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        m = pubsub.get_message(timeout=0.1)
        if m is not None and m["type"] == "subscribe":
            break
    admin = srv.client()
    redirect_id = None
    for entry in admin.client_list():
        if entry.get("name") == "invalidation-sink":
            redirect_id = entry["id"]
    assert redirect_id is not None
    tracker = srv.client()
    assert tracker.execute_command("CLIENT", "TRACKING", "ON", "REDIRECT", redirect_id) == "OK"
    assert tracker.execute_command("CLIENT", "GETREDIR") == int(redirect_id)
    assert tracker.mget(keys) == [None] * len(keys)

    def write(part):
        w = srv.client()
        for k in part:
            w.set(k, "1")
        w.close()

    writers = [threading.Thread(target=write, args=(keys[i::4],)) for i in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join(timeout=WAIT_S)
    got = []
    deadline = time.monotonic() + WAIT_S
    while len(got) < len(keys) and time.monotonic() < deadline:
        m = pubsub.get_message(timeout=0.2)
        if m is None or m["type"] != "message":
            continue
        assert m["channel"] == "__redis__:invalidate", m
        got.extend(m["data"])
    assert sorted(got) == sorted(keys), (len(got), len(keys))
    time.sleep(0.1)
    assert pubsub.get_message(timeout=0.1) is None  # once each
    pubsub.close()
    for c in (sub_client, admin, tracker):
        c.close()


@case
def bcast_prefix_groups_one_command(target, srv):
    """BCAST PREFIX p: gets the p: keys of one MSET in one message, nothing for q:."""
    with resp3_tracking(srv, "BCAST", "PREFIX", "p:") as a, srv.raw() as b:
        assert b.call("MSET", "p:1{t}", "1", "p:2{t}", "2", "q:1{t}", "3") == "OK"
        r = read_push(a)
        assert r[0] == "invalidate" and sorted(r[1]) == ["p:1{t}", "p:2{t}"], r
        assert b.call("SET", "q:2", "1") == "OK"
        assert nothing_pending(a)
        info = a.call("CLIENT", "TRACKINGINFO")
        assert info["flags"] == ["on", "bcast"] and info["prefixes"] == ["p:"], info


@case
def flushall_and_expiry_invalidate(target, srv):
    """FLUSHALL sends a null key list; a key read before it expires is invalidated."""
    with resp3_tracking(srv) as a, srv.raw() as b:
        assert a.call("GET", "x") is None
        assert b.call("FLUSHALL") == "OK"
        assert read_push(a) == ["invalidate", None]
        assert b.call("SET", "ttl", "v", "PX", "100") == "OK"
        assert a.call("GET", "ttl") == "v"
        assert read_push(a, timeout=WAIT_S) == ["invalidate", ["ttl"]]


@case
def broken_redirect_is_reported(target, srv):
    """When the REDIRECT target has gone, the next invalidation becomes tracking-redir-broken."""
    with srv.raw() as target_conn:
        target_id = target_conn.call("CLIENT", "ID")
        a = srv.raw()
        assert a.call("HELLO", "3")["proto"] == 3
        assert a.call("CLIENT", "TRACKING", "ON", "REDIRECT", str(target_id)) == "OK"
        assert a.call("GET", "k") is None
    with srv.raw() as b:
        deadline = time.monotonic() + WAIT_S
        while "id=%d " % target_id in b.call("CLIENT", "LIST") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert b.call("SET", "k", "1") == "OK"
    assert read_push(a) == ["tracking-redir-broken", target_id]
    info = a.call("CLIENT", "TRACKINGINFO")
    assert info["flags"] == ["on", "broken_redirect"] and info["redirect"] == target_id, info
    a.close()


@case
def options_errors_and_introspection(target, srv):
    """Redis's errors for bad options; GETREDIR, TRACKINGINFO and the CLIENT LIST flags."""
    with srv.raw() as a:
        assert a.call("CLIENT", "TRACKING", "ON", "PREFIX", "x") == \
            RespError("ERR PREFIX option requires BCAST mode to be enabled")
        assert a.call("CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT") == \
            RespError("ERR You can't specify both OPTIN mode and OPTOUT mode")
        assert a.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO", "PREFIX", "FOOBAR") \
            == RespError("ERR Prefix 'FOO' overlaps with another provided prefix 'FOOBAR'. "
                         "Prefixes for a single client must not overlap.")
        assert a.call("CLIENT", "GETREDIR") == -1
        assert a.call("CLIENT", "TRACKINGINFO") == ["flags", ["off"], "redirect", -1,
                                                    "prefixes", []]
        assert "flags=N " in a.call("CLIENT", "INFO")
        assert a.call("CLIENT", "TRACKING", "ON", "BCAST") == "OK"
        assert a.call("CLIENT", "GETREDIR") == 0
        line = a.call("CLIENT", "INFO")
        assert "flags=tB " in line and " redir=0 " in line, line
        assert a.call("CLIENT", "TRACKINGINFO") == ["flags", ["on", "bcast"], "redirect", 0,
                                                    "prefixes", [""]]
        assert a.call("CLIENT", "TRACKING", "OFF") == "OK"
        assert a.call("CLIENT", "TRACKING", "ON", "OPTIN") == "OK"
        assert a.call("CLIENT", "CACHING", "NO") == RespError(
            "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
        assert a.call("CLIENT", "CACHING", "YES") == "OK"
        assert a.call("CLIENT", "TRACKINGINFO")[1] == ["on", "optin", "caching-yes"]
        info = a.call("INFO", "clients")
        assert "tracking_clients:1" in info, info


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
