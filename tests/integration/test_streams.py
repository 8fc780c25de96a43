#!/usr/bin/python3
"""Streams end to end, as an order hand-off: producers XADD orders, a consumer group shares them
out, and every order is processed and acknowledged exactly once.

- 8 producer connections XADD 100,000 orders in pipelined batches while 4 consumers in one
  group XREADGROUP (COUNT, BLOCK) and XACK; no order is missing or seen twice and the group
  ends with nothing pending, entries-read 100,000 and lag 0.
- A consumer that dies mid-batch leaves its entries pending; another consumer takes them with
  XAUTOCLAIM, they show delivery count 2 and are acknowledged, so nothing is lost.
- Blocking reads: a client blocked in XREAD/XREADGROUP BLOCK is woken by an XADD on another
  connection (with --threads 4 the two usually sit on different threads, and the streams on
  different shards); blocked group readers are served in the order they blocked; BLOCK times
  out on time; CLIENT UNBLOCK TIMEOUT/ERROR, DEL, a key turned into another type and XGROUP
  DESTROY end a block with Redis's replies (XREAD waits on through a type change; the ended
  read counts once in commandstats and errorstats); a blocked client that disconnects is no longer counted in blocked_clients.
- Writes that give a blocked reader nothing (XDEL, XACK, XTRIM, XSETID, another consumer's
  XREADGROUP, or an XADD taken by an earlier group reader) leave it blocked until its timeout.
- A kill -9 with appendfsync always in the middle of consumption keeps the group state
  (groups, consumers, pending entries with their delivery counts, last-delivered-id). Only
  for hotkv are entries-read and lag also required to survive: Redis 7.0's AOF drops them.
- Common misuse gets Redis's exact errors.

Every loop is bounded by a count and a deadline. Expectations hold on redis-server 7.0.

Run: /usr/bin/python3 test_streams.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (RawClient, RespError, case, encode_command, expect_error,  # noqa: E402
                    run_cases, spread_keys)

import server as harness  # noqa: E402

PRODUCERS = 8
CONSUMERS = 4
ORDERS = 100_000
BATCH = 250
# A wake-up or an unblock must reach the blocked client well within this; it only bounds the
# wait so a lost wake-up fails instead of hanging.
WAKE_LIMIT_S = 1.0


def sid(text):
    """A stream id as a comparable tuple."""
    ms, seq = text.split("-")
    return int(ms), int(seq)


def info_field(client, section, name):
    for line in client.call("INFO", section).splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError("INFO %s has no %s" % (section, name))


def wait_blocked(srv, n, timeout=5.0, what=""):
    """Waits (bounded) until INFO clients reports exactly `n` blocked clients."""
    deadline = time.monotonic() + timeout
    seen = None
    with srv.raw() as c:
        while time.monotonic() < deadline:
            seen = info_field(c, "clients", "blocked_clients")
            if seen == n:
                return
            time.sleep(0.005)
    raise AssertionError("blocked_clients is %r, expected %d %s" % (seen, n, what))


def readable(clients, timeout):
    """The clients (from `clients`) with reply bytes to read within `timeout` seconds."""
    ready = [c for c in clients if len(c.buf) > c.pos]
    if ready:
        return ready
    socks = {c.sock: c for c in clients}
    r, _, _ = select.select(list(socks), [], [], timeout)
    return [socks[s] for s in r]


def as_dict(flat):
    """A flat [name, value, name, value, ...] reply as a dict."""
    return dict(zip(flat[0::2], flat[1::2]))


def group_info(client, key):
    return {g["name"]: g for g in (as_dict(x) for x in client.call("XINFO", "GROUPS", key))}


# ----------------------------------------------------------------------------------------------
# The order hand-off under load.


@case
def order_handoff_exactly_once(t, srv):
    """8 producers XADD 100,000 orders while 4 group consumers read and ack: exactly once."""
    key = "orders"
    per_producer = ORDERS // PRODUCERS
    with srv.raw() as c:
        assert c.call("XGROUP", "CREATE", key, "fulfil", "$", "MKSTREAM") == "OK"

    errors = []
    stop = threading.Event()
    deadline = time.monotonic() + 60.0
    produced = [dict() for _ in range(PRODUCERS)]  # per producer: id -> order number
    processed = [[] for _ in range(CONSUMERS)]  # per consumer: (id, order number)
    acked = [0] * CONSUMERS
    lock = threading.Lock()
    seen_total = [0]
    producers_done = threading.Event()
    samples = []

    def producer(p):
        try:
            with srv.raw() as c:
                last = (0, 0)
                for start in range(0, per_producer, BATCH):
                    if stop.is_set() or time.monotonic() > deadline:
                        raise AssertionError("producer %d stopped at %d" % (p, start))
                    seqs = range(start, min(start + BATCH, per_producer))
                    c.send(b"".join(encode_command("XADD", key, "*", "order", p * per_producer + i,
                                                   "producer", p, "seq", i) for i in seqs))
                    for i in seqs:
                        r = c.read_reply()
                        assert isinstance(r, str), "XADD reply %r" % (r,)
                        # One connection's XADDs get increasing ids, in the order sent.
                        assert sid(r) > last, (r, last)
                        last = sid(r)
                        produced[p][r] = p * per_producer + i
        except Exception as e:  # reported by the main thread
            errors.append("producer %d: %r" % (p, e))
            stop.set()

    def consumer(n):
        name = "worker-%d" % n
        try:
            # A BLOCK 100 read answers within 100 ms (+ scheduling); a few seconds without a
            # reply is a lost wake-up, not a slow server.
            with RawClient(srv.port, timeout=3.0) as c:
                for _ in range(100000):
                    if stop.is_set() or time.monotonic() > deadline:
                        raise AssertionError("%s gave up after %d orders"
                                             % (name, len(processed[n])))
                    try:
                        r = c.call("XREADGROUP", "GROUP", "fulfil", name, "COUNT", 200,
                                   "BLOCK", 100, "STREAMS", key, ">")
                    except TimeoutError:
                        raise AssertionError("%s: XREADGROUP ... BLOCK 100 got no reply within "
                                             "3 s, after %d orders" % (name, len(processed[n])))
                    if r is None:
                        with lock:
                            if producers_done.is_set() and seen_total[0] >= ORDERS:
                                return
                        continue
                    assert not isinstance(r, RespError), r
                    assert len(r) == 1 and r[0][0] == key, r[:1]
                    entries = r[0][1]
                    assert 0 < len(entries) <= 200, len(entries)
                    ids = []
                    for eid, fields in entries:
                        f = as_dict(fields)
                        processed[n].append((eid, int(f["order"])))
                        ids.append(eid)
                    got = c.call("XACK", key, "fulfil", *ids)
                    assert got == len(ids), "XACK %d ids acknowledged %r" % (len(ids), got)
                    acked[n] += got
                    with lock:
                        seen_total[0] += len(ids)
                raise AssertionError("%s: iteration bound reached" % name)
        except Exception as e:
            errors.append("consumer %d: %r" % (n, e))
            stop.set()

    def sampler():
        # While the hand-off runs the group's counters only move forward and stay consistent.
        try:
            with srv.raw() as c:
                for _ in range(40):
                    if stop.is_set() or producers_done.is_set() and seen_total[0] >= ORDERS:
                        return
                    g = group_info(c, key)["fulfil"]
                    samples.append(g)
                    time.sleep(0.05)
        except Exception as e:
            errors.append("sampler: %r" % (e,))
            stop.set()

    t0 = time.monotonic()
    consumers = [threading.Thread(target=consumer, args=(n,)) for n in range(CONSUMERS)]
    producers = [threading.Thread(target=producer, args=(p,)) for p in range(PRODUCERS)]
    watcher = threading.Thread(target=sampler)
    for th in consumers + producers + [watcher]:
        th.start()
    for th in producers:
        th.join(timeout=70)
    producers_done.set()
    for th in consumers + [watcher]:
        th.join(timeout=70)
    elapsed = time.monotonic() - t0
    assert not any(th.is_alive() for th in consumers + producers + [watcher]), "threads stuck"
    assert not errors, errors[:3]

    by_id = {}
    for p in produced:
        by_id.update(p)
    assert len(by_id) == ORDERS, "XADD returned %d distinct ids" % len(by_id)
    seen = [x for per in processed for x in per]
    ids = [eid for eid, _ in seen]
    assert len(ids) == len(set(ids)), "%d entries delivered twice" % (len(ids) - len(set(ids)))
    assert sorted(o for _, o in seen) == list(range(ORDERS)), "orders missing or duplicated"
    assert all(by_id[eid] == o for eid, o in seen), "an entry came back with another order"
    assert sum(acked) == ORDERS, acked
    counts = [len(per) for per in processed]
    print("    %d orders in %.1fs; per consumer %s" % (ORDERS, elapsed, counts))
    assert min(counts) > 0, "a consumer of the pool never got work: %r" % counts
    for per in processed:
        # Within one consumer, deliveries come in stream order.
        assert [sid(e) for e, _ in per] == sorted(sid(e) for e, _ in per)

    prev = None
    for g in samples:
        assert g["lag"] is None or g["lag"] >= 0, g
        assert g["pending"] <= (g["entries-read"] or 0), g
        if prev is not None:
            assert (g["entries-read"] or 0) >= (prev["entries-read"] or 0), (prev, g)
            assert sid(g["last-delivered-id"]) >= sid(prev["last-delivered-id"]), (prev, g)
        prev = g

    with srv.raw() as c:
        assert c.call("XLEN", key) == ORDERS
        assert c.call("XPENDING", key, "fulfil") == [0, None, None, None]
        last_id = c.call("XREVRANGE", key, "+", "-", "COUNT", 1)[0][0]
        assert last_id == max(by_id, key=sid)
        g = group_info(c, key)["fulfil"]
        assert g == {"name": "fulfil", "consumers": CONSUMERS, "pending": 0,
                     "last-delivered-id": last_id, "entries-read": ORDERS, "lag": 0}, g
        stream = as_dict(c.call("XINFO", "STREAM", key))
        assert stream["entries-added"] == ORDERS and stream["length"] == ORDERS, stream
        assert stream["last-generated-id"] == last_id, stream
        cons = {x["name"]: x for x in (as_dict(y) for y in c.call("XINFO", "CONSUMERS", key,
                                                                     "fulfil"))}
        assert sorted(cons) == ["worker-%d" % n for n in range(CONSUMERS)], cons
        assert all(x["pending"] == 0 for x in cons.values()), cons
        # Nothing is left for anyone, and XACK of an acknowledged id is a no-op.
        assert c.call("XREADGROUP", "GROUP", "fulfil", "late", "STREAMS", key, ">") is None
        assert c.call("XACK", key, "fulfil", last_id) == 0


@case
def dead_consumer_entries_are_autoclaimed(t, srv):
    """A consumer dies holding 10 unacked entries: XAUTOCLAIM hands them over, count 2."""
    key = "jobs"
    with srv.raw() as c:
        for i in range(30):
            c.call("XADD", key, "*", "job", i)
        assert c.call("XGROUP", "CREATE", key, "g", "0") == "OK"
    dead = srv.raw()
    r = dead.call("XREADGROUP", "GROUP", "g", "dead", "COUNT", 10, "STREAMS", key, ">")
    dead_entries = r[0][1]
    assert [as_dict(f)["job"] for _, f in dead_entries] == [str(i) for i in range(10)]
    dead.close()  # mid-batch: nothing acknowledged

    with srv.raw() as alive:
        r = alive.call("XREADGROUP", "GROUP", "g", "alive", "COUNT", 100, "STREAMS", key, ">")
        rest = r[0][1]
        assert len(rest) == 20
        assert alive.call("XACK", key, "g", *[e for e, _ in rest]) == 20
        dead_ids = [e for e, _ in dead_entries]
        assert alive.call("XPENDING", key, "g") == [10, dead_ids[0], dead_ids[-1], [["dead", "10"]]]
        # Entries delivered less than the min-idle-time ago are not claimable yet.
        r = alive.call("XAUTOCLAIM", key, "g", "alive", 3_600_000, "0-0")
        assert r == ["0-0", [], []], r
        time.sleep(0.05)
        claimed = []
        cursor = "0-0"
        for _ in range(10):  # COUNT 4 needs 3 rounds; the cursor says when the scan is done
            r = alive.call("XAUTOCLAIM", key, "g", "alive", 20, cursor, "COUNT", 4)
            assert len(r) == 3 and r[2] == [], r
            claimed += r[1]
            cursor = r[0]
            if cursor == "0-0":
                break
        assert cursor == "0-0", "XAUTOCLAIM scan did not finish"
        assert claimed == dead_entries, "claimed %r\nexpected %r" % (claimed, dead_entries)
        pending = alive.call("XPENDING", key, "g", "-", "+", 100)
        assert [p[0] for p in pending] == dead_ids, pending
        for eid, owner, idle, deliveries in pending:
            assert owner == "alive" and deliveries == 2 and 0 <= idle < 5000, pending
        cons = {x["name"]: x["pending"] for x in (as_dict(y) for y in
                                                   alive.call("XINFO", "CONSUMERS", key, "g"))}
        assert cons == {"dead": 0, "alive": 10}, cons
        # The claimed entries are delivered again through the owner's history (id 0).
        r = alive.call("XREADGROUP", "GROUP", "g", "alive", "STREAMS", key, "0")
        assert r[0][1] == dead_entries, r
        assert alive.call("XACK", key, "g", *dead_ids) == 10
        assert alive.call("XPENDING", key, "g") == [0, None, None, None]
        assert alive.call("XGROUP", "DELCONSUMER", key, "g", "dead") == 0
        g = group_info(alive, key)["g"]
        assert g["entries-read"] == 30 and g["lag"] == 0 and g["pending"] == 0, g


# ----------------------------------------------------------------------------------------------
# Blocking reads.


@case
def blocked_readers_are_woken_by_xadd_from_another_connection(t, srv):
    """XREAD BLOCK and XREADGROUP BLOCK on 4 streams on different shards are woken by XADD."""
    keys = spread_keys("stream:", 4)
    with srv.raw() as c:
        for k in keys:
            assert c.call("XGROUP", "CREATE", k, "g", "$", "MKSTREAM") == "OK"
    readers = []
    try:
        for i, k in enumerate(keys):
            r = srv.raw()
            r.send(encode_command("XREAD", "BLOCK", 10000, "STREAMS", k, "$"))
            g = srv.raw()
            g.send(encode_command("XREADGROUP", "GROUP", "g", "c%d" % i, "BLOCK", 10000,
                                  "STREAMS", k, ">"))
            readers.append((k, r, g))
        wait_blocked(srv, 2 * len(keys))
        worst = 0.0
        with srv.raw() as w:
            for k, r, g in readers:
                t0 = time.monotonic()
                eid = w.call("XADD", k, "*", "for", k)
                for c in (r, g):
                    assert readable([c], WAKE_LIMIT_S), "%s: blocked reader not woken" % k
                    assert c.read_reply() == [[k, [[eid, ["for", k]]]]]
                worst = max(worst, time.monotonic() - t0)
        print("    slowest wake-up %.1f ms" % (worst * 1000))
        wait_blocked(srv, 0)
        # One client blocked on all four streams is served by the one that gets an entry.
        r = readers[0][1]
        r.send(encode_command("XREAD", "BLOCK", 10000, "STREAMS", *keys, *(["$"] * len(keys))))
        wait_blocked(srv, 1)
        with srv.raw() as w:
            eid = w.call("XADD", keys[3], "*", "n", "1")
        assert readable([r], WAKE_LIMIT_S)
        assert r.read_reply() == [[keys[3], [[eid, ["n", "1"]]]]]
    finally:
        for _, r, g in readers:
            r.close()
            g.close()


@case
def blocked_group_readers_are_served_in_blocking_order(t, srv):
    """Three XREADGROUP COUNT 1 clients blocked in turn get the next three entries in FIFO."""
    key = "fifo"
    with srv.raw() as c:
        assert c.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM") == "OK"
    clients = [srv.raw() for _ in range(3)]
    try:
        def block_all():
            for i, c in enumerate(clients):
                c.send(encode_command("XREADGROUP", "GROUP", "g", "c%d" % i, "COUNT", 1,
                                      "BLOCK", 10000, "STREAMS", key, ">"))
                wait_blocked(srv, i + 1)  # the next one blocks strictly later

        # Three XADDs in one pipeline: each client gets exactly one entry, in blocking order.
        block_all()
        with srv.raw() as w:
            w.send(b"".join(encode_command("XADD", key, "*", "m", i) for i in range(3)))
            eids = [w.read_reply() for _ in range(3)]
        for i, c in enumerate(clients):
            assert readable([c], WAKE_LIMIT_S), "client %d not woken" % i
            assert c.read_reply() == [[key, [[eids[i], ["m", str(i)]]]]], i
        wait_blocked(srv, 0)
        # One XADD at a time: only the longest-waiting client is served, the others stay blocked.
        block_all()
        with srv.raw() as w:
            for i in range(3):
                eid = w.call("XADD", key, "*", "n", i)
                got = readable(clients, WAKE_LIMIT_S)
                assert got == [clients[i]], "XADD %d woke %r" % (i, [clients.index(c) for c in got])
                assert clients[i].read_reply() == [[key, [[eid, ["n", str(i)]]]]]
                assert readable(clients[i + 1:], 0.05) == [], "a later client was woken too"
                wait_blocked(srv, 2 - i, what="(the clients not yet served must stay blocked)")
        with srv.raw() as c:
            assert c.call("XPENDING", key, "g")[0] == 6
    finally:
        for c in clients:
            c.close()


@case
def group_reader_left_without_entries_stays_blocked(t, srv):
    """Two XREADGROUP COUNT 1 BLOCK 500 readers, one XADD: the second one gets nil at 500 ms."""
    key = "scarce"
    with srv.raw() as c:
        assert c.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM") == "OK"
    first, second = srv.raw(), srv.raw()
    try:
        t0 = time.monotonic()
        for i, c in enumerate((first, second)):
            c.send(encode_command("XREADGROUP", "GROUP", "g", "c%d" % i, "COUNT", 1,
                                  "BLOCK", 500, "STREAMS", key, ">"))
            wait_blocked(srv, i + 1)
        with srv.raw() as w:
            eid = w.call("XADD", key, "*", "only", "one")
            assert readable([first], WAKE_LIMIT_S)
            assert first.read_reply() == [[key, [[eid, ["only", "one"]]]]]
            # Redis re-checks the second reader, finds nothing new for the group and keeps it
            # blocked until its own timeout.
            time.sleep(0.1)  # a cross-thread re-check has long finished by now
            with srv.raw() as c:
                still = info_field(c, "clients", "blocked_clients")
            answered = readable([second], 2.0)
            assert still == 1 and answered, (
                "after the XADD served the first reader: blocked_clients %d (expected 1), and "
                "the second reader %s (expected nil at its 500 ms timeout)"
                % (still, "answered" if answered else "got no reply at all within 2.5 s"))
            assert second.read_reply_bytes() == b"*-1\r\n"
            assert time.monotonic() - t0 >= 0.5
            # and the connection is still in step: the next reply is the next command's.
            assert second.call("PING") == "PONG"
            assert w.call("XPENDING", key, "g") == [1, eid, eid, [["c0", "1"]]]
    finally:
        first.close()
        second.close()


@case
def writes_that_add_no_entry_leave_readers_blocked(t, srv):
    """XDEL/XACK/XTRIM/XSETID/XGROUP/XREADGROUP on a stream: a blocked XREAD still times out."""
    key = "busy"
    with srv.raw() as c:
        assert c.call("XADD", key, "1-1", "f", "v") == "1-1"
        assert c.call("XGROUP", "CREATE", key, "g", "0") == "OK"
    # Each of these succeeds on the key without giving an XREAD "$" reader anything new.
    writes = [("XDEL", key, "9-9"), ("XACK", key, "g", "9-9"),
              ("XGROUP", "CREATECONSUMER", key, "g", "other"), ("XTRIM", key, "MAXLEN", 100),
              ("XREADGROUP", "GROUP", "g", "other", "STREAMS", key, ">"), ("XSETID", key, "5-5")]
    readers = [srv.raw() for _ in writes]
    try:
        t0 = time.monotonic()
        for i, r in enumerate(readers):
            r.send(encode_command("XREAD", "BLOCK", 500, "STREAMS", key, "$"))
            wait_blocked(srv, i + 1)
        with srv.raw() as w:
            for cmd in writes:
                assert not isinstance(w.call(*cmd), RespError), cmd
            time.sleep(0.1)
            still = info_field(w, "clients", "blocked_clients")
        lost = []
        answer_by = time.monotonic() + 2.0
        for r in readers:
            if not readable([r], max(0.0, answer_by - time.monotonic())):
                lost.append(readers.index(r))
                continue
            assert r.read_reply_bytes() == b"*-1\r\n"
        elapsed = time.monotonic() - t0
        assert still == len(readers) and not lost, (
            "after %s: blocked_clients %d (expected %d); readers with no reply at all: %d"
            % ("/".join(w[0] for w in writes), still, len(readers), len(lost)))
        assert elapsed >= 0.5, elapsed
    finally:
        for r in readers:
            r.close()


@case
def block_timeout_returns_nil_on_time(t, srv):
    """XREAD BLOCK 300 and XREADGROUP BLOCK 300 answer nil after 300-550 ms; XREAD wakes all."""
    with srv.raw() as c:
        assert c.call("XGROUP", "CREATE", "quiet", "g", "$", "MKSTREAM") == "OK"
        for cmd in (("XREAD", "BLOCK", 300, "STREAMS", "quiet", "$"),
                    ("XREADGROUP", "GROUP", "g", "c", "BLOCK", 300, "STREAMS", "quiet", ">")):
            t0 = time.monotonic()
            raw = c.call_bytes(*cmd)
            elapsed = time.monotonic() - t0
            assert raw == b"*-1\r\n", raw  # a null array in RESP2
            print("    %s BLOCK 300 answered after %.0f ms" % (cmd[0], elapsed * 1000))
            assert 0.300 <= elapsed <= 0.550, elapsed
        assert c.call("HELLO", "3")["proto"] == 3
        assert c.call_bytes("XREAD", "BLOCK", 50, "STREAMS", "quiet", "$") == b"_\r\n"
    # Plain XREAD readers all see the new entry (no group: nothing is consumed).
    clients = [srv.raw() for _ in range(3)]
    try:
        for i, c in enumerate(clients):
            c.send(encode_command("XREAD", "COUNT", 1, "BLOCK", 10000, "STREAMS", "quiet", "$"))
            wait_blocked(srv, i + 1)
        with srv.raw() as w:
            eid = w.call("XADD", "quiet", "*", "a", "b")
        for c in clients:
            assert readable([c], WAKE_LIMIT_S)
            assert c.read_reply() == [["quiet", [[eid, ["a", "b"]]]]]
    finally:
        for c in clients:
            c.close()


@case
def client_unblock_del_and_destroy_end_a_block(t, srv):
    """CLIENT UNBLOCK TIMEOUT/ERROR, DEL of the stream and XGROUP DESTROY end a blocked read."""
    key = "blk"
    with srv.raw() as admin, srv.raw() as b:
        bid = b.call("CLIENT", "ID")
        assert admin.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM") == "OK"
        assert admin.call("CLIENT", "UNBLOCK", bid) == 0  # not blocked yet

        b.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", key, "$"))
        wait_blocked(srv, 1)
        assert admin.call("CLIENT", "UNBLOCK", bid, "TIMEOUT") == 1
        assert readable([b], WAKE_LIMIT_S)
        assert b.read_reply_bytes() == b"*-1\r\n"

        b.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">"))
        wait_blocked(srv, 1)
        expect_error(admin.call("CLIENT", "UNBLOCK", bid, "FOO"),
                     "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
        assert admin.call("CLIENT", "UNBLOCK", bid, "ERROR") == 1
        assert readable([b], WAKE_LIMIT_S)
        expect_error(b.read_reply(), "UNBLOCKED client unblocked via CLIENT UNBLOCK")
        assert admin.call("CLIENT", "UNBLOCK", bid, "ERROR") == 0
        assert admin.call("CLIENT", "UNBLOCK", 10 ** 9) == 0

        b.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">"))
        wait_blocked(srv, 1)
        assert admin.call("DEL", key) == 1
        assert readable([b], WAKE_LIMIT_S)
        expect_error(b.read_reply(), "UNBLOCKED the stream key no longer exists")

        assert admin.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM") == "OK"
        b.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">"))
        wait_blocked(srv, 1)
        assert admin.call("XGROUP", "DESTROY", key, "g") == 1
        assert readable([b], WAKE_LIMIT_S)
        expect_error(b.read_reply(),
                     "NOGROUP the consumer group this client was blocked on no longer exists")
        wait_blocked(srv, 0)
        assert b.call("PING") == "PONG"  # the connection is usable afterwards


@case
def key_type_change_and_group_destroy_end_blocks_like_redis(t, srv):
    """A key turned into a string ends XREADGROUP's block (UNBLOCKED) but not XREAD's, which
    waits for a stream again; a destroyed group's reader counts once, failed, with NOGROUP."""
    key = "typed"
    with srv.raw() as admin, srv.raw() as b:
        assert admin.call("XADD", key, "666", "f", "v") == "666-0"
        assert admin.call("XGROUP", "CREATE", key, "g", "$") == "OK"
        b.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">"))
        wait_blocked(srv, 1)
        assert admin.call("SET", key, "val1") == "OK"
        assert readable([b], WAKE_LIMIT_S)
        expect_error(b.read_reply(), "UNBLOCKED the stream key no longer exists")

        assert admin.call("DEL", key) == 1
        assert admin.call("XADD", key, "666", "f", "v") == "666-0"
        b.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", key, "$"))
        wait_blocked(srv, 1)
        assert admin.call("MULTI") == "OK"
        assert admin.call("DEL", key) == "QUEUED"
        assert admin.call("LPUSH", key, "a", "b") == "QUEUED"
        assert admin.call("EXEC") == [1, 2]
        assert not readable([b], 0.2)  # a list gives XREAD nothing: it waits on
        assert admin.call("DEL", key) == 1
        assert admin.call("XADD", key, "667", "f", "v") == "667-0"
        assert readable([b], WAKE_LIMIT_S)
        assert b.read_reply() == [[key, [["667-0", ["f", "v"]]]]]

        assert admin.call("DEL", key) == 1
        assert admin.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM") == "OK"
        assert admin.call("CONFIG", "RESETSTAT") == "OK"
        b.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", key, ">"))
        wait_blocked(srv, 1)
        assert admin.call("XGROUP", "DESTROY", key, "g") == 1
        assert readable([b], WAKE_LIMIT_S)
        expect_error(b.read_reply(),
                     "NOGROUP the consumer group this client was blocked on no longer exists")
        lines = admin.call("INFO", "errorstats").splitlines()
        assert "errorstat_NOGROUP:count=1" in lines, lines
        stat = [x for x in admin.call("INFO", "commandstats").splitlines()
                if x.startswith("cmdstat_xreadgroup:")]
        assert stat and stat[0].startswith("cmdstat_xreadgroup:calls=1,"), stat
        assert stat[0].endswith(",failed_calls=1"), stat
        assert info_field(admin, "stats", "total_error_replies") == 1


