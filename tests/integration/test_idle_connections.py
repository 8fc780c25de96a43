#!/usr/bin/python3
"""Ten thousand idle connections: what each costs the server, and that it is given back.

A sale opens a connection per shopper and most of them sit idle between clicks. The cases open
the connections with raw sockets, have every one send a PING (so the server has read from all
of them) or nothing at all, wait while they idle, and read the server's RSS: after a couple of
seconds an idle plain client gives up its buffers and its connection object (it hibernates,
net/connection_hibernate.cpp), so each must cost at most IDLE_BYTES_MAX, or
NEVER_SENT_BYTES_MAX if it never sent anything. After they all close, RSS must come back near
where it started (the allocator is asked to purge after many disconnects). Hibernated clients
must still answer at once and keep their session. Against redis-server
(`--kind redis`) the figures are printed, not asserted. Under the sanitizers (HOTKV_SANITIZED=1)
the allocator is not malloc, so only the behaviour is checked.

Run: /usr/bin/python3 test_idle_connections.py --server build/hotkv --threads 0
"""

import os
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, closed_by_server, raise_nofile, run_cases, wait_for  # noqa: E402

CONNECTIONS = 10000
# Measured: about 1,400 B (21,000 when idle connections kept their buffers, 6,200 when they
# gave them back but kept their Connection; redis-server about 6,000 B in the same test). An
# idle plain client is hibernated (net/connection_hibernate.cpp): what remains is its
# ClientInfo, its owner, the hibernation record, asio's reactor state kept for reuse and the
# registry's entry, about 690 B in live allocations, and the allocator's partly filled slabs
# (docs/performance.md). The bound catches a regression to keeping the Connection.
IDLE_BYTES_MAX = 2000
# After every connection closed, RSS must have given back at least three quarters of what
# the connections took at their peak. Not all of it: what malloc cannot return is pages still
# holding a live object, such as the reactor's per-socket state, which asio keeps for reuse
# (about 2.2 KB per connection was left here, as for redis-server 7.0.15 in the same test).
RETURNED_SHARE = 0.75
# Connections that never send anything (how the issue measured: redis-server 7.0.15 about
# 1,400 B each on this machine): hibernated after 2 s, measured at about 890 B.
NEVER_SENT_BYTES_MAX = 1000
SANITIZED = os.environ.get("HOTKV_SANITIZED") == "1"


