#!/usr/bin/python3
"""A stock redis-server 7.0 as a replica of the server under test (the oracle for the master's
side of replication: its snapshot, its stream of effects, its offsets and WAIT).

- Full sync, disk (`repl-diskless-sync no`: `$<length>` payload) and diskless (`$EOF:` form):
  a data set of every type both servers have, in several databases, then 100,000 mixed
  pipelined writes (strings with deadlines, counters, hashes, lists, sets, sorted sets,
  streams, deletions, expiry changes, transactions, a script, FLUSHDB, SWAPDB): every key,
  value and TTL of every database equal on the replica, and its slave_repl_offset equal to the
  master's master_repl_offset. `redis-cli --rdb` fetches the master's snapshot and
  `redis-check-rdb` calls it OK.
- Keys that expire on the master go from the replica too (the master sends their DEL).
- WAIT answers 1 once the replica has the writes; 0 at the timeout while it is stopped
  (SIGSTOP); min-replicas-to-write 1 refuses writes with -NOREPLICAS once the stopped replica's
  last acknowledgement is older than min-replicas-max-lag, and accepts them again after.
- The replica's link killed on the master (CLIENT KILL TYPE replica): it comes back by partial
  resync (+CONTINUE, sync_partial_ok), missing nothing written meanwhile.
- After a diskless payload the stream waits for the replica's first REPLCONF ACK, so no stream
  byte can share a read with the payload's end mark (a replica would miss the mark).
- INFO replication lists the replica as slave0 (ip, port, state=online, offset, lag), ROLE
  names it, CLIENT LIST shows the link with flag S.

Run: /usr/bin/python3 test_redis_replica.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import Server, case, encode_command, run_cases, set_refused, wait_for  # noqa: E402
from dataset import (atomic, compare, hashes, keyspace, lists, other_databases, sets,  # noqa: E402
                     snapshot, streams, strings, zsets)

MIXED_WRITES = 100_000
PIPELINE = 1000
SYNC_TIMEOUT_S = 60


def info(c):
    return c.info("replication")


class Replica(Server):
    """A redis-server replica in a directory of its own (a disk-loading replica keeps the
    payload as dump.rdb there), removed with it."""

    def __init__(self, master):
        self.dir = tempfile.TemporaryDirectory(prefix="hotkv-replica-")
        super().__init__("redis", config={"dir": self.dir.name,
                                          "repl-diskless-load": "disabled"})
        self.master = master

    def stop(self, sig=signal.SIGTERM):
        try:
            super().stop(sig)
        finally:
            self.dir.cleanup()


def start_replica(master):
    r = Replica(master)
    r.start()
    r.client().replicaof("127.0.0.1", master.port)
    return r


def master_server(t, **config):
    """The server under test in a directory of its own (a disk sync writes its snapshot
    there); the directory goes when the process exits (the TemporaryDirectory's finalizer)."""
    d = tempfile.TemporaryDirectory(prefix="hotkv-master-")
    srv = t.server(config=dict(config, dir=d.name))
    srv.tmpdir = d
    return srv


def wait_in_sync(master, replica):
    m, r = master.client(), replica.client()
    wait_for(lambda: info(r).get("master_link_status") == "up", "the replica's link",
             SYNC_TIMEOUT_S)

    def same():
        mo = info(m)["master_repl_offset"]
        return mo > 0 and info(r).get("slave_repl_offset") == mo
    wait_for(same, "the replica's offset to reach the master's", SYNC_TIMEOUT_S)


def initial_data(srv):
    rnd = random.Random(11)
    c = srv.client()
    strings(c, rnd)
    hashes(c, rnd)
    sets(c, rnd)
    zsets(c, rnd)
    lists(c, rnd)
    streams(c, rnd)
    keyspace(c, rnd)
    other_databases(srv, rnd)
    atomic(c, srv)


def mixed_writes(srv, count):
    """`count` pipelined writes of every kind over 3 databases; bounded in time by its count."""
    rnd = random.Random(5)
    clients = [srv.client(db=db) for db in (0, 1, 7)]
    done = 0
    while done < count:
        c = clients[(done // PIPELINE) % len(clients)]
        p = c.pipeline(transaction=False)
        for _ in range(PIPELINE):
            k = rnd.randrange(500)
            op = rnd.randrange(14)
            if op == 0:
                p.set("s:%d" % k, "v%d" % rnd.randrange(10**6))
            elif op == 1:
                p.set("t:%d" % k, "x", px=3_600_000 + rnd.randrange(1000))
            elif op == 2:
                p.incrby("n:%d" % (k % 50), rnd.randrange(-9, 10))
            elif op == 3:
                p.hset("h:%d" % (k % 80), "f%d" % rnd.randrange(20), k)
            elif op == 4:
                p.hincrby("h:%d" % (k % 80), "ctr", 1)
            elif op == 5:
                p.rpush("l:%d" % (k % 40), "e%d" % k)
            elif op == 6:
                p.lpop("l:%d" % (k % 40))
            elif op == 7:
                p.sadd("set:%d" % (k % 40), "m%d" % rnd.randrange(100))
            elif op == 8:
                p.srem("set:%d" % (k % 40), "m%d" % rnd.randrange(100))
            elif op == 9:
                p.zincrby("z:%d" % (k % 30), rnd.randrange(1, 50) / 4, "m%d" % rnd.randrange(30))
            elif op == 10:
                p.xadd("x:%d" % (k % 10), {"k": k}, maxlen=200, approximate=False)
            elif op == 11:
                p.delete("s:%d" % k)
            elif op == 12:
                p.expire("s:%d" % k, 3600 + rnd.randrange(100))
            else:
                p.incrbyfloat("f:%d" % (k % 20), "0.5")
        p.execute()
        done += PIPELINE
    c = clients[0]
    t = c.pipeline(transaction=True)
    t.set("tx:a", "1")
    t.incr("tx:b")
    t.hset("tx:h", "f", "v")
    t.execute()
    c.eval("redis.call('SET', KEYS[1], ARGV[1]); redis.call('RPUSH', KEYS[2], ARGV[1]); "
           "return 1", 2, "lua:k", "lua:l", "val")
    c5 = srv.client(db=5)
    c5.set("doomed", "1")
    c5.flushdb()
    c5.set("after-flush", "1")
    c.swapdb(8, 9)
    srv.client(db=9).set("in-nine", "yes")


def full_sync_case(t, diskless):
    cfg = {"repl-diskless-sync": "yes" if diskless else "no", "repl-diskless-sync-delay": "0"}
    with master_server(t, **cfg) as master:
        initial_data(master)
        replica = start_replica(master)
        try:
            wait_in_sync(master, replica)
            compare(snapshot(master), snapshot(replica))
            mixed_writes(master, MIXED_WRITES)
            wait_in_sync(master, replica)
            hot, red = snapshot(master), snapshot(replica)
            assert len(hot) > 1000, len(hot)
            compare(hot, red)
            f = info(master.client())
            assert f["connected_slaves"] == 1, f
            s0 = f["slave0"]
            assert s0["ip"] == "127.0.0.1" and s0["port"] == replica.port, s0
            assert s0["state"] == "online", s0
        finally:
            replica.stop()


@case
def a_redis_replica_follows_a_disk_full_sync_and_100k_writes(t, srv):
    """repl-diskless-sync no: the `$<length>` payload, then the stream; all equal."""
    full_sync_case(t, diskless=False)


@case
def a_redis_replica_follows_a_diskless_full_sync_and_100k_writes(t, srv):
    """repl-diskless-sync yes: the `$EOF:<mark>` payload, then the stream; all equal."""
    full_sync_case(t, diskless=True)


@case
def redis_cli_rdb_fetches_a_snapshot_redis_check_rdb_accepts(t, srv):
    """redis-cli --rdb (SYNC-style transfer) gets a file redis-check-rdb calls OK."""
    for diskless in ("no", "yes"):
        with master_server(t, **{"repl-diskless-sync": diskless,
                                 "repl-diskless-sync-delay": "0"}) as master:
            initial_data(master)
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "fetched.rdb")
                out = subprocess.run(["redis-cli", "-p", str(master.port), "--rdb", path],
                                     capture_output=True, timeout=60)
                assert out.returncode == 0, out.stderr.decode() + out.stdout.decode()
                check = subprocess.run(["redis-check-rdb", path], capture_output=True,
                                       timeout=60)
                text = check.stdout.decode()
                assert check.returncode == 0 and "RDB looks OK" in text, text


@case
def keys_expired_on_the_master_leave_the_replica(t, srv):
    """The master's expiry reaches the replica as a DEL: its DBSIZE drops (a replica never
    deletes an expired key by itself)."""
    with master_server(t) as master:
        m = master.client()
        m.set("stays", "1")
        for i in range(50):
            m.set("brief:%d" % i, "x", px=300)
        replica = start_replica(master)
        try:
            wait_in_sync(master, replica)
            r = replica.client()
            wait_for(lambda: r.dbsize() == 1, "the expired keys to leave the replica", 10)
            assert r.get("stays") == "1"
        finally:
            replica.stop()


@case
def wait_counts_the_replica_and_noreplicas_closes_the_window(t, srv):
    """WAIT 1 = 1 with a replica; WAIT = 0 at its timeout while the replica is stopped;
    min-replicas-to-write 1 then refuses writes, and takes them again once it is back."""
    with master_server(t) as master:
        m = master.client()
        replica = start_replica(master)
        try:
            wait_in_sync(master, replica)
            for i in range(20):
                m.set("w:%d" % i, i)
                assert m.wait(1, 5000) == 1
            assert m.wait(0, 0) >= 0
            os.kill(replica.proc.pid, signal.SIGSTOP)
            try:
                m.set("while-stopped", "1")
                started = time.monotonic()
                assert m.wait(1, 300) == 0
                assert time.monotonic() - started >= 0.25
                m.config_set("min-replicas-max-lag", 2)
                m.config_set("min-replicas-to-write", 1)
                wait_for(lambda: set_refused(m, "probe", "1", "NOREPLICAS"),
                         "-NOREPLICAS with the replica stopped", 15)
                assert m.get("w:3") == "3"  # reads go on
            finally:
                os.kill(replica.proc.pid, signal.SIGCONT)
            wait_for(lambda: not set_refused(m, "probe", "2", "NOREPLICAS"), "writes again", 15)
            assert m.wait(1, 5000) == 1
            assert replica.client().get("probe") == "2"
            m.config_set("min-replicas-to-write", 0)
        finally:
            replica.stop()


@case
def a_killed_link_comes_back_by_partial_resync(t, srv):
    """CLIENT KILL TYPE replica: the replica reconnects with PSYNC and continues from the
    backlog; writes made meanwhile arrive; ROLE and CLIENT LIST name the replica."""
    with master_server(t) as master:
        m = master.client()
        for i in range(100):
            m.set("k:%d" % i, i)
        replica = start_replica(master)
        try:
            wait_in_sync(master, replica)
            role = m.execute_command("ROLE")
            assert role[0] == "master" and len(role[2]) == 1, role
            assert int(role[2][0][1]) == replica.port, role
            links = m.client_list(_type="replica")
            assert len(links) == 1 and "S" in links[0]["flags"], links
            before = m.info("stats")["sync_partial_ok"]
            assert m.client_kill_filter(_type="slave") == 1
            for i in range(100, 200):
                m.set("k:%d" % i, i)
            wait_for(lambda: m.info("stats")["sync_partial_ok"] == before + 1,
                     "a partial resync", 20)
            wait_in_sync(master, replica)
            compare(snapshot(master), snapshot(replica))
        finally:
            replica.stop()


def read_until(sock, buf, done, what, timeout=30):
    """Reads from `sock` into `buf` (a bytearray) until done(buf); bounded by `timeout`."""
    deadline = time.monotonic() + timeout
    while not done(buf):
        left = deadline - time.monotonic()
        assert left > 0, "timed out waiting for %s; got %r" % (what, bytes(buf[-200:]))
        sock.settimeout(left)
        chunk = sock.recv(65536)
        assert chunk, "connection closed waiting for %s" % what
        buf += chunk


@case
def the_stream_after_a_diskless_payload_waits_for_the_first_ack(t, srv):
    """A hand-made replica asks for a diskless full sync, reads the payload up to its end mark,
    and sends nothing: writes made meanwhile are not sent (they would share a read with the
    mark) until its first REPLCONF ACK, and then arrive."""
    with master_server(t, **{"repl-diskless-sync": "yes",
                             "repl-diskless-sync-delay": "0"}) as master:
        m = master.client()
        m.set("before", "1")
        with socket.create_connection(("127.0.0.1", master.port), timeout=30) as s:
            buf = bytearray()
            for cmd in (("REPLCONF", "listening-port", "1"), ("REPLCONF", "capa", "eof",
                                                                "capa", "psync2")):
                s.sendall(encode_command(*cmd))
                read_until(s, buf, lambda b: b.endswith(b"+OK\r\n"), "REPLCONF's +OK")
                buf.clear()
            s.sendall(encode_command("PSYNC", "?", "-1"))
            read_until(s, buf, lambda b: b.count(b"\r\n") >= 2, "+FULLRESYNC and $EOF:")
            assert buf.startswith(b"+FULLRESYNC "), bytes(buf[:100])
            head = bytes(buf).split(b"\r\n")[1]
            assert head.startswith(b"$EOF:") and len(head) == 45, head
            mark = head[5:]
            read_until(s, buf, lambda b: len(b) > 100 and b.endswith(mark), "the end mark")
            m.set("after", "2")
            time.sleep(0.5)  # long enough for the stream to have been sent, were it sent
            s.settimeout(0.2)
            try:
                early = s.recv(65536)
            except socket.timeout:
                early = b""
            assert early == b"", "stream bytes before the first ACK: %r" % early
            s.sendall(encode_command("REPLCONF", "ACK", "0"))
            rest = bytearray()
            read_until(s, rest, lambda b: b"after" in b, "the stream after the ACK")
            assert b"SET" in rest.upper(), bytes(rest)


if __name__ == "__main__":
    run_cases(__doc__.split("\n")[0], shared_server=False)
