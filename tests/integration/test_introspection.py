#!/usr/bin/python3
"""SLOWLOG, MONITOR, CLIENT LIST flags, CLIENT PAUSE and CLIENT NO-TOUCH end to end, first
proven on redis-server 7.0 (NO-TOUCH, which 7.0 lacks, is hotkv only) and then held against
hotkv, whose commands run on several threads.

- SLOWLOG: the settings' defaults; with slowlog-log-slower-than 0 every command is logged as
  [id, unix time, µs, argv, addr, name], newest first, ids falling by one; GET's count, LEN,
  RESET, the count error; Redis's trimming of long commands; DEBUG SLEEP from clients served
  by different threads, and a slow keyed command run on another thread's shard, all in one log
  in id order; a negative threshold logs nothing.
- MONITOR (redis-py's monitor()): commands of other connections, whichever thread serves them,
  a script's commands shown as "lua", MULTI/EXEC in Redis's order, AUTH redacted, CONFIG not
  shown.
- CLIENT LIST / INFO: flags O (monitor), x with multi= (MULTI), b (blocked), P (pub/sub), T
  (no-touch), cmd=client|list, qbuf of the running command.
- CLIENT PAUSE WRITE: a write waits, a read does not, UNPAUSE releases it; ALL holds every
  command until the timeout.

Every wait is bounded. Run: /usr/bin/python3 test_introspection.py --server build/hotkv --threads 4
(or --kind redis)
"""

import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import (RespError, case, encode_command, expect_error, expect_error_prefix,  # noqa: E402
                    hotkv_only, run_cases, wait_for)


def slowlog_all(c):
    return c.call("SLOWLOG", "GET", "-1")


@case
def slowlog_logs_every_command_at_zero(t, srv):
    """slower-than 0: entries of six fields, newest first, ids falling by one; GET n, LEN, RESET."""
    with srv.raw() as c:
        try:
            assert c.call("CONFIG", "GET", "slowlog-*") in (
                ["slowlog-log-slower-than", "10000", "slowlog-max-len", "128"],
                ["slowlog-max-len", "128", "slowlog-log-slower-than", "10000"])
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.call("CLIENT", "SETNAME", "logger")
            c.call("SLOWLOG", "RESET")
            c.call("SET", "k", "v")
            c.call("GET", "k")
            entries = slowlog_all(c)
            assert [e[3] for e in entries[:3]] == [["GET", "k"], ["SET", "k", "v"],
                                                   ["SLOWLOG", "RESET"]], entries
            ids = [e[0] for e in entries]
            assert ids == list(range(ids[0], ids[0] - len(ids), -1)), ids
            now = int(time.time())
            for e in entries:
                assert len(e) == 6, e
                assert now - 5 <= e[1] <= now + 1 and e[2] >= 0, e
                assert e[4].startswith("127.0.0.1:") and e[5] == "logger", e
            assert len(c.call("SLOWLOG", "GET", "1")) == 1
            assert c.call("SLOWLOG", "GET", "0") == []
            assert c.call("SLOWLOG", "LEN") >= 3
            expect_error(c.call("SLOWLOG", "GET", "-2"),
                         "ERR count should be greater than or equal to -1")
            expect_error(c.call("SLOWLOG", "LEN", "x"),
                         "ERR wrong number of arguments for 'slowlog|len' command")
            expect_error(c.call("SLOWLOG", "NOPE"),
                         "ERR unknown subcommand 'NOPE'. Try SLOWLOG HELP.")
            c.call("CONFIG", "SET", "slowlog-max-len", "3")
            for i in range(10):
                c.call("PING")
            assert c.call("SLOWLOG", "LEN") == 3
            assert len(slowlog_all(c)) == 3
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
            c.call("SLOWLOG", "RESET")
            c.call("PING")
            assert c.call("SLOWLOG", "LEN") == 0
        finally:
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128")


