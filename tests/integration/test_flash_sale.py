#!/usr/bin/python3
"""The flash sale end to end: the plain-command flow, GCRA.LIMIT and CL.THROTTLE, and the native
inventory under 10,000 concurrent shoppers, across a kill -9, and driven by hotkv-sale.

- The plain flow (SET/DECR/SET NX EX/INCR/XADD) must answer exactly as redis-server does.
- 10,000 real connections race for 500 units: exactly 500 holds, every other shopper is told
  SOLDOUT, while an auditor checks `available + held + sold = total` throughout. Released and
  abandoned (expired) holds come back and are sold again, to other shoppers, exactly once.
- kill -9 in the middle of a sale loses no acknowledged hold or sale, and holds that expired
  while the server was down are back in stock after the restart.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_flash_sale.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (ConnectionClosed, DataDir, RawClient, RespError, Swarm, case,  # noqa: E402
                    encode_command, expect_error, hotkv_only, raise_nofile, run_cases)

from server import kill9_under_load  # noqa: E402
import server as harness  # noqa: E402

SHOPPERS = 10_000
UNITS = 500
# Under the sanitizers a restart replays far slower than in a release build.
harness.READY_TIMEOUT_S = 120


def inv_get(c, key):
    """INV.GET as a dict (RESP2 replies a flat array)."""
    flat = c.call("INV.GET", key)
    assert isinstance(flat, list), flat
    return dict(zip(flat[0::2], flat[1::2]))


def hold_state(c, key, hold):
    flat = c.call("INV.HOLD", key, hold)
    return None if flat is None else dict(zip(flat[0::2], flat[1::2]))["state"]


def assert_balanced(counts, total):
    assert counts["available"] + counts["held"] + counts["sold"] == total, counts
    assert counts["total"] == total, counts
    assert min(counts["available"], counts["held"], counts["sold"]) >= 0, counts


# ----------------------------------------------------------------------------------------------
# The plain-command flow, as Redis answers it.


@case
def plain_command_flow_answers_like_redis(t, srv):
    """The drop command for command: stock counter, rate limit, hold key, give-back, order."""
    c = srv.client()
    assert c.set("stock:sneaker-x", 500) is True
    if t.is_hotkv:
        # 2 tries per 10 s: both pass at once, the third is told to come back in <= 5 s.
        assert c.execute_command("GCRA.LIMIT", "buy:customer:881", 10000, 2) == [1, 1, -1, 5000]
        allowed, remaining, retry_ms, reset_ms = c.execute_command(
            "GCRA.LIMIT", "buy:customer:881", 10000, 2)
        assert (allowed, remaining, retry_ms) == (1, 0, -1) and 9000 < reset_ms <= 10000
        allowed, remaining, retry_ms, reset_ms = c.execute_command(
            "GCRA.LIMIT", "buy:customer:881", 10000, 2)
        assert (allowed, remaining) == (0, 0) and 4000 < retry_ms <= 5000, retry_ms
        assert 9000 < reset_ms <= 10000 and 0 < c.pttl("buy:customer:881") <= 10000
    assert c.decr("stock:sneaker-x") == 499
    assert c.set("hold:sneaker-x:order-7781", "customer:42", nx=True, ex=600) is True
    assert c.set("hold:sneaker-x:order-7781", "customer:42", nx=True, ex=600) is None
    assert 595 <= c.ttl("hold:sneaker-x:order-7781") <= 600
    # Sold out: the decrement went below zero, so the shopper gives the unit back.
    c.set("stock:sneaker-x", 0)
    assert c.decr("stock:sneaker-x") == -1
    assert c.incr("stock:sneaker-x") == 0
    order_id = c.xadd("orders", {"order": "7781", "sku": "sneaker-x", "customer": "42"})
    assert re.fullmatch(r"\d+-\d+", order_id), order_id
    assert c.xrange("orders") == [
        (order_id, {"order": "7781", "sku": "sneaker-x", "customer": "42"})]
    with srv.raw() as r:
        expect_error(r.call("DECR", "orders"),
                     "WRONGTYPE Operation against a key holding the wrong kind of value")
    c.close()


# ----------------------------------------------------------------------------------------------
# Rate limiting through a real client.


@case
@hotkv_only("GCRA.LIMIT is a HotKV command")
def gcra_limit_retry_time_is_exact_enough_to_sleep_on(t, srv):
    """Burst of 3, then denied with a retry time; sleeping that long gets the next request in."""
    c = srv.client()
    # 10 per second, BURST 2: three back to back, then one every 100 ms.
    replies = [c.execute_command("GCRA.LIMIT", "rl:881", 1000, 10, "BURST", 2) for _ in range(3)]
    assert [r[0] for r in replies] == [1, 1, 1] and [r[1] for r in replies] == [2, 1, 0], replies
    allowed, remaining, retry_ms, reset_ms = c.execute_command(
        "GCRA.LIMIT", "rl:881", 1000, 10, "BURST", 2)
    assert allowed == 0 and remaining == 0 and 0 < retry_ms <= 100, (allowed, retry_ms)
    assert 200 < reset_ms <= 300 and abs(c.pttl("rl:881") - reset_ms) <= 20
    time.sleep((retry_ms + 5) / 1000.0)
    assert c.execute_command("GCRA.LIMIT", "rl:881", 1000, 10, "BURST", 2)[0] == 1
    # A peek changes nothing; a refused request changes nothing either.
    tat = c.get("rl:881")
    assert c.execute_command("GCRA.LIMIT", "rl:881", 1000, 10, "BURST", 2, "COST", 0)[0] == 1
    c.execute_command("GCRA.LIMIT", "rl:881", 1000, 10, "BURST", 2, "COST", 3)
    assert c.get("rl:881") == tat
    # A full limiter needs no key: it expires by itself.
    time.sleep((c.pttl("rl:881") + 20) / 1000.0)
    assert c.exists("rl:881") == 0
    with srv.raw() as r:
        expect_error(r.call("GCRA.LIMIT", "rl:x", 0, 2), "ERR period_ms must be a positive integer")
        expect_error(r.call("GCRA.LIMIT", "rl:x", 1000, -1), "ERR count must be a positive integer")
        expect_error(r.call("GCRA.LIMIT", "rl:x", "ten", 2), "ERR value is not an integer or out of range")
        expect_error(r.call("GCRA.LIMIT", "rl:x", 1000, 2, "BURST"), "ERR syntax error")
        expect_error(r.call("GCRA.LIMIT", "rl:x", 2**62, 1, "BURST", 2**62),
                     "ERR rate limit arithmetic would overflow: period, count, burst or cost too large")
        r.call("SET", "plain", "hello")
        expect_error(r.call("GCRA.LIMIT", "plain", 1000, 2),
                     "ERR key holds a string that is not a rate limiter state (an integer TAT)")
        assert r.call("EXISTS", "rl:x") == 0, "a refused call must not create the key"
    c.close()


@case
@hotkv_only("CL.THROTTLE is redis-cell's command")
def cl_throttle_speaks_redis_cell(t, srv):
    """CL.THROTTLE key max_burst count period [quantity]: redis-cell's five integers."""
    c = srv.client()
    # max_burst 2 -> limit 3; 1 per second.
    first = c.execute_command("CL.THROTTLE", "cell:42", 2, 1, 1)
    assert first[:4] == [0, 3, 2, -1] and first[4] in (0, 1), first
    c.execute_command("CL.THROTTLE", "cell:42", 2, 1, 1)
    c.execute_command("CL.THROTTLE", "cell:42", 2, 1, 1)
    limited = c.execute_command("CL.THROTTLE", "cell:42", 2, 1, 1)
    assert limited[0] == 1 and limited[1] == 3 and limited[2] == 0 and limited[3] in (0, 1), limited
    assert c.execute_command("CL.THROTTLE", "cell:43", 2, 1, 1, 4)[0] == 1, "quantity > limit"
    c.close()


