#!/usr/bin/python3
"""Error replies word for word as redis-server 7.0's.

- A table of commands with bad input, one row per error text family (unknown command and
  subcommand, arity of commands and of subcommands, syntax, not-an-integer and not-a-float,
  WRONGTYPE, option clashes, stream IDs and groups, scripts and functions, CLIENT, CONFIG,
  COMMAND, OBJECT, DUMP/RESTORE...), each sent to hotkv and to a redis-server 7.0 started here
  on a free port: the error texts must be identical.
- Errors are counted by code in INFO errorstats and total_error_replies, once per error reply,
  including commands refused before they run (unknown, arity, NOAUTH, inside MULTI, EXECABORT).

Run: /usr/bin/python3 test_error_texts.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import RespError, Server, case, run_cases  # noqa: E402

# Keys of every type, set up the same way on both servers. Hash tags keep multi-key rows on one
# slot, so they also hold at --threads 4.
SETUP = [
    ["SET", "{e}str", "hello"],
    ["SET", "{e}num", "10"],
    ["SET", "{e}big", "9223372036854775807"],
    ["RPUSH", "{e}list", "a", "b"],
    ["HSET", "{e}hash", "f", "v", "n", "5"],
    ["SADD", "{e}set", "a"],
    ["ZADD", "{e}zset", "1", "a"],
    ["XADD", "{e}stream", "5-1", "f", "v"],
    ["XGROUP", "CREATE", "{e}stream", "g1", "0"],
    ["GEOADD", "{e}geo", "13.361389", "38.115556", "Palermo"],
    ["PFADD", "{e}hll", "a"],
    ["FUNCTION", "LOAD", "REPLACE",
     "#!lua name=errlib\nredis.register_function('errf', function(k, a) return 1 end)"],
]

# One row per error text family: a command that fails the same way on both servers.
ROWS = [
    # the dispatcher: unknown commands and subcommands, arity
    ["NOSUCHCMD", "a", "b"],
    ["NOSUCHCMD"],
    ["GET"],
    ["SET", "k"],
    ["GET", "a", "b"],
    ["CLIENT", "NOSUCH"],
    ["CLIENT", "nosuch", "a"],
    ["CONFIG", "nosuch"],
    ["CONFIG", "GET"],
    ["CONFIG", "SET", "maxmemory"],
    ["CONFIG", "SET", "no-such-option", "1"],
    ["CONFIG", "SET", "maxmemory", "lots"],
    ["COMMAND", "GETKEYS"],
    ["COMMAND", "GETKEYS", "nosuchcmd", "a"],
    ["COMMAND", "GETKEYS", "get"],
    ["COMMAND", "GETKEYS", "ping"],
    ["COMMAND", "nosuch"],
    ["OBJECT", "nosuch", "k"],
    ["OBJECT", "ENCODING"],
    ["MEMORY", "nosuch"],
    ["MEMORY", "USAGE"],
    ["XINFO", "nosuch"],
    ["XINFO", "STREAM"],
    ["XGROUP", "nosuch"],
    ["SCRIPT", "nosuch"],
    ["FUNCTION", "nosuch"],
    ["LATENCY", "nosuch"],
    ["PUBSUB", "nosuch"],
    ["CLIENT"],
    ["CLIENT", "KILL"],
    # subcommands with the wrong number of arguments: named as 'container|sub'
    ["FUNCTION", "DELETE"],
    ["FUNCTION", "LOAD"],
    ["FUNCTION", "DUMP", "x"],
    ["FUNCTION", "STATS", "x"],
    ["FUNCTION", "KILL", "x"],
    ["FUNCTION", "RESTORE"],
    ["FUNCTION", "restore", "x", "FLUSH", "y"],
    ["FUNCTION", "FLUSH", "SYNC", "x"],
    ["SCRIPT", "EXISTS"],
    ["SCRIPT", "LOAD"],
    ["SCRIPT", "KILL", "x"],
    ["PUBSUB", "NUMPAT", "x"],
    ["XINFO", "GROUPS"],
    ["XGROUP", "CREATE", "k"],
    ["OBJECT", "FREQ"],
    ["CLIENT", "GETNAME", "x"],
    ["CLIENT", "ID", "x"],
    ["CONFIG", "SET", "maxmemory"],
    ["CONFIG", "RESETSTAT", "x"],
    ["LATENCY", "HISTORY"],
    ["COMMAND", "COUNT", "x"],
    # strings and numbers
    ["INCR", "{e}str"],
    ["INCRBY", "{e}num", "x"],
    ["INCRBYFLOAT", "{e}num", "x"],
    ["INCR", "{e}big"],
    ["SET", "k", "v", "EX", "0"],
    ["SET", "k", "v", "EX", "x"],
    ["SET", "k", "v", "NX", "XX"],
    ["SET", "k", "v", "BADOPT"],
    ["GETEX", "{e}str", "EX", "-1"],
    ["SETRANGE", "{e}str", "-1", "x"],
    ["GETRANGE", "{e}str", "a", "1"],
    ["SETBIT", "k", "-1", "1"],
    ["SETBIT", "k", "1", "2"],
    ["BITOP", "NOT", "d", "a", "b"],
    ["BITFIELD", "k", "GET", "u64", "0"],
    ["BITCOUNT", "{e}str", "0", "1", "BYTE", "x"],
    ["LCS", "{e}str", "{e}list"],
    # keys and expiry
    ["EXPIRE", "{e}str", "x"],
    ["EXPIRE", "{e}str", "10", "BADOPT"],
    ["EXPIRE", "{e}str", "10", "GT", "LT"],
    ["EXPIRE", "{e}str", "10", "NX", "XX"],
    ["RENAME", "{e}missing", "{e}x"],
    ["COPY", "{e}str", "{e}str"],
    ["SCAN", "x"],
    ["SELECT", "99999"],
    ["SWAPDB", "x", "1"],
    ["RESTORE", "k", "0", "not-a-payload"],
    ["RESTORE", "{e}str", "0", "x"],
    ["RESTORE", "k", "-1", "x"],
    ["SORT", "{e}str"],
    # WRONGTYPE across families
    ["LPUSH", "{e}str", "a"],
    ["HGET", "{e}list", "f"],
    ["SADD", "{e}hash", "a"],
    ["ZADD", "{e}set", "1", "a"],
    ["XADD", "{e}zset", "*", "f", "v"],
    ["PFADD", "{e}str", "a"],
    ["GET", "{e}list"],
    # lists
    ["LINDEX", "{e}list", "x"],
    ["LSET", "{e}list", "9", "x"],
    ["LSET", "{e}missing", "0", "x"],
    ["LPOS", "{e}list", "a", "RANK", "0"],
    ["LPOS", "{e}list", "a", "MAXLEN", "-1"],
    ["LPOP", "{e}list", "-1"],
    ["LMPOP", "0", "{e}list", "LEFT"],
    ["BLPOP", "{e}list", "x"],
    ["BLPOP", "{e}list", "-1"],
    ["LMOVE", "{e}list", "{e}x", "UP", "LEFT"],
    # hashes
    ["HINCRBY", "{e}hash", "f", "1"],
    ["HINCRBYFLOAT", "{e}hash", "f", "1"],
    ["HSET", "{e}hash", "f"],
    ["HRANDFIELD", "{e}hash", "x"],
    # sets
    ["SPOP", "{e}set", "-1"],
    ["SINTERCARD", "0", "{e}set"],
    ["SINTERCARD", "2", "{e}set"],
    ["SINTERCARD", "1", "{e}set", "LIMIT", "-1"],
    ["SRANDMEMBER", "{e}set", "x"],
    # sorted sets
    ["ZADD", "{e}zset", "x", "a"],
    ["ZADD", "{e}zset", "NX", "XX", "1", "a"],
    ["ZADD", "{e}zset", "GT", "LT", "1", "a"],
    ["ZADD", "{e}zset", "INCR", "1", "a", "2", "b"],
    ["ZRANGE", "{e}zset", "a", "b", "BYSCORE"],
    ["ZRANGE", "{e}zset", "a", "b", "BYLEX"],
    ["ZRANGE", "{e}zset", "0", "1", "LIMIT", "0", "1"],
    ["ZRANGE", "{e}zset", "[a", "[b", "BYLEX", "WITHSCORES"],
    ["ZUNIONSTORE", "{e}d", "0", "{e}zset"],
    ["ZUNION", "1", "{e}zset", "WEIGHTS", "x"],
    ["ZINTERCARD", "1", "{e}zset", "LIMIT", "-1"],
    ["ZINCRBY", "{e}zset", "x", "a"],
    ["ZRANDMEMBER", "{e}zset", "-9223372036854775808"],
    ["ZRANGESTORE", "{e}d", "{e}zset", "0", "1", "REV", "x"],
    # geo
    ["GEOADD", "{e}geo", "200", "100", "m"],
    ["GEOADD", "{e}geo", "x", "1", "m"],
    ["GEODIST", "{e}geo", "a", "b", "parsecs"],
    ["GEORADIUS", "{e}geo", "13", "38", "x", "km"],
    ["GEORADIUS", "{e}geo", "13", "38", "-1", "km"],
    ["GEOSEARCH", "{e}geo", "FROMMEMBER", "Palermo", "BYRADIUS", "10"],
    ["GEOSEARCH", "{e}geo", "FROMMEMBER", "Palermo", "BYRADIUS", "10", "km", "ANY"],
    ["GEOSEARCH", "{e}geo", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "{e}geo", "FROMLONLAT", "1", "2", "ASC"],
    ["GEOSEARCH", "{e}geo", "FROMMEMBER", "Palermo", "BYBOX", "x", "1", "km"],
    ["GEOSEARCH", "{e}geo", "FROMMEMBER", "Palermo", "BYBOX", "-1", "1", "km"],
    ["GEOSEARCH", "{e}geo", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "COUNT", "0"],
    ["GEOSEARCHSTORE", "{e}d", "{e}geo", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km",
     "WITHDIST"],
    ["GEORADIUS", "{e}geo", "13", "38", "1", "km", "STORE", "{e}d", "WITHDIST"],
    # hyperloglog
    ["PFCOUNT", "{e}str"],
    ["PFDEBUG", "nosuch", "{e}hll"],
    ["PFDEBUG", "GETREG", "{e}missing"],
    # streams
    ["XADD", "{e}stream", "0-0", "f", "v"],
    ["XADD", "{e}stream", "1-1", "f", "v"],
    ["XADD", "{e}stream", "bad", "f", "v"],
    ["XADD", "{e}stream", "MAXLEN", "-1", "*", "f", "v"],
    ["XADD", "{e}stream", "MAXLEN", "1", "MINID", "1", "*", "f", "v"],
    ["XADD", "{e}stream", "LIMIT", "1", "*", "f", "v"],
    ["XADD", "{e}stream", "MAXLEN", "1", "LIMIT", "1", "*", "f", "v"],
    ["XADD", "{e}stream", "*", "f"],
    ["XTRIM", "{e}stream", "LIMIT", "1"],
    ["XRANGE", "{e}stream", "x", "+"],
    ["XRANGE", "{e}stream", "-", "x"],
    ["XREAD", "STREAMS", "{e}stream"],
    ["XREAD", "COUNT", "x", "STREAMS", "{e}stream", "0"],
    ["XREAD", "GROUP", "g", "c", "STREAMS", "{e}stream", "0"],
    ["XREADGROUP", "STREAMS", "{e}stream", "0"],
    ["XREADGROUP", "GROUP", "nog", "c", "STREAMS", "{e}stream", ">"],
    ["XREADGROUP", "GROUP", "g1", "c", "STREAMS", "{e}stream", "$"],
    ["XREAD", "STREAMS", "{e}stream", ">"],
    ["XGROUP", "CREATE", "{e}stream", "g1", "0"],
    ["XGROUP", "CREATE", "{e}missing", "g", "0"],
    ["XGROUP", "CREATE", "{e}stream", "g2", "0", "ENTRIESREAD", "-5"],
    ["XGROUP", "SETID", "{e}stream", "nog", "0"],
    ["XACK", "{e}stream", "g1", "bad"],
    ["XCLAIM", "{e}stream", "g1", "c", "x", "5-1"],
    ["XCLAIM", "{e}stream", "g1", "c", "0", "5-1", "IDLE", "x"],
    ["XCLAIM", "{e}stream", "g1", "c", "0", "5-1", "RETRYCOUNT", "x"],
    ["XAUTOCLAIM", "{e}stream", "g1", "c", "x", "0"],
    ["XAUTOCLAIM", "{e}stream", "g1", "c", "0", "0", "COUNT", "0"],
    ["XSETID", "{e}stream", "1-1"],
    ["XSETID", "{e}stream", "9-9", "ENTRIESADDED", "-1"],
    ["XINFO", "STREAM", "{e}missing"],
    ["XINFO", "CONSUMERS", "{e}stream", "nog"],
    # transactions
    ["EXEC"],
    ["DISCARD"],
    # scripts and functions
    ["EVAL", "return 1", "x"],
    ["EVAL", "return 1", "-1"],
    ["EVAL", "return 1", "5"],
    ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"],
    ["EVAL", "return redis.call('nosuch')", "0"],
    ["EVAL", "return redis.call()", "0"],
    ["EVAL", "return redis.call('get')", "0"],
    ["EVAL", "this is not lua", "0"],
    ["SCRIPT", "FLUSH", "LATER"],
    ["FCALL", "nosuch", "-1"],
    ["FCALL", "nosuch", "5"],
    ["FCALL", "errf", "x"],
    ["FCALL", "errf", "-1"],
    ["FCALL", "errf", "5"],
    ["FUNCTION", "DELETE", "nosuchlib"],
    ["FUNCTION", "LOAD", "no shebang"],
    ["FUNCTION", "LOAD", "#!nosuch name=x\n"],
    ["FUNCTION", "LOAD", "#!lua\n"],
    ["FUNCTION", "LOAD",
     "#!lua name=errlib\nredis.register_function('errf', function(k, a) return 1 end)"],
    ["FUNCTION", "FLUSH", "LATER"],
    ["FUNCTION", "RESTORE", "bad"],
    # connection and clients
    ["HELLO", "4"],
    ["HELLO", "x"],
    ["HELLO", "3", "BADOPT"],
    ["CLIENT", "SETNAME", "bad name"],
    ["CLIENT", "KILL", "ID", "x"],
    ["CLIENT", "KILL", "999999"],
    ["CLIENT", "KILL", "TYPE", "nosuch"],
    ["CLIENT", "UNBLOCK", "1", "LATER"],
    ["CLIENT", "TRACKING", "on", "PREFIX", "a"],
    ["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
    ["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"],
    ["CLIENT", "TRACKING", "on", "REDIRECT", "999999"],
    ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab"],
    ["CLIENT", "CACHING", "yes"],
    ["CLIENT", "LIST", "TYPE", "nosuch"],
    ["CLIENT", "LIST", "ID", "x"],
    ["CLIENT", "NO-EVICT", "maybe"],
    ["CLIENT", "REPLY", "maybe"],
    ["AUTH", "secret"],
    ["SUBSCRIBE"],
    ["PUBSUB", "NUMPAT", "x"],
    ["LATENCY", "HISTORY"],
    ["CLUSTER", "INFO"],
    ["SHUTDOWN", "ABORT"],
]


def normalize(reply):
    """Errors compared as text; anything else as is (a row that succeeds on both is a table
    error, reported as such)."""
    return ("error", str(reply)) if isinstance(reply, RespError) else ("reply", reply)


@case
def error_texts_match_redis(t, srv):
    """Every row of the table gets redis-server 7.0's error text, word for word."""
    with Server("redis") as ref, srv.raw() as ours, ref.raw() as theirs:
        for c in (ours, theirs):
            c.call("FUNCTION", "FLUSH")
            for cmd in SETUP:
                r = c.call(*cmd)
                assert not isinstance(r, RespError), (cmd, r)
        diffs = []
        not_errors = []
        for cmd in ROWS:
            got, want = normalize(ours.call(*cmd)), normalize(theirs.call(*cmd))
            if want[0] != "error":
                not_errors.append((cmd, want))
            if got != want:
                diffs.append((cmd, got, want))
        for c in (ours, theirs):
            c.call("FUNCTION", "FLUSH")
        assert not diffs, "%d of %d rows differ\n" % (len(diffs), len(ROWS)) + "\n".join(
            "%r\n  hotkv: %r\n  redis: %r" % (cmd, g[1], w[1]) for cmd, g, w in diffs)
        assert not not_errors, "rows that are no error on redis-server: %r" % not_errors
        assert len(ROWS) >= 100