@case
def slowlog_trims_long_commands(t, srv):
    """33 arguments keep 31 and "... (2 more arguments)"; 129 bytes keep 128 and a note."""
    with srv.raw() as c:
        try:
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.call("SLOWLOG", "RESET")
            c.call("SADD", "s", *[str(i) for i in range(3, 34)])
            e = slowlog_all(c)[0]
            assert len(e[3]) == 32 and e[3][30] == "31", e
            assert e[3][31] == "... (2 more arguments)", e
            c.call("SADD", "s", "foo", "A" * 129)
            e = slowlog_all(c)[0]
            assert e[3] == ["SADD", "s", "foo", "A" * 128 + "... (1 more bytes)"], e
        finally:
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")


@case
def slowlog_is_one_log_across_threads(t, shared):
    """Slow commands served by every thread, and one run on another thread's shard, in id order."""
    # redis-server 7.0 takes DEBUG only when started with enable-debug-command.
    extra = ["--enable-debug-command", "yes"] if not t.is_hotkv else []
    with t.server(extra_args=extra) as srv:
        slowlog_across_threads(srv)


def slowlog_across_threads(srv):
    admin = srv.raw()
    clients = [srv.raw() for _ in range(4)]
    try:
        admin.call("CONFIG", "SET", "slowlog-log-slower-than", "30000")
        admin.call("SLOWLOG", "RESET")
        for i, c in enumerate(clients):
            c.call("CLIENT", "SETNAME", "sleeper%d" % i)
            assert c.call("DEBUG", "SLEEP", "0.05") == "OK"
        # A slow keyed command: deleting a big set, wherever its key lives.
        filler = clients[0]
        for start in range(0, 300_000, 10_000):
            filler.call("SADD", "big", *[str(i) for i in range(start, start + 10_000)])
        admin.call("SLOWLOG", "RESET")
        admin.call("CONFIG", "SET", "slowlog-log-slower-than", "2000")
        assert clients[3].call("DEL", "big") == 1
        for i, c in enumerate(clients):
            assert c.call("DEBUG", "SLEEP", "0.05") == "OK"
        admin.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
        entries = slowlog_all(admin)
        commands = [e[3] for e in entries]
        assert ["DEL", "big"] in commands, entries
        sleeps = [e for e in entries if e[3][:2] == ["DEBUG", "SLEEP"]]
        assert sorted(e[5] for e in sleeps) == ["sleeper%d" % i for i in range(4)], entries
        assert all(e[2] >= 50_000 for e in sleeps), sleeps
        ids = [e[0] for e in entries]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids), ids
        # Newest first: the sleeps came after the DEL, in the order they were sent.
        assert [e[5] for e in sleeps] == ["sleeper3", "sleeper2", "sleeper1", "sleeper0"], sleeps
        assert entries.index(sleeps[-1]) < commands.index(["DEL", "big"])
    finally:
        admin.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        for c in clients + [admin]:
            c.close()


def monitor_lines(m, count, deadline_s=10):
    """The next `count` commands redis-py's monitor sees (each a dict), with a deadline."""
    out = []
    deadline = time.monotonic() + deadline_s
    while len(out) < count:
        assert time.monotonic() < deadline, out
        out.append(m.next_command())
    return out


@case
def monitor_sees_other_threads_and_scripts(t, srv):
    """redis-py's monitor(): commands from connections on other threads, and a script's as lua."""
    r = srv.client()
    senders = [srv.client() for _ in range(4)]
    with r.monitor() as m:
        keys = ["user:%d" % i for i in range(8)]
        for i, key in enumerate(keys):
            senders[i % 4].set(key, str(i))
        senders[1].eval("return redis.call('GET', KEYS[1])", 1, "user:3")
        senders[2].config_set("slowlog-max-len", "128")  # administrative: not shown
        senders[2].get("after-config")
        seen = monitor_lines(m, len(keys) + 3)
    commands = [s["command"] for s in seen]
    for i, key in enumerate(keys):
        assert 'SET %s %d' % (key, i) in commands, commands
    evals = [s for s in seen if s["command"].startswith("EVAL")]
    lua = [s for s in seen if s["client_type"] == "lua"]
    assert len(evals) == 1 and len(lua) == 1, seen
    assert lua[0]["command"] == "GET user:3", lua
    assert seen.index(evals[0]) < seen.index(lua[0]), seen  # the script before its commands
    assert seen[-1]["command"] == "GET after-config", seen
    assert not any(c.upper().startswith("CONFIG") for c in commands), commands
    assert all(s["db"] == 0 for s in seen), seen
    for c in senders + [r]:
        c.close()


