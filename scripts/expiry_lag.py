#!/usr/bin/python3
"""How close to its deadline does HotKV delete an expiring key?

Loads N keys (default 1,000,000) with absolute PXAT deadlines spread evenly over a window that
starts after the load has finished, then samples INFO's expired_keys every few milliseconds.
Nobody reads the keys, so every deletion is the timing wheel's. Because the wheel deletes in
deadline order, the i-th deletion belongs to the i-th earliest deadline; its lag is the time of
the first sample that counted it minus its deadline (so sampling adds up to one interval).
Prints p50/p99/max lag. Bounded: the run gives up after the window plus 30 seconds.

Usage: scripts/expiry_lag.py --port 6379 [--keys 1000000] [--window-ms 5000]
"""
import argparse
import bisect
import socket
import subprocess
import sys
import time


def info_expired(sock_file, sock):
    sock.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
    header = sock_file.readline()
    body = sock_file.read(int(header[1:]) + 2).decode()
    for line in body.split("\r\n"):
        if line.startswith("expired_keys:"):
            return int(line.split(":")[1])
    raise RuntimeError("no expired_keys in INFO")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--window-ms", type=int, default=5000)
    ap.add_argument("--lead-ms", type=int, default=0,
                    help="gap between load end and first deadline (default: measured load time)")
    ap.add_argument("--sample-ms", type=float, default=2.0)
    args = ap.parse_args()

    n = args.keys
    # Estimate the load time generously so the first deadline falls after the load.
    lead = args.lead_ms or max(3000, n // 100)
    start = int(time.time() * 1000) + lead
    deadlines = [start + (i * args.window_ms) // n for i in range(n)]
    proto = bytearray()
    for i, d in enumerate(deadlines):
        k = f"lag:{i}".encode()
        ds = str(d).encode()
        proto += b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$%d\r\n%s\r\n" % (
            len(k), k, len(ds), ds)
    t0 = time.time()
    subprocess.run(["redis-cli", "-p", str(args.port), "--pipe"], input=bytes(proto),
                   stdout=subprocess.DEVNULL, check=True, timeout=300)
    load_ms = (time.time() - t0) * 1000
    if time.time() * 1000 > start:
        print(f"load took {load_ms:.0f} ms, past the first deadline; rerun with --lead-ms", file=sys.stderr)
        return 2

    sock = socket.create_connection(("127.0.0.1", args.port))
    f = sock.makefile("rb")
    base = info_expired(f, sock)
    samples = []  # (time_ms, expired_so_far)
    give_up = start + args.window_ms + 30_000
    while True:
        now = time.time() * 1000
        count = info_expired(f, sock) - base
        samples.append((now, count))
        if count >= n or now > give_up:
            break
        time.sleep(args.sample_ms / 1000)
    counts = [c for _, c in samples]
    lags = []
    for i, d in enumerate(deadlines):
        j = bisect.bisect_left(counts, i + 1)
        if j >= len(samples):
            break
        lags.append(samples[j][0] - d)
    if len(lags) < n:
        print(f"only {len(lags)} of {n} keys expired before giving up", file=sys.stderr)
    lags.sort()

    def pct(p):
        return lags[min(len(lags) - 1, int(len(lags) * p))]

    within = sum(1 for x in lags if x <= 50) / max(1, n)
    print(f"keys={n} window_ms={args.window_ms} load_ms={load_ms:.0f} samples={len(samples)}")
    print(f"lag_ms p50={pct(0.50):.1f} p99={pct(0.99):.1f} max={lags[-1]:.1f} "
          f"within_50ms={within * 100:.2f}%")
    return 0 if len(lags) == n else 1


if __name__ == "__main__":
    sys.exit(main())
