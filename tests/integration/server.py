"""Shared harness for the end-to-end tests: start a real server, talk RESP to it, run cases.

Every test_*.py in this folder runs either against the hotkv binary (`--server PATH --threads N`)
or against the reference `redis-server` (`--kind redis`), so each assertion is first proven on
Redis and then held against hotkv. A server gets a free loopback port, is ready once PING
answers, and is stopped with SIGTERM at the end; hotkv (and Redis) must then exit 0. The server's
output goes to a temp log that is printed whenever something fails.

Only the standard library and python3-redis are used: run with /usr/bin/python3.
"""

import argparse
import glob
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import redis

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
SOCKET_TIMEOUT_S = 10.0


def free_port():
    """Returns a loopback TCP port that was free a moment ago (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, what, timeout=10.0, tolerate=()):
    """Polls `cond` (every 50 ms, for at most `timeout` seconds) until it returns a true value,
    which is returned. Exceptions of the `tolerate` types (a node restarting) count as "not yet";
    the last one is named if the wait times out."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            v = cond()
            if v:
                return v
        except tolerate as e:
            last = e
        time.sleep(0.05)
    raise AssertionError("timed out after %.0f s waiting for %s%s"
                         % (timeout, what, " (last error: %r)" % last if last else ""))


def silent_reader(port, *args):
    """A raw client that sends one command and never reads the reply (output limits)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    parts = ["*%d\r\n" % len(args)] + ["$%d\r\n%s\r\n" % (len(a), a) for a in args]
    s.sendall("".join(parts).encode())
    return s


def closed_by_server(s, timeout):
    """True once the server has closed the connection (reading through what it sent)."""
    s.settimeout(0.2)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = s.recv(1 << 20)
            if not data:
                return True
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def set_refused(c, key, value, error):
    """SET key value through the redis-py client `c`: True if the server refused it with an
    error containing `error` (any other error fails the test), False if it took it."""
    try:
        c.set(key, value)
        return False
    except Exception as e:  # redis-py maps each error prefix to its own exception class
        assert error in str(e), e
        return True


def raise_nofile(wanted):
    """Raises the soft RLIMIT_NOFILE towards `wanted` (capped by the hard limit); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        new_soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new_soft, hard))
        soft = new_soft
    return soft


# ----------------------------------------------------------------------------------------------
# RESP encoding and a small raw client. redis-py strips the "ERR " prefix from errors and has no
# RESP3, so exact wire behaviour is checked through this client instead.


class RespError(Exception):
    """An error reply, kept as the exact text after '-' (e.g. "ERR syntax error")."""

    def __eq__(self, other):
        return isinstance(other, RespError) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return "RespError(%r)" % str(self)


class Push(list):
    """A RESP3 push ('>') message."""


class Verbatim(str):
    """A RESP3 verbatim string ('='); `fmt` holds its three-letter format."""

    fmt = "txt"