@case
def blocked_client_that_disconnects_is_forgotten(t, srv):
    """Blocked readers that close their connection leave blocked_clients at 0; XADD still works."""
    keys = spread_keys("gone:", 4)
    with srv.raw() as c:
        for k in keys:
            c.call("XGROUP", "CREATE", k, "g", "$", "MKSTREAM")
    clients = []
    for i, k in enumerate(keys):
        a = srv.raw()
        a.send(encode_command("XREAD", "BLOCK", 0, "STREAMS", k, "$"))
        g = srv.raw()
        g.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", k, ">"))
        clients += [a, g]
    wait_blocked(srv, 8)
    for c in clients:
        c.close()
    wait_blocked(srv, 0)
    with srv.raw() as w:
        for k in keys:
            assert isinstance(w.call("XADD", k, "*", "a", "b"), str)
        # Nobody was served: the entries are still new for the group.
        for k in keys:
            assert w.call("XPENDING", k, "g") == [0, None, None, None]
            assert group_info(w, k)["g"]["lag"] == 1
        assert info_field(w, "clients", "connected_clients") >= 1


# ----------------------------------------------------------------------------------------------
# Persistence of the group state.


def group_snapshot(c, key, groups):
    """Everything about a stream's groups that must survive a restart (no idle times)."""
    stream = as_dict(c.call("XINFO", "STREAM", key))
    for f in ("radix-tree-keys", "radix-tree-nodes"):  # encoding details, not state
        stream.pop(f, None)
    snap = {"range": c.call("XRANGE", key, "-", "+"), "stream": stream,
            "groups": group_info(c, key)}
    for g in groups:
        snap["pending:" + g] = c.call("XPENDING", key, g)
        snap["pending-ext:" + g] = [(e, owner, n) for e, owner, _idle, n in
                                    c.call("XPENDING", key, g, "-", "+", 1000)]
        snap["consumers:" + g] = [(x["name"], x["pending"]) for x in
                                  (as_dict(y) for y in c.call("XINFO", "CONSUMERS", key, g))]
    return snap