# ----------------------------------------------------------------------------------------------
# The native inventory through a real client.


@case
@hotkv_only("INV.* is HotKV's native inventory")
def inventory_lifecycle_through_redis_py(t, srv):
    """Create, reserve (idempotent by hold id), commit, release, extend, list and audit."""
    c = srv.client()
    key = "{shoe}:stock"
    before = c.info("inventory")
    assert c.execute_command("INV.CREATE", key, 3, "MAXPEROWNER", 1, "MAXHOLD", 60000,
                             "EVENTS", "{shoe}:events") == "OK"
    assert c.execute_command("INV.RESERVE", key, "o-1", 1, 30000, "OWNER", "alice") == 2
    with srv.raw() as r:
        expect_error(r.call("INV.RESERVE", key, "o-1", 1, 30000, "OWNER", "alice"),
                     "HOLDEXISTS hold 'o-1' of '{shoe}:stock' already exists (held)")
        expect_error(r.call("INV.RESERVE", key, "o-2", 1, 30000, "OWNER", "alice"),
                     "OWNERLIMIT owner 'alice' holds 1 of '{shoe}:stock' and asked for 1 more; "
                     "the limit is 1")
        assert r.call("INV.RESERVE", key, "o-3", 1, 30000, "OWNER", "bob") == 1
        assert r.call("INV.RESERVE", key, "o-5", 1, 30000, "OWNER", "carol") == 0
        expect_error(r.call("INV.RESERVE", key, "o-4", 1, 30000),
                     "SOLDOUT not enough stock for '{shoe}:stock': 0 available, 1 requested")
        assert r.call("INV.COMMIT", key, "o-1") == 1
        assert r.call("INV.COMMIT", key, "o-1") == 0
        expect_error(r.call("INV.RELEASE", key, "o-1"), "COMMITTED hold 'o-1' was already committed")
        assert 0 < r.call("INV.EXTEND", key, "o-3", 120000) <= 60000, "capped by MAXHOLD"
        assert sorted(r.call("INV.HOLDS", key, 0, "COUNT", 100)[1]) == ["o-3", "o-5"]
        assert r.call("INV.RELEASE", key, "o-3") == 1
        assert r.call("INV.RELEASE", key, "o-3") == 0
        # alice bought her one pair: she may not reserve another, though stock is back.
        expect_error(r.call("INV.RESERVE", key, "o-6", 1, 30000, "OWNER", "alice"),
                     "OWNERLIMIT owner 'alice' holds 0 and bought 1 of '{shoe}:stock' and asked "
                     "for 1 more; the limit is 1")
        expect_error(r.call("INV.COMMIT", key, "o-3"), "RELEASED hold 'o-3' was already released")
        expect_error(r.call("INV.COMMIT", key, "nope"), "NOHOLD no hold 'nope' for '{shoe}:stock'")
        assert r.call("INV.AUDIT") == [] and r.call("INV.AUDIT", key) == []
        expect_error(r.call("GET", key),
                     "WRONGTYPE Operation against a key holding the wrong kind of value")
        counts = inv_get(r, key)
    assert counts == {"total": 3, "available": 1, "held": 1, "sold": 1, "holds": 1}, counts
    assert c.type(key) == "inventory"
    events = [fields.get("event") for _id, fields in c.xrange("{shoe}:events")]
    assert events.count("inv.held") == 3, events
    assert "inv.committed" in events and "inv.released" in events, events
    # INFO inventory counted the same traffic (other cases may have run before this one).
    after = c.info("inventory")
    moved = {k: after[k] - before.get(k, 0) for k in after}
    assert moved == {"inv_holds_reserved": 3, "inv_units_reserved": 3, "inv_holds_committed": 1,
                     "inv_units_sold": 1, "inv_holds_released": 1, "inv_holds_expired": 0,
                     "inv_rejected_soldout": 1, "inv_rejected_ownerlimit": 2,
                     "inv_rejected_holdexists": 1, "inv_soldout_answered_here": 0}, moved
    c.close()


