#!/usr/bin/env python3
"""redis-sentinel failover: a master, two replicas and three sentinels on loopback.

Each case starts its own topology: one master and two replicas (each with a config file in a
directory of its own, the replicas started with `replicaof`, because Sentinel sends CONFIG
REWRITE), and three real redis-sentinel processes monitoring `mymaster` with quorum 2. The data
nodes are the target (hotkv, or redis-server with --kind redis); the sentinels are always
redis-sentinel. Clients find the master through redis-py's Sentinel client, as applications do.

- The topology comes up: every sentinel sees two replicas and two other sentinels.
- A sale across a kill -9 failover: shoppers reserve with a check-and-decrement script and WAIT
  (an order is acknowledged once both replicas have it); the sentinels promote a replica and the
  shoppers follow; the killed master comes back as a replica of the new one. No acknowledged
  order is lost, none is present twice, no unit is sold twice and the stock never goes
  negative.
- The same with the native inventory (hotkv only): holds keep their deadlines across the
  failover and release themselves on the new master.
- SENTINEL FAILOVER picks the replica with the lowest replica-priority and never one with
  priority 0 (with only such replicas it answers -NOGOODSLAVE).
- Three kill -9 failovers in a row with a client writing throughout; the data is checked after
  each.
- min-replicas-to-write 1 with both replicas stopped (SIGSTOP): -NOREPLICAS once
  min-replicas-max-lag has passed, writes again after SIGCONT.

The sentinels' periods are shortened with SENTINEL DEBUG: INFO every 1000 ms, so that their
view of the replicas' offsets and priorities is fresh when they pick one; hello every 500 ms,
so that a restarted old master is converted to a replica after 2 s instead of 8 s (Sentinel
waits four hello periods before reconfiguring a node that came back as a master); PING every
500 ms, because after switching to a new master a sentinel sends its first PING one ping period
after making the link and marks the master down if no PONG came within down-after-milliseconds
of making it: with both at 1000 ms a healthy new master was failed over again. Every wait is
bounded; every process is killed (SIGKILL) when a case ends, and at exit.

Run: /usr/bin/python3 test_sentinel.py --server build/hotkv --threads 4   (or --kind redis)
     [--case NAME]   runs only the cases whose name contains NAME
"""

import atexit
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402
from redis.sentinel import Sentinel  # noqa: E402

from server import (ConnectionClosed, RespError, Server, case, expect_error,  # noqa: E402
                    hotkv_only, run_cases)
from server import wait_for as server_wait_for  # noqa: E402

MASTER_NAME = "mymaster"
QUORUM = 2
DOWN_AFTER_MS = 1500
FAILOVER_TIMEOUT_MS = 6000
# A kill -9 is noticed after DOWN_AFTER_MS, agreed on within about a second, and the election
# waits up to a second at random; a failed election is retried after 2 x failover-timeout.
FAILOVER_WAIT_S = 2 * FAILOVER_TIMEOUT_MS / 1000 + 15
SETTLE_WAIT_S = 25
NOREPLICAS = "NOREPLICAS Not enough good replicas to write."

# Every process a case started, so that an interrupted run (Ctrl-C, ctest's timeout) still
# kills them: they run in their own sessions and would otherwise outlive the script.
_LIVE = set()
# Set when a replica never linked to its master: every later case then fails at once instead of
# waiting for the same thing again (a build without replication fails in seconds, not minutes).
_NO_LINK = []


def _kill_all():
    for srv in list(_LIVE):
        srv._kill()


atexit.register(_kill_all)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def wait_for(cond, what, timeout):
    """server.wait_for, with errors from a node that is restarting counted as "not yet"."""
    return server_wait_for(cond, what, timeout, (redis.RedisError, OSError, ConnectionClosed))


def pairs(flat):
    """A flat [k, v, k, v ...] reply as a dict."""
    return dict(zip(flat[0::2], flat[1::2]))


# ----------------------------------------------------------------------------------------------
# The topology.