@case
def monitor_orders_transactions_and_redacts(t, srv):
    """MULTI, the queued commands, then EXEC; an aborted EXEC still shown; AUTH redacted."""
    with srv.raw() as mon, srv.raw() as c:
        assert mon.call("MONITOR") == "OK"
        c.call("MULTI")
        c.call("SET", "foo", "bar")
        c.call("EXEC")
        c.call("MULTI")
        assert isinstance(c.call("NOSUCHCOMMAND"), RespError)
        assert isinstance(c.call("EXEC"), RespError)
        assert isinstance(c.call("AUTH", "not-real"), RespError)
        c.call("SELECT", "2")
        c.call("PING")
        lines = [mon.read_reply() for _ in range(8)]
        words = [line.split("] ", 1)[1] for line in lines]
        assert words == ['"MULTI"', '"SET" "foo" "bar"', '"EXEC"', '"MULTI"', '"EXEC"',
                         '"AUTH" "(redacted)"', '"SELECT" "2"', '"PING"'], lines
        assert lines[-1].split(" ")[1] == "[2", lines  # the database after SELECT


def client_line(c, client_id):
    listed = c.call("CLIENT", "LIST", "ID", str(client_id))
    return dict(f.split("=", 1) for f in listed.strip().split(" "))


@case
def client_list_shows_true_flags(t, srv):
    """O monitor, x + multi= in MULTI, b blocked, P subscribed; cmd=client|list; qbuf=26."""
    with srv.raw() as c, srv.raw() as mon, srv.raw() as tx, srv.raw() as blk, srv.raw() as sub:
        asked = ("CLIENT", "LIST", "ID", str(c.call("CLIENT", "ID")))
        mine = c.call(*asked)
        qbuf = " qbuf=%d " % len(encode_command(*asked))  # the running command itself
        assert " flags=N " in mine and " multi=-1 " in mine and qbuf in mine, mine
        assert " cmd=client|list " in mine, mine
        info = c.call("CLIENT", "INFO")
        assert " cmd=client|info " in info and " qbuf=26 " in info, info
        mon_id = mon.call("CLIENT", "ID")
        assert mon.call("MONITOR") == "OK"
        tx_id = tx.call("CLIENT", "ID")
        tx.call("MULTI")
        tx.call("SET", "a", "1")
        tx.call("GET", "a")
        blk_id = blk.call("CLIENT", "ID")
        blk.send(encode_command("BLPOP", "nolist", "0"))
        sub_id = sub.call("CLIENT", "ID")
        sub.call("SUBSCRIBE", "news")
        assert client_line(c, mon_id)["flags"] == "O"
        t_line = client_line(c, tx_id)
        assert t_line["flags"] == "x" and t_line["multi"] == "2", t_line
        wait_for(lambda: client_line(c, blk_id)["flags"] == "b", "the blocked flag", 5)
        assert client_line(c, sub_id)["flags"] == "P"
        tx.call("DISCARD")
        assert client_line(c, tx_id)["multi"] == "-1"
        expect_error(c.call("CLIENT", "KILL", "USER", "nobody"), "ERR No such user 'nobody'")
        expect_error(c.call("CLIENT", "KILL", "ID", "0"),
                     "ERR client-id should be greater than 0")
        expect_error(c.call("CLIENT", "KILL", "SKIPME", "maybe"), "ERR syntax error")
        c.call("CLIENT", "UNBLOCK", str(blk_id))


