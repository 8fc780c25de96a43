#!/usr/bin/python3
"""TLS as Redis 7.0 has it: a tls-port beside (or instead of) the plain port, certificates
checked against a CA, and real TLS clients -- redis-cli --tls, redis-py with ssl=True,
redis-benchmark --tls, Python's ssl module for exact protocol versions, and redis-server as a
replica over TLS and as a TLS master.

- redis-cli and redis-py over TLS (client certificate, CA); plain and TLS ports side by side
  sharing one data set; pub/sub, a reply of several MB and 10,000 pipelined commands over TLS;
  a TLS connection that moves to another thread and parks while idle keeps its session; the
  output limit cuts off a TLS client that asks for a reply over it.
- tls-auth-clients yes refuses a client without a certificate, `optional` and `no` let it in;
  a client certificate from another CA is refused; a client that trusts another CA refuses
  the server.
- tls-protocols TLSv1.3 refuses a TLSv1.2-only client and takes a TLSv1.3 one.
- Non-TLS bytes on the tls-port end that connection; a client that connects and stalls
  mid-handshake holds nobody up; other TLS clients keep working meanwhile.
- CONFIG SET tls-cert-file/tls-key-file: new connections get the new certificate, open ones
  keep working; a file that does not load is refused with Redis's text and changes nothing.
- CONFIG GET tls-* as Redis's; port 0 serves TLS only; CONFIG SET tls-port moves it.
- redis-server --tls-replication yes replicating from the server's tls-port; the server as
  a TLS replica (tls-replication yes) of a redis-server TLS master.
- redis-benchmark --tls, a short bounded run, with and without pipelining, without errors.

Certificates are made by this test with `openssl` in a temporary directory. Every case passes
against redis-server 7.0 (`--kind redis`).

Run: /usr/bin/python3 test_tls.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

from server import (ConnectionClosed, RawClient, Server, case, encode_command, free_port,  # noqa: E402
                    hotkv_only, run_cases, wait_for)

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
MB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# Certificates: a CA, a server certificate (two: the second for a reload), a client certificate,
# and a second CA with a client certificate of its own.


class Certs:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="hotkv-tls-")
        self.ca, self.ca_key = self._ca("ca", "HotKV Test CA")
        self.other_ca, other_key = self._ca("other-ca", "Other CA")
        self.server, self.server_key = self._leaf("server", "localhost", self.ca, self.ca_key)
        self.server2, self.server2_key = self._leaf("server2", "rotated", self.ca, self.ca_key)
        self.client, self.client_key = self._leaf("client", "client", self.ca, self.ca_key)
        self.stranger, self.stranger_key = self._leaf("stranger", "stranger", self.other_ca,
                                                      other_key)

    def path(self, name):
        return os.path.join(self.dir, name)

    def _run(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)

    def _ca(self, name, cn):
        crt, key = self.path(name + ".crt"), self.path(name + ".key")
        self._run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                  "-days", "2", "-subj", "/CN=" + cn)
        return crt, key

    def _leaf(self, name, cn, ca, ca_key):
        crt, key, csr = (self.path(name + ext) for ext in (".crt", ".key", ".csr"))
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        self._run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                  "-subj", "/CN=" + cn)
        self._run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                  "-out", crt, "-days", "2", "-extfile", ext)
        return crt, key

    def server_args(self, tls_port, **extra):
        args = {"tls-port": tls_port, "tls-cert-file": self.server, "tls-key-file": self.server_key,
                "tls-ca-cert-file": self.ca}
        args.update(extra)
        out = []
        for k, v in args.items():
            out += ["--" + k, str(v)]
        return out

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


CERTS = Certs()


def workdir():
    """A directory of a server's own (a replica writes its payload there)."""
    return ["--dir", tempfile.mkdtemp(dir=CERTS.dir)]


def tls_server(t, **extra):
    """The server under test with a plain port (for the harness) and a tls-port."""
    port = free_port()
    srv = t.server(extra_args=CERTS.server_args(port, **extra) + workdir())
    srv.tls_port = port
    return srv