class Topology:
    """Three data nodes (node 0 starts as the master) and three sentinels, each in a directory
    of its own under one temp dir. Nodes keep their ports across restarts: the sentinels and
    the replicas know them by address.

    priorities: replica-priority of each data node (None: the default, 100).
    """

    def __init__(self, target, priorities=(None, None, None)):
        self.target = target
        self.priorities = priorities
        self.root = tempfile.mkdtemp(prefix="hotkv-sentinel-")
        self.nodes = []
        self.sentinels = []
        self.clients = []

    # -- start and stop --------------------------------------------------------------------

    def _dir(self, name):
        path = os.path.join(self.root, name)
        os.mkdir(path)
        return path

    def _node_config(self, i, master_port):
        conf = {
            # A replica that connects starts its full sync at once instead of waiting 5 s
            # for others to join it.
            "repl-diskless-sync-delay": "0",
        }
        if self.priorities[i] is not None:
            conf["replica-priority"] = str(self.priorities[i])
        if master_port is not None:
            conf["replicaof"] = "127.0.0.1 %d" % master_port
        return conf

    def _start(self, srv):
        _LIVE.add(srv)
        return srv.start()

    def start(self):
        if _NO_LINK:
            self.close()
            raise AssertionError("not tried: " + _NO_LINK[0])
        try:
            self._start_nodes()
            self._start_sentinels()
            self.wait_settled(self.nodes[0], timeout=SETTLE_WAIT_S)
        except BaseException:
            self.dump_logs("topology did not come up")
            self.close()
            raise
        return self

    def _start_nodes(self):
        master = self.target.server(workdir=self._dir("node0"), expect_exit=None,
                                    config=self._node_config(0, None))
        self._start(master)
        master.fixed_port = master.port
        self.nodes.append(master)
        for i in (1, 2):
            replica = self.target.server(workdir=self._dir("node%d" % i), expect_exit=None,
                                         config=self._node_config(i, master.port))
            self._start(replica)
            replica.fixed_port = replica.port
            self.nodes.append(replica)
        try:
            for replica in self.nodes[1:]:
                self.wait_replica_of(replica, master, timeout=15)
        except AssertionError as e:
            _NO_LINK.append("a replica did not link to its master in an earlier case (%s)" % e)
            raise

    def _start_sentinels(self):
        m = self.nodes[0].port
        for i in range(3):
            conf = {
                "sentinel monitor": "%s 127.0.0.1 %d %d" % (MASTER_NAME, m, QUORUM),
                "sentinel down-after-milliseconds": "%s %d" % (MASTER_NAME, DOWN_AFTER_MS),
                "sentinel failover-timeout": "%s %d" % (MASTER_NAME, FAILOVER_TIMEOUT_MS),
                "sentinel parallel-syncs": "%s 1" % MASTER_NAME,
            }
            s = Server("redis", workdir=self._dir("sentinel%d" % i), config=conf,
                       expect_exit=None, extra_args=["--sentinel", "--loglevel", "notice"])
            self._start(s)
            s.fixed_port = s.port
            with s.raw() as c:
                assert c.call("SENTINEL", "DEBUG", "info-period", "1000", "ping-period", "500",
                              "publish-period", "500") == "OK"
            self.sentinels.append(s)

    def close(self):
        for c in self.clients:
            try:
                c.close()
            except Exception:
                pass
        for srv in self.sentinels + self.nodes:
            if srv.alive():
                try:
                    os.kill(srv.pid(), signal.SIGCONT)  # a stopped node must die too
                except OSError:
                    pass
            srv._kill()
            srv.cleanup()
            _LIVE.discard(srv)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.dump_logs("case failed")
        self.close()
        return False

    def dump_logs(self, why):
        sys.stdout.write("----- %s: logs under %s -----\n" % (why, self.root))
        for name, srv in ([("node%d" % i, s) for i, s in enumerate(self.nodes)]
                          + [("sentinel%d" % i, s) for i, s in enumerate(self.sentinels)]):
            sys.stdout.write("--- %s port %s alive=%s ---\n%s\n"
                             % (name, srv.port, srv.alive(), srv.log_text(limit=4000)))
        sys.stdout.flush()

    # -- nodes -----------------------------------------------------------------------------

    def node_at(self, port):
        for n in self.nodes:
            if n.port == int(port):
                return n
        raise AssertionError("no data node on port %s" % port)

    def name(self, node):
        return "node%d" % self.nodes.index(node)

    def kill9(self, node):
        """kill -9: no shutdown, no final CONFIG REWRITE, no goodbye to the replicas."""
        os.kill(node.pid(), signal.SIGKILL)
        node.wait(timeout=10)

    def restart(self, node):
        """Starts a killed node again on its port from its (possibly rewritten) config file."""
        node.start()

    def role(self, node):
        with node.raw() as c:
            return c.call("ROLE")

    def wait_replica_of(self, replica, master, timeout):
        """Until `replica` says it is connected to `master` and `master` lists it online."""
        def linked():
            role = self.role(replica)
            if role[:4] != ["slave", "127.0.0.1", master.port, "connected"]:
                return False
            listed = self.role(master)
            return listed[0] == "master" and any(int(r[1]) == replica.port
                                                 for r in listed[2])
        wait_for(linked, "%s to replicate from %s" % (self.name(replica), self.name(master)),
                 timeout)

    # -- sentinels -------------------------------------------------------------------------

    def ask_sentinels(self, *args):
        out = []
        for s in self.sentinels:
            with s.raw() as c:
                out.append(c.call(*args))
        return out

    def master_addrs(self):
        return self.ask_sentinels("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)

    def wait_settled(self, master, timeout, priorities=None):
        """Until every sentinel names `master`, sees two other sentinels and the other two
        nodes as healthy replicas of it (flags just "slave", link ok), and each of those
        replicas is connected to it. `priorities` (port -> priority) also waits for the
        sentinels to have read those replica-priority values from INFO."""
        replicas = [n for n in self.nodes if n is not master]

        def sentinel_ok(s):
            with s.raw() as c:
                m = pairs(c.call("SENTINEL", "MASTER", MASTER_NAME))
                if int(m["port"]) != master.port or m["flags"] != "master":
                    return False
                if int(m["num-other-sentinels"]) != 2:
                    return False
                seen = {}
                for flat in c.call("SENTINEL", "REPLICAS", MASTER_NAME):
                    r = pairs(flat)
                    seen[int(r["port"])] = r
            for n in replicas:
                r = seen.get(n.port)
                if r is None or r["flags"] != "slave" or r["master-link-status"] != "ok":
                    return False
                if int(r["master-port"]) != master.port:
                    return False
                if priorities and int(r["slave-priority"]) != priorities[n.port]:
                    return False
            return True

        def settled():
            return (all(self.role(n)[:4] == ["slave", "127.0.0.1", master.port, "connected"]
                        for n in replicas)
                    and all(sentinel_ok(s) for s in self.sentinels))

        wait_for(settled, "the sentinels to agree on %s (port %d) with two healthy replicas"
                 % (self.name(master), master.port), timeout)

    def wait_new_master(self, old, timeout=FAILOVER_WAIT_S):
        """Until all three sentinels have switched to the same master other than `old`, with
        no failover in progress, and that node says it is a master; returns it.

        SENTINEL MASTER, not GET-MASTER-ADDR-BY-NAME: the leader answers the latter with the
        promoted replica as soon as it is promoted, but keeps the old address in SENTINEL
        MASTERS (which redis-py's Sentinel reads) until the failover ends. A killed master
        restarted before that comes back as an empty master that the leader still lists, and
        clients would write to it."""
        def agreed():
            ports = set()
            for s in self.sentinels:
                with s.raw() as c:
                    m = pairs(c.call("SENTINEL", "MASTER", MASTER_NAME))
                if m["flags"] != "master":
                    return None
                ports.add(int(m["port"]))
            if len(ports) != 1 or old.port in ports:
                return None
            node = self.node_at(ports.pop())
            return node if self.role(node)[0] == "master" else None
        return wait_for(agreed, "a failover away from %s" % self.name(old), timeout)

    def failover_after_kill(self, master):
        """kill -9 `master`, wait for the sentinels to promote another node, restart the
        killed one and wait until it is a replica of the new master and everything has
        settled. Returns (new master, seconds from the kill to agreement on it)."""
        t0 = time.monotonic()
        self.kill9(master)
        new = self.wait_new_master(master)
        took = time.monotonic() - t0
        self.restart(master)
        self.wait_settled(new, timeout=SETTLE_WAIT_S)
        self.check_rejoined(master, new)
        return new, took

    def check_rejoined(self, old, new):
        """The restarted old master is a replica of the new one: ROLE, INFO replication, and
        the replicaof line Sentinel's CONFIG REWRITE put into its config file."""
        role = self.role(old)
        assert role[:4] == ["slave", "127.0.0.1", new.port, "connected"], role
        info = old.client().info("replication")
        assert info["role"] == "slave" and info["master_port"] == new.port, info
        assert info["master_link_status"] == "up", info
        with open(os.path.join(old.workdir, "server.conf")) as f:
            lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
        assert "replicaof 127.0.0.1 %d" % new.port in lines, lines

    # -- clients ---------------------------------------------------------------------------

    def sentinel_client(self):
        """redis-py's Sentinel over the three sentinels, as an application uses it."""
        return Sentinel([("127.0.0.1", s.port) for s in self.sentinels],
                        socket_timeout=1.0, socket_connect_timeout=1.0)

    def master_client(self):
        """A client that finds the master through the sentinels and finds it again after a
        failover (redis-py asks the sentinels on every new connection, and turns a
        -READONLY from a demoted master into a connection error)."""
        c = self.sentinel_client().master_for(MASTER_NAME, socket_timeout=3.0,
                                              socket_connect_timeout=1.0,
                                              decode_responses=True)
        self.clients.append(c)
        return c


# Errors a client sees while the master is down or being replaced: retried.
TRANSIENT = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)
TRANSIENT_PREFIXES = ("READONLY", "LOADING", "MASTERDOWN", "NOREPLICAS")