@case
@hotkv_only("INV.* is HotKV's own")
def cart_with_owner_keeps_one_pair_per_customer(t, srv):
    """INV.MRESERVE OWNER: a cart over two items, each item's MAXPEROWNER
    checked for the whole cart; a refused cart changes nothing."""
    shoe, sock = "cart:shoe", "cart:sock"
    with srv.raw() as r:
        assert r.call("INV.CREATE", shoe, 5, "MAXPEROWNER", 1) == "OK"
        assert r.call("INV.CREATE", sock, 5, "MAXPEROWNER", 4) == "OK"
        assert r.call("INV.MRESERVE", "c-1", 60000, "OWNER", "dave", shoe, 1, sock, 2) == [4, 3]
        assert r.call("INV.HOLD", sock, "c-1")[5] == "dave"
        expect_error(r.call("INV.MRESERVE", "c-2", 60000, "OWNER", "dave", sock, 1, shoe, 1),
                     "OWNERLIMIT owner 'dave' holds 1 of 'cart:shoe' and asked for 1 more; "
                     "the limit is 1")
        assert inv_get(r, sock) == {"total": 5, "available": 3, "held": 2, "sold": 0,
                                    "holds": 1}
        assert r.call("INV.MRESERVE", "c-2", 60000, "OWNER", "erin", sock, 1, shoe, 1) == [2, 3]
        assert r.call("INV.AUDIT") == []