def context(cert=True, ca=None, min_version=None, max_version=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations(ca or CERTS.ca)
    if cert:
        ctx.load_cert_chain(CERTS.client, CERTS.client_key)
    if min_version:
        ctx.minimum_version = min_version
    if max_version:
        ctx.maximum_version = max_version
    return ctx


class TlsRaw(RawClient):
    """The harness's RESP client over a TLS socket."""

    def __init__(self, port, ctx=None, timeout=10.0):
        super().__init__(port, timeout=timeout)
        self.sock = (ctx or context()).wrap_socket(self.sock, server_hostname="localhost")


def tls_client(srv, cert=True, **kw):
    kw.setdefault("decode_responses", True)
    kw.setdefault("socket_timeout", 10)
    args = dict(ssl=True, ssl_ca_certs=CERTS.ca, ssl_cert_reqs="required")
    if cert:
        args.update(ssl_certfile=CERTS.client, ssl_keyfile=CERTS.client_key)
    args.update(kw)
    return redis.Redis(host="127.0.0.1", port=srv.tls_port, **args)


def refused(fn):
    """True if fn() fails with a TLS or connection error (the handshake, or the first read
    after it, was refused)."""
    try:
        fn()
        return False
    except (ssl.SSLError, ConnectionError, ConnectionClosed, OSError,
            redis.exceptions.ConnectionError):
        return True


def cli(port, *args, cert=True, timeout=20):
    cmd = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port), "--tls", "--cacert", CERTS.ca]
    if cert:
        cmd += ["--cert", CERTS.client, "--key", CERTS.client_key]
    p = subprocess.run(cmd + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    return p.stdout.decode(errors="replace").strip()


# ----------------------------------------------------------------------------------------------


@case
def redis_cli_and_redis_py_over_tls(t, _):
    """redis-cli --tls and redis-py ssl=True read and write through the tls-port; the plain
    port serves the same data set beside it."""
    with tls_server(t) as srv:
        assert cli(srv.tls_port, "SET", "k", "over tls") == "OK"
        assert cli(srv.tls_port, "GET", "k") == "over tls"
        r = tls_client(srv)
        assert r.ping()
        assert r.get("k") == "over tls"
        r.set("from-py", "yes")
        plain = srv.client()
        assert plain.get("from-py") == "yes"
        plain.set("from-plain", "1")
        assert r.get("from-plain") == "1"
        # CLIENT LIST shows a TLS client like any other (Redis has no TLS field there).
        me = [c for c in r.client_list() if c["laddr"].endswith(":%d" % srv.tls_port)]
        assert len(me) == 1 and me[0]["cmd"] == "client|list", me
        # Plain bytes on the plain port, TLS on the tls-port: the plain port speaks no TLS.
        assert refused(lambda: TlsRaw(srv.port, timeout=2).call("PING"))


@case
def pubsub_big_replies_and_pipelines_over_tls(t, _):
    """A subscriber over TLS gets what a plain client publishes; a reply of 8 MB arrives
    whole; 10,000 pipelined commands in one write are answered in order."""
    with tls_server(t) as srv:
        r = tls_client(srv)
        p = r.pubsub()
        p.subscribe("news")
        assert p.get_message(timeout=5)["type"] == "subscribe"
        plain = srv.client()
        for i in range(50):
            assert plain.publish("news", "m%d" % i) == 1
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 50 and time.monotonic() < deadline:
            m = p.get_message(timeout=1)
            if m and m["type"] == "message":
                got.append(m["data"])
        assert got == ["m%d" % i for i in range(50)], got
        p.close()

        big = os.urandom(4 * MB).hex()  # 8 MB of text
        r.set("big", big)
        assert r.get("big") == big
        assert r.strlen("big") == 8 * MB
        rb = tls_client(srv, decode_responses=False)
        assert rb.mget(["big", "big"]) == [big.encode(), big.encode()]

        with TlsRaw(srv.tls_port) as c:
            c.send(b"".join(encode_command("INCR", "n") for _ in range(10000)))
            for i in range(1, 10001):
                assert c.read_reply() == i
            assert c.call("GET", "n") == "10000"


@case
def a_tls_connection_moves_parks_and_keeps_its_session(t, _):
    """A TLS client whose keys live on other threads keeps working when its connection
    moves there (hotkv counts the move), and after it has been idle long enough to be parked
    (its buffers given back) it is served again with its database and name."""
    with tls_server(t) as srv:
        with TlsRaw(srv.tls_port) as c:
            assert c.call("SELECT", "3") == "OK"
            assert c.call("CLIENT", "SETNAME", "shopper") == "OK"
            for key in ("a", "b", "c", "d", "e", "f"):
                for _ in range(40):
                    c.call("INCR", key)
            assert c.call("GET", "f") == "40"
            if t.is_hotkv and t.threads != 1:
                stats = srv.client().info("stats")
                assert stats["connection_migrations"] >= 1, stats
            time.sleep(3.5)  # idle with nothing buffered: parked
            assert c.call("GET", "a") == "40"
            assert c.call("CLIENT", "GETNAME") == "shopper"
            c.send(encode_command("SET", "half", "x" * 100000)[:50000])
            time.sleep(2.5)  # a half-sent request keeps its buffer through the sweep
            c.send(encode_command("SET", "half", "x" * 100000)[50000:])
            assert c.read_reply() == "OK"
            assert c.call("STRLEN", "half") == 100000


@case
def output_limits_cut_off_a_tls_client(t, _):
    """client-output-buffer-limit normal applies to a TLS client as to a plain one: a reply
    over the hard limit disconnects it before it is sent whole; others keep being served."""
    with tls_server(t) as srv:
        admin = srv.client()
        admin.setrange("big", 4 * MB - 1, "x")
        assert admin.config_set("client-output-buffer-limit", "normal 1mb 0 0")
        c = TlsRaw(srv.tls_port)
        c.send(encode_command("GET", "big"))
        got = 0
        c.sock.settimeout(10)
        try:
            while True:
                data = c.sock.recv(1 << 16)
                if not data:
                    break
                got += len(data)
        except (OSError, ssl.SSLError):
            pass
        c.close()
        assert got < 4 * MB, got
        assert tls_client(srv).strlen("big") == 4 * MB  # a reply of the integer: under it


@case
def tls_auth_clients_decides_about_clients_without_certificates(t, _):
    """yes (the default) refuses a client that presents no certificate; optional and no take
    it; a certificate from another CA is refused whatever the mode but no."""
    with tls_server(t) as srv:
        assert tls_client(srv).ping()
        assert refused(lambda: tls_client(srv, cert=False).ping())
        assert refused(lambda: TlsRaw(srv.tls_port, context(cert=False)).call("PING"))
        stranger = context(cert=False)
        stranger.load_cert_chain(CERTS.stranger, CERTS.stranger_key)
        assert refused(lambda: TlsRaw(srv.tls_port, stranger).call("PING"))
        admin = srv.client()
        assert admin.config_set("tls-auth-clients", "optional")
        assert tls_client(srv, cert=False).ping()
        assert tls_client(srv).ping()
        assert refused(lambda: TlsRaw(srv.tls_port, stranger).call("PING"))
        assert admin.config_set("tls-auth-clients", "no")
        assert tls_client(srv, cert=False).ping()
        with TlsRaw(srv.tls_port, stranger) as c:
            assert c.call("PING") == "PONG"
        assert admin.config_get("tls-auth-clients") == {"tls-auth-clients": "no"}


@case
def a_client_that_trusts_another_ca_refuses_the_server(t, _):
    """The server's certificate does not verify against a CA that did not sign it."""
    with tls_server(t) as srv:
        def connect():
            TlsRaw(srv.tls_port, context(ca=CERTS.other_ca)).call("PING")
        try:
            connect()
            raise AssertionError("the handshake should have failed")
        except ssl.SSLCertVerificationError:
            pass
        out = subprocess.run([REDIS_CLI, "-p", str(srv.tls_port), "--tls", "--cacert",
                              CERTS.other_ca, "--cert", CERTS.client, "--key", CERTS.client_key,
                              "PING"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=20).stdout.decode()
        assert "PONG" not in out and "SSL" in out, out


@case
def tls_protocols_limits_the_versions(t, _):
    """tls-protocols TLSv1.3 refuses a client capped at TLSv1.2; TLSv1.2 alone refuses a
    TLSv1.3-only client; the default takes both."""
    with tls_server(t) as srv:
        v12 = dict(max_version=ssl.TLSVersion.TLSv1_2)
        v13 = dict(min_version=ssl.TLSVersion.TLSv1_3)
        with TlsRaw(srv.tls_port, context(**v12)) as c:
            assert c.call("PING") == "PONG"
            assert c.sock.version() == "TLSv1.2"
        with TlsRaw(srv.tls_port, context(**v13)) as c:
            assert c.call("PING") == "PONG"
        admin = srv.client()
        assert admin.config_set("tls-protocols", "TLSv1.3")
        assert refused(lambda: TlsRaw(srv.tls_port, context(**v12)).call("PING"))
        with TlsRaw(srv.tls_port, context(**v13)) as c:
            assert c.call("PING") == "PONG"
            assert c.sock.version() == "TLSv1.3"
        assert admin.config_set("tls-protocols", "TLSv1.2")
        assert refused(lambda: TlsRaw(srv.tls_port, context(**v13)).call("PING"))
        with TlsRaw(srv.tls_port, context(**v12)) as c:
            assert c.call("PING") == "PONG"
        try:
            admin.config_set("tls-protocols", "TLSv1.9")
            raise AssertionError("TLSv1.9 taken")
        except redis.ResponseError as e:
            assert "Unable to update TLS configuration. Check server logs." in str(e), e
        assert admin.config_get("tls-protocols") == {"tls-protocols": "TLSv1.2"}


@case
def garbage_and_stalled_handshakes_do_not_hold_anyone_up(t, _):
    """Plain RESP sent to the tls-port gets the connection closed; a client that sends half a
    ClientHello and stalls, and one that connects and sends nothing, delay no one; a TLS
    client keeps working throughout."""
    with tls_server(t) as srv:
        r = tls_client(srv)
        r.set("k", "v")
        stalled = socket.create_connection(("127.0.0.1", srv.tls_port))
        silent = socket.create_connection(("127.0.0.1", srv.tls_port))
        # The first bytes of a real ClientHello, then nothing.
        hello = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = context().wrap_bio(hello[0], hello[1], server_hostname="localhost")
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        stalled.sendall(hello[1].read()[:20])
        for payload in (b"*1\r\n$4\r\nPING\r\n", b"GET / HTTP/1.1\r\n\r\n", os.urandom(4096)):
            g = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=10)
            g.sendall(payload)
            closed = False
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    data = g.recv(4096)
                except (ConnectionResetError, socket.timeout):
                    closed = True
                    break
                if not data:
                    closed = True
                    break
                # An alert record (0x15) may come first; no RESP reply ever does.
                assert not data.startswith(b"+") and not data.startswith(b"-"), data
            g.close()
            assert closed, payload
            t0 = time.monotonic()
            for i in range(100):
                assert r.get("k") == "v"
            assert time.monotonic() - t0 < 5
        with TlsRaw(srv.tls_port) as c:
            assert c.call("GET", "k") == "v"
        stalled.close()
        silent.close()
        assert srv.client().ping()


@case
@hotkv_only("Redis keeps a handshake open for as long as the client wants")
def a_handshake_that_never_ends_is_cut_off(t, _):
    """A connection that never completes its handshake is closed within the handshake
    deadline (10 s) plus a sweep."""
    with tls_server(t) as srv:
        s = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=20)
        t0 = time.monotonic()
        assert s.recv(100) == b""
        assert 8 < time.monotonic() - t0 < 15
        s.close()


