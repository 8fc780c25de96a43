#!/usr/bin/env python3
"""Replication: roles, configuration and what a replica refuses, compared with redis-server.

- ROLE and INFO replication of a master: Redis 7.0's fields, in its order, with \\r\\n endings;
  a 40-character replication id that stays the same between calls.
- REPLICAOF host port makes a replica (ROLE "slave" with the link state, INFO's replica fields);
  the same master again answers "OK Already connected to specified master"; a read-only
  replica refuses writes with -READONLY (also inside MULTI, which then aborts) and still reads;
  replica-read-only no lets them through; REPLICAOF NO ONE promotes it, and the old id becomes
  replid2 with second_repl_offset = offset + 1. SLAVEOF is the same command.
- min-replicas-to-write with no replica: writes get -NOREPLICAS, reads still work; a script
  that declared flags and may write is refused before it runs, one without flags at its first
  write, a no-writes script runs.
- CONFIG GET/SET of the replication settings, their slave-* aliases and Redis's refusals.
- CONFIG REWRITE writes `replicaof host port` into the config file, and a restart from that
  file comes back as a replica of the same master; without a config file it is refused.
- REPLCONF: listening-port, capa and rdb-only answer OK, an unknown option and an odd count
  are refused; ACK answers nothing.

Run: /usr/bin/python3 test_replication.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, case, expect_error, free_port, run_cases  # noqa: E402

MASTER_FIELDS = ["role", "connected_slaves", "master_failover_state", "master_replid",
                 "master_replid2", "master_repl_offset", "second_repl_offset",
                 "repl_backlog_active", "repl_backlog_size", "repl_backlog_first_byte_offset",
                 "repl_backlog_histlen"]
REPLICA_FIELDS = ["role", "master_host", "master_port", "master_link_status",
                  "master_last_io_seconds_ago", "master_sync_in_progress",
                  "slave_read_repl_offset", "slave_repl_offset",
                  "master_link_down_since_seconds", "slave_priority", "slave_read_only",
                  "replica_announced"] + MASTER_FIELDS[1:]


def info_fields(c):
    text = c.call("INFO", "replication")
    lines = text.split("\r\n")
    assert lines[0] == "# Replication", text
    fields = [ln.split(":", 1) for ln in lines[1:] if ln]
    return [k for k, _ in fields], dict(fields)


@case
def a_master_reports_like_redis(t, srv):
    """ROLE and INFO replication of a master: Redis 7.0's fields, order and a stable id."""
    with srv.raw() as c:
        role = c.call("ROLE")
        assert role[0] == "master" and isinstance(role[1], int) and role[2] == [], role
        names, f = info_fields(c)
        assert names == MASTER_FIELDS, names
        assert f["role"] == "master" and f["connected_slaves"] == "0", f
        assert len(f["master_replid"]) == 40 and f["master_replid2"] == "0" * 40, f
        assert f["second_repl_offset"] == "-1" and f["repl_backlog_size"] == "1048576", f
        assert info_fields(c)[1]["master_replid"] == f["master_replid"]