def transient(e):
    if isinstance(e, TRANSIENT):
        return True
    return isinstance(e, redis.ResponseError) and str(e).startswith(TRANSIENT_PREFIXES)


class Backoff:
    """Exponential backoff between retries, from 20 ms up to 400 ms."""

    def __init__(self):
        self.delay = 0.02

    def sleep(self):
        time.sleep(self.delay)
        self.delay = min(self.delay * 2, 0.4)

    def reset(self):
        self.delay = 0.02


def call_retrying(fn, timeout=10):
    """Calls `fn` (an idempotent client call) until it gets through: right after a failover a
    pooled connection may be one Sentinel's CLIENT KILL closed."""
    deadline = time.monotonic() + timeout
    backoff = Backoff()
    while True:
        try:
            return fn()
        except redis.RedisError as e:
            if not transient(e) or time.monotonic() > deadline:
                raise
            backoff.sleep()


def wait_replicas_caught_up(topo, master, keys, timeout=10):
    """Until every other node holds the same values as `master` for `keys` (strings and
    lists), so that a replica's copy can be compared."""
    def dump(node):
        c = node.client()
        try:
            return [c.lrange(k, 0, -1) if c.type(k) == "list" else c.get(k) for k in keys]
        finally:
            c.close()
    want = dump(master)
    wait_for(lambda: all(dump(n) == want for n in topo.nodes if n is not master),
             "the replicas to hold the master's data", timeout)