@case
def config_set_reloads_certificates_for_new_connections(t, _):
    """CONFIG SET tls-cert-file/tls-key-file: the next connection sees the new certificate,
    one already open keeps working; a key that does not load is refused and changes
    nothing."""
    with tls_server(t) as srv:
        def subject():
            with TlsRaw(srv.tls_port) as c:
                assert c.call("PING") == "PONG"
                cert = c.sock.getpeercert()
                return dict(x[0] for x in cert["subject"])["commonName"]

        assert subject() == "localhost"
        old = TlsRaw(srv.tls_port)
        assert old.call("SET", "a", "1") == "OK"
        admin = srv.client()
        assert admin.config_set("tls-cert-file", CERTS.server2, "tls-key-file", CERTS.server2_key)
        assert subject() == "rotated"
        assert old.call("GET", "a") == "1"
        old.close()
        try:
            admin.config_set("tls-key-file", os.path.join(CERTS.dir, "missing.key"))
            raise AssertionError("a missing key taken")
        except redis.ResponseError as e:
            assert "Unable to update TLS configuration. Check server logs." in str(e), e
        assert admin.config_get("tls-key-file") == {"tls-key-file": CERTS.server2_key}
        # A certificate and the wrong key: refused too.
        try:
            admin.config_set("tls-cert-file", CERTS.server)
            raise AssertionError("a certificate without its key taken")
        except redis.ResponseError as e:
            assert "Unable to update TLS configuration" in str(e), e
        assert subject() == "rotated"