def open_idle(port, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        socks.append(s)
    # Pipelined across sockets: every PING is sent before the first reply is read.
    for s in socks:
        s.sendall(b"PING\r\n")
    for s in socks:
        assert s.recv(16) == b"+PONG\r\n"
    return socks


def rss_bytes(srv):
    return srv.rss_kb() * 1024


@case
def idle_connections_cost_little_and_are_given_back(t, srv):
    """10,000 connections that each sent one PING, then idle: bytes each, and RSS after."""
    base = rss_bytes(srv)
    socks = open_idle(srv.port, CONNECTIONS)
    try:
        active = rss_bytes(srv)
        peak = active
        limit = base + CONNECTIONS * IDLE_BYTES_MAX
        # Parking happens after 2 s idle, checked once a second by each thread's cron.
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and rss_bytes(srv) > limit:
            time.sleep(0.25)
        idle = rss_bytes(srv)
        print("    RSS %d B before, %d B with %d connections just used (%d B each), %d B "
              "idle (%d B each)" % (base, active, CONNECTIONS, (active - base) // CONNECTIONS,
                                    idle, (idle - base) // CONNECTIONS))
        if t.is_hotkv:
            hibernated = lambda: int(srv.client().info("clients")["hibernated_clients"])
            wait_for(lambda: hibernated() >= CONNECTIONS, "the idle clients to hibernate", 10)
        if t.is_hotkv and not SANITIZED:
            assert idle <= limit, "idle connections cost %d B each (at most %d)" % (
                (idle - base) // CONNECTIONS, IDLE_BYTES_MAX)
        # Parked connections answer at once: a pipelined round over all of them.
        t0 = time.monotonic()
        for s in socks:
            s.sendall(b"PING\r\n")
        for s in socks:
            assert s.recv(16) == b"+PONG\r\n"
        print("    a PING on each parked connection: %.2f s for all" % (time.monotonic() - t0))
        r = srv.client()
        assert r.set("after", "parked") is True and r.get("after") == "parked"
    finally:
        for s in socks:
            s.close()
    r = srv.client()
    wait_for(lambda: int(r.info("clients")["connected_clients"]) <= 2, "clients to close", 30)
    kept_max = base + (1 - RETURNED_SHARE) * (peak - base)
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and rss_bytes(srv) > kept_max:
        time.sleep(0.25)
    after = rss_bytes(srv)
    print("    RSS %d B after they closed (%+d B against before, %.0f%% of the peak's growth "
          "given back)" % (after, after - base, 100.0 * (peak - after) / max(1, peak - base)))
    if t.is_hotkv and not SANITIZED:
        assert after <= kept_max, (
            "RSS stayed %d B above its start after the clients left (peak +%d B)"
            % (after - base, peak - base))


@case
def a_parked_connection_keeps_its_session(t, srv):
    """A connection that parked keeps its database, name and transaction, and a half-sent
    request completed after the idle time is executed whole."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(b"SELECT 3\r\nCLIENT SETNAME idle-shopper\r\nMULTI\r\nSET k v\r\n")
        got = b""
        while got.count(b"\r\n") < 4:
            got += s.recv(100)
        assert got == b"+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n", got
        s.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf")  # a request cut in the middle
        time.sleep(3.5)  # past the park time: a buffer with bytes in it is kept
        s.sendall(b"\r\n$4\r\nsent\r\n")
        got = b""
        while not got.endswith(b"+QUEUED\r\n"):
            got += s.recv(100)
        time.sleep(3.5)  # now idle with nothing buffered: parked
        s.sendall(b"EXEC\r\nCLIENT GETNAME\r\n")
        got = b""
        while got.count(b"\r\n") < 5:
            got += s.recv(100)
        assert got == b"*2\r\n+OK\r\n+OK\r\n$12\r\nidle-shopper\r\n", got
    finally:
        s.close()
    r = srv.client(db=3)
    assert r.get("k") == "v" and r.get("half") == "sent"


@case
def connections_that_never_send_cost_under_a_kilobyte(t, srv):
    """10,000 connections that only connect: once hibernated, at most 1,000 B each."""
    r = srv.client()
    base = rss_bytes(srv)
    socks = [socket.create_connection(("127.0.0.1", srv.port), timeout=30)
             for _ in range(CONNECTIONS)]
    try:
        if t.is_hotkv:
            wait_for(lambda: hibernated_now(r) >= CONNECTIONS, "the clients to hibernate", 15)
        else:
            time.sleep(4)
        # The freed pages go back at the purge after many parkings (worker 0's cron, at most
        # once a second) or when they decay.
        limit = base + CONNECTIONS * NEVER_SENT_BYTES_MAX
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline and rss_bytes(srv) > limit:
            time.sleep(0.25)
        each = (rss_bytes(srv) - base) // CONNECTIONS
        print("    %d B per connection that never sent anything" % each)
        if t.is_hotkv and not SANITIZED:
            assert each <= NEVER_SENT_BYTES_MAX, "%d B each (at most %d)" % (
                each, NEVER_SENT_BYTES_MAX)
        # Woken by their first bytes, they answer.
        for s in socks[:100]:
            s.sendall(b"PING\r\n")
        for s in socks[:100]:
            assert s.recv(16) == b"+PONG\r\n"
    finally:
        for s in socks:
            s.close()


def read_reply(s, ends):
    got = b""
    deadline = time.monotonic() + 10
    while not got.endswith(ends) and time.monotonic() < deadline:
        got += s.recv(4096)
    return got


def hibernated_now(r):
    return int(r.info("clients")["hibernated_clients"])


@case
def a_hibernated_client_keeps_its_session(t, srv):
    """An idle client with a plain session gives up its connection object: it keeps its
    database, name, protocol and user, shows in CLIENT LIST meanwhile, and answers at once."""
    r = srv.client()
    r.execute_command("ACL", "SETUSER", "shopper", "on", ">pw", "~*", "+@all")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(b"HELLO 3 AUTH shopper pw SETNAME idle-shopper\r\nSELECT 3\r\n")
        got = read_reply(s, b"+OK\r\n")
        assert got.startswith(b"%") and got.endswith(b"+OK\r\n"), got
        if t.is_hotkv:
            wait_for(lambda: hibernated_now(r) >= 1, "the client to hibernate", 10)
        else:
            time.sleep(3)
        line = [c for c in r.client_list() if c["name"] == "idle-shopper"]
        assert len(line) == 1 and line[0]["db"] == "3" and line[0]["user"] == "shopper", line
        s.sendall(b"SET k hibernated\r\nCLIENT GETNAME\r\nACL WHOAMI\r\n")
        got = read_reply(s, b"$7\r\nshopper\r\n")
        # RESP3 replies: +OK, the name and the user as bulk strings.
        assert got == b"+OK\r\n$12\r\nidle-shopper\r\n$7\r\nshopper\r\n", got
        assert srv.client(db=3).get("k") == "hibernated"
    finally:
        s.close()


@case
def a_hibernated_client_can_be_killed_and_timed_out(t, srv):
    """CLIENT KILL closes a hibernated client's socket at once; so does the idle timeout."""
    r = srv.client()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(b"CLIENT SETNAME victim\r\n")
        assert read_reply(s, b"+OK\r\n") == b"+OK\r\n"
        if t.is_hotkv:
            wait_for(lambda: hibernated_now(r) >= 1, "the client to hibernate", 10)
        else:
            time.sleep(3)
        victim = [c for c in r.client_list() if c["name"] == "victim"][0]
        assert r.execute_command("CLIENT", "KILL", "ID", victim["id"]) == 1
        assert closed_by_server(s, 5)
        wait_for(lambda: not [c for c in r.client_list() if c["name"] == "victim"],
                 "the killed client to leave CLIENT LIST", 5)
    finally:
        s.close()
    r.config_set("timeout", 3)
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=15)
    try:
        s.sendall(b"PING\r\n")
        assert read_reply(s, b"+PONG\r\n") == b"+PONG\r\n"
        assert closed_by_server(s, 10)  # hibernated after 2 s, closed after 3 s idle
    finally:
        s.close()
        r.config_set("timeout", 0)


@case
def a_hibernated_redirect_target_gets_its_invalidations(t, srv):
    """A RESP3 client that another client's tracking redirects to is woken by the
    invalidation and receives it as a push."""
    r = srv.client()
    target = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        target.sendall(b"CLIENT ID\r\n")
        target_id = int(read_reply(target, b"\r\n")[1:-2])
        target.sendall(b"HELLO 3\r\nPING\r\n")
        read_reply(target, b"+PONG\r\n")
        if t.is_hotkv:
            wait_for(lambda: hibernated_now(r) >= 1, "the target to hibernate", 10)
        tracker = srv.client()
        tracker.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", target_id)
        tracker.set("watched", "1")
        tracker.get("watched")
        srv.client().set("watched", "2")
        got = read_reply(target, b"watched\r\n")
        assert got.startswith(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\nwatched\r\n"), got
    finally:
        target.close()


if __name__ == "__main__":
    have = raise_nofile(CONNECTIONS + 1024)
    if have < CONNECTIONS + 256:
        print("# RLIMIT_NOFILE is %d (hard limit); %d connections need %d descriptors" %
              (have, CONNECTIONS, CONNECTIONS + 256))
        sys.exit(1)
    run_cases(__doc__.splitlines()[0], server_kw={"config": {"maxclients": CONNECTIONS + 100}})
