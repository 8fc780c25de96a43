#!/usr/bin/python3
"""Persistence figures, HotKV and redis-server side by side in one run (both with appendonly
yes, the same appendfsync, each in its own temporary directory):

  load     -- write N keys (default 10,000,000 SETs via redis-cli --pipe), restart, and time
              the replay (HotKV: its "DB loaded" log line; Redis: the same line, in seconds);
              prints effects per second for each.
  rewrite  -- with K keys loaded (default 5,000,000), run redis-benchmark GET -c 50 and
              trigger BGREWRITEAOF halfway; prints redis-benchmark's latency summary with and
              without a rewrite in the run.
  ttl      -- restart with 1,000,000 keys carrying TTLs, half of which expire while the server
              is down; prints load time and the keys left.

Bounded: every step has a timeout. Usage:
  scripts/bench_persistence.py [--hotkv build-release/hotkv] [--only load,rewrite,ttl]
                               [--keys 10000000] [--rewrite-keys 5000000] [--threads 1]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Srv:
    def __init__(self, kind, binary, threads, fsync, d):
        self.kind, self.binary, self.threads, self.fsync, self.dir = kind, binary, threads, fsync, d
        self.proc = None
        self.port = None
        self.log = os.path.join(d, "server.log")

    def start(self, timeout=600):
        self.port = free_port()
        if self.kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "yes", "--appendfsync", self.fsync, "--dir", self.dir,
                   "--aof-use-rdb-preamble", "no", "--auto-aof-rewrite-percentage", "0"]
        else:
            cmd = [self.binary, "--port", str(self.port), "--threads", str(self.threads),
                   "--appendonly", "yes", "--appendfsync", self.fsync, "--dir", self.dir,
                   "--auto-aof-rewrite-percentage", "0"]
        self.t0 = time.time()
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        end = time.time() + timeout
        while time.time() < end:
            try:
                out = subprocess.run(["redis-cli", "-p", str(self.port), "PING"],
                                     capture_output=True, text=True, timeout=5).stdout
                if "PONG" in out:
                    return time.time() - self.t0
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.05)
        raise RuntimeError("%s did not start" % self.kind)

    def cli(self, *args, timeout=600):
        return subprocess.run(["redis-cli", "-p", str(self.port)] + list(args),
                              capture_output=True, text=True, timeout=timeout).stdout.strip()

    def stop(self):
        self.cli("SHUTDOWN", "NOSAVE")
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def pipe(self, proto):
        subprocess.run(["redis-cli", "-p", str(self.port), "--pipe"], input=proto,
                       stdout=subprocess.DEVNULL, check=True, timeout=1800)

    def loaded_seconds(self):
        text = open(self.log).read()
        if self.kind == "redis":
            m = re.findall(r"DB loaded from append only file: ([0-9.]+) seconds", text)
            return float(m[-1]) if m else None
        m = re.findall(r"DB loaded from append only file .*?, (\d+) ms", text)
        return int(m[-1]) / 1000 if m else None


def set_proto(n, prefix=b"key:", ttl_ms=None, ttl_every=2):
    chunks = []
    for i in range(n):
        k = prefix + str(i).encode()
        if ttl_ms is not None and i % ttl_every == 0:
            t = str(ttl_ms).encode()
            chunks.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\nval\r\n$2\r\nPX\r\n$%d\r\n%s\r\n"
                          % (len(k), k, len(t), t))
        elif ttl_ms is not None:
            chunks.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\nval\r\n$2\r\nEX\r\n$4\r\n3600\r\n"
                          % (len(k), k))
        else:
            chunks.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\nval\r\n" % (len(k), k))
    return b"".join(chunks)


def bench_load(args):
    proto = set_proto(args.keys)
    print("## load: %d SETs replayed at start-up (appendfsync %s)" % (args.keys, args.fsync))
    print("| server | log size | load seconds | effects/s |")
    print("|---|---:|---:|---:|")
    for kind in ("redis", "hotkv"):
        d = tempfile.mkdtemp(prefix="hkbench-")
        try:
            s = Srv(kind, args.hotkv, args.threads, args.fsync, d)
            s.start()
            s.pipe(proto)
            s.stop()
            size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d)
                       for f in fs if f != "server.log")
            s.start(timeout=1800)
            secs = s.loaded_seconds()
            keys = int(s.cli("DBSIZE"))
            s.stop()
            assert keys == args.keys, (kind, keys)
            print("| %s | %.0f MB | %.2f | %.0f |" % (kind, size / 1e6, secs,
                                                      args.keys / secs if secs else 0))
        finally:
            shutil.rmtree(d, ignore_errors=True)


def latency_summary(out):
    m = re.search(r"latency summary \(msec\):\s*\n\s*avg\s+min\s+p50\s+p95\s+p99\s+max\s*\n\s*"
                  r"([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", out)
    return m.groups() if m else None


def bench_rewrite(args):
    proto = set_proto(args.rewrite_keys)
    print("## rewrite: GET -c 50 latency (ms) with %d keys, without and with BGREWRITEAOF"
          % args.rewrite_keys)
    print("| server | run | avg | p50 | p95 | p99 | max | rewrite took |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("redis", "hotkv"):
        d = tempfile.mkdtemp(prefix="hkbench-")
        try:
            s = Srv(kind, args.hotkv, args.threads, args.fsync, d)
            s.start()
            s.pipe(proto)
            bench = ["redis-benchmark", "-p", None, "-t", "get", "-c", "50", "-n", "400000",
                     "-r", str(args.rewrite_keys)]
            bench[2] = str(s.port)
            for label in ("plain", "rewrite"):
                p = subprocess.Popen(bench, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
                took = ""
                if label == "rewrite":
                    time.sleep(1.0)
                    t0 = time.time()
                    s.cli("BGREWRITEAOF")
                    for _ in range(6000):
                        info = s.cli("INFO", "persistence")
                        if "aof_rewrite_in_progress:0" in info and \
                                "aof_rewrite_scheduled:0" in info:
                            break
                        time.sleep(0.01)
                    took = "%.1f s" % (time.time() - t0)
                out, _ = p.communicate(timeout=600)
                lat = latency_summary(out)
                print("| %s | %s | %s | %s |" % (kind, label, " | ".join(lat[i] for i in (0, 2, 3, 4, 5))
                                                 if lat else "n/a", took))
            s.stop()
        finally:
            shutil.rmtree(d, ignore_errors=True)


def bench_ttl(args):
    n = 1_000_000
    proto = set_proto(n, prefix=b"ttl:", ttl_ms=2000)
    print("## restart with %d keys with TTLs, half expiring while down" % n)
    print("| server | load seconds | keys after restart |")
    print("|---|---:|---:|")
    for kind in ("redis", "hotkv"):
        d = tempfile.mkdtemp(prefix="hkbench-")
        try:
            s = Srv(kind, args.hotkv, args.threads, args.fsync, d)
            s.start()
            s.pipe(proto)
            s.stop()
            time.sleep(2.5)
            s.start(timeout=600)
            secs = s.loaded_seconds()
            keys = s.cli("DBSIZE")
            s.stop()
            print("| %s | %s | %s |" % (kind, "%.2f" % secs if secs else "n/a", keys))
        finally:
            shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotkv", default="build-release/hotkv")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--fsync", default="everysec")
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--rewrite-keys", type=int, default=5_000_000)
    ap.add_argument("--only", default="load,rewrite,ttl")
    args = ap.parse_args()
    for part in args.only.split(","):
        {"load": bench_load, "rewrite": bench_rewrite, "ttl": bench_ttl}[part](args)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