@case
@hotkv_only("INV.* is HotKV's own")
def maxevents_bounds_the_events_stream(t, srv):
    """INV.CREATE ... EVENTS s MAXEVENTS n: a long sale leaves s with about n entries, newest
    kept, and a reader still sees every transition's fields."""
    c = srv.client()
    key, events = "{drop}:stock", "{drop}:events"
    assert c.execute_command("INV.CREATE", key, 100000, "EVENTS", events, "MAXEVENTS", 200) == "OK"
    pipe = c.pipeline(transaction=False)
    for i in range(1000):
        pipe.execute_command("INV.RESERVE", key, "o-%d" % i, 1, 600000)
    assert pipe.execute()[-1] == 99000
    assert 200 <= c.xlen(events) < 300, c.xlen(events)
    newest = c.xrevrange(events, count=1)[0][1]
    assert newest["event"] == "inv.held" and newest["hold"] == "o-999", newest
    c.close()


# ----------------------------------------------------------------------------------------------
# 10,000 shoppers, 500 units.


class Auditor(threading.Thread):
    """Checks the invariant while the sale runs: INV.AUDIT over every item and the counters
    of the hot item, which must always add up and whose `sold` never goes down."""

    def __init__(self, port, key, total):
        super().__init__(daemon=True)
        self.port, self.key, self.total = port, key, total
        self.stop = threading.Event()
        self.audits = 0
        self.problems = []

    def run(self):
        deadline = time.monotonic() + 120
        last_sold = 0
        try:
            with RawClient(self.port) as c:
                while not self.stop.is_set() and self.audits < 1_000_000:
                    if time.monotonic() > deadline:
                        self.problems.append("auditor ran past its deadline")
                        return
                    violations = c.call("INV.AUDIT")
                    if violations != []:
                        self.problems.append("INV.AUDIT: %r" % (violations,))
                        return
                    counts = inv_get(c, self.key)
                    try:
                        assert_balanced(counts, self.total)
                    except AssertionError as e:
                        self.problems.append("unbalanced: %s" % e)
                        return
                    if counts["sold"] < last_sold:
                        self.problems.append("sold went down: %r" % counts)
                        return
                    last_sold = counts["sold"]
                    self.audits += 1
        except Exception as e:  # reported by the case
            self.problems.append("auditor: %r" % e)

    def finish(self):
        self.stop.set()
        self.join(timeout=30)
        assert not self.is_alive(), "auditor did not stop"
        assert not self.problems, self.problems
        return self.audits