@case
def config_get_tls_settings_as_redis(t, _):
    """Every tls-* setting Redis 7.0 has, with its defaults, and their range errors."""
    with tls_server(t) as srv:
        got = srv.client().config_get("tls-*")
        want = {"tls-port": str(srv.tls_port), "tls-cert-file": CERTS.server,
                "tls-key-file": CERTS.server_key, "tls-ca-cert-file": CERTS.ca,
                "tls-key-file-pass": "", "tls-client-cert-file": "", "tls-client-key-file": "",
                "tls-client-key-file-pass": "", "tls-dh-params-file": "", "tls-ca-cert-dir": "",
                "tls-auth-clients": "yes", "tls-replication": "no", "tls-cluster": "no",
                "tls-protocols": "", "tls-ciphers": "", "tls-ciphersuites": "",
                "tls-prefer-server-ciphers": "no", "tls-session-caching": "yes",
                "tls-session-cache-size": "20480", "tls-session-cache-timeout": "300"}
        assert got == want, got
        with srv.raw() as c:
            for name, value, text in (
                    ("tls-auth-clients", "maybe",
                     "argument(s) must be one of the following: no, yes, optional"),
                    ("tls-port", "99999", "argument must be between 0 and 65535 inclusive"),
                    ("tls-session-cache-size", "-1",
                     "argument must be between 0 and 2147483647 inclusive"),
                    ("tls-ciphers", "BOGUS",
                     "Unable to update TLS configuration. Check server logs.")):
                r = c.call("CONFIG", "SET", name, value)
                assert str(r) == ("ERR CONFIG SET failed (possibly related to argument '%s') - %s"
                                  % (name, text)), r


