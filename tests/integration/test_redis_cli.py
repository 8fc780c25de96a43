#!/usr/bin/python3
"""redis-cli against the server, exactly as a user runs it: one-shot commands, raw and
formatted output, RESP3 (-3), commands fed on stdin, -x, -r, --scan, --pipe, --bigkeys, -a.

redis-cli exercises paths our own clients do not: it sends COMMAND DOCS/HELLO on start-up in
some modes, expects exact RESP3 types for its formatter and relies on ECHO to end --pipe.
Expectations were taken from redis-server 7.0 (`--kind redis`).

Run: /usr/bin/python3 test_redis_cli.py --server build/hotkv --threads 4   (or --kind redis)
"""

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RawClient, Server, case, encode_command, run_cases  # noqa: E402

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def cli(srv, *args, stdin=None, timeout=20, port=None):
    """Runs redis-cli against `srv` (stdout is a pipe, so redis-cli defaults to raw output)."""
    cmd = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port or srv.port)] + [str(a) for a in args]
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def out(srv, *args, **kw):
    rc, so, se = cli(srv, *args, **kw)
    assert rc == 0, "redis-cli %s exited %d: %s %s" % (" ".join(map(str, args)), rc, so, se)
    return so


@case
def one_shot_commands(t, srv):
    """Arguments on the command line; raw output is the default when stdout is not a tty."""
    assert out(srv, "PING") == "PONG\n"
    assert out(srv, "SET", "a", "1") == "OK\n"
    assert out(srv, "GET", "a") == "1\n"
    assert out(srv, "INCR", "a") == "2\n"
    assert out(srv, "GET", "missing") == "\n"
    assert out(srv, "SET", "sp", "hello world") == "OK\n"
    assert out(srv, "GET", "sp") == "hello world\n"
    assert out(srv, "MSET", "x", "1", "y", "2") == "OK\n"
    assert out(srv, "MGET", "x", "missing", "y") == "1\n\n2\n"
    assert out(srv, "DEL", "x", "y", "missing") == "2\n"
    assert out(srv, "EXISTS", "a") == "1\n"
    assert out(srv, "DBSIZE") == "2\n"
    info = out(srv, "INFO", "server")
    assert "redis_version:" in info, info


@case
def formatted_output(t, srv):
    """--no-raw gives the tty format: quoted strings, (integer), (nil), (error)."""
    out(srv, "SET", "a", "1")
    assert out(srv, "--no-raw", "GET", "a") == '"1"\n'
    assert out(srv, "--no-raw", "INCR", "a") == "(integer) 2\n"
    assert out(srv, "--no-raw", "GET", "missing") == "(nil)\n"
    assert out(srv, "--no-raw", "MGET", "a", "missing") == '1) "2"\n2) (nil)\n'
    assert out(srv, "--no-raw", "SET", "k", "v", "NX", "XX") == "(error) ERR syntax error\n"
    assert out(srv, "--raw", "SET", "k", "v", "NX", "XX") == "ERR syntax error\n\n"
    assert out(srv, "--no-raw", "CONFIG", "GET", "timeout") == '1) "timeout"\n2) "0"\n'


@case
def errors_and_exit_codes(t, srv):
    """Errors are printed; -e turns them into exit code 1."""
    assert out(srv, "INCR", "missing-ok") == "1\n"
    out(srv, "SET", "txt", "abc")
    assert out(srv, "INCR", "txt").startswith("ERR value is not an integer or out of range")
    rc, so, se = cli(srv, "-e", "INCR", "txt")
    assert rc == 1, (rc, so, se)
    assert "ERR value is not an integer or out of range" in so + se
    rc, so, se = cli(srv, "-e", "GET", "txt")
    assert rc == 0 and so == "abc\n", (rc, so, se)


@case
def resp3_mode(t, srv):
    """-3 negotiates RESP3 with HELLO 3; maps, nulls and integers print in RESP3 form."""
    out(srv, "SET", "a", "1")
    hello = out(srv, "-3", "--no-raw", "HELLO", "3")
    assert '"proto" => (integer) 3' in hello, hello
    assert '"server" => ' in hello and '"version" => ' in hello, hello
    assert out(srv, "-3", "--no-raw", "GET", "missing") == "(nil)\n"
    assert out(srv, "-3", "--no-raw", "GET", "a") == '"1"\n'
    assert out(srv, "-3", "--no-raw", "INCR", "a") == "(integer) 2\n"
    cfg = out(srv, "-3", "--no-raw", "CONFIG", "GET", "timeout")
    assert cfg == '1# "timeout" => "0"\n', cfg
    assert out(srv, "-3", "GET", "a") == "2\n"
    assert out(srv, "-3", "GET", "missing") == "\n"


@case
def commands_on_stdin(t, srv):
    """Without a tty, redis-cli reads one command per line from stdin."""
    script = b"SET a 1\nGET a\nINCR a\nGET missing\nSET s \"two words\"\nGET s\nPING\n"
    assert out(srv, stdin=script) == "OK\n1\n2\n\nOK\ntwo words\nPONG\n"
    lines = b"".join(b"INCR counter\n" for _ in range(200))
    got = out(srv, stdin=lines).split("\n")
    assert got[:-1] == [str(i) for i in range(1, 201)], got[-3:]
    assert out(srv, "GET", "counter") == "200\n"


@case
def stdin_argument_and_repeat(t, srv):
    """-x takes the last argument from stdin; -r repeats a command."""
    assert out(srv, "-x", "SET", "xk", stdin=b"payload\r\nwith bytes\x00!") == "OK\n"
    assert out(srv, "STRLEN", "xk") == "%d\n" % len(b"payload\r\nwith bytes\x00!")
    assert out(srv, "-r", "5", "INCR", "rep") == "1\n2\n3\n4\n5\n"
    assert out(srv, "GET", "rep") == "5\n"