def reserve_round(swarm, key, tag, ttl_ms, who, received_at=None):
    """Every connection in `who` reserves one unit under its own hold id and owner.
    Returns (winners: {conn: hold_id}, sold_out: [conn])."""
    hold = lambda i: "order-%s-%d" % (tag, i)  # noqa: E731
    out = swarm.round(lambda i: encode_command("INV.RESERVE", key, hold(i), 1, ttl_ms,
                                               "OWNER", "customer:%d" % i), 1, only=who,
                      received_at=received_at)
    winners, sold_out = {}, []
    for i, (reply,) in out.items():
        if isinstance(reply, int):
            winners[i] = (hold(i), reply)
        else:
            assert str(reply).startswith("SOLDOUT "), "connection %d: %r" % (i, reply)
            sold_out.append(i)
    remaining = sorted(v for _h, v in winners.values())
    assert remaining == sorted(set(remaining)), "two reserves saw the same stock level"
    return {i: h for i, (h, _v) in winners.items()}, sold_out


def settle(swarm, key, holds, verb, expect):
    """`verb` (INV.COMMIT/INV.RELEASE) on each connection's hold; every reply must be `expect`."""
    out = swarm.round(lambda i: encode_command(verb, key, holds[i]), 1, only=holds.keys())
    bad = {i: r for i, r in out.items() if r != [expect]}
    assert not bad, "%s: %d unexpected replies, e.g. %r" % (verb, len(bad), list(bad.items())[:3])


@case
@hotkv_only("INV.* is HotKV's native inventory")
def ten_thousand_shoppers_buy_exactly_the_stock(t, srv):
    """10,000 connections race for 500 units; released and expired holds are resold once."""
    key, events = "{sneaker-x}:inv", "{sneaker-x}:events"
    with srv.raw() as c:
        assert c.call("INV.CREATE", key, UNITS, "MAXPEROWNER", 1, "MAXHOLD", 600000,
                      "EVENTS", events) == "OK"
    t0 = time.monotonic()
    with Swarm(srv.port, SHOPPERS, deadline_s=240) as swarm:
        connect_s = time.monotonic() - t0
        # Every shopper is connected and served once before the doors open.
        assert all(r == ["PONG"] for r in swarm.round(b"PING\r\n", 1).values())
        auditor = Auditor(srv.port, key, UNITS)
        auditor.start()
        try:
            t1 = time.monotonic()
            received_at = {}
            winners, losers = reserve_round(swarm, key, "a", 600000, range(SHOPPERS),
                                            received_at)
            race_s = time.monotonic() - t1
            assert len(winners) == UNITS, "%d holds for %d units" % (len(winners), UNITS)
            assert len(losers) == SHOPPERS - UNITS
            # No shopper was refused while units remained: every SOLDOUT reply arrived no
            # earlier than the millisecond of the item's own inv.soldout event (its stream
            # id is the server's clock when the last unit went).
            with RawClient(srv.port) as c:
                entries = c.call("XRANGE", events, "-", "+")
            soldout_ids = [e[0] for e in entries if e[1][1] == "inv.soldout"]
            assert len(soldout_ids) == 1, soldout_ids
            soldout_ms = int(soldout_ids[0].split("-")[0])
            early = [i for i in losers if int(received_at[i] * 1000) < soldout_ms]
            assert not early, "%d SOLDOUT replies came before the item sold out, e.g. %r" % (
                len(early), early[:3])
            buyers = sorted(winners)
            paid = {i: winners[i] for i in buyers[:400]}
            released = {i: winners[i] for i in buyers[400:450]}
            abandoned = {i: winners[i] for i in buyers[450:]}
            settle(swarm, key, paid, "INV.COMMIT", 1)
            settle(swarm, key, released, "INV.RELEASE", 1)
            with RawClient(srv.port) as c:
                counts = inv_get(c, key)
            assert (counts["available"], counts["held"], counts["sold"]) == (50, 50, 400), counts

            # Second wave: the 50 released units go to 50 of the shoppers who were told SOLDOUT.
            # It runs while the abandoned holds are still long: were they to expire during the
            # round (a slow machine, a sanitizer build), units would come back mid-round and
            # two reserves could rightly see the same stock level.
            second, losers2 = reserve_round(swarm, key, "b", 600000, losers)
            assert len(second) == 50, "%d holds for 50 released units" % len(second)
            settle(swarm, key, second, "INV.COMMIT", 1)

            # The abandoned carts now run out in one second (INV.EXTEND may shorten a hold).
            extend = swarm.round(lambda i: encode_command("INV.EXTEND", key, abandoned[i], 1000),
                                 1, only=abandoned.keys())
            assert all(0 < r[0] <= 1000 for r in extend.values()), extend
            deadline_at = time.monotonic() + 1.0

            # The abandoned holds expire by themselves; no client sweeps.
            with RawClient(srv.port) as c:
                for _ in range(2000):
                    counts = inv_get(c, key)
                    if counts["available"] == 50 or time.monotonic() > deadline_at + 10:
                        break
                    time.sleep(0.005)
                lag_ms = (time.monotonic() - deadline_at) * 1000
                assert counts["available"] == 50 and counts["held"] == 0, counts
                for i in list(abandoned)[:5]:
                    assert hold_state(c, key, abandoned[i]) == "expired"
                    expect_error(c.call("INV.COMMIT", key, abandoned[i]),
                                 "EXPIRED hold '%s' expired before this call" % abandoned[i])

            # Third wave: the expired units are sold again, exactly once.
            third, _ = reserve_round(swarm, key, "c", 600000, losers2)
            assert len(third) == 50, "%d holds for 50 expired units" % len(third)
            settle(swarm, key, third, "INV.COMMIT", 1)
        finally:
            audits = auditor.finish()
    with RawClient(srv.port) as c:
        counts = inv_get(c, key)
        assert counts == {"total": UNITS, "available": 0, "held": 0, "sold": UNITS, "holds": 0}, \
            counts
        assert c.call("INV.AUDIT", key) == []
    buyers_all = set(paid) | set(second) | set(third)
    assert len(buyers_all) == UNITS, "a shopper bought twice"
    print("    connect %.2fs, first race %.2fs, expiry seen %.0f ms after the deadline, "
          "%d audits during the sale" % (connect_s, race_s, lag_ms, audits))
    assert audits >= 3, "the auditor must have run while the sale ran"


