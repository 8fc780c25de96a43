#!/usr/bin/python3
"""The RESP wire protocol over raw sockets: inline commands, big pipelines, input split at
every byte, and hostile or malformed streams.

Malformed input must get Redis' exact `-ERR Protocol error: ...` reply followed by a closed
connection, and must never cost the server its other clients or unbounded memory (a client
that announces a 500 MB bulk and stalls must not make the server allocate 500 MB). After every
malformed case a fresh client must still get PONG. Expectations come from redis-server 7.0.

Run: /usr/bin/python3 test_protocol.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RawClient, case, encode_command, run_cases  # noqa: E402


def still_serving(srv):
    with srv.raw() as c:
        assert c.call("PING") == "PONG", "server no longer answers PING"


def exchange(srv, data, expect_close=True, timeout=5.0):
    """Sends `data` on a fresh connection; returns (closed, everything the server sent)."""
    with srv.raw() as c:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed, got = c.wait_closed(timeout=timeout if expect_close else 0.5)
        return closed, got


def send_in_thread(sock, data):
    """Sends a large buffer from a thread so the caller can read replies at the same time."""
    err = []

    def run():
        try:
            sock.sendall(data)
        except OSError as e:  # surfaced by the reader as a short read
            err.append(e)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, err


@case
def inline_commands(t, srv):
    """Inline (telnet-style) commands: quoting, escapes, LF-only and empty lines."""
    with srv.raw() as c:
        c.send(b"PING\r\n")
        assert c.read_reply_bytes() == b"+PONG\r\n"
        c.send(b'SET a "hello world"\r\n')
        assert c.read_reply_bytes() == b"+OK\r\n"
        c.send(b"GET a\r\n")
        assert c.read_reply_bytes() == b"$11\r\nhello world\r\n"
        c.send(b"  ECHO   'single quoted'   \r\n")
        assert c.read_reply_bytes() == b"$13\r\nsingle quoted\r\n"
        c.send(b'SET h "\\x41\\x42\\n"\r\nSTRLEN h\r\n')
        assert c.read_reply_bytes() == b"+OK\r\n"
        assert c.read_reply_bytes() == b":3\r\n"
        # Empty lines are ignored; a bare LF ends a line too.
        c.send(b"\r\n\r\nPING\nINCR n\r\n")
        assert c.read_reply_bytes() == b"+PONG\r\n"
        assert c.read_reply_bytes() == b":1\r\n"
        # Inline and multibulk may be mixed on one connection.
        c.send(b"INCR n\r\n" + encode_command("INCR", "n") + b"GET n\r\n")
        assert c.read_reply_bytes() == b":2\r\n"
        assert c.read_reply_bytes() == b":3\r\n"
        assert c.read_reply_bytes() == b"$1\r\n3\r\n"
        c.send(b"QUIT\r\n")
        assert c.read_reply_bytes() == b"+OK\r\n"
        closed, _ = c.wait_closed()
        assert closed, "QUIT must close the connection"


@case
def pipeline_5000_in_one_send(t, srv):
    """5,000 commands written in one send; 5,000 replies in request order."""
    n = 5000
    cmds = []
    for i in range(n):
        m = i % 4
        if m == 0:
            cmds.append(encode_command("SET", "pk:%d" % i, "v%d" % i))
        elif m == 1:
            cmds.append(encode_command("GET", "pk:%d" % (i - 1)))
        elif m == 2:
            cmds.append(encode_command("INCR", "pctr"))
        else:
            cmds.append(b"PING\r\n")
    data = b"".join(cmds)
    with srv.raw() as c:
        th, err = send_in_thread(c.sock, data)
        ctr = 0
        for i in range(n):
            r = c.read_reply()
            m = i % 4
            if m == 0:
                assert r == "OK", (i, r)
            elif m == 1:
                assert r == "v%d" % (i - 1), (i, r)
            elif m == 2:
                ctr += 1
                assert r == ctr, (i, r)
            else:
                assert r == "PONG", (i, r)
        th.join(10)
        assert not err, err
        assert c.call("GET", "pctr") == str(n // 4)


@case
def bytes_one_at_a_time(t, srv):
    """A few hundred bytes of mixed input sent one byte per write give the same replies."""
    data = (encode_command("DEL", "sc") + encode_command("SET", "slow", "v" * 40) + b"GET slow\r\n"
            + encode_command("MSET", "s1", "a", "s2", "b")
            + encode_command("MGET", "s1", "s2", "s3")
            + encode_command("INCRBY", "sc", "-17") + b'ECHO "x y"\r\n'
            + encode_command("SET", "bin", b"\r\n\x00$*:+-") + encode_command("GET", "bin")
            + b"PING\r\n")
    assert 150 < len(data) < 600
    with srv.raw() as ref:
        ref.send(data)
        expected = [ref.read_reply_bytes() for _ in range(10)][1:]
    with srv.raw() as c:
        for i in range(len(data)):
            c.send(data[i:i + 1])
        got = [c.read_reply_bytes() for _ in range(10)][1:]
    assert got == expected, (got, expected)
    assert expected[1] == b"$40\r\n" + b"v" * 40 + b"\r\n"
    assert expected[3] == b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$-1\r\n"
    assert expected[4] == b":-17\r\n"
    assert expected[7] == b"$8\r\n\r\n\x00$*:+-\r\n"


@case
def large_arguments_and_arrays(t, srv):
    """A 10 MB value and an MSET with 40,001 arguments go through intact."""
    big = os.urandom(5 * 1024 * 1024).hex().encode()
    pairs = []
    for i in range(20000):
        pairs += ["wide:%d" % i, str(i)]
    with srv.raw() as c:
        th, err = send_in_thread(c.sock, encode_command("SET", "big", big))
        assert c.read_reply() == "OK"
        th.join(10)
        got = c.call_bytes("GET", "big")
        assert got == b"$%d\r\n%s\r\n" % (len(big), big)
        th, err = send_in_thread(c.sock, encode_command("MSET", *pairs))
        assert c.read_reply() == "OK"
        th.join(10)
        assert c.call("DBSIZE") == 20001
        assert c.call("GET", "wide:19999") == "19999"


MALFORMED = [
    ("non-numeric multibulk length", b"*abc\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk length above INT_MAX", b"*3000000000\r\n",
     b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("negative bulk length", b"*1\r\n$-5\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("non-numeric bulk length", b"*1\r\n$abc\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("missing $", b"*1\r\nfoo\r\n",
     b"-ERR Protocol error: expected '$', got 'f'\r\n"),
    ("bulk over proto-max-bulk-len", b"*1\r\n$600000000\r\n",
     b"-ERR Protocol error: invalid bulk length\r\n"),
    ("inline over 64 KB without newline", b"a" * 70000,
     b"-ERR Protocol error: too big inline request\r\n"),
    ("multibulk count line over 64 KB", b"*" + b"1" * 70000,
     b"-ERR Protocol error: too big mbulk count string\r\n"),
    ("bulk count line over 64 KB", b"*1\r\n$" + b"1" * 70000,
     b"-ERR Protocol error: too big bulk count string\r\n"),
    ("unbalanced quotes inline", b'SET k "open\r\n',
     b"-ERR Protocol error: unbalanced quotes in request\r\n"),
]


@case
def malformed_input_closes_connection(t, srv):
    """Each malformed stream: exact protocol error, then the connection is closed."""
    for name, data, want in MALFORMED:
        closed, got = exchange(srv, data)
        assert got == want, "%s: got %r, want %r" % (name, got[:200], want)
        assert closed, "%s: connection left open after a protocol error" % name
        still_serving(srv)
    # Commands before the bad bytes in the same packet are answered first.
    closed, got = exchange(srv, b"PING\r\n" + encode_command("SET", "before", "1") + b"*abc\r\n")
    assert got == b"+PONG\r\n+OK\r\n-ERR Protocol error: invalid multibulk length\r\n", got
    assert closed
    with srv.raw() as c:
        assert c.call("GET", "before") == "1"
    # The bad request itself had no effect.
    closed, got = exchange(srv, b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$x\r\n")
    assert got == b"-ERR Protocol error: invalid bulk length\r\n" and closed, got
    with srv.raw() as c:
        assert c.call("EXISTS", "half") == 0


@case
def stalled_huge_bulk_does_not_allocate(t, srv):
    """Clients announcing 300-500 MB bulks (and a 1M-element array) then stalling: the server
    keeps serving others and its RSS does not grow by hundreds of MB."""
    with srv.raw() as warm:
        warm.call("SET", "warm", "x" * 1000)
    time.sleep(0.2)
    rss_before = srv.rss_kb()
    stalled = []
    try:
        for size in (500000000, 400000000, 300000000):
            c = RawClient(srv.port)
            c.send(b"*1\r\n$%d\r\n0123456789" % size)
            stalled.append(c)
        c = RawClient(srv.port)
        c.send(b"*1000000\r\n$3\r\nSET\r\n")
        stalled.append(c)
        c = RawClient(srv.port)
        c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$400000000\r\n" + b"z" * 4096)
        stalled.append(c)
        deadline = time.monotonic() + 1.0
        served = 0
        while time.monotonic() < deadline:
            with srv.raw() as other:
                assert other.call("SET", "alive", served) == "OK"
                assert other.call("GET", "alive") == str(served)
            served += 1
            time.sleep(0.05)
        assert served >= 5, "server stalled while clients hold partial bulks"
        rss_after = srv.rss_kb()
        grew_mb = (rss_after - rss_before) / 1024.0
        print("    RSS before %.1f MB, with stalled clients %.1f MB (+%.1f MB)"
              % (rss_before / 1024.0, rss_after / 1024.0, grew_mb))
        assert grew_mb < 100, "RSS grew by %.0f MB for %d stalled clients" % (grew_mb, len(stalled))
        for c in stalled:
            closed, got = c.wait_closed(timeout=0.2)
            assert not closed and got == b"", "a client mid-request must just wait: %r" % got
    finally:
        for c in stalled:
            c.close()
    still_serving(srv)
    with srv.raw() as c:
        assert c.call("EXISTS", "k") == 0, "a half-received SET must not be applied"


@case
def abrupt_disconnects(t, srv):
    """Clients that vanish mid-command or mid-pipeline leave the server healthy."""
    for data in (b"*2\r\n$3\r\nGET\r\n$10\r\nabc", b"SET a b", b"*", b"$",
                 b"".join(encode_command("INCR", "dc") for _ in range(2000))):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(data)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # linger 0: RST instead of FIN
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
    s.sendall(b"".join(encode_command("SET", "x%d" % i, "v" * 1000) for i in range(200))
              + b"".join(encode_command("GET", "x%d" % i) for i in range(200)))
    s.close()  # never reads its ~200 KB of replies
    time.sleep(0.2)
    still_serving(srv)
    with srv.raw() as c:
        n = int(c.call("GET", "dc") or 0)
        assert 0 <= n <= 2000, n


@case
def half_closed_clients_get_replies_then_close(t, srv):
    """A client that sends its last commands and shuts down its sending side (`nc -N`) gets
    every reply, then sees the server close; none is left open on the server."""
    with srv.raw() as idle:  # a second client on the server, so replies are written in batches
        assert idle.call("PING") == "PONG"
        r = srv.client()
        socks = []
        addrs = set()  # the half-closed clients, as CLIENT LIST names them
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            addrs.add("%s:%d" % s.getsockname()[:2])
            s.sendall(encode_command("PING") + encode_command("INCR", "halfclosed"))
            s.shutdown(socket.SHUT_WR)
            socks.append(s)
        counts = []
        for s in socks:
            got = b""
            deadline = time.time() + 5
            while time.time() < deadline:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
            else:
                raise AssertionError("server did not close a half-closed client: %r" % got)
            assert got.startswith(b"+PONG\r\n:") and got.endswith(b"\r\n"), got
            counts.append(int(got[len(b"+PONG\r\n:"):-2]))
            s.close()
        assert sorted(counts) == list(range(1, 21)), counts
        # Compared by address, not by count: under the sanitizers a client of the previous
        # case can still be on its way out when a count would be taken.
        def left():
            return [c for c in r.client_list() if c["addr"] in addrs]
        deadline = time.time() + 5
        while left() and time.time() < deadline:
            time.sleep(0.05)
        assert not left(), left()


if __name__ == "__main__":
    run_cases(__doc__)