# ----------------------------------------------------------------------------------------------
# 1. The topology itself.


@case
def topology_every_sentinel_sees_two_replicas_and_two_sentinels(t, _srv):
    """A master, two replicas and three sentinels find each other; quorum is reachable."""
    with Topology(t) as topo:
        master = topo.nodes[0]
        for addr in topo.master_addrs():
            assert addr == ["127.0.0.1", str(master.port)], addr
        for s in topo.sentinels:
            with s.raw() as c:
                m = pairs(c.call("SENTINEL", "MASTER", MASTER_NAME))
                assert m["num-slaves"] == "2" and m["num-other-sentinels"] == "2", m
                assert m["quorum"] == str(QUORUM), m
                assert m["down-after-milliseconds"] == str(DOWN_AFTER_MS), m
                assert m["failover-timeout"] == str(FAILOVER_TIMEOUT_MS), m
                assert m["parallel-syncs"] == "1", m
                assert c.call("SENTINEL", "CKQUORUM", MASTER_NAME) == \
                    "OK 3 usable Sentinels. Quorum and failover authorization can be reached"
                assert len(c.call("SENTINEL", "SENTINELS", MASTER_NAME)) == 2
        # What the sentinels read from the master: its INFO lists both replicas online.
        info = master.client().info("replication")
        assert info["role"] == "master" and info["connected_slaves"] == 2, info
        ports = sorted(info["slave%d" % i]["port"] for i in range(2))
        assert ports == sorted(n.port for n in topo.nodes[1:]), info
        assert all(info["slave%d" % i]["state"] == "online" for i in range(2)), info
        # A write through the Sentinel client reaches both replicas.
        c = topo.master_client()
        assert c.set("hello", "world")
        assert c.wait(2, 5000) == 2
        for r in topo.nodes[1:]:
            assert r.client().get("hello") == "world"
        # The sentinels announce themselves on the master's hello channel; each keeps a
        # command link and a pub/sub link to every node, named by CLIENT SETNAME.
        names = [cl["name"] for cl in master.client().client_list()]
        assert sum(n.startswith("sentinel-") and n.endswith("-cmd") for n in names) == 3, names
        assert sum(n.startswith("sentinel-") and n.endswith("-pubsub")
                   for n in names) == 3, names


# ----------------------------------------------------------------------------------------------
# 2. A sale across a kill -9 failover.