def reserve_reply(c, key, hold, owner=None):
    args = ["INV.RESERVE", key, hold, 1, 600000] + (["OWNER", owner] if owner else [])
    return c.call(*args)


@case
@hotkv_only("INV.* is HotKV's native inventory")
def sold_out_answers_come_from_every_thread_and_never_early(t, srv):
    """Once an item is sold out, every thread answers SOLDOUT itself (INFO
    inv_soldout_answered_here) with the item's own reply; retries and owners still get
    HOLDEXISTS and OWNERLIMIT; a released unit is sold to the very next reserve from any
    connection (no phantom sold-out), also while 64 connections hammer the item."""
    key = "drop:sneaker-y"  # no hash tag: the item lives on whichever shard its slot says
    threads = t.threads or os.cpu_count()
    conns = [RawClient(srv.port) for _ in range(32)]
    try:
        with srv.raw() as admin:
            assert admin.call("INV.CREATE", key, 8, "MAXPEROWNER", 1) == "OK"
            before = admin.call("INFO", "inventory")
        winners = {}
        for i, c in enumerate(conns):
            r = reserve_reply(c, key, "first-%d" % i, "customer:%d" % i)
            if isinstance(r, int):
                winners[i] = "first-%d" % i
            else:
                assert str(r) == ("SOLDOUT not enough stock for '%s': 0 available, 1 requested"
                                  % key), r
        assert len(winners) == 8, winners
        for rnd in range(20):
            for i, c in enumerate(conns):
                r = reserve_reply(c, key, "r%d-%d" % (rnd, i), "shopper:%d" % i)
                assert str(r) == ("SOLDOUT not enough stock for '%s': 0 available, 1 requested"
                                  % key), r
        for i, c in enumerate(conns):
            # A retry of a hold that exists, from any connection, is HOLDEXISTS...
            w = sorted(winners)[i % 8]
            r = reserve_reply(c, key, winners[w])
            assert str(r) == "HOLDEXISTS hold '%s' of '%s' already exists (held)" % (
                winners[w], key), r
            # ...and an owner who holds a unit is at the limit.
            r = reserve_reply(c, key, "again-%d" % i, "customer:%d" % w)
            assert str(r).startswith("OWNERLIMIT owner 'customer:%d' holds 1 of" % w), r
        with srv.raw() as admin:
            after = admin.call("INFO", "inventory")
        here = int(re.search(r"inv_soldout_answered_here:(\d+)", after).group(1)) - \
            int(re.search(r"inv_soldout_answered_here:(\d+)", before).group(1))
        if threads > 1:
            assert here >= 100, "only %d SOLDOUT answers were given away from the item" % here
        else:
            assert here == 0, here

        # Released units: the next reserve from any connection gets it.
        held = [winners[i] for i in sorted(winners)]
        for n in range(len(conns)):
            c = conns[n]
            with srv.raw() as admin:
                assert admin.call("INV.RELEASE", key, held.pop(0)) == 1
            hold = "resold-%d" % n
            r = reserve_reply(c, key, hold, "late:%d" % n)
            assert r == 0, "connection %d was refused a released unit: %r" % (n, r)
            held.append(hold)
            r = reserve_reply(c, key, "after-%d" % n, "later:%d" % n)
            assert str(r).startswith("SOLDOUT "), r

        # While 64 connections hammer the sold-out item, released units are still taken.
        stop = threading.Event()
        problems, wins = [], []

        def hammer(w):
            try:
                with RawClient(srv.port) as hc:
                    for k in range(100_000):
                        if stop.is_set():
                            return
                        r = reserve_reply(hc, key, "h%d-%d" % (w, k), "hammer:%d-%d" % (w, k))
                        if isinstance(r, int):
                            wins.append(r)
                        elif not str(r).startswith("SOLDOUT "):
                            problems.append(str(r))
                            return
            except (ConnectionClosed, OSError) as e:
                problems.append(repr(e))

        pool = [threading.Thread(target=hammer, args=(w,)) for w in range(64)]
        for th in pool:
            th.start()
        try:
            with srv.raw() as admin:
                for n in range(8):
                    assert admin.call("INV.RELEASE", key, held.pop(0)) == 1
                    deadline = time.monotonic() + 10
                    while inv_get(admin, key)["available"] != 0:
                        assert time.monotonic() < deadline, "a released unit stayed unsold"
                        time.sleep(0.001)
                    counts = inv_get(admin, key)
                    assert_balanced(counts, 8)
                    assert admin.call("INV.AUDIT", key) == []
        finally:
            stop.set()
            for th in pool:
                th.join(timeout=30)
        assert not problems, problems[:3]
        assert len(wins) == 8 and all(w == 0 for w in wins), wins
    finally:
        for c in conns:
            c.close()


