#!/usr/bin/python3
"""Append-only persistence end to end: restarts keep the data, kill -9 under load loses nothing
that was acknowledged (appendfsync always and everysec), cross-shard MSET is all or nothing
after a crash, keys whose deadline passed while the server was down are gone, a torn tail is
truncated and a damaged middle stops start-up with a message naming the file.

Each case runs the server in a fresh directory and restarts it there. Writers use raw
blocking connections so a write counts as acknowledged exactly when its reply was read.
Iterations are bounded (HOTKV_CRASH_ITERATIONS, default 20; scripts/crash_test.sh runs 500).

Run: /usr/bin/python3 test_persistence.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time

import redis

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (ConnectionClosed, DataDir, Push, RawClient, case, encode_command, free_port,  # noqa: E402
                    hotkv_only, run_cases, spread_keys, wait_for, wait_rewrite_done)

from server import kill9_under_load  # noqa: E402
import server as harness  # noqa: E402

ITERATIONS = int(os.environ.get("HOTKV_CRASH_ITERATIONS", "20"))
# A restart replays the whole log before PING answers PONG; under the sanitizers a million
# effects take well over the harness's usual 10 s.
harness.READY_TIMEOUT_S = 180
WRITERS = 8
# Under the sanitizers (HOTKV_SANITIZED=1), which look for memory errors and make every step
# about five times slower, the million-key logs shrink to a fifth and the kill -9 loops to
# eight iterations; the optimised run keeps the full sizes.
SANITIZED = os.environ.get("HOTKV_SANITIZED") == "1"
BIG_LOG_KEYS = 200_000 if SANITIZED else 1_000_000
if SANITIZED and "HOTKV_CRASH_ITERATIONS" not in os.environ:
    ITERATIONS = 8


def state(client):
    """Every key with its value and whether it has a deadline."""
    out = {}
    for k in client.keys("*"):
        out[k] = (client.get(k), client.pttl(k) > 0)
    return out


@case
def restart_keeps_every_kind_of_write(t, srv):
    """SET/INCR/MSET/APPEND/SETRANGE/EXPIRE/PERSIST/DEL/RENAME/COPY/FLUSHALL survive SIGTERM."""
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        try:
            c = s.client()
            c.set("doomed", "x")
            c.flushall()
            c.set("a", "1")
            c.incrby("a", 41)
            c.incrbyfloat("f", "2.5")
            keys = spread_keys("m", 4)
            c.mset({k: "v-" + k for k in keys})
            c.append("s", "hello")
            c.setrange("s", 1, "ipp")
            c.set("ttl", "t", ex=1000)
            c.set("persisted", "p", ex=1000)
            c.persist("persisted")
            c.set("del", "d")
            c.delete("del")
            c.set("old", "o")
            c.rename("old", "new")
            c.copy("new", "copied")
            c.set("counter", 0)
            for _ in range(100):
                c.incr("counter")
            before = state(c)
        finally:
            s.stop()
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            after = state(s2.client())
        finally:
            s2.stop()
        assert after == before, "state differs after restart:\n%r\n%r" % (before, after)
        assert before["a"] == ("42", False) and before["s"] == ("hippo", False)
        assert before["ttl"] == ("t", True) and before["persisted"] == ("p", False)


def writer(port, wid, start, keys_cross, stop, acked, errors):
    """Counts acknowledged INCRs on its own counter, acknowledged SETs of its own keys and
    acknowledged cross-shard MSETs (all keys set to the same value)."""
    try:
        c = RawClient(port, timeout=10)
    except OSError as e:
        errors.append("connect: %r" % e)
        return
    n = 0
    try:
        while not stop.is_set() and n < 1_000_000:
            n += 1
            if c.call("INCR", "ctr:%d" % wid) != start + n:
                errors.append("writer %d: INCR reply out of step" % wid)
                return
            acked["incr"][wid] = n
            c.call("SET", "w:%d:%d" % (wid, n), "v%d" % n)
            acked["set"][wid] = n
            args = []
            for k in keys_cross:
                args += [k, "%d:%d" % (wid, n)]
            c.call("MSET", *args)
    except (ConnectionClosed, OSError):
        pass  # the kill
    finally:
        c.close()


def crash_round(t, d, fsync, rng):
    s = t.server(extra_args=d.args(fsync), expect_exit=None).start()
    keys_cross = spread_keys("x", 4)
    stop = threading.Event()
    acked = {"incr": [0] * WRITERS, "set": [0] * WRITERS}
    errors = []
    base = {}
    pre = s.client()
    for w in range(WRITERS):
        v = pre.get("ctr:%d" % w)
        base[w] = int(v) if v is not None else 0  # counters continue across rounds
    pre.close()
    threads = [threading.Thread(target=writer,
                                args=(s.port, w, base[w], keys_cross, stop, acked, errors))
               for w in range(WRITERS)]
    kill9_under_load(s, threads, stop, rng.uniform(0.05, 0.4))
    assert not errors, errors
    s2 = t.server(extra_args=d.args(fsync), expect_exit=0).start()
    try:
        c = s2.client()
        for w in range(WRITERS):
            got = int(c.get("ctr:%d" % w) or 0)
            acked_total = base[w] + acked["incr"][w]
            # Every acknowledged increment is there; at most the one in flight at the kill too.
            assert acked_total <= got <= acked_total + 1, s2.log_text() + \
                "writer %d: counter %d, acknowledged %d" % (w, got, acked_total)
        vals = c.mget(keys_cross)
        assert len(set(vals)) == 1, "cross-shard MSET half applied: %r" % vals
    finally:
        s2.stop()
    return base


def crash_case(t, fsync):
    rng = random.Random(1234)
    with DataDir() as d:
        for i in range(ITERATIONS):
            crash_round(t, d, fsync, rng)
            # Stop the log directory from growing without bound across rounds.
            if i == ITERATIONS - 1:
                break


@case
def kill9_with_always_loses_nothing_acknowledged(t, srv):
    """kill -9 at random moments under 8 writers, appendfsync always: every acknowledged INCR
    and SET is there after restart and cross-shard MSETs are all or nothing."""
    crash_case(t, "always")


@case
def kill9_with_everysec_loses_nothing_acknowledged(t, srv):
    """everysec writes every record to the kernel before its reply leaves, so a process crash
    (as opposed to a power loss, bounded to about a second) loses nothing acknowledged."""
    crash_case(t, "everysec")


@case
def keys_that_expired_while_down_are_gone(t, srv):
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        c = s.client()
        for i in range(500):
            c.set("short:%d" % i, "v", px=200)
            c.set("long:%d" % i, "v", ex=1000)
        s.stop()
        time.sleep(0.4)
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            c2 = s2.client()
            assert c2.dbsize() == 500, c2.dbsize()
            assert c2.exists(*["short:%d" % i for i in range(500)]) == 0
            assert 990 * 1000 < c2.pttl("long:7") <= 1000 * 1000
        finally:
            s2.stop()


@case
def restart_with_a_million_ttl_keys(t, srv):
    """1,000,000 keys with TTLs, half of them due while the server is down: after restart
    exactly the other half is there, with its deadlines."""
    n = BIG_LOG_KEYS
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        parts = []
        for i in range(n):
            # One hash tag keeps the pipeline on one shard: this case is about replay, not
            # about pipelining across shards.
            k = b"{t}:%d" % i
            ttl = b"PX\r\n$3\r\n800" if i % 2 == 0 else b"EX\r\n$4\r\n3600"
            parts.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n$2\r\n%s\r\n"
                         % (len(k), k, ttl))
        subprocess.run(["redis-cli", "-p", str(s.port), "--pipe"], input=b"".join(parts),
                       stdout=subprocess.DEVNULL, check=True, timeout=300)
        s.stop()
        time.sleep(1.0)
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            c = s2.client()
            if not t.is_hotkv:
                # redis-server replays the keys that expired while it was down and counts them
                # in DBSIZE until active expiry reclaims them; HotKV drops them as it loads.
                wait_for(lambda: c.dbsize() == n // 2, "the expired half to be reclaimed", 60)
            assert c.dbsize() == n // 2, c.dbsize()
            assert c.exists("{t}:0") == 0 and c.exists("{t}:1") == 1
            assert 3500 * 1000 < c.pttl("{t}:%d" % (n - 1)) <= 3600 * 1000
        finally:
            s2.stop()


@case
def clients_get_loading_while_the_log_replays(t, srv):
    """While a large log replays, commands get -LOADING; then PONG and the data."""
    from server import free_port
    n = BIG_LOG_KEYS
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        proto = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(k), k)
                         for k in (b"{l}:%d" % i for i in range(n)))
        subprocess.run(["redis-cli", "-p", str(s.port), "--pipe"], input=proto,
                       stdout=subprocess.DEVNULL, check=True, timeout=300)
        s.stop()
        port = free_port()
        proc = subprocess.Popen(t.server(extra_args=d.args("everysec")).command(port),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            replies = []
            deadline = time.monotonic() + 180
            c = None
            while time.monotonic() < deadline and (not replies or replies[-1] != "PONG"):
                try:
                    if c is None:
                        c = RawClient(port)
                    replies.append(str(c.call("PING")))
                except OSError:
                    c = None
                    time.sleep(0.002)
            assert replies and replies[-1] == "PONG", replies[-3:]
            assert any(r.startswith("LOADING") for r in replies), replies[:3]
            assert c.call("DBSIZE") == n
            try:
                c.call("SHUTDOWN")
            except ConnectionClosed:
                pass
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@case
@hotkv_only("the file layout and messages are HotKV's")
def torn_tail_is_truncated_and_corrupt_middle_refused(t, srv):
    with DataDir() as d:
        s = t.server(extra_args=d.args("always")).start()
        c = s.client()
        for i in range(200):
            c.set("k:%d" % i, "v%d" % i)
        s.stop()
        files = [f for f in d.log_files() if os.path.getsize(f) > 0]
        assert files, "no log files written"
        victim = max(files, key=os.path.getsize)
        with open(victim, "ab") as f:
            f.write(b"\x40\x00\x00\x00\x12\x34")  # a record header cut short
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            assert s2.client().dbsize() == 200
        finally:
            s2.stop()
        assert "torn record" in s2.log_text(), s2.log_text()
        size = os.path.getsize(victim)
        with open(victim, "r+b") as f:
            f.seek(size // 2)
            b = f.read(1)
            f.seek(size // 2)
            f.write(bytes([b[0] ^ 0xFF]))
        # A real port: with no listener at all (port 0) the server stops before it loads.
        cmd = t.server(extra_args=d.args("always")).command(free_port())
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
        text = out.stdout + out.stderr
        assert os.path.basename(victim) in text and "offset" in text and "hotkv-check-aof" in text, text


@case
@hotkv_only("the zeros written ahead of the records are HotKV's file layout")
def always_log_ends_in_zeros_after_kill9_and_loads(t, srv):
    """With always the log file is extended with zeros ahead of its records; kill -9 leaves
    them. hotkv-check-aof calls the log valid, the restart loads every key and cuts the
    zeros, and a clean stop leaves files that end with their last record."""
    with DataDir() as d:
        s = t.server(extra_args=d.args("always"), expect_exit=None).start()
        c = s.client()
        for i in range(300):
            c.set("z:%d" % i, "v%d" % i)
        s.stop(signal.SIGKILL)
        files = d.log_files()
        padded = [f for f in files if open(f, "rb").read().endswith(b"\0" * 4096)]
        assert padded, [(f, os.path.getsize(f)) for f in files]
        check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
        out = subprocess.run([check, os.path.join(d.path, "appendonlydir")],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "AOF is valid" in out.stdout, (out.returncode, out.stdout)
        assert "zeros written ahead" in out.stdout, out.stdout
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            c2 = s2.client()
            assert c2.dbsize() == 300
            assert c2.get("z:299") == "v299"
            c2.set("after", "restart")
        finally:
            s2.stop()
        for f in d.log_files():
            with open(f, "rb") as fh:
                data = fh.read()
            assert not data.endswith(b"\0" * 16), (f, len(data))
        s3 = t.server(extra_args=d.args("always")).start()
        try:
            assert s3.client().get("after") == "restart"
            assert s3.client().dbsize() == 301
        finally:
            s3.stop()


def start_with_small_disk(t, d, fsync, fsize=200000):
    """A server whose files may not grow past `fsize` bytes (RLIMIT_FSIZE: the disk is full
    there), and a raw client once it answers PONG."""
    from server import free_port
    port = free_port()
    cmd = (["prlimit", "--fsize=%d:unlimited" % fsize] +
           t.server(extra_args=d.args(fsync)).command(port))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    c = None
    while c is None and time.monotonic() < deadline:
        try:
            c = RawClient(port)
            if c.call("PING") != "PONG":  # -LOADING until the log is replayed
                c.close()
                c = None
                time.sleep(0.05)
        except OSError:
            c = None
            time.sleep(0.05)
    if c is None:
        proc.kill()
        proc.wait()
        raise AssertionError("server did not start")
    return proc, port, c


@case
@hotkv_only("simulates a full disk with RLIMIT_FSIZE on the server process")
def full_disk_refuses_writes_with_misconf_then_recovers(t, srv):
    """appendfsync everysec: a failing log write makes writes answer -MISCONF while reads keep
    working; once the disk accepts again the pending records are written and nothing
    acknowledged is lost."""
    with DataDir() as d:
        proc, _, c = start_with_small_disk(t, d, "everysec")
        try:
            acked = []
            refused = None
            for i in range(20000):
                r = c.call("SET", "k:%d" % i, "x" * 40)
                if r == "OK":
                    acked.append(i)
                else:
                    refused = str(r)
                    break
            assert refused is not None and refused.startswith("MISCONF"), refused
            assert c.call("GET", "k:0") == "x" * 40  # reads keep working
            subprocess.run(["prlimit", "--pid", str(proc.pid), "--fsize=unlimited:unlimited"],
                           check=True, timeout=10)
            end = time.monotonic() + 5
            while time.monotonic() < end and str(c.call("SET", "probe", "1")) != "OK":
                time.sleep(0.05)
            assert c.call("SET", "probe", "1") == "OK"
            try:
                c.call("SHUTDOWN")  # no reply: the connection just closes
            except ConnectionClosed:
                pass
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            c2 = s2.client()
            missing = [i for i in acked if not c2.exists("k:%d" % i)]
            assert not missing, "%d acknowledged keys lost, first %r" % (len(missing), missing[:5])
        finally:
            s2.stop()


@case
@hotkv_only("simulates a full disk with RLIMIT_FSIZE on the server process")
def full_disk_under_always_stops_without_acknowledging(t, srv):
    """appendfsync always: when a record cannot be written the server exits (status 1, as
    Redis) instead of answering: the write that hit the full disk gets no reply, every write
    that got OK is there after a restart, and no client heard of a write that was not on disk:
    not a keyspace-event subscriber, not a subscriber of the message each transaction
    PUBLISHes after its write, not a client-side cache told to drop the key (BCAST)."""
    with DataDir() as d:
        proc, port, c = start_with_small_disk(t, d, "always")
        heard = []        # keys a keyspace event or an order message was about
        invalidated = []  # keys the tracking client was told changed
        try:
            assert c.call("CONFIG", "SET", "notify-keyspace-events", "K$") == "OK"
            sub = RawClient(port)
            sub.call("PSUBSCRIBE", "__keyspace@0__:k:*")
            sub.call("SUBSCRIBE", "orders")
            cache = RawClient(port)
            cache.call("HELLO", "3")
            assert cache.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "k:") == "OK"
            acked = []
            outcome = None
            for i in range(20000):
                key = "k:%d" % i
                try:
                    c.send(encode_command("MULTI") + encode_command("SET", key, "x" * 40) +
                           encode_command("PUBLISH", "orders", key) + encode_command("EXEC"))
                    replies = [c.read_reply() for _ in range(4)]
                except (ConnectionClosed, OSError) as e:
                    outcome = "closed: %r" % (e,)
                    break
                if not isinstance(replies[3], list) or replies[3][0] != "OK":
                    outcome = "refused: %r" % (replies,)
                    break
                acked.append(i)
            assert outcome is not None and outcome.startswith("closed"), outcome
            assert proc.wait(timeout=10) == 1
            err = proc.stderr.read().decode(errors="replace")
            assert "appendfsync always" in err, err[-2000:]
            try:
                while True:
                    m = sub.read_reply()
                    if m[0] == "pmessage":
                        heard.append(m[2][len("__keyspace@0__:"):])
                    elif m[0] == "message":
                        heard.append(m[2])
            except (ConnectionClosed, OSError):
                pass
            try:
                while True:
                    m = cache.read_reply()
                    if isinstance(m, Push) and m[0] == "invalidate" and m[1]:
                        invalidated.extend(m[1])
            except (ConnectionClosed, OSError):
                pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            c2 = s2.client()
            missing = [i for i in acked if not c2.exists("k:%d" % i)]
            assert not missing, "%d acknowledged keys lost, first %r" % (len(missing), missing[:5])
            unheard_of = [k for k in heard + invalidated if not c2.exists(k)]
            assert not unheard_of, "pushes about writes not on disk: %r" % unheard_of[:5]
            assert heard and invalidated, (len(heard), len(invalidated))
            print("    %d writes acknowledged before the disk filled, %d events and messages "
                  "heard, %d invalidations, %d keys after restart" %
                  (len(acked), len(heard), len(invalidated), c2.dbsize()))
        finally:
            s2.stop()


@case
def bgrewriteaof_compacts_while_serving(t, srv):
    """Overwrite the same keys many times, rewrite, keep writing during the rewrite, restart:
    the state is the same and the log shrank."""
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        c = s.client()
        pipe = c.pipeline(transaction=False)
        for i in range(20000):
            pipe.set("k:%d" % (i % 500), "v%d" % i)
        pipe.execute()
        before = c.info("persistence")["aof_current_size"] if t.is_hotkv else None
        assert c.bgrewriteaof()
        for i in range(200):
            c.incr("during")
        wait_rewrite_done(c)
        for i in range(100):
            c.set("after:%d" % i, i)
        if t.is_hotkv:
            info = c.info("persistence")
            assert info["aof_last_bgrewrite_status"] == "ok", info
            assert info["aof_current_size"] < before / 5, (before, info["aof_current_size"])
        want = state(c)
        s.stop()
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            assert state(s2.client()) == want
        finally:
            s2.stop()


@case
def changes_since_last_save_count_changed_keys_and_bgsave_resets_them(t, srv):
    """INFO rdb_changes_since_last_save: a write that changes a key counts, one that changes
    nothing does not, BGSAVE's snapshot starts the count again (same figures on redis-server)."""
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        try:
            c = s.client()

            def changes():
                return c.info("persistence")["rdb_changes_since_last_save"]

            c.set("dirty:a", "1")
            base = changes()
            c.set("dirty:a", "2")
            c.mset({"dirty:b": "1", "dirty:c": "1", "dirty:d": "1"})
            assert changes() == base + 4
            c.setbit("dirty:bits", 3, 1)
            c.setbit("dirty:bits", 3, 1)  # already set: no change
            c.delete("dirty:missing")  # nothing to delete
            assert changes() == base + 5
            assert c.bgsave()
            info = wait_info(c, lambda i: i["rdb_bgsave_in_progress"] == 0 and
                             i["aof_rewrite_in_progress"] == 0 and
                             i["rdb_changes_since_last_save"] == 0)
            assert info["rdb_changes_since_last_save"] == 0
            c.incr("dirty:n")
            assert changes() == 1
        finally:
            s.stop()


