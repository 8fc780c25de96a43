#!/usr/bin/python3
"""Pipelines across shards and connections that follow their keys, end to end.

- Random pipelines (100,000 commands over keys on every shard, pipelines of 1 to 400
  commands, keyless and cross-shard commands mixed in) get byte for byte the replies of a
  redis-server started alongside, in request order.
- A pipeline's part for each shard travels in one message: INFO's cross_thread_messages grows
  by a handful per pipeline, not by one per command; with one thread nothing crosses.
- Connections whose commands keep going to one other shard move to its thread (INFO
  connection_migrations, CLIENT LIST thread=), keep their session (id, name, RESP3, db), and
  stay reachable: CLIENT KILL, CLIENT UNBLOCK, blocking reads woken by a writer, MULTI/EXEC.
  Job workers looping on BRPOP of one queue follow it the same way.
- Consecutive pipelined commands over several shards (MSET) run in one rendezvous of the
  threads, and readers never see half of one.
- redis-cli --pipe of random-key SETs loses nothing.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_pipelines.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (RespError, Server, case, encode_command, hotkv_only,  # noqa: E402
                    key_slot, run_cases, spread_keys)

DIFF_COMMANDS = 100_000
KEYS = ["k%d" % i for i in range(120)] + ["{t}a", "{t}b", "h1", "h2", "s1", "s2", ""]


def threads_of(srv):
    """The server's real thread count (--threads 0 means one per core)."""
    with srv.raw() as c:
        reply = c.call("CONFIG", "GET", "threads")
    return int(reply[1]) if isinstance(reply, list) and len(reply) == 2 else 1


def owner(key, threads):
    """The shard that owns `key`: slots are split into `threads` contiguous ranges."""
    return key_slot(key) * threads // 16384


def stats(srv):
    with srv.raw() as c:
        text = c.call("INFO", "stats")
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