@case
def kill9_mid_consumption_keeps_group_state(t, srv):
    """appendfsync always, kill -9 mid-consumption: groups, consumers, PEL, last id survive."""
    d = tempfile.mkdtemp(prefix="hotkv-streams-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    key, other = spread_keys("persist:", 2)
    try:
        s = t.server(extra_args=args, expect_exit=None).start()
        try:
            c = s.raw()
            for i in range(40):
                c.call("XADD", key, "*", "order", i)
            c.call("XADD", other, "5-1", "x", "y")
            assert c.call("XGROUP", "CREATE", key, "fulfil", "0") == "OK"
            assert c.call("XGROUP", "CREATE", key, "audit", "$") == "OK"
            assert c.call("XGROUP", "CREATECONSUMER", key, "fulfil", "idle-one") == 1
            a = c.call("XREADGROUP", "GROUP", "fulfil", "alice", "COUNT", 7, "STREAMS", key, ">")
            b = c.call("XREADGROUP", "GROUP", "fulfil", "bob", "COUNT", 5, "STREAMS", key, ">")
            a_ids = [e for e, _ in a[0][1]]
            b_ids = [e for e, _ in b[0][1]]
            assert c.call("XACK", key, "fulfil", a_ids[0], a_ids[2], b_ids[4]) == 3
            # bob takes over one of alice's entries: its delivery count becomes 2.
            assert len(c.call("XCLAIM", key, "fulfil", "bob", 0, a_ids[1])) == 1
            c.call("XREADGROUP", "GROUP", "fulfil", "alice", "COUNT", 2, "STREAMS", key, ">")
            c.call("XADD", key, "*", "order", 40)
            c.call("XDEL", key, a_ids[0])  # acknowledged: gone from the stream too
            n = c.call("XREADGROUP", "GROUP", "audit", "auditor", "STREAMS", key, ">")
            assert n[0][1][0][1] == ["order", "40"]
            before = group_snapshot(c, key, ["fulfil", "audit"])
            last = before["groups"]["fulfil"]["last-delivered-id"]
            assert before["pending:fulfil"][0] == 7 - 2 + 5 - 1 + 2, before["pending:fulfil"]
            cons = before["consumers:fulfil"]
            assert ("alice", 6) in cons and ("bob", 5) in cons and ("idle-one", 0) in cons, cons
            assert (a_ids[1], "bob", 2) in before["pending-ext:fulfil"]
            c.close()
            os.kill(s.pid(), signal.SIGKILL)
            s.wait(timeout=10)
        finally:
            s.cleanup()
        s2 = t.server(extra_args=args).start()
        try:
            with s2.raw() as c:
                after = group_snapshot(c, key, ["fulfil", "audit"])
                if not t.is_hotkv:
                    # Redis 7.0 does not carry a group's entries-read through its AOF, so after a
                    # restart it reports entries-read nil (and lag nil where it cannot compute
                    # it). HotKV keeps both: compared exactly for hotkv only.
                    for name, g in after["groups"].items():
                        for f in ("entries-read", "lag"):
                            if g[f] is None:
                                g[f] = before["groups"][name][f]
                for k in before:
                    assert after[k] == before[k], "%s differs after restart:\n%r\n%r" % (
                        k, before[k], after[k])
                assert c.call("XRANGE", other, "-", "+") == [["5-1", ["x", "y"]]]
                # Reading with > continues right after last-delivered-id.
                r = c.call("XREADGROUP", "GROUP", "fulfil", "alice", "COUNT", 3,
                           "STREAMS", key, ">")
                got = r[0][1]
                tail = c.call("XRANGE", key, "(" + last, "+", "COUNT", 3)
                assert got == tail and sid(got[0][0]) > sid(last), (got, last)
                # A consumer's history (id 0) still lists its pending entries.
                h = c.call("XREADGROUP", "GROUP", "fulfil", "bob", "STREAMS", key, "0")
                bob_pending = [e for e, owner, _n in before["pending-ext:fulfil"] if owner == "bob"]
                assert [e for e, _ in h[0][1]] == bob_pending
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# Misuse.


@case
def misuse_gets_redis_errors(t, srv):
    """Stale XADD ids, missing groups, BUSYGROUP, XACK of unknown ids: Redis's replies."""
    with srv.raw() as c:
        assert c.call("XADD", "s", "5-0", "a", "1") == "5-0"
        for eid in ("5-0", "4-9"):
            expect_error(c.call("XADD", "s", eid, "a", "1"),
                         "ERR The ID specified in XADD is equal or smaller than the target "
                         "stream top item")
        expect_error(c.call("XADD", "new", "0-0", "a", "1"),
                     "ERR The ID specified in XADD must be greater than 0-0")
        expect_error(c.call("XADD", "s", "*", "a"),
                     "ERR wrong number of arguments for 'xadd' command")
        for k in ("s", "missing"):
            expect_error(c.call("XREADGROUP", "GROUP", "nog", "c", "STREAMS", k, ">"),
                         "NOGROUP No such key '%s' or consumer group 'nog' in XREADGROUP with "
                         "GROUP option" % k)
        assert c.call("XGROUP", "CREATE", "s", "g", "0") == "OK"
        expect_error(c.call("XGROUP", "CREATE", "s", "g", "$"),
                     "BUSYGROUP Consumer Group name already exists")
        expect_error(c.call("XGROUP", "CREATE", "missing", "g", "$"),
                     "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE "
                     "you may want to use the MKSTREAM option to create an empty stream "
                     "automatically.")
        assert c.call("XACK", "s", "g", "9-9") == 0
        assert c.call("XACK", "s", "nog", "5-0") == 0
        assert c.call("XACK", "missing", "g", "1-1") == 0
        expect_error(c.call("XACK", "s", "g", "notanid"),
                     "ERR Invalid stream ID specified as stream command argument")
        expect_error(c.call("XPENDING", "s", "nog"),
                     "NOGROUP No such key 's' or consumer group 'nog'")
        expect_error(c.call("XAUTOCLAIM", "s", "nog", "c", 0, "0"),
                     "NOGROUP No such key 's' or consumer group 'nog'")
        expect_error(c.call("XGROUP", "CREATECONSUMER", "s", "nog", "c"),
                     "NOGROUP No such consumer group 'nog' for key name 's'")
        expect_error(c.call("XINFO", "GROUPS", "missing"), "ERR no such key")
        assert c.call("SET", "str", "x") == "OK"
        for cmd in (("XADD", "str", "*", "a", "1"),
                    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">")):
            expect_error(c.call(*cmd),
                         "WRONGTYPE Operation against a key holding the wrong kind of value")
        assert c.call("XGROUP", "DESTROY", "s", "g") == 1
        assert c.call("XGROUP", "DESTROY", "s", "g") == 0


if __name__ == "__main__":
    # Restarts replay a log before PING answers; keep the harness's patience for slow builds.
    harness.READY_TIMEOUT_S = 60
    run_cases(__doc__.splitlines()[0])