def wait_info(client, done, deadline_s=30):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        info = client.info("persistence")
        if done(info):
            return info
        time.sleep(0.02)
    raise AssertionError("persistence state not reached: %r" % client.info("persistence"))


@case
def config_set_appendonly_switches_the_log_at_runtime(t, srv):
    """CONFIG SET appendonly yes on a server started without the log writes a base of what is
    in memory and logs from then on: after kill -9 everything is back. CONFIG SET appendonly no
    closes the log: a write after it is not in the log, everything before it is."""
    with DataDir() as d:
        plain = ["--appendonly", "no", "--dir", d.path]
        s = t.server(extra_args=plain, expect_exit=None).start()
        c = s.client()
        pipe = c.pipeline(transaction=False)
        for i in range(2000):
            pipe.set("before:%d" % i, i)
        pipe.execute()
        c.incrby("counter", 5)
        assert c.config_set("appendonly", "yes")
        assert c.config_get("appendonly") == {"appendonly": "yes"}
        for i in range(100):
            c.set("after:%d" % i, i)
        c.incrby("counter", 7)
        wait_info(c, lambda i: i["aof_enabled"] == 1 and i["aof_rewrites"] >= 1
                  and i["aof_rewrite_in_progress"] == 0)
        c.set("after-base", "x")
        want = state(c)
        s.stop(sig=signal.SIGKILL)

        s2 = t.server(extra_args=d.args("everysec"), expect_exit=None).start()
        try:
            c2 = s2.client()
            assert state(c2) == want
            assert c2.get("counter") == "12"
            assert c2.config_set("appendonly", "no")
            wait_info(c2, lambda i: i["aof_enabled"] == 0)
            c2.set("late", "1")  # in memory only
            c2.config_set("appendonly", "no")  # already off: no change, OK
        finally:
            s2.stop(sig=signal.SIGKILL)

        s3 = t.server(extra_args=d.args("everysec")).start()
        try:
            c3 = s3.client()
            assert state(c3) == want
            assert c3.get("late") is None
            try:
                c3.config_set("appendonly", "maybe")
                raise AssertionError("appendonly maybe accepted")
            except redis.ResponseError as e:
                assert "appendonly" in str(e), e
        finally:
            s3.stop()