@case
def port_zero_serves_tls_only_and_tls_port_moves(t, _):
    """--port 0 --tls-port P: no plain listener, TLS clients served; CONFIG SET tls-port moves
    the TLS listener and the old port stops answering."""
    port = free_port()
    if t.is_hotkv:
        base = [t.binary, "--threads", str(t.threads)]
    else:
        base = [shutil.which("redis-server") or "/usr/bin/redis-server", "--save", ""]
    base += ["--port", "0", "--bind", "127.0.0.1", "--loglevel", "warning"]
    cmd = base + CERTS.server_args(port) + workdir()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def up():
            try:
                with TlsRaw(port, timeout=1) as c:
                    return c.call("PING") == "PONG"
            except OSError:
                return False
        wait_for(up, "the TLS-only server", timeout=10)
        with TlsRaw(port) as c:
            assert c.call("CONFIG", "GET", "port") == ["port", "0"]
            port2 = free_port()
            assert c.call("CONFIG", "SET", "tls-port", str(port2)) == "OK"
            assert c.call("PING") == "PONG"  # open connections stay
        wait_for(lambda: not refused(lambda: TlsRaw(port2).call("PING")), "the moved tls-port")
        assert refused(lambda: TlsRaw(port, timeout=2).call("PING"))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.seek(0)
        text = log.read().decode(errors="replace")
        if proc.returncode:
            print(text)
    # Neither port: refused at start-up, as Redis.
    bad = subprocess.run(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    assert bad.returncode != 0
    assert "Configured to not listen anywhere" in bad.stdout.decode(), bad.stdout


@case
def redis_benchmark_over_tls(t, _):
    """redis-benchmark --tls runs to its end without errors, with and without pipelining."""
    with tls_server(t) as srv:
        for pipeline in ("1", "16"):
            cmd = [REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(srv.tls_port), "--tls",
                   "--cacert", CERTS.ca, "--cert", CERTS.client, "--key", CERTS.client_key,
                   "-t", "set,get,incr,lpush,lpop", "-n", "6400", "-c", "8", "-P", pipeline,
                   "-q"]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=60)
            text = p.stdout.decode(errors="replace")
            assert p.returncode == 0, text
            assert "error" not in text.lower() and "warning" not in text.lower(), text
            assert text.count("requests per second") == 5, text
        got = srv.client().get("counter:__rand_int__")
        assert got == "12800", got


