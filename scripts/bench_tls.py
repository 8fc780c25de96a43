#!/usr/bin/python3
"""The cost of TLS per request, hotkv against redis-server, side by side in one run.

Both servers start with a plain port and a tls-port, the same certificates (made here with
`openssl`: a CA, a server and a client certificate) and no persistence. Every round runs each
case against redis-server and hotkv alternately -- plain and TLS, -P 1 and -P 16, SET and GET
-- so that drift on a noisy machine hits both. redis-benchmark is the load generator (with
--tls --cacert --cert --key on the tls-port). For each run the server's own CPU time (utime +
stime of all its threads, from /proc/<pid>/stat) gives CPU microseconds per request. With two or
more cores the servers are pinned to core 0 and redis-benchmark to the last core.

Prints, per case, the median requests per second over the rounds and the CPU per request of
each server, hotkv/redis ratios, and TLS/plain ratios for each server.

Usage: /usr/bin/python3 scripts/bench_tls.py [--hotkv-bin build/hotkv] [--threads 1]
       [--rounds 3] [--requests 100000] [--pipeline-requests 1000000] [--clients 50]
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

RPS = re.compile(r"^(?P<name>[A-Z]+): (?P<rps>[0-9.]+) requests per second")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certs(d):
    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
    p = lambda n: os.path.join(d, n)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p("ca.key"), "-out",
        p("ca.crt"), "-days", "2", "-subj", "/CN=Bench CA")
    for who in ("server", "client"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p(who + ".key"), "-out",
            p(who + ".csr"), "-subj", "/CN=" + who)
        run("x509", "-req", "-in", p(who + ".csr"), "-CA", p("ca.crt"), "-CAkey", p("ca.key"),
            "-CAcreateserial", "-out", p(who + ".crt"), "-days", "2")
    return p


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def wait_ready(port, proc):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("server exited with %d" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit("server on port %d did not answer" % port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotkv-bin", default="build/hotkv")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--pipeline-requests", type=int, default=1000000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--modes", default="plain,tls", help="comma list of plain, tls")
    ap.add_argument("--pipelines", default="1,16", help="comma list of -P values")
    ap.add_argument("--commands", default="set,get", help="comma list of set, get")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="hotkv-bench-tls-")
    cert = make_certs(tmp)
    tls_files = ["--tls-cert-file", cert("server.crt"), "--tls-key-file", cert("server.key"),
                 "--tls-ca-cert-file", cert("ca.crt")]
    client_tls = ["--tls", "--cacert", cert("ca.crt"), "--cert", cert("client.crt"), "--key",
                  cert("client.key")]
    ncpu = os.cpu_count() or 1
    pin = ncpu >= 2 and shutil.which("taskset")
    server_pin = ["taskset", "-c", "0"] if pin else []
    client_pin = ["taskset", "-c", str(ncpu - 1)] if pin else []

    servers = {}
    procs = []
    try:
        for name in ("redis", "hotkv"):
            port, tls_port = free_port(), free_port()
            d = tempfile.mkdtemp(dir=tmp)
            if name == "redis":
                cmd = ["redis-server", "--save", "", "--appendonly", "no"]
            else:
                cmd = [a.hotkv_bin, "--threads", a.threads]
            cmd += ["--port", str(port), "--tls-port", str(tls_port), "--bind", "127.0.0.1",
                    "--dir", d, "--loglevel", "warning"] + tls_files
            proc = subprocess.Popen(server_pin + cmd, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            procs.append(proc)
            wait_ready(port, proc)
            servers[name] = (proc.pid, port, tls_port)
            print("# %s: %s" % (name, " ".join(server_pin + cmd)))

        cases = [(mode, int(p), t) for mode in a.modes.split(",") for p in a.pipelines.split(",")
                 for t in a.commands.split(",")]
        results = {}  # (server, mode, p, t) -> [(rps, us_per_req)]
        example = None
        for rnd in range(a.rounds):
            for mode, p, t in cases:
                for name in ("redis", "hotkv"):
                    pid, port, tls_port = servers[name]
                    n = a.requests if p == 1 else a.pipeline_requests
                    cmd = ["redis-benchmark", "-h", "127.0.0.1",
                           "-p", str(tls_port if mode == "tls" else port),
                           "-c", str(a.clients), "-n", str(n), "-P", str(p), "-r", "100000",
                           "-t", t, "-q"] + (client_tls if mode == "tls" else [])
                    if example is None and mode == "tls":
                        example = " ".join(client_pin + cmd)
                    before = cpu_ticks(pid)
                    out = subprocess.run(client_pin + cmd, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, timeout=600)
                    after = cpu_ticks(pid)
                    text = out.stdout.decode(errors="replace")
                    rps = [float(m.group("rps")) for m in
                           (RPS.match(x.strip()) for x in re.split(r"[\r\n]", text)) if m]
                    if out.returncode != 0 or not rps or "rror" in text:
                        sys.exit("redis-benchmark failed on %s: %s" % (name, text))
                    us = (after - before) * 1e6 / os.sysconf("SC_CLK_TCK") / n
                    results.setdefault((name, mode, p, t), []).append((rps[-1], us))
            print("# round %d of %d done" % (rnd + 1, a.rounds), flush=True)

        print("# load: %s" % example)
        print("# %d round(s), medians; CPU = server CPU microseconds per request" % a.rounds)
        print("| case | redis rps | hotkv rps | hotkv/redis | redis CPU µs | hotkv CPU µs | "
              "rps range redis / hotkv |")
        print("|---|---:|---:|---:|---:|---:|---|")
        med = {}
        for mode, p, t in cases:
            row = []
            for name in ("redis", "hotkv"):
                v = results[(name, mode, p, t)]
                med[(name, mode, p, t)] = (statistics.median(x[0] for x in v),
                                           statistics.median(x[1] for x in v))
            r, h = med[("redis", mode, p, t)], med[("hotkv", mode, p, t)]
            spread = " / ".join("%.0f-%.0f" % (min(x[0] for x in results[(name, mode, p, t)]),
                                              max(x[0] for x in results[(name, mode, p, t)]))
                                for name in ("redis", "hotkv"))
            row = "| %s %s -P %d | %.0f | %.0f | %.2f | %.2f | %.2f | %s |" % (
                mode, t.upper(), p, r[0], h[0], h[0] / r[0], r[1], h[1], spread)
            print(row)
        print()
        print("| case | redis TLS/plain rps | hotkv TLS/plain rps | redis TLS CPU +µs | "
              "hotkv TLS CPU +µs |")
        print("|---|---:|---:|---:|---:|")
        for p in sorted({c[1] for c in cases}):
            for t in a.commands.split(","):
                if ("redis", "tls", p, t) not in med or ("redis", "plain", p, t) not in med:
                    continue
                cells = []
                extra = []
                for name in ("redis", "hotkv"):
                    tls, plain = med[(name, "tls", p, t)], med[(name, "plain", p, t)]
                    cells.append(tls[0] / plain[0])
                    extra.append(tls[1] - plain[1])
                print("| %s -P %d | %.2f | %.2f | %.2f | %.2f |" % (t.upper(), p, cells[0],
                                                                     cells[1], extra[0], extra[1]))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