# ----------------------------------------------------------------------------------------------
# kill -9 in the middle of a sale.


def shopper(port, wid, key, stop, acked, errors):
    """Reserves one unit per hold and pays for every other one, recording what was
    acknowledged: a hold counts once its reply was read, a sale once its commit's was."""
    try:
        c = RawClient(port, timeout=10)
    except OSError as e:
        errors.append("connect: %r" % e)
        return
    try:
        for n in range(1_000_000):
            if stop.is_set():
                break
            hold = "w%d-%d" % (wid, n)
            r = c.call("INV.RESERVE", key, hold, 1, 600000, "OWNER", "customer:%d" % wid)
            if isinstance(r, RespError):
                errors.append("reserve %s: %s" % (hold, r))
                return
            acked["holds"].append(hold)
            if n % 2 == 0:
                if c.call("INV.COMMIT", key, hold) != 1:
                    errors.append("commit %s refused" % hold)
                    return
                acked["sales"].append(hold)
    except (ConnectionClosed, OSError):
        pass  # the kill
    finally:
        c.close()


@case
@hotkv_only("INV.* is HotKV's native inventory")
def kill9_mid_sale_keeps_every_acknowledged_hold_and_sale(t, srv):
    """16 shoppers reserve and pay; kill -9; every acknowledged hold and sale is back, and
    holds that expired while the server was down return their stock after the restart."""
    key, short = "{drop}:inv", "{drop}:short"
    total = 1_000_000
    with DataDir() as d:
        s = t.server(extra_args=d.args("always"), expect_exit=None).start()
        with s.raw() as c:
            assert c.call("INV.CREATE", key, total) == "OK"
            assert c.call("INV.CREATE", short, 100) == "OK"
            for h in range(100):
                assert c.call("INV.RESERVE", short, "s%d" % h, 1, 400) == 99 - h
        stop = threading.Event()
        acked = {"holds": [], "sales": []}
        errors = []
        threads = [threading.Thread(target=shopper, args=(s.port, w, key, stop, acked, errors))
                   for w in range(16)]
        kill9_under_load(s, threads, stop, random.Random(7).uniform(0.4, 0.8))
        assert not errors, errors[:3]
        assert len(acked["holds"]) >= 16, "the sale barely ran: %d holds" % len(acked["holds"])
        time.sleep(0.5)  # the short holds' deadlines pass while the server is down
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            with s2.raw() as c:
                counts = inv_get(c, key)
                assert_balanced(counts, total)
                holds, sales = len(acked["holds"]), len(acked["sales"])
                # Acknowledged work is all there; at most one call per shopper was in flight.
                assert holds <= counts["held"] + counts["sold"] <= holds + 16, (counts, holds)
                assert sales <= counts["sold"] <= sales + 16, (counts, sales)
                sold = set(acked["sales"])
                for h in acked["holds"]:
                    want = ("committed",) if h in sold else ("held", "committed")
                    got = hold_state(c, key, h)
                    assert got in want, "hold %s is %r after restart" % (h, got)
                # Expired while down: back in stock right after loading (or within 100 ms).
                for _ in range(100):
                    short_counts = inv_get(c, short)
                    if short_counts["available"] == 100:
                        break
                    time.sleep(0.01)
                assert short_counts == {"total": 100, "available": 100, "held": 0, "sold": 0,
                                        "holds": 0}, short_counts
                assert hold_state(c, short, "s0") == "expired"
                assert c.call("INV.AUDIT") == []
                # The sale goes on where it stopped.
                left = c.call("INV.RESERVE", key, "after-restart", 1, 600000)
                assert left == counts["available"] - 1, (left, counts)
            print("    %d holds and %d sales acknowledged before the kill, all recovered"
                  % (holds, sales))
        finally:
            s2.stop()