@case
def replicaof_makes_a_read_only_replica(t, srv):
    """REPLICAOF: ROLE slave, INFO's replica fields, -READONLY writes, NO ONE promotes."""
    nobody = free_port()  # nothing listens there: the link stays down
    with srv.raw() as c:
        c.call("SET", "kept", "1")
        old_id = info_fields(c)[1]["master_replid"]
        assert c.call("REPLICAOF", "127.0.0.1", str(nobody)) == "OK"
        try:
            assert c.call("REPLICAOF", "127.0.0.1", str(nobody)) == \
                "OK Already connected to specified master"
            role = c.call("ROLE")
            assert role[:3] == ["slave", "127.0.0.1", nobody], role
            assert role[3] in ("connect", "connecting"), role
            assert role[4] == -1, role
            names, f = info_fields(c)
            assert names == REPLICA_FIELDS, names
            assert f["master_link_status"] == "down" and f["master_port"] == str(nobody), f
            assert f["master_last_io_seconds_ago"] == "-1", f
            assert f["slave_read_only"] == "1" and f["slave_priority"] == "100", f
            expect_error(c.call("SET", "k", "v"),
                         "READONLY You can't write against a read only replica.")
            expect_error(c.call("DEL", "kept"),
                         "READONLY You can't write against a read only replica.")
            assert c.call("GET", "kept") == "1", "reads go on"
            assert c.call("MULTI") == "OK"
            assert isinstance(c.call("INCR", "n"), RespError)
            expect_error(c.call("EXEC"),
                         "EXECABORT Transaction discarded because of previous errors.")
            assert c.call("CONFIG", "SET", "replica-read-only", "no") == "OK"
            assert c.call("CONFIG", "GET", "slave-read-only") == ["slave-read-only", "no"]
            assert c.call("SET", "local", "1") == "OK"
            assert c.call("CONFIG", "SET", "slave-read-only", "yes") == "OK"
            expect_error(c.call("SET", "k", "v"),
                         "READONLY You can't write against a read only replica.")
        finally:
            assert c.call("SLAVEOF", "NO", "ONE") == "OK"
        assert c.call("ROLE")[0] == "master"
        names, f = info_fields(c)
        assert names == MASTER_FIELDS, names
        assert f["master_replid2"] == old_id and f["master_replid"] != old_id, f
        assert f["second_repl_offset"] == str(int(f["master_repl_offset"]) + 1), f
        assert c.call("REPLICAOF", "NO", "ONE") == "OK", "a master stays one"
        assert c.call("SET", "k", "v") == "OK"
        expect_error(c.call("REPLICAOF", "127.0.0.1", "port"), "ERR Invalid master port")
        expect_error(c.call("REPLICAOF", "127.0.0.1"),
                     "ERR wrong number of arguments for 'replicaof' command")


@case
def min_replicas_to_write_refuses_without_replicas(t, srv):
    """min-replicas-to-write 1 and no replica: -NOREPLICAS for writes, reads go on."""
    with srv.raw() as c:
        c.call("SET", "k", "v")
        assert c.call("CONFIG", "SET", "min-replicas-to-write", "1") == "OK"
        try:
            expect_error(c.call("SET", "k", "w"), "NOREPLICAS Not enough good replicas to write.")
            assert c.call("GET", "k") == "v"
            names, f = info_fields(c)
            assert f["min_slaves_good_slaves"] == "0", f
            # Scripts: one declared read-only runs; one that declared flags and may write is
            # refused before it runs; one without flags is refused at its first write.
            assert c.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
                          "1", "k") == "v"
            assert c.call("EVAL", "return redis.call('get', KEYS[1])", "1", "k") == "v"
            expect_error(c.call("EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", "1", "k"),
                         "NOREPLICAS Not enough good replicas to write.")
            r = c.call("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k")
            assert isinstance(r, RespError) and str(r).startswith("NOREPLICAS "), r
            assert c.call("GET", "k") == "v"
        finally:
            assert c.call("CONFIG", "SET", "min-slaves-to-write", "0") == "OK"
        assert c.call("SET", "k", "w") == "OK"