def encode_command(*args):
    """Encodes one command as a RESP array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, bytes):
            b = a
        elif isinstance(a, str):
            b = a.encode()
        else:
            b = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class ConnectionClosed(Exception):
    """The server closed the connection while a reply was expected."""


class RawClient:
    """A blocking RESP2/RESP3 client over one socket. Replies are decoded to Python values:
    bulk/simple strings → str (bytes if not UTF-8), integers → int, null → None, arrays/sets →
    list, maps → dict, doubles → float, booleans → bool, errors → RespError (returned, not
    raised, by `call`)."""

    def __init__(self, port, host="127.0.0.1", timeout=SOCKET_TIMEOUT_S):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionClosed("server closed the connection")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        data = self.buf[self.pos:self.pos + n]
        if self.buf[self.pos + n:self.pos + n + 2] != b"\r\n":
            raise AssertionError("bulk payload not followed by CRLF")
        self.pos += n + 2
        return data

    @staticmethod
    def _text(b):
        try:
            return b.decode()
        except UnicodeDecodeError:
            return b

    def _compact(self):
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0

    def read_reply(self):
        """Reads one complete reply."""
        self._compact()
        return self._read()

    def read_reply_bytes(self):
        """Reads one reply and returns its exact bytes on the wire."""
        self._compact()
        self._read()
        return self.buf[:self.pos]

    def _read(self):
        line = self._line()
        if not line:
            raise AssertionError("empty reply line")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return self._text(rest)
        if t == b"-":
            return RespError(rest.decode(errors="replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._text(self._exact(n))
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self._read() for _ in range(n)]
            return Push(items) if t == b">" else items
        if t == b"%":
            n = int(rest)
            out = {}
            for _ in range(n):
                k = self._read()
                v = self._read()
                out[k if not isinstance(k, list) else tuple(k)] = v
            return out
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        if t == b"(":
            return int(rest)
        if t == b"!":
            return RespError(self._exact(int(rest)).decode(errors="replace"))
        if t == b"=":
            data = self._exact(int(rest))
            v = Verbatim(data[4:].decode(errors="replace"))
            v.fmt = data[:3].decode()
            return v
        if t == b"|":
            n = int(rest)
            for _ in range(2 * n):
                self._read()
            return self._read()
        raise AssertionError("unknown RESP type byte %r in line %r" % (t, line))

    def call(self, *args):
        self.send(encode_command(*args))
        return self.read_reply()

    def call_bytes(self, *args):
        self.send(encode_command(*args))
        return self.read_reply_bytes()

    def wait_closed(self, timeout=5.0):
        """Drains data until the peer closes; returns (closed, drained_bytes). Bounded."""
        deadline = time.monotonic() + timeout
        got = self.buf[self.pos:]
        self.buf, self.pos = b"", 0
        try:
            while time.monotonic() < deadline:
                self.sock.settimeout(max(0.05, deadline - time.monotonic()))
                try:
                    chunk = self.sock.recv(1 << 16)
                except socket.timeout:
                    break
                except (ConnectionResetError, BrokenPipeError):
                    return True, got
                if not chunk:
                    return True, got
                got += chunk
                if len(got) > (1 << 20):
                    break
            return False, got
        finally:
            self.sock.settimeout(SOCKET_TIMEOUT_S)


def expect_error(reply, text):
    """Asserts that `reply` is an error whose text is exactly `text`."""
    assert isinstance(reply, RespError), "expected error %r, got %r" % (text, reply)
    assert str(reply) == text, "expected error %r, got %r" % (text, str(reply))


def expect_error_prefix(reply, prefix):
    assert isinstance(reply, RespError), "expected error %r..., got %r" % (prefix, reply)
    assert str(reply).startswith(prefix), "expected error %r..., got %r" % (prefix, str(reply))


# ----------------------------------------------------------------------------------------------
# Server processes.



def kill9_under_load(server, threads, stop, seconds):
    """Starts the load `threads`, lets them run `seconds`, kills the server with SIGKILL,
    sets `stop`, and waits for the threads and the process: the crash half of a kill -9 test
    (the restart and its checks are the test's)."""
    for th in threads:
        th.start()
    time.sleep(seconds)
    os.kill(server.pid(), signal.SIGKILL)
    stop.set()
    for th in threads:
        th.join(timeout=15)
    server.wait(timeout=10)
    server.cleanup()


class Server:
    """One server process on a free loopback port. Use as a context manager.

    kind: "hotkv" (needs `binary`, honours `threads`) or "redis".
    requirepass: start with a password.
    config: dict written as a Redis-style config file ("name value" lines) passed with
            `--config FILE` to hotkv or as the first argument to redis-server.
    port_in_config: put the port in the config file instead of on the command line.
    expect_exit: exit code required when the server is stopped (None: do not check).
    port: a fixed port, kept across restarts (for a node that others know by its address, as
          replicas and redis-sentinel do); None picks a free one at each start.
    workdir: a directory of the server's own, given as its --dir. The config dict is written
             there once (server.conf), at the first start, and then used as it is, so what
             CONFIG REWRITE put there survives a restart; the log (server.log) is appended to
             across restarts. The caller removes the directory.
    """

    def __init__(self, kind, binary=None, threads=1, requirepass=None, config=None,
                 port_in_config=False, expect_exit=0, extra_args=(), port=None, workdir=None):
        if kind not in ("hotkv", "redis"):
            raise ValueError("kind must be hotkv or redis")
        if kind == "hotkv" and not binary:
            raise ValueError("hotkv needs a binary path")
        self.kind = kind
        self.binary = binary
        self.threads = threads
        self.requirepass = requirepass
        self.config = dict(config or {})
        self.port_in_config = port_in_config
        self.expect_exit = expect_exit
        self.extra_args = list(extra_args)
        self.fixed_port = port
        self.workdir = workdir
        self.port = None
        self.proc = None
        self.log_path = None
        self.conf_path = None
        self._log_file = None
        self.returncode = None

    # -- command line ----------------------------------------------------------------------

    def command(self, port):
        conf = None
        if self.workdir:
            conf = os.path.join(self.workdir, "server.conf")
            if not os.path.exists(conf):
                with open(conf, "w") as f:
                    for k, v in self.config.items():
                        f.write("%s %s\n" % (k, v))
        elif self.config or self.port_in_config:
            lines = dict(self.config)
            if self.port_in_config:
                lines["port"] = port
            fd, conf = tempfile.mkstemp(prefix="hotkv-it-", suffix=".conf")
            with os.fdopen(fd, "w") as f:
                for k, v in lines.items():
                    f.write("%s %s\n" % (k, v))
            self.conf_path = conf
        if self.kind == "redis":
            exe = shutil.which("redis-server") or "/usr/bin/redis-server"
            cmd = [exe]
            if conf:
                cmd.append(conf)
            if not self.port_in_config:
                cmd += ["--port", str(port)]
            cmd += ["--bind", "127.0.0.1", "--loglevel", "warning"]
            # No snapshots and no log unless the test's config asks for them (an argument
            # would override the config file's line).
            if "save" not in self.config:
                cmd += ["--save", ""]
            if "appendonly" not in self.config:
                cmd += ["--appendonly", "no"]
            if self.workdir:
                cmd += ["--dir", self.workdir]
        else:
            cmd = [self.binary]
            if not self.port_in_config:
                cmd += ["--port", str(port)]
            cmd += ["--bind", "127.0.0.1", "--threads", str(self.threads),
                    "--loglevel", "warning"]
            if conf:
                cmd += ["--config", conf]
            if self.workdir:
                cmd += ["--dir", self.workdir]
        if self.requirepass is not None:
            cmd += ["--requirepass", self.requirepass]
        return cmd + self.extra_args

    # -- lifecycle -------------------------------------------------------------------------

    def start(self):
        last_log = ""
        for _attempt in range(3):
            port = self.fixed_port or free_port()
            cmd = self.command(port)
            if self._log_file:
                self._log_file.close()
            if self.workdir:
                self.log_path = os.path.join(self.workdir, "server.log")
                self._log_file = open(self.log_path, "ab")
            else:
                fd, self.log_path = tempfile.mkstemp(prefix="hotkv-it-", suffix=".log")
                self._log_file = os.fdopen(fd, "w+b")
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                         stderr=subprocess.STDOUT, start_new_session=True)
            self.port = port
            state = self._wait_ready()
            if state == "ready":
                return self
            last_log = self.log_text()
            if state == "port-taken":
                continue  # another process grabbed the port between probe and bind
            self._kill()
            raise AssertionError("server did not become ready (%s): %s\n--- log ---\n%s"
                                 % (state, " ".join(cmd), last_log))
        raise AssertionError("could not find a free port after 3 attempts\n" + last_log)

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                text = self.log_text().lower()
                if "in use" in text:
                    return "port-taken"
                return "exited with code %d" % rc
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    data = s.recv(64)
                    if data.startswith(b"+PONG") or data.startswith(b"-NOAUTH"):
                        return "ready"
            except OSError:
                pass
            time.sleep(0.05)
        return "no PING answer within %.0f s" % READY_TIMEOUT_S

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def pid(self):
        return self.proc.pid

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT_S):
        """Waits for exit (bounded); returns the exit code or None on timeout."""
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def _kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def stop(self, sig=signal.SIGTERM):
        """Stops the server with `sig` and checks the exit code; returns it."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.wait()
        if rc is None:
            self._kill()
            raise AssertionError("server did not exit within %.0f s of %s\n--- log ---\n%s"
                                 % (STOP_TIMEOUT_S, signal.Signals(sig).name, self.log_text()))
        if self.expect_exit is not None and rc != self.expect_exit:
            raise AssertionError("server exited with %d, expected %d\n--- log ---\n%s"
                                 % (rc, self.expect_exit, self.log_text()))
        return rc

    def cleanup(self):
        self._kill()
        if self._log_file:
            self._log_file.close()
            self._log_file = None
        if self.workdir:
            return  # the caller's directory, with the log and config in it
        for p in (self.log_path, self.conf_path):
            if p and os.path.exists(p):
                os.unlink(p)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is not None:
                self.print_log("server log (test failed)")
                self._kill()
            else:
                self.stop()
        finally:
            self.cleanup()
        return False

    # -- inspection ------------------------------------------------------------------------

    def log_text(self, limit=20000):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            data = f.read()
        return data[-limit:].decode(errors="replace")

    def print_log(self, title):
        sys.stdout.write("----- %s (%s port %s) -----\n%s\n----- end -----\n"
                         % (title, self.kind, self.port, self.log_text()))
        sys.stdout.flush()

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS for pid %d" % self.proc.pid)

    # -- clients ---------------------------------------------------------------------------

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", SOCKET_TIMEOUT_S)
        if self.requirepass is not None:
            kw.setdefault("password", self.requirepass)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def raw(self, auth=True):
        c = RawClient(self.port)
        if auth and self.requirepass is not None:
            r = c.call("AUTH", self.requirepass)
            assert r == "OK", r
        return c


# ----------------------------------------------------------------------------------------------
# Command line and the tiny case runner.


class Target:
    """What the tests run against, from the command line."""

    def __init__(self, kind, binary, threads):
        self.kind = kind
        self.binary = binary
        self.threads = threads

    @property
    def is_hotkv(self):
        return self.kind == "hotkv"

    def server(self, **kw):
        return Server(self.kind, binary=self.binary, threads=self.threads, **kw)

    def describe(self):
        if self.is_hotkv:
            return "hotkv %s --threads %d" % (self.binary, self.threads)
        return "redis-server (reference)"


def parse_target(description, argv=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--server", help="path to the hotkv binary")
    p.add_argument("--threads", type=int, default=1, help="hotkv --threads (default 1)")
    p.add_argument("--kind", choices=("hotkv", "redis"), default=None,
                   help="server kind; 'redis' runs against redis-server")
    p.add_argument("--only", "--case", dest="only", default=None,
                   help="run only cases whose name contains this")
    a = p.parse_args(argv)
    kind = a.kind or ("hotkv" if a.server else None)
    if kind is None:
        p.error("give --server PATH_TO_HOTKV or --kind redis")
    if kind == "hotkv":
        if not a.server:
            p.error("--kind hotkv needs --server PATH")
        if not os.access(a.server, os.X_OK):
            p.error("not an executable: %s" % a.server)
    t = Target(kind, os.path.abspath(a.server) if a.server else None, a.threads)
    t.only = a.only
    return t


_CASES = []


def case(fn):
    """Registers a test case `fn(target, server)`; runs in definition order."""
    _CASES.append(fn)
    return fn


def hotkv_only(why):
    """Marks a case that is only meaningful against hotkv; skipped for --kind redis."""

    def mark(fn):
        fn.hotkv_only = why
        return fn

    return mark


def run_cases(description, shared_server=True, server_kw=None):
    """Parses the command line, starts one shared server (flushed before each case) and runs
    every registered case. Prints one line per case; exits 1 if any failed."""
    target = parse_target(description)
    print("# %s" % os.path.basename(sys.argv[0]))
    print("# target: %s" % target.describe())
    results = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    t_start = time.monotonic()
    cases = [c for c in _CASES if not target.only or target.only in c.__name__]

    def one(fn, srv):
        name = fn.__name__
        why = getattr(fn, "hotkv_only", None)
        if why and not target.is_hotkv:
            results["SKIP"] += 1
            print("SKIP %-45s (hotkv only: %s)" % (name, why))
            return
        doc = (fn.__doc__ or "").strip().splitlines()
        t0 = time.monotonic()
        try:
            if srv is not None:
                if not srv.alive():
                    raise AssertionError("shared server is not running (crashed earlier?)")
                with srv.raw() as c:
                    r = c.call("FLUSHALL")
                    assert r == "OK", "FLUSHALL before case: %r" % (r,)
            fn(target, srv)
            if srv is not None and not srv.alive():
                raise AssertionError("server died during the case (exit %s)" % srv.proc.poll())
        except Exception:
            results["FAIL"] += 1
            print("FAIL %-45s %.2fs" % (name, time.monotonic() - t0))
            traceback.print_exc(file=sys.stdout)
            if srv is not None:
                srv.print_log("server log after failure")
            sys.stdout.flush()
            return
        results["PASS"] += 1
        print("PASS %-45s %.2fs  %s" % (name, time.monotonic() - t0, doc[0] if doc else ""))
        sys.stdout.flush()

    try:
        if shared_server:
            with target.server(**(server_kw or {})) as srv:
                for fn in cases:
                    one(fn, srv)
        else:
            for fn in cases:
                one(fn, None)
    except Exception:
        results["FAIL"] += 1
        print("FAIL shared server start/stop")
        traceback.print_exc(file=sys.stdout)

    print("# %d passed, %d failed, %d skipped in %.1fs"
          % (results["PASS"], results["FAIL"], results["SKIP"], time.monotonic() - t_start))
    sys.exit(1 if results["FAIL"] else 0)


# ----------------------------------------------------------------------------------------------
# Many connections at once, and a data directory for restarts.


class Swarm:
    """Many non-blocking raw connections driven by one selector (epoll), for races between
    thousands of real clients. A round sends one payload per connection back to back, then
    collects a fixed number of one-line replies (integer, simple string or error) from each."""

    def __init__(self, port, n, deadline_s=30.0):
        self.deadline = time.monotonic() + deadline_s
        self.socks = []
        try:
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT_S)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.socks.append(s)
        except BaseException:
            self.close()
            raise
        for s in self.socks:
            s.setblocking(False)

    def __len__(self):
        return len(self.socks)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []

    def _send_all(self, s, payload):
        view = memoryview(payload)
        while view:
            try:
                view = view[s.send(view):]
            except BlockingIOError:
                assert time.monotonic() < self.deadline, "send stalled"
                time.sleep(0.001)

    def round(self, payload, replies_each, only=None, received_at=None):
        """Sends `payload` (bytes for every connection, or a function of the connection's
        index returning bytes) on each connection in `only` (default: all), then reads
        `replies_each` replies from each. Returns {index: [reply, ...]}. With a dict as
        `received_at`, records for each connection the wall-clock time (time.time()) at which
        its replies had all arrived: no earlier than the server sent them."""
        which = list(range(len(self.socks))) if only is None else list(only)
        for i in which:
            self._send_all(self.socks[i], payload(i) if callable(payload) else payload)
        sel = selectors.DefaultSelector()
        bufs = {}
        out = {}
        for i in which:
            sel.register(self.socks[i], selectors.EVENT_READ, i)
            bufs[i] = b""
            out[i] = []
        pending = len(which)
        while pending:
            left = self.deadline - time.monotonic()
            assert left > 0, "%d connections still waiting for replies" % pending
            for key, _ in sel.select(timeout=min(1.0, left)):
                i = key.data
                chunk = key.fileobj.recv(65536)
                assert chunk, "connection %d closed by the server" % i
                bufs[i] += chunk
                while len(out[i]) < replies_each:
                    taken = take_reply(bufs[i])
                    if taken is None:
                        break
                    reply, bufs[i] = taken
                    out[i].append(reply)
                if len(out[i]) == replies_each:
                    assert not bufs[i], "extra bytes on connection %d: %r" % (i, bufs[i])
                    if received_at is not None:
                        received_at[i] = time.time()
                    sel.unregister(key.fileobj)
                    pending -= 1
        sel.close()
        return out


def take_reply(buf):
    """The first complete reply in `buf` and what follows it, or None if it is incomplete:
    single-line replies, bulk strings (str, None for a null), and arrays of them (nested
    arrays too)."""
    if b"\r\n" not in buf:
        return None
    line, rest = buf.split(b"\r\n", 1)
    if line[:1] == b"$":
        n = int(line[1:])
        if n < 0:
            return None, rest
        if len(rest) < n + 2:
            return None
        return rest[:n].decode(), rest[n + 2:]
    if line[:1] != b"*":
        return parse_reply_line(line), rest
    items = []
    for _ in range(int(line[1:])):
        taken = take_reply(rest)
        if taken is None:
            return None
        item, rest = taken
        items.append(item)
    return items, rest


def parse_reply_line(line):
    """One single-line RESP reply: ':' -> int, '+' -> str, '-' -> RespError."""
    t, rest = line[:1], line[1:]
    if t == b":":
        return int(rest)
    if t == b"+":
        return rest.decode()
    if t == b"-":
        return RespError(rest.decode())
    raise AssertionError("unexpected reply line %r" % line)


def wait_rewrite_done(client, deadline_s=30):
    """Waits (bounded) until INFO persistence reports no rewrite running or scheduled; returns
    that INFO section."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        info = client.info("persistence")
        if info.get("aof_rewrite_in_progress") == 0 and info.get("aof_rewrite_scheduled", 0) == 0:
            return info
        time.sleep(0.02)
    raise AssertionError("rewrite still running after %d s" % deadline_s)