# ----------------------------------------------------------------------------------------------
# The simulator against this server.


def sale_binary(t):
    return os.path.join(os.path.dirname(t.binary), "hotkv-sale")


@case
@hotkv_only("hotkv-sale is built next to hotkv")
def simulator_sells_exactly_the_stock_in_both_styles(t, srv):
    """hotkv-sale, native and plain styles: every unit sold once, none oversold, none stuck."""
    exe = sale_binary(t)
    assert os.access(exe, os.X_OK), "missing %s" % exe
    for style in ("native", "plain"):
        cmd = [exe, "--port", str(srv.port), "--style", style, "--shoppers", "2000",
               "--units", "200", "--bots", "0.1", "--abandon", "0.2", "--hold-ttl-ms", "1000",
               "--pay-min-ms", "10", "--pay-max-ms", "200", "--arrival-ms", "200",
               "--duration-s", "30", "--seed", "5", "--cleanup"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        out = p.stdout
        assert p.returncode == 0, "%s\n%s\n%s" % (" ".join(cmd), out, p.stderr)
        assert re.search(r"^\s+oversold\s+0$", out, re.M), out
        assert re.search(r"^\s+units sold\s+200 of 200\b", out, re.M), out
        assert re.search(r"^\s+result\s+OK$", out, re.M), out
        line = re.search(r"^\s+requests\s+.*$", out, re.M)
        print("    %s: %s" % (style, line.group(0).strip() if line else "?"))


if __name__ == "__main__":
    have = raise_nofile(SHOPPERS + 1024)
    if have < SHOPPERS + 256:
        print("# RLIMIT_NOFILE is %d (hard limit); %d shoppers need %d descriptors: raise the "
              "hard limit (ulimit -Hn) to run this test" % (have, SHOPPERS, SHOPPERS + 256))
        sys.exit(1)
    run_cases(__doc__.splitlines()[0], server_kw={"config": {"maxclients": SHOPPERS + 100}})