@case
def scan_and_bigkeys(t, srv):
    """--scan --pattern walks the whole keyspace; --bigkeys samples it with SCAN/TYPE/STRLEN."""
    sizes = [200 if i == 7 else i % 50 + 1 for i in range(300)]
    pipe = b"".join(encode_command("SET", "user:%d" % i, "v" * n) for i, n in enumerate(sizes))
    pipe += encode_command("SET", "other", "x")
    so = out(srv, "--pipe", stdin=pipe)
    assert "errors: 0, replies: 301" in so, so
    keys = out(srv, "--scan", "--pattern", "user:*").split()
    assert sorted(keys) == sorted("user:%d" % i for i in range(300)), len(keys)
    assert sorted(out(srv, "--scan").split()) == sorted(keys + ["other"])
    big = out(srv, "--bigkeys")
    assert "Sampled 301 keys in the keyspace!" in big, big
    assert "Biggest string found '\"user:7\"' has 200 bytes" in big, big


@case
def pipe_mass_insert(t, srv):
    """--pipe sends 20,000 commands and finishes with its ECHO marker; no errors."""
    n = 20000
    data = b"".join(encode_command("SET", "mass:%d" % i, i) for i in range(n))
    so = out(srv, "--pipe", stdin=data, timeout=30)
    assert "errors: 0, replies: %d" % n in so, so
    assert out(srv, "DBSIZE") == "%d\n" % n
    assert out(srv, "GET", "mass:12345") == "12345\n"
    bad = (encode_command("SET", "t", "abc") + encode_command("INCR", "t")
           + encode_command("GET", "t"))
    rc, so, se = cli(srv, "--pipe", stdin=bad)
    assert "errors: 1, replies: 3" in so, (rc, so, se)


@case
def password_flag(t, srv):
    """-a against a --requirepass server; without it commands get NOAUTH."""
    with t.server(requirepass="pw") as sp:
        assert out(sp, "--no-auth-warning", "-a", "pw", "SET", "a", "1") == "OK\n"
        assert out(sp, "--no-auth-warning", "-a", "pw", "GET", "a") == "1\n"
        so = out(sp, "GET", "a")
        assert so.startswith("NOAUTH Authentication required."), so
        rc, so, se = cli(sp, "--no-auth-warning", "-a", "bad", "PING")
        assert "WRONGPASS" in so + se, (rc, so, se)
        so = out(sp, "--no-auth-warning", "-a", "pw", "-3", "--no-raw", "HELLO", "3")
        assert '"proto" => (integer) 3' in so, so


def interactive_hint(port, typed, deadline_s=10.0):
    """Starts redis-cli on a terminal, types `typed` and a space, and returns the grey hint it
    shows after the cursor (from COMMAND DOCS, which it reads at start), or "" if none."""
    pid, fd = pty.fork()
    if pid == 0:
        # A terminal of 200 columns: with none set, the line editor wraps at every character.
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        os.environ["TERM"] = "xterm"
        os.execv(REDIS_CLI, [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port)])
    screen = b""

    def pump(seconds):
        nonlocal screen
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            screen += chunk
            if b"\x1b[6n" in chunk:  # the line editor asks where the cursor is
                os.write(fd, b"\x1b[1;1R")

    try:
        end = time.monotonic() + deadline_s
        while b"> " not in screen and time.monotonic() < end:
            pump(0.1)
        pump(0.3)
        screen = b""
        for ch in typed + " ":
            os.write(fd, ch.encode())
            pump(0.02)
        grey = b"\x1b[0;90;49m"
        while time.monotonic() < end:
            pump(0.1)
            tail = screen.rsplit(b"\x1b[0K", 1)[-1]
            if grey in tail and b"\x1b[0m" in tail.split(grey, 1)[1]:
                return tail.split(grey, 1)[1].split(b"\x1b[0m", 1)[0].decode()
        return ""
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


@case
def inline_hints_come_from_command_docs(t, srv):
    """Interactive redis-cli shows each command's arguments as a hint, HotKV's own included."""
    assert interactive_hint(srv.port, "SET").startswith("key value [NX|XX] [GET]")
    assert interactive_hint(srv.port, "SORT").startswith("key [BY pattern] [LIMIT offset count]")
    if t.is_hotkv:
        assert interactive_hint(srv.port, "INV.RESERVE") == "key hold_id qty ttl_ms [OWNER id]"


def doc_shape(args):
    """COMMAND DOCS arguments without the names and texts: types, tokens, flags, nesting."""
    out = []
    for a in args:
        f = dict(zip(a[::2], a[1::2]))
        out.append((f["type"], f.get("token"), tuple(sorted(f.get("flags", []))),
                    tuple(doc_shape(f.get("arguments", [])))))
    return out


def docs_of(port, name):
    with RawClient(port) as c:
        reply = c.call("COMMAND", "DOCS", name)
    fields = dict(zip(reply[1][::2], reply[1][1::2]))
    return fields


@case
def command_docs_have_redis_shapes(t, srv):
    """COMMAND DOCS gives the argument trees redis-server 7.0 gives for the same commands
    (types, tokens, flags and nesting; names, summaries and groups are HotKV's own)."""
    with Server("redis") as ref:
        for name in ("SET", "SORT", "GETEX", "ZADD", "LPOS", "ZINTERSTORE", "XTRIM"):
            mine, theirs = docs_of(srv.port, name), docs_of(ref.port, name)
            assert doc_shape(mine["arguments"]) == doc_shape(theirs["arguments"]), (
                name, doc_shape(mine["arguments"]), doc_shape(theirs["arguments"]))


if __name__ == "__main__":
    run_cases(__doc__)