def replica_args(tls_port):
    return CERTS.server_args(tls_port, **{"tls-replication": "yes",
                                          "tls-client-cert-file": CERTS.client,
                                          "tls-client-key-file": CERTS.client_key})


@case
def redis_server_replicates_over_tls_from_the_tls_port(t, _):
    """redis-server --tls-replication yes follows the server through its tls-port: the data
    set, then the stream; INFO replication shows the link up on both sides."""
    with tls_server(t) as master:
        m = master.client()
        for i in range(1000):
            m.set("k%d" % i, "v%d" % i)
        m.rpush("list", *range(100))
        replica = Server("redis", extra_args=replica_args(free_port()) + workdir())
        with replica:
            rc = replica.client()
            rc.replicaof("127.0.0.1", master.tls_port)
            wait_for(lambda: rc.info("replication")["master_link_status"] == "up",
                     "the replica's TLS link", timeout=30)
            for i in range(1000, 2000):
                m.set("k%d" % i, "v%d" % i)
            m.incrby("counter", 42)
            wait_for(lambda: rc.get("counter") == "42", "the stream over TLS", timeout=20)
            assert rc.dbsize() == m.dbsize() == 2002
            assert rc.get("k1999") == "v1999"
            assert rc.lrange("list", 0, -1) == [str(i) for i in range(100)]
            wait_for(lambda: m.info("replication")["connected_slaves"] == 1, "slave0")
            # The plain port refuses a TLS replica: its link stays down.
            rc.replicaof("127.0.0.1", master.port)
            time.sleep(1.5)
            assert rc.info("replication")["master_link_status"] == "down"


@case
def the_server_replicates_over_tls_from_a_redis_master(t, _):
    """With tls-replication yes the server follows a redis-server master through its tls-port
    (and presents the client certificate the master asks for)."""
    master = Server("redis", extra_args=CERTS.server_args(free_port()) + workdir())
    master_tls = int(master.extra_args[master.extra_args.index("--tls-port") + 1])
    with master:
        m = master.client()
        for i in range(500):
            m.set("k%d" % i, "v%d" % i)
        port = free_port()
        srv = t.server(extra_args=replica_args(port) + workdir())
        with srv:
            r = srv.client()
            r.replicaof("127.0.0.1", master_tls)
            wait_for(lambda: r.info("replication")["master_link_status"] == "up",
                     "the TLS link to the master", timeout=30)
            m.set("after", "sync")
            wait_for(lambda: r.get("after") == "sync", "the stream over TLS", timeout=20)
            assert r.dbsize() == 501, (r.dbsize(), m.dbsize())
            # Its own clients are served over TLS meanwhile.
            srv.tls_port = port
            assert tls_client(srv).get("k7") == "v7"


if __name__ == "__main__":
    try:
        run_cases(__doc__.splitlines()[0], shared_server=False)
    finally:
        CERTS.cleanup()
