#!/usr/bin/python3
"""Process lifecycle: clean exits on SIGTERM, SIGINT and SHUTDOWN, refusing a port that is
already taken, and settings read from a config file (port, maxclients, idle timeout).

Each case starts its own server because each one ends or reconfigures it. A taken port is
checked against a plain listener and against a second copy of the server itself: a server that
binds with SO_REUSEPORT would otherwise share the port silently with the first copy.

Run: /usr/bin/python3 test_lifecycle.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RawClient, case, encode_command, run_cases  # noqa: E402


@case
def sigterm_exits_zero(t, srv):
    """SIGTERM with idle and busy clients connected: exit code 0 within 10 s."""
    with t.server() as s:
        idle = [s.raw() for _ in range(50)]
        busy = s.raw()
        busy.call("SET", "a", "1")
        busy.send(b"".join(encode_command("INCR", "n") for _ in range(1000)))
        s.send_signal(signal.SIGTERM)
        rc = s.wait(timeout=10)
        for c in idle + [busy]:
            c.close()
        assert rc == 0, "exit code %r after SIGTERM" % rc


@case
def sigint_exits_zero(t, srv):
    """SIGINT: exit code 0."""
    with t.server() as s:
        with s.raw() as c:
            assert c.call("PING") == "PONG"
        s.send_signal(signal.SIGINT)
        assert s.wait(timeout=10) == 0


@case
def shutdown_command(t, srv):
    """SHUTDOWN: the client sees the connection close, the process exits 0."""
    with t.server() as s:
        other = s.raw()
        with s.raw() as c:
            c.call("SET", "a", "1")
            c.send(encode_command("SHUTDOWN"))
            closed, got = c.wait_closed(timeout=10)
            assert closed, "connection still open after SHUTDOWN"
            assert got == b"" or not got.startswith(b"-"), "SHUTDOWN failed: %r" % got
        assert s.wait(timeout=10) == 0, "exit code after SHUTDOWN"
        closed, _ = other.wait_closed(timeout=2)
        other.close()
        assert closed, "other clients are disconnected on shutdown"


def start_on_taken_port(t, port):
    """Starts the server on `port` directly (stderr kept apart); returns (rc, stdout, stderr)."""
    if t.is_hotkv:
        cmd = [t.binary, "--port", str(port), "--bind", "127.0.0.1", "--threads", str(t.threads),
               "--loglevel", "warning"]
    else:
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        so, se = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate(timeout=5)
        raise AssertionError("server kept running on a taken port:\n%s\n%s" % (so, se))
    return p.returncode, so.decode(errors="replace"), se.decode(errors="replace")


def check_refused(t, port, holder):
    rc, so, se = start_on_taken_port(t, port)
    assert rc == 1, "exit code %r on a taken port (held by %s)\n%s%s" % (rc, holder, so, se)
    if t.is_hotkv:
        lines = [ln for ln in se.splitlines() if ln.strip()]
        assert len(lines) == 1, "want a one-line error on stderr, got:\n%s" % se
        print("    stderr: %s" % lines[0])


@case
def port_in_use_plain_listener(t, srv):
    """A port held by another listener: exit 1 (hotkv: exactly one line on stderr)."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        check_refused(t, holder.getsockname()[1], "a plain listener")
    finally:
        holder.close()


@case
def port_in_use_second_server(t, srv):
    """A port held by another copy of the server: the second copy exits 1, the first serves."""
    with t.server() as first:
        check_refused(t, first.port, "another server")
        for _ in range(20):  # each new connection would reach a silent port-sharer half the time
            with first.raw() as c:
                assert c.call("INCR", "who") is not None
        with first.raw() as c:
            assert c.call("GET", "who") == "20"


def connected_clients(c):
    info = c.call("INFO", "clients")
    for line in info.splitlines():
        if line.startswith("connected_clients:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no connected_clients in INFO clients")