def errorstats(c):
    """{code: count} from INFO errorstats, and total_error_replies."""
    stats = {}
    for line in c.call("INFO", "errorstats").splitlines():
        if line.startswith("errorstat_"):
            name, rest = line[len("errorstat_"):].split(":", 1)
            stats[name] = int(rest.split("=", 1)[1])
    total = None
    for line in c.call("INFO", "stats").splitlines():
        if line.startswith("total_error_replies:"):
            total = int(line.split(":", 1)[1])
    return stats, total


@case
def errors_are_counted_by_code_once(t, srv):
    """Each error reply counts once under its code, refused commands included, as Redis 7."""
    with Server("redis") as ref:
        for s in (srv, ref):
            with s.raw() as c:
                assert c.call("CONFIG", "RESETSTAT") == "OK"
                c.call("SET", "{e}str", "x")
                c.call("NOSUCHCMD")                       # unknown command: ERR
                c.call("GET")                             # arity: ERR
                c.call("CLIENT", "NOSUCH")                # unknown subcommand: ERR
                c.call("LPUSH", "{e}str", "a")            # WRONGTYPE
                c.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "{e}s", ">")  # NOGROUP
                c.call("EVALSHA", "f" * 40, "0")          # NOSCRIPT
                assert c.call("MULTI") == "OK"
                c.call("GET")                             # refused inside MULTI: ERR
                c.call("SET", "a", "b")
                c.call("EXEC")                            # EXECABORT
                assert c.call("MULTI") == "OK"
                c.call("INCR", "{e}str")                  # fails inside EXEC: ERR
                c.call("EXEC")
        with srv.raw() as c:
            ours = errorstats(c)
        with ref.raw() as c:
            theirs = errorstats(c)
    assert ours == theirs, "hotkv %r\nredis %r" % (ours, theirs)
    assert theirs[1] == 9, theirs


@case
def noauth_is_counted(t, srv):
    """NOAUTH refusals count under NOAUTH, like any other error reply."""
    counts = []
    for s in (t.server(requirepass="pw"), Server("redis", requirepass="pw")):
        with s:
            with s.raw(auth=False) as c:
                c.call("GET", "k")
                c.call("SET", "k", "v")
                assert c.call("AUTH", "pw") == "OK"
                counts.append(errorstats(c))
    assert counts[0] == counts[1], counts
    assert counts[0][0].get("NOAUTH", 0) >= 2, counts  # and the harness's readiness PING


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