@case
@hotkv_only("CLIENT NO-TOUCH is Redis 7.2's")
def client_no_touch_leaves_idle_time(t, srv):
    """NO-TOUCH ON: GET leaves OBJECT IDLETIME growing, TOUCH still resets it; flag T."""
    with srv.raw() as c:
        c.call("SET", "k", "v")
        assert c.call("CLIENT", "NO-TOUCH", "ON") == "OK"
        assert " flags=T " in c.call("CLIENT", "INFO")
        time.sleep(2.2)
        assert c.call("GET", "k") == "v"
        assert c.call("OBJECT", "IDLETIME", "k") >= 2
        assert c.call("TOUCH", "k") == 1
        assert c.call("OBJECT", "IDLETIME", "k") <= 1
        expect_error(c.call("CLIENT", "NO-TOUCH", "MAYBE"), "ERR syntax error")
        assert c.call("CLIENT", "NO-TOUCH", "OFF") == "OK"


@case
def client_pause_write_holds_writes_only(t, srv):
    """PAUSE WRITE: GET answers at once, SET waits until UNPAUSE; errors as Redis's."""
    admin = srv.client()
    reader = srv.client()
    writer = srv.client()
    done = {}

    def write():
        t0 = time.monotonic()
        writer.set("paused-key", "1")
        done["after"] = time.monotonic() - t0

    try:
        assert admin.execute_command("CLIENT", "PAUSE", "10000", "WRITE") in ("OK", b"OK", True)
        t0 = time.monotonic()
        assert reader.get("paused-key") is None
        assert time.monotonic() - t0 < 1.0
        th = threading.Thread(target=write)
        th.start()
        time.sleep(0.4)
        assert "after" not in done, done
        assert admin.info("clients")["blocked_clients"] >= 1
        admin.execute_command("CLIENT", "UNPAUSE")
        th.join(5)
        assert done.get("after", 99) < 3.0, done
        assert reader.get("paused-key") == "1"
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
    with srv.raw() as c:
        expect_error(c.call("CLIENT", "PAUSE", "x"),
                     "ERR timeout is not an integer or out of range")
        expect_error(c.call("CLIENT", "PAUSE", "-1"), "ERR timeout is negative")
        expect_error(c.call("CLIENT", "PAUSE", "10", "SOME"),
                     "ERR CLIENT PAUSE mode must be WRITE or ALL")
        # ALL holds every command, CLIENT UNPAUSE included, until the timeout.
        assert c.call("CLIENT", "PAUSE", "400", "ALL") == "OK"
        with srv.raw() as other:
            t0 = time.monotonic()
            assert other.call("PING") == "PONG"
            assert time.monotonic() - t0 >= 0.25


@case
def config_set_is_all_or_nothing(t, srv):
    """Several pairs at once; a bad one (or a port in use) changes none; duplicates refused."""
    with srv.raw() as c:
        before = c.call("CONFIG", "GET", "maxmemory")[1]
        assert c.call("CONFIG", "SET", "maxmemory", "10000001", "slowlog-max-len", "77") == "OK"
        assert c.call("CONFIG", "GET", "slowlog-max-len") == ["slowlog-max-len", "77"]
        r = c.call("CONFIG", "SET", "maxmemory", "5", "slowlog-max-len", "x")
        expect_error(r, "ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len')"
                        " - argument couldn't be parsed into an integer")
        assert c.call("CONFIG", "GET", "maxmemory") == ["maxmemory", "10000001"]
        expect_error(c.call("CONFIG", "SET", "maxmemory", "1", "maxmemory", "2"),
                     "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - "
                     "duplicate parameter")
        busy = srv.port  # this very server's port is taken
        other_port = c.call("CONFIG", "GET", "port")[1]
        assert other_port == str(busy)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            taken = s.getsockname()[1]
            r = c.call("CONFIG", "SET", "slowlog-max-len", "5", "port", str(taken))
            expect_error_prefix(r, "ERR CONFIG SET failed (possibly related to argument 'port') - "
                                   "Unable to listen on this port")
        assert c.call("CONFIG", "GET", "slowlog-max-len") == ["slowlog-max-len", "77"]
        assert c.call("CONFIG", "SET", "port", str(busy)) == "OK"  # unchanged: nothing to do
        assert c.call("CONFIG", "SET", "maxmemory", before, "slowlog-max-len", "128") == "OK"


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