@case
def config_set_appendonly_yes_refused_when_the_log_cannot_start(t, srv):
    """CONFIG SET appendonly yes when the log directory cannot be created answers an error
    naming appendonly, CONFIG GET keeps saying no, and writes go on working in memory."""
    with DataDir() as d:
        with open(os.path.join(d.path, "blocked"), "w") as f:
            f.write("a regular file where the log directory would go\n")
        args = ["--appendonly", "no", "--dir", d.path, "--appenddirname", "blocked"]
        s = t.server(extra_args=args).start()
        try:
            c = s.client()
            c.set("before", "1")
            try:
                c.config_set("appendonly", "yes")
                raise AssertionError("appendonly yes accepted without a usable directory")
            except redis.ResponseError as e:
                assert "appendonly" in str(e), e
            assert c.config_get("appendonly") == {"appendonly": "no"}
            assert c.set("after", "2")
            assert c.get("before") == "1" and c.get("after") == "2"
            assert os.path.isfile(os.path.join(d.path, "blocked"))
        finally:
            s.stop()


@case
def kill9_during_rewrite_leaves_a_loadable_log(t, srv):
    """kill -9 at random moments of rewrites of 100,000 keys while a writer runs: restart loads,
    and every acknowledged INCR is there."""
    rng = random.Random(99)
    with DataDir() as d:
        s = t.server(extra_args=d.args("always"), expect_exit=None).start()
        proto = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(k), k)
                         for k in (b"bulk:%d" % i for i in range(100000)))
        subprocess.run(["redis-cli", "-p", str(s.port), "--pipe"], input=proto,
                       stdout=subprocess.DEVNULL, check=True, timeout=120)
        s.stop(signal.SIGKILL)
        acked = 0
        for _round in range(max(3, ITERATIONS // 4)):
            s = t.server(extra_args=d.args("always"), expect_exit=None).start()
            c = RawClient(s.port)
            got = c.call("GET", "ctr")
            assert int(got or 0) >= acked, (got, acked)
            acked = int(got or 0)
            c.call("BGREWRITEAOF")
            stop_at = time.monotonic() + rng.uniform(0.0, 0.3)
            try:
                while time.monotonic() < stop_at:
                    acked = c.call("INCR", "ctr")
                os.kill(s.pid(), signal.SIGKILL)
            finally:
                c.close()
            s.wait(timeout=10)
            s.cleanup()
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            assert int(c.get("ctr")) >= acked
            assert c.dbsize() == 100001, c.dbsize()
        finally:
            s.stop()


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def info_field(client, name):
    return client.info("persistence")[name]


@case
@hotkv_only("the log written by HotKV's format before sequence numbers")
def log_of_the_format_before_sequence_numbers_loads_and_continues(t, srv):
    """A log directory written by the record format before sequence numbers (two shards, every
    value type, databases 1-4, a cross-shard MSET) loads unchanged, new records continue it with
    numbers from 1, and the restart after that continues the numbers."""
    import shutil
    with DataDir() as d:
        shutil.copytree(os.path.join(FIXTURES, "aof_v1", "appendonlydir"),
                        os.path.join(d.path, "appendonlydir"))
        check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
        out = subprocess.run([check, os.path.join(d.path, "appendonlydir")],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "version 1 records (no seq)" in out.stdout and "AOF is valid" in out.stdout, out.stdout
        s = t.server(extra_args=d.args("always")).start()
        try:
            c = s.client()
            assert c.get("s1") == "again" and c.get("n1") == "42"
            # ttl1's deadline in the fixture is absolute (2026-12-05 07:25:59 UTC): before it the
            # key has its TTL, after it the key is gone; a TTL lost in loading would leave -1.
            assert c.pttl("ttl1") != -1
            assert c.hgetall("h1") == {"f1": "v1", "c": "5"}
            assert c.smembers("set1") == {"a", "c", "1"}
            assert c.zrange("z1", 0, -1, withscores=True) == [("c", float("-inf")), ("a", 2.5)]
            assert c.lrange("l1", 0, -1) == ["A", "b", "c"]
            assert c.xlen("st1") == 1
            assert c.xinfo_groups("st1")[0]["last-delivered-id"] == "1-1"
            assert c.get("{a}x") == "1" and c.get("{b}y") == "2"
            inv = c.execute_command("INV.GET", "item1")
            # Its hold has an absolute deadline too, now past: the hold loaded (27 available,
            # 1 held) or, once the deadline is seen, released (28, 0); never a unit lost.
            f = dict(zip(inv[0:8:2], inv[1:8:2]))
            assert f["total"] == 30 and f["sold"] == 2 and f["held"] in (0, 1), inv
            assert f["available"] + f["held"] == 28, inv
            c.select(1)
            assert c.get("dbkey") == "one" and c.hgetall("dbh") == {"f": "v"}
            c.select(2)
            assert c.dbsize() == 0
            c.select(3)
            assert c.dbsize() == 0
            c.select(4)
            assert c.get("k3") == "3"
            assert int(info_field(c, "aof_loaded_last_seq")) == 0
            # Nothing numbered yet but what the past deadlines wrote since the load (ttl1's
            # deletion, the hold's release).
            assert int(info_field(c, "aof_last_seq")) <= 2
            c.select(0)
            c.set("after", "upgrade")
            c.hset("h1", "new", "field")
            last = int(info_field(c, "aof_last_seq"))
            assert last >= 1, last
        finally:
            s.stop()
        out = subprocess.run([check, os.path.join(d.path, "appendonlydir")],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and "seq 1.." in out.stdout, out.stdout + out.stderr
        s2 = t.server(extra_args=d.args("always")).start()
        try:
            c = s2.client()
            assert c.get("after") == "upgrade" and c.hget("h1", "new") == "field"
            assert c.get("n1") == "42"
            assert int(info_field(c, "aof_loaded_last_seq")) == last
            c.set("more", "1")
            assert int(info_field(c, "aof_last_seq")) == last + 1
        finally:
            s2.stop()


@case
@hotkv_only("record sequence numbers are HotKV's")
def sequence_numbers_continue_across_rewrite_and_restart(t, srv):
    """Every record gets the next number of its shard; neither a rewrite's base nor a restart
    moves a shard's numbers back, and hotkv-check-aof finds them in order."""
    with DataDir() as d:
        s = t.server(extra_args=d.args("everysec")).start()
        try:
            c = s.client()
            for i in range(50):
                c.set("k:%d" % i, i)
            first = int(info_field(c, "aof_last_seq"))
            assert first >= 50 // max(1, t.threads), first
            c.bgrewriteaof()
            wait_rewrite_done(c)
            c.set("after-rewrite", "x")
            second = int(info_field(c, "aof_last_seq"))
            assert second > first, (first, second)
        finally:
            s.stop()
        s2 = t.server(extra_args=d.args("everysec")).start()
        try:
            c = s2.client()
            assert c.dbsize() == 51
            assert int(info_field(c, "aof_loaded_last_seq")) == second
            c.set("after-restart", "y")
            assert int(info_field(c, "aof_last_seq")) == second + 1
        finally:
            s2.stop()
        check = os.path.join(os.path.dirname(t.binary), "hotkv-check-aof")
        out = subprocess.run([check, os.path.join(d.path, "appendonlydir")],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and "WARNING" not in out.stdout, out.stdout + out.stderr


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
