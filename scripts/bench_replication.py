#!/usr/bin/python3
"""Replication figures, HotKV and redis-server as masters side by side in one run, each with a
redis-server replica (the same replica program for both, so the difference is the master's):

  fullsync -- load K keys (default 5,000,000 SETs of 8-byte values via redis-cli --pipe) into
              the master, then time REPLICAOF on a fresh replica until its master_link_status
              is up (the snapshot made, sent and loaded); disk and diskless.
  wait     -- with the replica in sync, N times (default 5,000) one SET then WAIT 1 1000 from
              one client: latency per acknowledged write (p50, p99, max) and how many WAITs
              answered less than 1.
  lag      -- redis-benchmark SET -c 50 -P 16 for a few seconds while a sampler reads the
              replica's slave_repl_offset against the master's master_repl_offset every 10 ms
              (the replication lag in bytes, p50 and p99) and a prober SETs a fresh key on the
              master every 5 ms and times how long after the master's reply the replica
              shows it (lag in ms, p50 and p99); then the time the replica takes to catch up.

Alternates the two masters --repeats times (default 1). Bounded: every wait has a timeout.
Usage: scripts/bench_replication.py [--hotkv build/hotkv] [--threads 1] [--keys 5000000]
                                    [--waits 5000] [--only fullsync,wait,lag] [--repeats 1]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cli(port, *args, timeout=30):
    out = subprocess.run(["redis-cli", "-p", str(port), *map(str, args)], capture_output=True,
                         timeout=timeout, text=True)
    return out.stdout.strip()


def info(port, section="replication"):
    fields = {}
    for line in cli(port, "INFO", section).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k] = v.strip()
    return fields


def wait_for(cond, what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise SystemExit("bench_replication: timed out waiting for " + what)


class Proc:
    def __init__(self, cmd, port, d):
        self.port, self.dir = port, d
        self.log = open(os.path.join(d, "log"), "w")
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        wait_for(lambda: cli(port, "PING", timeout=2) == "PONG", "PING on %d" % port, 20)

    def stop(self):
        self.p.kill()
        self.p.wait(timeout=20)
        self.log.close()


def start_master(kind, a, root, diskless):
    port = free_port()
    d = tempfile.mkdtemp(dir=root)
    common = ["--port", str(port), "--bind", "127.0.0.1", "--dir", d,
              "--repl-diskless-sync", "yes" if diskless else "no",
              "--repl-diskless-sync-delay", "0", "--loglevel", "warning"]
    if kind == "redis":
        cmd = ["redis-server", "--save", "", "--appendonly", "no"] + common
    else:
        cmd = [a.hotkv, "--threads", str(a.threads), "--appendonly", "no"] + common
    return Proc(cmd, port, d)


def start_replica(root):
    port = free_port()
    d = tempfile.mkdtemp(dir=root)
    return Proc(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", d, "--repl-diskless-load", "disabled",
                 "--loglevel", "warning"], port, d)


def load(port, keys):
    chunk = 100_000
    for start in range(0, keys, chunk):
        data = "".join("*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$8\r\nvalue%03d\r\n"
                       % (len("key:%d" % i), i, i % 1000) for i in range(start, min(keys, start + chunk)))
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=data.encode(),
                       capture_output=True, timeout=300, check=True)


def attach(master, replica, timeout=600):
    t0 = time.monotonic()
    cli(replica.port, "REPLICAOF", "127.0.0.1", master.port)
    wait_for(lambda: info(replica.port).get("master_link_status") == "up", "the link", timeout)
    return time.monotonic() - t0


def fullsync(kind, a, root):
    rows = []
    for diskless in (False, True):
        m = start_master(kind, a, root, diskless)
        try:
            load(m.port, a.keys)
            r = start_replica(root)
            try:
                secs = attach(m, r)
                n = int(cli(r.port, "DBSIZE"))
                if n != a.keys:
                    print("warning: %s replica has %d keys, not %d" % (kind, n, a.keys))
                rows.append(("fullsync %s" % ("diskless" if diskless else "disk"), secs))
            finally:
                r.stop()
        finally:
            m.stop()
    return rows


def waits(kind, a, root):
    import redis  # Debian's python3-redis, hence /usr/bin/python3
    m = start_master(kind, a, root, True)
    r = start_replica(root)
    try:
        attach(m, r)
        c = redis.Redis(host="127.0.0.1", port=m.port)
        lat, short = [], 0
        for i in range(a.waits):
            t0 = time.perf_counter()
            c.set("w:%d" % (i % 1000), i)
            if c.wait(1, 1000) < 1:
                short += 1
            lat.append((time.perf_counter() - t0) * 1e6)
        lat.sort()
        return [("SET+WAIT 1 p50 us", lat[len(lat) // 2]),
                ("SET+WAIT 1 p99 us", lat[int(len(lat) * 0.99)]),
                ("SET+WAIT 1 max us", lat[-1]), ("WAITs answered < 1", short)]
    finally:
        r.stop()
        m.stop()


def lag(kind, a, root):
    m = start_master(kind, a, root, True)
    r = start_replica(root)
    samples, stop = [], threading.Event()
    probes, stop_probe = [], threading.Event()
    try:
        attach(m, r)

        def sample():
            while not stop.is_set():
                mo = info(m.port).get("master_repl_offset")
                ro = info(r.port).get("slave_repl_offset")
                if mo is not None and ro is not None:  # a redis-cli that timed out: no sample
                    samples.append(max(0, int(mo) - int(ro)))
                time.sleep(0.01)

        def probe():
            # Raw sockets, one request at a time: the SET's reply, then GETs on the replica
            # until the key is there (bounded to 5 s per probe).
            ms, rs = socket.create_connection(("127.0.0.1", m.port)), \
                socket.create_connection(("127.0.0.1", r.port))
            try:
                i = 0
                while not stop_probe.is_set():
                    key = b"lagprobe:%d" % i
                    i += 1
                    ms.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\n1\r\n" % (len(key), key))
                    ms.recv(64)
                    acked = time.monotonic()
                    get = b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(key), key)
                    while time.monotonic() - acked < 5:
                        rs.sendall(get)
                        if rs.recv(64).startswith(b"$1"):
                            probes.append((time.monotonic() - acked) * 1000)
                            break
                        time.sleep(0.0002)
                    time.sleep(0.005)
            except OSError as e:
                print("bench_replication: %s probe stopped: %s" % (kind, e), file=sys.stderr)
            finally:
                ms.close()
                rs.close()
        t = threading.Thread(target=sample)
        t.start()
        tp = threading.Thread(target=probe)
        tp.start()
        subprocess.run(["redis-benchmark", "-p", str(m.port), "-c", "50", "-P", "16", "-n",
                        str(a.lag_requests), "-r", "100000", "-t", "set", "-q"],
                       capture_output=True, timeout=300)
        stop_probe.set()  # before the catch-up: its writes would keep the offsets apart
        tp.join()
        t0 = time.monotonic()
        wait_for(lambda: info(r.port).get("slave_repl_offset") ==
                 info(m.port)["master_repl_offset"], "the replica to catch up", 60)
        catch_up = time.monotonic() - t0
        stop.set()
        t.join()
        samples.sort()
        probes.sort()
        return [("lag p50 bytes", samples[len(samples) // 2]),
                ("lag p99 bytes", samples[int(len(samples) * 0.99)]),
                ("lag p50 ms (probes every 5 ms)", probes[len(probes) // 2]),
                ("lag p99 ms", probes[int(len(probes) * 0.99)]),
                ("catch-up after load s", catch_up)]
    finally:
        stop.set()
        stop_probe.set()
        r.stop()
        m.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hotkv", default="build/hotkv")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--keys", type=int, default=5_000_000)
    p.add_argument("--waits", type=int, default=5000)
    p.add_argument("--lag-requests", type=int, default=2_000_000)
    p.add_argument("--only", default="fullsync,wait,lag")
    p.add_argument("--repeats", type=int, default=1)
    a = p.parse_args()
    root = tempfile.mkdtemp(prefix="hotkv-bench-repl-")
    results = {}
    try:
        for _ in range(a.repeats):
            for kind in ("redis", "hotkv"):
                for part in a.only.split(","):
                    for name, value in {"fullsync": fullsync, "wait": waits, "lag": lag}[part](
                            kind, a, root):
                        results.setdefault(name, {}).setdefault(kind, []).append(value)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("| figure | redis master | hotkv master (--threads %d) | hotkv / redis |" % a.threads)
    print("|---|---:|---:|---:|")
    for name, by_kind in results.items():
        rv = statistics.median(by_kind["redis"])
        hv = statistics.median(by_kind["hotkv"])
        ratio = "%.2f" % (hv / rv) if rv else "-"
        print("| %s | %.3g | %.3g | %s |" % (name, rv, hv, ratio))


if __name__ == "__main__":
    sys.exit(main())