class DataDir:
    """A temporary server directory for the append-only log, removed afterwards."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="hotkv-aof-")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)

    def args(self, fsync):
        return ["--appendonly", "yes", "--appendfsync", fsync, "--dir", self.path]

    def log_files(self):
        return sorted(glob.glob(os.path.join(self.path, "appendonlydir", "*.aof")))


# ----------------------------------------------------------------------------------------------
# Redis Cluster key slots, so tests can pick keys that land on different shards.

def _crc16_table():
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC16 = _crc16_table()


def crc16(data):
    crc = 0
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[((crc >> 8) ^ b) & 0xFF]
    return crc


def key_slot(key):
    """Redis Cluster's HASH_SLOT: CRC16 of the key or its first non-empty {tag}, mod 16384."""
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % 16384


def spread_keys(prefix, count):
    """Returns `count` keys without hash tags such that key j has slot % count == j and lies in
    slot range count-1-j, so they land on different shards whether slots map to shards by
    modulo or by range."""
    chosen = []
    for i in range(200000):
        k = "%s%d" % (prefix, i)
        s = key_slot(k)
        j = len(chosen)
        if s % count == j and s * count // 16384 == count - 1 - j:
            chosen.append(k)
            if len(chosen) == count:
                return chosen
    raise AssertionError("could not spread %d keys" % count)