@case
def replication_settings_follow_redis(t, srv):
    """CONFIG GET/SET of replication settings, aliases and refusals as Redis words them."""
    defaults = {"replica-read-only": "yes", "replica-serve-stale-data": "yes",
                "replica-priority": "100", "repl-backlog-size": "1048576",
                "repl-timeout": "60", "repl-ping-replica-period": "10",
                "repl-diskless-sync": "yes", "repl-diskless-sync-delay": "5",
                "repl-diskless-load": "disabled", "min-replicas-to-write": "0",
                "min-replicas-max-lag": "10", "masterauth": "", "masteruser": "",
                "replica-announce-ip": "", "replica-announce-port": "0", "replicaof": ""}
    with srv.raw() as c:
        for name, value in defaults.items():
            assert c.call("CONFIG", "GET", name) == [name, value], name
        assert c.call("CONFIG", "SET", "repl-backlog-size", "2mb") == "OK"
        assert c.call("CONFIG", "GET", "repl-backlog-size") == ["repl-backlog-size", "2097152"]
        assert c.call("CONFIG", "SET", "slave-priority", "7") == "OK"
        assert c.call("CONFIG", "GET", "replica-priority") == ["replica-priority", "7"]
        c.call("CONFIG", "SET", "replica-priority", "100")
        c.call("CONFIG", "SET", "repl-backlog-size", "1mb")
        expect_error(c.call("CONFIG", "SET", "replica-read-only", "maybe"),
                     "ERR CONFIG SET failed (possibly related to argument 'replica-read-only') - "
                     "argument must be 'yes' or 'no'")
        expect_error(c.call("CONFIG", "SET", "repl-backlog-size", "0"),
                     "ERR CONFIG SET failed (possibly related to argument 'repl-backlog-size') - "
                     "argument must be between 1 and 9223372036854775807 inclusive")
        expect_error(c.call("CONFIG", "SET", "replicaof", "127.0.0.1 1"),
                     "ERR CONFIG SET failed (possibly related to argument 'replicaof') - "
                     "can't set immutable config")


@case
def replconf_answers_like_redis(t, srv):
    """REPLCONF options a replica sends: OK, refusals for unknown options, ACK is silent."""
    with srv.raw() as c:
        assert c.call("REPLCONF", "listening-port", "7777") == "OK"
        assert c.call("REPLCONF", "capa", "eof", "capa", "psync2") == "OK"
        assert c.call("REPLCONF", "rdb-only", "1") == "OK"
        assert c.call("REPLCONF") == "OK"
        expect_error(c.call("REPLCONF", "nosuch", "1"), "ERR Unrecognized REPLCONF option: nosuch")
        expect_error(c.call("REPLCONF", "capa"), "ERR syntax error")
        # An acknowledgement is never answered: the next reply is PING's.
        c.send(b"REPLCONF ACK 0\r\nPING\r\n")
        assert c.read_reply() == "PONG"


@case
def config_rewrite_keeps_the_role_across_a_restart(t, srv):
    """CONFIG REWRITE after REPLICAOF writes replicaof; a restart from the file is a replica."""
    nobody = free_port()
    with t.server(config={"appendonly": "no", "replica-priority": "50"}) as s:
        with s.raw() as c:
            assert c.call("REPLICAOF", "127.0.0.1", str(nobody)) == "OK"
            assert c.call("CONFIG", "SET", "repl-timeout", "33") == "OK"
            assert c.call("CONFIG", "REWRITE") == "OK"
        with open(s.conf_path) as f:
            text = f.read()
        lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
        assert "replicaof 127.0.0.1 %d" % nobody in lines, text
        assert "replica-priority 50" in lines and "repl-timeout 33" in lines, text
        assert not any(ln.startswith("slave") for ln in lines), text
        # The restart reads the rewritten file (the harness writes its config dict to a fresh
        # file, so the dict takes the rewritten lines; the port stays on the command line).
        s.config = dict(ln.split(" ", 1) for ln in lines if not ln.startswith("port "))
        s.stop()
        s.start()
        with s.raw() as c:
            role = c.call("ROLE")
            assert role[:3] == ["slave", "127.0.0.1", nobody], role
            assert c.call("CONFIG", "GET", "repl-timeout") == ["repl-timeout", "33"]
            assert c.call("REPLICAOF", "NO", "ONE") == "OK"
            assert c.call("CONFIG", "REWRITE") == "OK"
        with open(s.conf_path) as f:
            text = f.read()
        assert "replicaof" not in text.replace("# ", ""), text
    with srv.raw() as c:
        expect_error(c.call("CONFIG", "REWRITE"), "ERR The server is running without a config file")


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