class CommandGen:
    """Random commands over keys on every shard: strings, counters, hashes, sets, and now and
    then a keyless command (PING, ECHO) or a multi-key one (MGET, MSET, DEL, EXISTS) that
    spans shards, plus wrong-type and wrong-arity errors."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def key(self):
        return self.rng.choice(KEYS)

    def next(self):
        r = self.rng
        k = self.key()
        x = r.random()
        if x < 0.20:
            return ["SET", k, str(r.randint(-50, 50))]
        if x < 0.35:
            return ["GET", k]
        if x < 0.50:
            return ["INCR", k]
        if x < 0.55:
            return ["APPEND", k, r.choice(["x", "7", ""])]
        if x < 0.60:
            return ["GETDEL", k]
        if x < 0.65:
            return ["HSET", k, "f%d" % r.randint(0, 3), str(r.randint(0, 9))]
        if x < 0.68:
            return ["HGETALL", k]
        if x < 0.72:
            return ["SADD", k, "m%d" % r.randint(0, 5)]
        if x < 0.74:
            return ["SCARD", k]
        if x < 0.76:
            return ["TYPE", k]
        if x < 0.78:
            return ["STRLEN", k]
        if x < 0.80:
            return ["DEL", k]
        if x < 0.82:
            return ["PING"]
        if x < 0.83:
            return ["ECHO", "e%d" % r.randint(0, 99)]
        if x < 0.86:
            return ["MGET"] + [self.key() for _ in range(r.randint(1, 4))]
        if x < 0.88:
            kv = []
            for _ in range(r.randint(1, 3)):
                kv += [self.key(), str(r.randint(0, 9))]
            return ["MSET"] + kv
        if x < 0.90:
            return ["EXISTS"] + [self.key() for _ in range(r.randint(1, 4))]
        if x < 0.92:
            return ["DEL"] + [self.key() for _ in range(r.randint(2, 4))]
        if x < 0.94:
            return ["INCRBY", k, r.choice(["3", "-2", "x", "99999999999999999999"])]
        if x < 0.96:
            return ["GET"]  # wrong arity
        if x < 0.98:
            return ["SETNX", k, "n"]
        return ["EXPIRE", k, "1000"]


def run_pipeline(conn, cmds):
    """Sends every command at once, then reads one reply each: the exact bytes."""
    conn.send(b"".join(encode_command(*c) for c in cmds))
    return [conn.read_reply_bytes() for _ in cmds]


@case
@hotkv_only("compares hotkv with a redis-server it starts itself")
def random_pipelines_reply_exactly_as_redis_server(t, srv):
    """100,000 random commands in pipelines of 1-400: byte-identical replies, in order."""
    gen = CommandGen(20261201)
    sizes = random.Random(7)
    diffs = []
    sent = 0
    deadline = time.monotonic() + 90
    with Server("redis") as ref, srv.raw() as ours, ref.raw() as theirs:
        while sent < DIFF_COMMANDS and time.monotonic() < deadline:
            n = min(sizes.choice([1, 2, 5, 16, 50, 100, 400]), DIFF_COMMANDS - sent)
            cmds = [gen.next() for _ in range(n)]
            got = run_pipeline(ours, cmds)
            want = run_pipeline(theirs, cmds)
            for cmd, g, w in zip(cmds, got, want):
                if g != w:
                    diffs.append((sent, cmd, g, w))
            sent += n
            if len(diffs) >= 5:
                break
        assert not diffs, "\n".join("#%d %r\n  hotkv: %r\n  redis: %r" % d for d in diffs)
        assert sent == DIFF_COMMANDS, "only %d commands in the time allowed" % sent
        # The data sets end the same too.
        for k in KEYS:
            tk = theirs.call("TYPE", k)
            assert ours.call("TYPE", k) == tk, k
            if tk == "string":
                assert ours.call("GET", k) == theirs.call("GET", k), k
            elif tk == "hash":
                assert ours.call("HGETALL", k) == theirs.call("HGETALL", k), k
            elif tk == "set":
                assert sorted(ours.call("SMEMBERS", k)) == sorted(theirs.call("SMEMBERS", k)), k


@case
@hotkv_only("counts HotKV's cross-thread messages")
def a_pipeline_crosses_threads_once_per_shard(t, srv):
    """1,000 SETs over every shard in one pipeline: a message per shard, not per command."""
    threads = threads_of(srv)
    keys = ["pipe:%d" % i for i in range(1000)]
    before = stats(srv)
    with srv.raw() as c:
        replies = run_pipeline(c, [["SET", k, "v"] for k in keys])
        assert replies == [b"+OK\r\n"] * len(keys)
        assert c.call("DBSIZE") == len(keys)
    after = stats(srv)
    messages = int(after["cross_thread_messages"]) - int(before["cross_thread_messages"])
    carried = int(after["cross_thread_commands"]) - int(before["cross_thread_commands"])
    if threads == 1:
        assert messages == 0 and carried == 0, (messages, carried)
        return
    # The pipeline may arrive in several reads (each a window), but never one message per
    # command: a window sends at most one message to each other shard and gets one back.
    assert carried >= len(keys) * (threads - 1) // threads // 2, carried
    assert 2 <= messages <= 2 * (threads - 1) * 40, messages
    assert messages * 10 < carried, (messages, carried)


@case
@hotkv_only("HotKV moves connections between threads")
def hot_key_connections_move_to_its_thread_and_keep_their_session(t, srv):
    """20 clients INCR one key: all end on its thread with name, id and RESP3 intact."""
    threads = threads_of(srv)
    key = "hot:counter"
    clients = []
    before = stats(srv)
    for i in range(20):
        c = srv.raw()
        assert c.call("HELLO", "3", "SETNAME", "shopper-%d" % i)["proto"] == 3
        clients.append(c)
    try:
        ids = [c.call("CLIENT", "ID") for c in clients]
        for _ in range(40):
            for c in clients:
                assert isinstance(c.call("INCR", key), int)
        # One more round: a move happens between requests, after the 16th in a row.
        for c in clients:
            c.call("INCR", key)
        assert clients[0].call("GET", key) == str(20 * 41)
        after = stats(srv)
        moved = int(after["connection_migrations"]) - int(before["connection_migrations"])
        listing = clients[0].call("CLIENT", "LIST")
        if not isinstance(listing, str):
            listing = str(listing)
        lines = {}
        for line in listing.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            lines[fields.get("name")] = fields
        home = owner(key, threads)
        for i, c in enumerate(clients):
            fields = lines["shopper-%d" % i]
            assert int(fields["id"]) == ids[i]
            assert fields["resp"] == "3"
            assert int(fields["thread"]) == home, (i, fields["thread"], home)
            assert c.call("CLIENT", "GETNAME") == "shopper-%d" % i
            assert c.call("CLIENT", "ID") == ids[i]
            # RESP3 survived the move: a map, not a flat array.
            assert isinstance(c.call("HGETALL", "nothing"), dict)
        if threads == 1:
            assert moved == 0
        else:
            # Connections are handed out round-robin: all but about 1/threads started elsewhere.
            assert moved >= 20 // threads, moved
    finally:
        for c in clients:
            c.close()


@case
@hotkv_only("HotKV moves connections between threads")
def a_moved_connection_is_still_killed_unblocked_and_woken(t, srv):
    """CLIENT KILL, CLIENT UNBLOCK, a blocked XREAD woken by XADD, MULTI/EXEC after a move."""
    key = "hot:stream"
    with srv.raw() as c, srv.raw() as other:
        for _ in range(40):
            c.call("XADD", key, "*", "f", "v")
        my_id = c.call("CLIENT", "ID")
        # The 40 XADDs in a row brought it to the stream's thread.
        info = c.call("CLIENT", "INFO")
        thread = int(dict(f.split("=", 1) for f in info.split() if "=" in f)["thread"])
        assert thread == owner(key, threads_of(srv)), (thread, info)
        # Blocked on the stream, woken by another client's XADD.
        c.send(encode_command("XREAD", "BLOCK", "5000", "STREAMS", key, "$"))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if "blocked_clients:1" in other.call("INFO", "clients"):
                break
            time.sleep(0.01)
        other.call("XADD", key, "*", "woken", "1")
        reply = c.read_reply()
        assert reply[0][0] == key and reply[0][1][0][1] == ["woken", "1"], reply
        # Blocked again, released by CLIENT UNBLOCK from the other connection.
        c.send(encode_command("XREAD", "BLOCK", "0", "STREAMS", key, "$"))
        deadline = time.monotonic() + 5
        unblocked = 0
        while time.monotonic() < deadline and unblocked == 0:
            unblocked = other.call("CLIENT", "UNBLOCK", str(my_id))
            if unblocked == 0:
                time.sleep(0.01)
        assert unblocked == 1
        assert c.read_reply() is None
        # A transaction on the hot key and another key.
        assert c.call("MULTI") == "OK"
        assert c.call("XLEN", key) == "QUEUED"
        assert c.call("SET", "elsewhere", "1") == "QUEUED"
        assert c.call("EXEC") == [41, "OK"]
        # Killed from the other connection: the next call finds the socket closed.
        assert other.call("CLIENT", "KILL", "ID", str(my_id)) == 1
        closed, _ = c.wait_closed(timeout=5)
        assert closed, "killed client still open"


@case
@hotkv_only("HotKV moves connections between threads")
def job_workers_in_brpop_move_to_the_queues_thread(t, srv):
    """10 workers loop on BRPOP of one queue, each woken by a push: after 20 pops apiece every
    worker is served on the queue's thread, and every entry was popped exactly once."""
    threads = threads_of(srv)
    queue = "jobs:queue"
    workers = [srv.raw() for _ in range(10)]
    before = stats(srv)
    popped = []
    try:
        with srv.raw() as producer:
            n = 0
            for _ in range(20):
                for w in workers:
                    w.send(encode_command("BRPOP", queue, "5"))
                # All ten are blocked before the first push, so each pop is a wake.
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    if "blocked_clients:10" in producer.call("INFO", "clients"):
                        break
                    time.sleep(0.002)
                for _ in workers:
                    producer.call("LPUSH", queue, "job-%d" % n)
                    n += 1
                for w in workers:
                    reply = w.read_reply()
                    assert reply is not None and reply[0] == queue, reply
                    popped.append(reply[1])
            # A move happens between requests: one more plain round lets the last ones go.
            for w in workers:
                producer.call("LPUSH", queue, "job-%d" % n)
                n += 1
                reply = w.call("BRPOP", queue, "5")
                popped.append(reply[1])
            assert sorted(popped) == sorted("job-%d" % i for i in range(n)), "lost or doubled"
            assert producer.call("LLEN", queue) == 0
        home = owner(queue, threads)
        for w in workers:
            info = w.call("CLIENT", "INFO")
            thread = int(dict(f.split("=", 1) for f in info.split() if "=" in f)["thread"])
            assert thread == home, (thread, home, info)
        moved = int(stats(srv)["connection_migrations"]) - int(before["connection_migrations"])
        if threads == 1:
            assert moved == 0, moved
        else:
            assert moved >= 10 // threads, moved
    finally:
        for w in workers:
            w.close()