# Check-and-decrement in one step: the stock cannot be oversold by racing shoppers, and every
# unit sold leaves its order id in the list (so `stock + LLEN orders` stays the starting stock).
RESERVE = """
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left > 0 then
  redis.call('DECR', KEYS[1])
  redis.call('RPUSH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


class Sale:
    """Shopper threads following the master through Sentinel.

    An order is acknowledged when the script returned 1 and WAIT then reported both replicas
    (`acked`). WAIT 1 would not be enough to require it after a failover: Sentinel promotes the
    replica with the highest offset it last read from INFO, which may be one that had not
    received the write yet (Redis documents WAIT as not making replication strongly
    consistent). Orders that only one replica acknowledged are kept apart (`acked_one`) and
    reported. An attempt whose outcome is unknown (connection lost, WAIT timed out) gets a new
    order id when retried, so an id can be present at most once."""

    def __init__(self, topo, stock_key, orders_key, shoppers):
        self.topo = topo
        self.stock_key = stock_key
        self.orders_key = orders_key
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = []
        self.acked_one = []
        self.errors = []          # unexpected: fails the case
        self.transient = {}       # error type -> count, while the master was away
        self.sold_out = threading.Event()
        self.placed_at = []       # when each script that placed an order returned
        self.min_stock_seen = None
        self.threads = [threading.Thread(target=self._shop, args=(w,), daemon=True)
                        for w in range(shoppers)]
        self.threads.append(threading.Thread(target=self._watch_stock, daemon=True))

    def start(self):
        for th in self.threads:
            th.start()
        return self

    def finish(self, timeout=15):
        self.stop.set()
        for th in self.threads:
            th.join(timeout=timeout)
        assert not any(th.is_alive() for th in self.threads), "a shopper did not stop"

    def count(self):
        with self.lock:
            return len(self.acked)

    def _note(self, e):
        with self.lock:
            if transient(e):
                name = type(e).__name__
                self.transient[name] = self.transient.get(name, 0) + 1
            else:
                self.errors.append(repr(e))

    def _shop(self, wid):
        client = self.topo.master_client()
        backoff = Backoff()
        n = 0
        while not self.stop.is_set() and not self.sold_out.is_set():
            n += 1
            oid = "w%d-%d" % (wid, n)
            try:
                # One connection for both: WAIT counts the replicas that have this
                # connection's writes.
                p = client.pipeline(transaction=False)
                p.eval(RESERVE, 2, self.stock_key, self.orders_key, oid)
                p.wait(2, 500)
                placed, replicas = p.execute(raise_on_error=False)
            except redis.RedisError as e:
                self._note(e)
                backoff.sleep()
                continue
            for r in (placed, replicas):
                if isinstance(r, Exception):
                    self._note(r)
                    backoff.sleep()
                    break
            else:
                backoff.reset()
                if placed == 1:
                    with self.lock:
                        self.placed_at.append(time.monotonic())
                if placed not in (0, 1):
                    with self.lock:
                        self.errors.append("script returned %r" % (placed,))
                elif placed == 0:
                    self.sold_out.set()
                elif replicas >= 2:
                    with self.lock:
                        self.acked.append(oid)
                elif replicas == 1:
                    with self.lock:
                        self.acked_one.append(oid)

    def _watch_stock(self):
        """Samples the stock on whatever the sentinels call the master; it never goes below
        zero."""
        client = self.topo.master_client()
        while not self.stop.is_set():
            try:
                v = client.get(self.stock_key)
            except redis.RedisError:
                time.sleep(0.05)
                continue
            if v is not None:
                v = int(v)
                with self.lock:
                    if self.min_stock_seen is None or v < self.min_stock_seen:
                        self.min_stock_seen = v
            time.sleep(0.01)


@case
def sale_across_a_kill9_failover_loses_no_acknowledged_order(t, _srv):
    """8 shoppers, kill -9 the master mid-sale: every acknowledged order survives, none twice."""
    units = 3000
    with Topology(t) as topo:
        old = topo.nodes[0]
        setup = topo.master_client()
        assert setup.set("stock", units)
        assert setup.wait(2, 5000) == 2
        sale = Sale(topo, "stock", "orders", shoppers=8).start()
        try:
            # Kill once a good part of the stock is sold and acknowledged, long before the end.
            wait_for(lambda: sale.count() >= units // 5, "the first acknowledged orders", 20)
            assert not sale.sold_out.is_set()
            before_kill = sale.count()
            new, took = topo.failover_after_kill(old)
            # The sale goes on on the new master, with the old one back as a replica, until
            # the last unit is gone.
            wait_for(sale.sold_out.is_set, "the sale to sell out on %s" % topo.name(new), 30)
        finally:
            sale.finish()
        assert not sale.errors, sale.errors[:5]
        # Past the few calls in flight at the kill, every later acknowledgement came from the
        # new master.
        assert len(sale.acked) > before_kill + 8, "too few orders after the failover"
        # The longest stretch without an order placed: the shoppers' view of the failover.
        placed = sorted(sale.placed_at)
        outage = max(b - a for a, b in zip(placed, placed[1:]))

        c = new.client()
        orders = c.lrange("orders", 0, -1)
        stock = int(c.get("stock"))
        assert len(set(orders)) == len(orders), "an order id is present twice"
        missing = set(sale.acked) - set(orders)
        assert not missing, "%d acknowledged orders lost, e.g. %s" % (len(missing),
                                                                      sorted(missing)[:5])
        assert stock >= 0 and sale.min_stock_seen is not None and sale.min_stock_seen >= 0, \
            (stock, sale.min_stock_seen)
        assert stock + len(orders) == units, (stock, len(orders))
        assert stock == 0, "the sale ended sold out"
        # The replicas, the restarted old master included, hold the same.
        wait_replicas_caught_up(topo, new, ["stock", "orders"])
        lost_one = len(set(sale.acked_one) - set(orders))
        print("    failover %s -> %s: sentinels agreed %.1f s after the kill, no order placed "
              "for %.1f s; %d orders acknowledged by both replicas (%d before the kill), %d by "
              "one (%d of those lost); retried errors: %s"
              % (topo.name(old), topo.name(new), took, outage, len(sale.acked), before_kill,
                 len(sale.acked_one), lost_one, sale.transient))


# ----------------------------------------------------------------------------------------------
# 3. The native inventory across a failover (hotkv only).


def inv_get(c, key):
    return pairs(c.execute_command("INV.GET", key))


def inv_hold(c, key, hold):
    flat = c.execute_command("INV.HOLD", key, hold)
    return None if flat is None else pairs(flat)


@case
@hotkv_only("INV.* is HotKV's native inventory")
def inventory_holds_keep_deadlines_and_expire_on_the_new_master(t, _srv):
    """Holds survive a kill -9 failover with their deadlines and release on the new master."""
    key, total = "sneakers", 100
    # Longer than a failover and the rejoin, so the holds are still held after them.
    live_ttl_ms = 15000
    with Topology(t) as topo:
        old = topo.nodes[0]
        c = topo.master_client()
        assert c.execute_command("INV.CREATE", key, total) == "OK"
        for h in range(10):
            c.execute_command("INV.RESERVE", key, "live-%d" % h, 1, live_ttl_ms)
        for h in range(5):
            c.execute_command("INV.RESERVE", key, "short-%d" % h, 1, 200)
        for h in range(3):
            c.execute_command("INV.RESERVE", key, "paid-%d" % h, 2, live_ttl_ms)
            assert c.execute_command("INV.COMMIT", key, "paid-%d" % h) == 1
        c.execute_command("INV.RESERVE", key, "dropped", 4, live_ttl_ms)
        assert c.execute_command("INV.RELEASE", key, "dropped") == 1
        wait_for(lambda: inv_get(c, key)["held"] == 10, "the short holds to expire", 5)
        assert c.wait(2, 5000) == 2, "both replicas have the holds"
        before = {h: inv_hold(c, key, h) for h in
                  ["live-%d" % i for i in range(10)] + ["short-0", "paid-0", "dropped"]}
        counts = inv_get(c, key)
        assert counts == {"total": total, "available": 84, "held": 10, "sold": 6,
                          "holds": 10}, counts

        new, took = topo.failover_after_kill(old)
        n = new.client()
        deadline = max(h["expires_at"] for h in before.values()) / 1000.0
        assert time.time() < deadline - 0.5, "the failover outlasted the holds (%.1f s)" % took
        # Same holds, same states, same deadlines: a deadline is absolute, not restarted by
        # the promotion.
        for h, was in before.items():
            now = inv_hold(n, key, h)
            assert now is not None, "hold %s lost" % h
            for field in ("state", "qty", "created_at", "expires_at"):
                assert now[field] == was[field], (h, field, was, now)
        assert inv_get(n, key) == counts
        assert n.execute_command("INV.AUDIT") == []
        # The new master's wheel releases the live holds at their deadlines.
        wait_for(lambda: inv_get(n, key)["held"] == 0, "the live holds to expire on %s"
                 % topo.name(new), deadline - time.time() + 3)
        after = inv_get(n, key)
        assert after == {"total": total, "available": 94, "held": 0, "sold": 6,
                         "holds": 0}, after
        assert after["available"] + after["held"] + after["sold"] == total
        assert inv_hold(n, key, "live-0")["state"] == "expired"
        assert n.execute_command("INV.AUDIT") == []
        # The replicas (the old master among them) followed the expiries.
        for r in topo.nodes:
            if r is not new:
                wait_for(lambda: inv_get(r.client(), key) == after,
                         "%s to follow the expiries" % topo.name(r), 5)


# ----------------------------------------------------------------------------------------------
# 4. SENTINEL FAILOVER and replica-priority.


def manual_failover(topo, sentinel, expect):
    """SENTINEL FAILOVER on one sentinel; waits until `expect` is the master everywhere."""
    current = topo.node_at(topo.master_addrs()[0][1])
    with sentinel.raw() as c:
        assert c.call("SENTINEL", "FAILOVER", MASTER_NAME) == "OK"
    new = topo.wait_new_master(current)
    assert new is expect, "promoted %s, expected %s" % (topo.name(new), topo.name(expect))
    return new


@case
def manual_failover_promotes_by_replica_priority(t, _srv):
    """SENTINEL FAILOVER: lowest replica-priority wins; priority 0 is never promoted."""
    # node0 starts as master with priority 0: once demoted, it is never a candidate.
    with Topology(t, priorities=(0, 100, 10)) as topo:
        n0, n1, n2 = topo.nodes
        prio = {n0.port: 0, n1.port: 100, n2.port: 10}
        topo.wait_settled(n0, SETTLE_WAIT_S, priorities=prio)
        c = topo.master_client()
        assert c.set("k", "1") and c.wait(2, 5000) == 2
        s = topo.sentinels[0]

        # 10 beats 100.
        manual_failover(topo, s, expect=n2)
        topo.wait_settled(n2, SETTLE_WAIT_S, priorities=prio)
        # The client followed to the new master, and the data came along.
        assert call_retrying(lambda: c.get("k")) == "1"
        assert call_retrying(lambda: c.set("k", "2"))
        assert n2.client().get("k") == "2"
        assert c.wait(2, 5000) == 2

        # Now the replicas are node1 (100) and node0 (0): node1 it is, from another sentinel.
        manual_failover(topo, topo.sentinels[1], expect=n1)
        topo.wait_settled(n1, SETTLE_WAIT_S, priorities=prio)
        assert call_retrying(lambda: c.get("k")) == "2"
        assert n1.client().get("k") == "2"

        # With every replica at priority 0 there is nobody to promote.
        with n2.raw() as r:
            assert r.call("CONFIG", "SET", "replica-priority", "0") == "OK"
        prio[n2.port] = 0
        topo.wait_settled(n1, SETTLE_WAIT_S, priorities=prio)
        with s.raw() as r:
            expect_error(r.call("SENTINEL", "FAILOVER", MASTER_NAME),
                         "NOGOODSLAVE No suitable replica to promote")
        assert [int(a[1]) for a in topo.master_addrs()] == [n1.port] * 3
        # The demoted nodes' config files say whom they follow (Sentinel's CONFIG REWRITE).
        for node in (n0, n2):
            topo.check_rejoined(node, n1)


# ----------------------------------------------------------------------------------------------
# 5. Three kill -9 failovers in a row.


class Writer:
    """Appends 1, 2, 3 ... to a list through the Sentinel client, each followed by WAIT for
    both replicas; a number counts as acknowledged when both did. A write whose outcome is
    unknown is not repeated: the next number is written instead."""

    def __init__(self, topo, key):
        self.topo = topo
        self.key = key
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = []
        self.errors = []
        self.transient = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the writer did not stop"

    def snapshot(self):
        with self.lock:
            return list(self.acked)

    def _run(self):
        client = self.topo.master_client()
        backoff = Backoff()
        seq = 0
        while not self.stop.is_set():
            seq += 1
            try:
                p = client.pipeline(transaction=False)
                p.rpush(self.key, seq)
                p.wait(2, 500)
                pushed, replicas = p.execute(raise_on_error=False)
            except redis.RedisError as e:
                with self.lock:
                    if transient(e):
                        self.transient += 1
                    else:
                        self.errors.append(repr(e))
                backoff.sleep()
                continue
            bad = [r for r in (pushed, replicas) if isinstance(r, Exception)]
            if bad:
                with self.lock:
                    if all(transient(e) for e in bad):
                        self.transient += 1
                    else:
                        self.errors.append(repr(bad))
                backoff.sleep()
                continue
            backoff.reset()
            if replicas >= 2:
                with self.lock:
                    self.acked.append(str(seq))
            time.sleep(0.002)  # a steady stream, not a flood


def check_written(node, acked):
    """Every acknowledged number is in the list on `node`, in order, none twice."""
    got = node.client().lrange("log", 0, -1)
    assert len(set(got)) == len(got), "a number is present twice"
    missing = set(acked) - set(got)
    assert not missing, "%d acknowledged writes lost, e.g. %s" % (len(missing),
                                                                  sorted(missing)[:5])
    nums = [int(x) for x in got]
    assert nums == sorted(nums), "the list is out of order"
    return len(got)


@case
def three_kill9_failovers_in_a_row_keep_the_data(t, _srv):
    """kill -9 the master three times while a client writes; data checked after each."""
    with Topology(t) as topo:
        writer = Writer(topo, "log").start()
        took = []
        try:
            master = topo.nodes[0]
            for _ in range(3):
                n = len(writer.snapshot())
                wait_for(lambda: len(writer.snapshot()) >= n + 50,
                         "acknowledged writes on %s" % topo.name(master), 20)
                new, secs = topo.failover_after_kill(master)
                took.append("%s->%s %.1fs" % (topo.name(master), topo.name(new), secs))
                # Writes acknowledged so far are all on the new master, and it takes more.
                acked = writer.snapshot()
                check_written(new, acked)
                wait_for(lambda: len(writer.snapshot()) >= len(acked) + 50,
                         "acknowledged writes on %s" % topo.name(new), 20)
                master = new
        finally:
            writer.finish()
        assert not writer.errors, writer.errors[:5]
        acked = writer.snapshot()
        total = check_written(master, acked)
        wait_replicas_caught_up(topo, master, ["log"])
        print("    failovers %s; %d writes acknowledged, %d in the list, %d retried errors"
              % (", ".join(took), len(acked), total, writer.transient))


# ----------------------------------------------------------------------------------------------
# 6. min-replicas-to-write with the replicas stopped.


@case
def min_replicas_to_write_refuses_once_the_replicas_stop(t, _srv):
    """min-replicas-to-write 1: SIGSTOP both replicas -> -NOREPLICAS within the lag window."""
    max_lag = 2
    with Topology(t) as topo:
        master, r1, r2 = topo.nodes
        with master.raw() as c:
            assert c.call("CONFIG", "SET", "min-replicas-max-lag", str(max_lag)) == "OK"
            assert c.call("CONFIG", "SET", "min-replicas-to-write", "1") == "OK"
            assert c.call("SET", "k", "0") == "OK"
            stopped = []
            try:
                # One replica stopped: the other is still good, writes go on past the window.
                os.kill(r1.pid(), signal.SIGSTOP)
                stopped.append(r1)
                end = time.monotonic() + max_lag + 1.5
                while time.monotonic() < end:
                    r = c.call("INCR", "k")
                    assert isinstance(r, int), "refused with one good replica left: %r" % (r,)
                    time.sleep(0.05)
                # Both stopped: their acknowledgements stop, and once the newest is older than
                # min-replicas-max-lag the master counts no good replica (Redis recounts once
                # a second, hence the extra second and a half).
                os.kill(r2.pid(), signal.SIGSTOP)
                stopped.append(r2)
                t0 = time.monotonic()
                first = c.call("INCR", "k")
                assert isinstance(first, int), "refused at once: %r" % (first,)

                def refused():
                    r = c.call("INCR", "k")
                    return r if isinstance(r, RespError) else None
                err = wait_for(refused, "-NOREPLICAS", max_lag + 3)
                waited = time.monotonic() - t0
                expect_error(err, NOREPLICAS)
                assert c.call("GET", "k") is not None, "reads go on"
                info = master.client().info("replication")
                assert info["min_slaves_good_slaves"] == 0, info
            finally:
                for r in stopped:
                    os.kill(r.pid(), signal.SIGCONT)
            # Resumed replicas acknowledge again and writes are accepted.
            wait_for(lambda: isinstance(c.call("INCR", "k"), int),
                     "writes to be accepted after SIGCONT", 10)
        print("    -NOREPLICAS %.1f s after the second replica stopped (max lag %d s)"
              % (waited, max_lag))


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
