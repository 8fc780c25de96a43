#!/usr/bin/python3
"""client-output-buffer-limit normal: a client that asks for a huge reply and never reads it
is disconnected, the memory its reply held is given back, and other clients never notice.

Each case sets the normal class's limits on a fresh server, makes big values instantly with
SETRANGE, and sends the big read on a raw socket that then reads nothing. The same cases pass
against redis-server 7.0 (`--kind redis`).

Run: /usr/bin/python3 test_output_limits.py --server build/hotkv --threads 4
"""

import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, closed_by_server, run_cases, silent_reader, wait_for  # noqa: E402

MB = 1024 * 1024


def make_big_values(r, count, size):
    for i in range(count):
        r.setrange("big:%d" % i, size - 1, "x")  # zero-filled, `size` bytes, made at once


class LatencyProbe:
    """Another client doing GETs in a loop; keeps every round trip in seconds."""

    def __init__(self, srv):
        self.r = srv.client()
        self.r.set("probe", "v")
        self.samples = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set() and len(self.samples) < 200000:
            t0 = time.perf_counter()
            assert self.r.get("probe") == "v"
            self.samples.append(time.perf_counter() - t0)

    def p99_ms(self, start=0):
        s = sorted(self.samples[start:])
        return 1000 * s[int(len(s) * 0.99)] if s else 0.0


@case
def a_reply_over_the_hard_limit_cuts_the_client_off(t, srv):
    """normal 64mb 0 0: MGET of five 100 MB values (a 500 MB reply) to a client that reads
    nothing disconnects it; the server keeps answering everyone else with a flat p99."""
    with t.server() as s:
        r = s.client()
        assert r.config_set("client-output-buffer-limit", "normal 64mb 0 0")
        assert "normal 67108864 0 0" in r.config_get("client-output-buffer-limit")[
            "client-output-buffer-limit"]
        make_big_values(r, 5, 100 * MB)
        probe = LatencyProbe(s)
        probe.thread.start()
        time.sleep(1.0)
        before = len(probe.samples)
        base_p99 = probe.p99_ms()
        slow = silent_reader(s.port, "MGET", *["big:%d" % i for i in range(5)])
        try:
            assert closed_by_server(slow, 20), "the silent reader of 500 MB is still connected"
        finally:
            slow.close()
        time.sleep(1.0)
        probe.stop.set()
        probe.thread.join(10)
        during_p99 = probe.p99_ms(before)
        print("    other client's GET p99: %.2f ms before, %.2f ms while the 500 MB reply was "
              "refused (%d round trips)" % (base_p99, during_p99, len(probe.samples) - before))
        assert during_p99 < max(10.0, 5 * base_p99), during_p99
        info = r.info("clients")
        assert info["connected_clients"] <= 3, info
        assert r.get("probe") == "v" and r.strlen("big:0") == 100 * MB


@case
def a_slow_reader_over_the_soft_limit_for_its_seconds_is_cut_off(t, srv):
    """normal 0 8mb 2: a 40 MB reply nobody reads stays over 8 MB; within a few seconds
    after the 2 s the client is disconnected, and a client reading its reply is not."""
    with t.server() as s:
        r = s.client()
        assert r.config_set("client-output-buffer-limit", "normal 0 8mb 2")
        make_big_values(r, 1, 40 * MB)
        reader = s.client()
        assert len(reader.get("big:0")) == 40 * MB  # read at once: never over for 2 s
        slow = silent_reader(s.port, "GET", "big:0")
        try:
            time.sleep(1.0)  # inside the 2 s: still connected
            assert r.info("clients")["connected_clients"] >= 3
            time.sleep(3.0)  # past them (the server checks once a second)
            assert closed_by_server(slow, 10), "the slow reader is still connected"
        finally:
            slow.close()
        assert reader.ping() is True
        wait_for(lambda: r.info("clients")["connected_clients"] <= 2, "the client to go", 5)


@case
def without_limits_a_slow_reader_is_kept(t, srv):
    """The default (normal 0 0 0, as Redis): a client that reads its big reply slowly is
    not disconnected and gets every byte."""
    with t.server() as s:
        r = s.client()
        make_big_values(r, 1, 20 * MB)
        slow = silent_reader(s.port, "GET", "big:0")
        try:
            time.sleep(3)
            slow.settimeout(10)
            got = 0
            want = 20 * MB + len("$%d\r\n\r\n" % (20 * MB))
            while got < want:
                data = slow.recv(1 << 20)
                assert data, "disconnected after %d bytes" % got
                got += len(data)
            assert got == want
        finally:
            slow.close()


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0], shared_server=False)