def wait_clients(c, n, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if connected_clients(c) == n:
            return
        time.sleep(0.02)
    raise AssertionError("connected_clients never reached %d (is %d)" % (n, connected_clients(c)))


@case
def config_file_maxclients(t, srv):
    """--config FILE with port and maxclients 5: the 6th client gets the limit error."""
    with t.server(config={"maxclients": 5}, port_in_config=True) as s:
        first = s.raw()
        wait_clients(first, 1)  # the readiness probe has gone
        assert first.call("CONFIG", "GET", "maxclients") == ["maxclients", "5"]
        assert first.call("CONFIG", "GET", "port") == ["port", str(s.port)]
        clients = [first] + [s.raw() for _ in range(4)]
        for c in clients:
            assert c.call("PING") == "PONG"
        sixth = RawClient(s.port)
        try:
            sixth.send(encode_command("PING"))
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed, got = sixth.wait_closed(timeout=5)
        sixth.close()
        assert got == b"-ERR max number of clients reached\r\n", got
        assert closed, "the refused client must be disconnected"
        for c in clients:
            assert c.call("PING") == "PONG", "existing clients keep working"
        clients.pop().close()
        wait_clients(first, 4)
        with s.raw() as again:
            assert again.call("PING") == "PONG", "a freed slot can be reused"
        for c in clients:
            c.close()


@case
def config_file_idle_timeout(t, srv):
    """timeout 1 in the config file: an idle client is closed within 5 s, a busy one is not."""
    with t.server(config={"timeout": 1}) as s:
        idle = s.raw()
        busy = s.raw()
        assert idle.call("PING") == "PONG"
        t0 = time.monotonic()
        closed = False
        while time.monotonic() - t0 < 5.0:
            assert busy.call("PING") == "PONG", "an active client must not time out"
            c, _ = idle.wait_closed(timeout=0.25)
            if c:
                closed = True
                break
        waited = time.monotonic() - t0
        idle.close()
        assert closed, "idle client still connected after 5 s with timeout 1"
        assert waited >= 0.9, "closed after %.2fs, before the 1 s timeout" % waited
        print("    idle client closed after %.2fs" % waited)
        assert busy.call("PING") == "PONG"
        busy.close()


def non_loopback_address():
    """An IPv4 address of this host outside the loopback interface, or None."""
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                             capture_output=True, text=True, timeout=5).stdout
    except OSError:
        return None
    for line in out.splitlines():
        words = line.split()
        if "inet" in words:
            return words[words.index("inet") + 1].split("/")[0]
    return None


def first_reply_from(host, port):
    """What the server sends a new client from `host` before it sends anything (the refusal),
    or None if it waits for a command; then closes."""
    s = socket.create_connection((host, port), timeout=5)
    try:
        s.settimeout(0.5)
        try:
            data = s.recv(4096)
        except socket.timeout:
            return None
        while data and not data.endswith(b"\r\n"):
            more = s.recv(4096)
            if not more:
                break
            data += more
        return data
    finally:
        s.close()


@case
def protected_mode_serves_only_loopback_without_a_password(t, srv):
    """Bound to every address with no password, a client from another address of the host
    gets -DENIED and is disconnected, while loopback clients are served; a password or
    protected-mode no lets it in. (redis-server words the refusal differently.)"""
    addr = non_loopback_address()
    if addr is None:
        print("    NOTE: this host has no address outside the loopback interface; not tested")
        return
    with t.server(extra_args=["--bind", "0.0.0.0"]) as s:
        with s.raw() as local:
            assert local.call("CONFIG", "GET", "protected-mode") == ["protected-mode", "yes"]
            refused = first_reply_from(addr, s.port)
            assert refused is not None and refused.startswith(b"-DENIED "), refused
            assert b"protected mode" in refused and refused.endswith(b"\r\n"), refused
            assert local.call("PING") == "PONG"
            assert local.call("CONFIG", "SET", "requirepass", "sale-day") == "OK"
            assert first_reply_from(addr, s.port) is None  # served: it must AUTH first
            with RawClient(s.port, host=addr) as outside:
                assert str(outside.call("PING")).startswith("NOAUTH"), "a password is asked"
                assert outside.call("AUTH", "sale-day") == "OK"
                assert outside.call("PING") == "PONG"
            assert local.call("AUTH", "sale-day") == "OK"
            assert local.call("CONFIG", "SET", "requirepass", "") == "OK"
            assert first_reply_from(addr, s.port).startswith(b"-DENIED ")
            assert local.call("CONFIG", "SET", "protected-mode", "no") == "OK"
            with RawClient(s.port, host=addr) as outside:
                assert outside.call("PING") == "PONG"


if __name__ == "__main__":
    run_cases(__doc__, shared_server=False)
