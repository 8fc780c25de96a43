#!/usr/bin/python3
"""Resident memory per key: hotkv (--threads 1 and the default) against redis-server.

Each server starts on a free loopback port with persistence off, gets N keys "key:%07d" with an
8-byte string value by pipelined SET, and is measured from /proc/PID/status: VmRSS after the load
minus VmRSS before it, divided by N. The servers take turns (hotkv 1 thread, hotkv default,
redis-server) for --rounds rounds, so a drift of the machine shows up as a spread between rounds
instead of favouring one server. Beside RSS each line shows what INFO used_memory grew by per
item, which should be close to it (docs/operations.md, "Memory").

--shape hash puts N fields "field:%07d" with 8-byte values into one hash, --shape set N members
"member:%07d" into one set (both well past the listpack/intset limits: hashtables), and reports
bytes per field or member. --shape list RPUSHes N elements of 36 bytes that differ only in a
number ("event:user:%08d:action:checkout:ok", as log lines or ids do) onto one list and reports
bytes per element; --list-compress-depth sets that config on every server before the load.

    /usr/bin/python3 scripts/memory_per_key.py --server build/hotkv [--keys 1000000] [--rounds 2]
                                               [--shape strings|hash|set|list]
                                               [--list-compress-depth N]
"""

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

# free_port is the integration tests' (tests/integration/server.py), so both pick ports alike.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integration"))
from server import free_port  # noqa: E402

BATCH = 1000
READY_TIMEOUT_S = 10.0


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def connect(port):
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(resp(b"PING"))
            if s.recv(64).startswith(b"+PONG"):
                return s
            s.close()
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("server on port %d did not answer PING" % port)
        time.sleep(0.05)


# shape -> (command for item i, the reply it gets (bytes, or a function of i), the command
# counting the items)
SHAPES = {
    "list": (lambda i: resp(b"RPUSH", b"l", b"event:user:%08d:action:checkout:ok" % i),
             lambda i: b":%d\r\n" % (i + 1), resp(b"LLEN", b"l")),
    "strings": (lambda i: resp(b"SET", b"key:%07d" % i, b"v%07d" % i), b"+OK\r\n",
                resp(b"DBSIZE")),
    "hash": (lambda i: resp(b"HSET", b"h", b"field:%07d" % i, b"v%07d" % i), b":1\r\n",
             resp(b"HLEN", b"h")),
    "set": (lambda i: resp(b"SADD", b"s", b"member:%07d" % i), b":1\r\n", resp(b"SCARD", b"s")),
}


def read_replies(sock, start, count, reply):
    """Reads the replies to items start..start+count-1: `reply` each, or reply(i) for item i."""
    if callable(reply):
        expected = b"".join(reply(i) for i in range(start, start + count))
    else:
        expected = reply * count
    got = bytearray()
    while len(got) < len(expected):
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed during the load")
        got += chunk
    if bytes(got) != expected:
        raise RuntimeError("unexpected reply: %r" % bytes(got[:80]))


def load(sock, keys, shape):
    command, reply, _ = SHAPES[shape]
    for start in range(0, keys, BATCH):
        n = min(BATCH, keys - start)
        sock.sendall(b"".join(command(i) for i in range(start, start + n)))
        read_replies(sock, start, n, reply)


def used_memory(sock):
    """INFO memory's used_memory."""
    sock.sendall(resp(b"INFO", b"memory"))
    data = b""
    while True:
        data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n")
        if head.startswith(b"$") and len(rest) >= int(head[1:]) + 2:
            break
    for line in rest.split(b"\r\n"):
        if line.startswith(b"used_memory:"):
            return int(line.split(b":")[1])
    raise RuntimeError("no used_memory in INFO")


def count_items(sock, shape):
    sock.sendall(SHAPES[shape][2])
    reply = sock.recv(64)
    return int(reply[1:].split(b"\r\n")[0])


def measure(name, cmd, port, keys, shape, config):
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        sock = connect(port)
        for key, value in config:
            sock.sendall(resp(b"CONFIG", b"SET", key, value))
            if sock.recv(64) != b"+OK\r\n":
                raise RuntimeError("%s refused CONFIG SET %s" % (name, key.decode()))
        time.sleep(0.2)
        before = rss_kib(proc.pid)
        used_before = used_memory(sock)
        load(sock, keys, shape)
        time.sleep(0.5)  # let the shards finish and allocator caches settle
        after = rss_kib(proc.pid)
        used_after = used_memory(sock)
        n = count_items(sock, shape)
        sock.close()
        if n != keys:
            raise RuntimeError("%s holds %d items, expected %d" % (name, n, keys))
        per_key = (after - before) * 1024.0 / keys
        print("%-22s rss before %8d KiB  after %8d KiB  %6.1f B/item  used_memory %6.1f B/item" %
              (name, before, after, per_key, (used_after - used_before) / keys), flush=True)
        return per_key
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True, help="path to the hotkv binary")
    p.add_argument("--redis", default="redis-server", help="path to redis-server")
    p.add_argument("--keys", type=int, default=1000000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--shape", choices=sorted(SHAPES), default="strings")
    p.add_argument("--list-compress-depth", type=int, default=None)
    args = p.parse_args()
    config = []
    if args.list_compress_depth is not None:
        config.append((b"list-compress-depth", b"%d" % args.list_compress_depth))

    def hotkv(threads):
        def cmd(port):
            c = [args.server, "--port", str(port), "--bind", "127.0.0.1", "--appendonly", "no",
                 "--loglevel", "warning"]
            if threads:
                c += ["--threads", str(threads)]
            return c
        return cmd

    def redis(port):
        return [args.redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--loglevel", "warning"]

    servers = [("hotkv --threads 1", hotkv(1)), ("hotkv (default threads)", hotkv(0)),
               ("redis-server", redis)]
    results = {name: [] for name, _ in servers}
    for _ in range(args.rounds):
        for name, cmd in servers:
            port = free_port()
            results[name].append(measure(name, cmd(port), port, args.keys, args.shape, config))
    print("summary (%s%s, B/item per round):" %
          (args.shape, "".join(", %s %s" % (k.decode(), v.decode()) for k, v in config)))
    for name, values in results.items():
        print("  %-22s %s" % (name, "  ".join("%.1f" % v for v in values)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