@case
@hotkv_only("HotKV moves connections between threads")
def clients_moving_under_load_lose_no_reply(t, srv):
    """16 redis-py clients, each alternating bursts on two keys of different shards: every
    INCR counted exactly once, every reply in order."""
    threads = threads_of(srv)
    keys = ["burst:a", "burst:b"]
    if threads > 1:
        # Two keys on different shards, so bursts pull connections back and forth.
        for i in range(1000):
            k = "burst:b%d" % i
            if owner(k, threads) != owner(keys[0], threads):
                keys[1] = k
                break
    errors = []
    rounds = 6

    def worker(n):
        try:
            r = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=20)
            last = {k: None for k in keys}
            for i in range(rounds):
                k = keys[i % 2]
                for _ in range(30):
                    v = r.incr(k)
                    if last[k] is not None and v <= last[k]:
                        errors.append("client %d: %s went from %s to %s" % (n, k, last[k], v))
                    last[k] = v
                p = r.pipeline(transaction=False)
                for _ in range(10):
                    p.incr(keys[0]).incr(keys[1])
                out = p.execute()
                for j in range(0, len(out) - 2, 2):
                    if not (out[j] < out[j + 2] and out[j + 1] < out[j + 3]):
                        errors.append("client %d: pipeline replies out of order %r" % (n, out))
                        break
                time.sleep(0.3 if i % 2 == 0 else 0.0)
            r.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("client %d: %r" % (n, e))

    threads_list = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for th in threads_list:
        th.start()
    for th in threads_list:
        th.join(60)
    assert not any(th.is_alive() for th in threads_list), "a client hung"
    assert not errors, errors[:5]
    r = redis.Redis(host="127.0.0.1", port=srv.port)
    per_key = 16 * (rounds // 2) * 30 + 16 * rounds * 10
    assert int(r.get(keys[0])) == per_key and int(r.get(keys[1])) == per_key


@case
@hotkv_only("counts HotKV's cross-shard rendezvous")
def consecutive_cross_shard_commands_share_one_rendezvous(t, srv):
    """500 pipelined MSETs over two shards: a few rendezvous, and no reader sees half of one."""
    threads = threads_of(srv)
    a, b = spread_keys("pair:", 2)
    stop = threading.Event()
    torn = []

    def reader():
        r = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=20)
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            va, vb = r.mget(a, b)
            if va != vb:
                torn.append((va, vb))
                return
        r.close()

    with srv.raw() as c:
        c.call("MSET", a, "0", b, "0")
        readers = [threading.Thread(target=reader) for _ in range(3)]
        for th in readers:
            th.start()
        before = stats(srv)
        rounds = 0
        reads_before = int(before["total_commands_processed"])
        deadline = time.monotonic() + 1.0
        try:
            # At least 4 rounds, and on for a second so the readers overlap many MSETs.
            while rounds < 4 or (time.monotonic() < deadline and rounds < 200):
                cmds = [["MSET", a, str(rounds * 500 + i), b, str(rounds * 500 + i)]
                        for i in range(1, 501)]
                assert run_pipeline(c, cmds) == [b"+OK\r\n"] * len(cmds)
                rounds += 1
        finally:
            stop.set()
            for th in readers:
                th.join(30)
        after = stats(srv)
        assert c.call("MGET", a, b) == [str(rounds * 500)] * 2
    assert not torn, torn[:3]
    ops = int(after["cross_shard_atomic_ops"]) - int(before["cross_shard_atomic_ops"])
    commands = int(after["total_commands_processed"]) - reads_before
    mgets = commands - rounds * 500
    print("    %d MSETs, %d reader MGETs, %d rendezvous" % (rounds * 500, mgets, ops))
    if threads > 1:
        # One run_atomic per run of consecutive cross-shard commands in a read, not per MSET
        # (each reader's MGET is a run of its own).
        assert ops <= mgets + rounds * 500 // 10, (ops, mgets, rounds)


@case
def redis_cli_pipe_of_random_sets_loses_nothing(t, srv):
    """redis-cli --pipe of 100,000 SETs over random keys: every reply, every key."""
    n = 100_000
    data = b"".join(encode_command("SET", "pipe:%d" % i, "v%d" % i) for i in range(n))
    out = subprocess.run(["redis-cli", "-p", str(srv.port), "--pipe"], input=data,
                         capture_output=True, timeout=120)
    text = out.stdout.decode()
    assert out.returncode == 0 and "errors: 0, replies: %d" % n in text, text
    with srv.raw() as c:
        assert c.call("DBSIZE") == n
        assert c.call("GET", "pipe:77777") == "v77777"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
