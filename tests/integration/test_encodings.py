#!/usr/bin/python3
"""Encoding settings and OBJECT ENCODING end to end, first proven on redis-server 7.0.

- CONFIG GET/SET of hash-max-listpack-entries/-value (and their ziplist aliases, which a glob
  lists next to the new names), set-max-intset-entries, stream-node-max-bytes/-entries: memory
  units, ranges and Redis's exact error texts; set-max-listpack-* does not exist in 7.0.
- Hashes: listpack while within both limits, hashtable past either, for good until the key is
  recreated; a lowered limit converts at the key's next write (an update included), HSETNX on
  an existing field does not write, HINCRBYFLOAT's result counts as a value.
- Sets: intset while every member is an integer and within set-max-intset-entries; SADD, SMOVE
  and the *STORE commands (keys on different shards) follow the limit in force.
- Strings: int, embstr up to 44 bytes, raw past that and after APPEND or SETRANGE, whatever
  the length; INCR gives int, INCRBYFLOAT a plain string (embstr) even when integral.
- The settings from a config file and from the command line.

The settings are server-wide, so each case puts back what it changed. Every loop is bounded.

Run: /usr/bin/python3 test_encodings.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, expect_error, run_cases, spread_keys  # noqa: E402

SETTINGS = ["hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
            "stream-node-max-bytes", "stream-node-max-entries"]
ALIASES = {"hash-max-ziplist-entries": "hash-max-listpack-entries",
           "hash-max-ziplist-value": "hash-max-listpack-value"}


def pairs(reply):
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[0::2], reply[1::2]))


class Settings:
    """Sets encoding parameters for one case and puts the previous values back."""

    def __init__(self, c, **values):
        self.c = c
        self.values = {k.replace("_", "-"): v for k, v in values.items()}
        self.saved = {}

    def __enter__(self):
        for name, v in self.values.items():
            self.saved[name] = pairs(self.c.call("CONFIG", "GET", name))[name]
            assert self.c.call("CONFIG", "SET", name, v) == "OK"
        return self

    def __exit__(self, *exc):
        for name, v in self.saved.items():
            self.c.call("CONFIG", "SET", name, v)


def enc(c, key):
    return c.call("OBJECT", "ENCODING", key)


# ----------------------------------------------------------------------------------------------
# CONFIG GET/SET.


@case
def config_names_aliases_and_globs(t, srv):
    """Every setting and alias is readable; a glob lists both names of an aliased setting."""
    with srv.raw() as c:
        got = pairs(c.call("CONFIG", "GET", "hash-max-*"))
        assert set(got) == {"hash-max-listpack-entries", "hash-max-listpack-value",
                            "hash-max-ziplist-entries", "hash-max-ziplist-value"}, got
        for alias, name in ALIASES.items():
            assert got[alias] == got[name], got
        got = pairs(c.call("CONFIG", "GET", "stream-node-*"))
        assert got == {"stream-node-max-bytes": "4096", "stream-node-max-entries": "100"}, got
        assert pairs(c.call("CONFIG", "GET", "set-max-*")) == {"set-max-intset-entries": "512"}
        assert pairs(c.call("CONFIG", "GET", "set-max-listpack-entries")) == {}
        assert pairs(c.call("CONFIG", "GET", "hash-max-listpack-value")) == {
            "hash-max-listpack-value": "64"}
        # Several patterns at once (7.0), each name once; a plain name comes back as written.
        got = pairs(c.call("CONFIG", "GET", "set-max-intset-entries", "set-max-*",
                           "HASH-MAX-ZIPLIST-VALUE"))
        assert got == {"set-max-intset-entries": "512", "HASH-MAX-ZIPLIST-VALUE": "64"}, got


@case
def config_set_through_either_name(t, srv):
    """Setting the alias sets the setting; memory units for -value and -bytes."""
    with srv.raw() as c:
        with Settings(c, hash_max_listpack_entries=128):
            assert c.call("CONFIG", "SET", "hash-max-ziplist-entries", "77") == "OK"
            got = pairs(c.call("CONFIG", "GET", "hash-max-*-entries"))
            assert got == {"hash-max-listpack-entries": "77", "hash-max-ziplist-entries": "77"}
        with Settings(c, hash_max_listpack_value=64, stream_node_max_bytes=4096,
                      stream_node_max_entries=100, set_max_intset_entries=512):
            assert c.call("CONFIG", "SET", "hash-max-listpack-value", "1kb") == "OK"
            assert pairs(c.call("CONFIG", "GET", "hash-max-ziplist-value")) == {
                "hash-max-ziplist-value": "1024"}
            assert c.call("CONFIG", "SET", "stream-node-max-bytes", "2k",
                          "stream-node-max-entries", "0", "set-max-intset-entries", "0") == "OK"
            got = pairs(c.call("CONFIG", "GET", "stream-node-*"))
            assert got == {"stream-node-max-bytes": "2000", "stream-node-max-entries": "0"}, got
            assert pairs(c.call("CONFIG", "GET", "set-max-intset-entries")) == {
                "set-max-intset-entries": "0"}


@case
def config_set_errors_as_redis(t, srv):
    """Out of range, not a number, not a memory value: Redis's texts, nothing changed."""
    prefix = "ERR CONFIG SET failed (possibly related to argument '%s') - "
    between = "argument must be between 0 and 9223372036854775807 inclusive"
    with srv.raw() as c:
        for name, value, reason in [
                ("hash-max-listpack-entries", "-1", between),
                ("hash-max-ziplist-entries", "-1", between),
                ("set-max-intset-entries", "-5", between),
                ("stream-node-max-entries", "-1", between),
                ("hash-max-listpack-entries", "abc", "argument couldn't be parsed into an "
                 "integer"),
                ("hash-max-listpack-entries", "1kb", "argument couldn't be parsed into an "
                 "integer"),
                ("hash-max-listpack-value", "-1", "argument must be a memory value"),
                ("hash-max-ziplist-value", "ten", "argument must be a memory value"),
                ("stream-node-max-bytes", "-4096", "argument must be a memory value")]:
            expect_error(c.call("CONFIG", "SET", name, value), prefix % name + reason)
        assert pairs(c.call("CONFIG", "GET", "set-max-intset-entries")) == {
            "set-max-intset-entries": "512"}
        expect_error(c.call("CONFIG", "SET", "set-max-listpack-entries", "1"),
                     "ERR Unknown option or number of arguments for CONFIG SET - "
                     "'set-max-listpack-entries'")


# ----------------------------------------------------------------------------------------------
# Hashes.


@case
def hash_encoding_follows_the_limits(t, srv):
    """listpack within both limits; hashtable past either, until the key is recreated."""
    with srv.raw() as c, Settings(c, hash_max_listpack_entries=4, hash_max_listpack_value=8):
        assert c.call("HSET", "h", "a", 1, "b", 2, "c", 3, "d", "x" * 8) == 4
        assert enc(c, "h") == "listpack"
        assert c.call("HSET", "h", "e", 5) == 1
        assert enc(c, "h") == "hashtable"
        assert c.call("HDEL", "h", "a", "b", "c", "d") == 4
        assert enc(c, "h") == "hashtable"  # one way
        assert c.call("DEL", "h") == 1
        assert c.call("HSET", "h", "a", 1) == 1
        assert enc(c, "h") == "listpack"  # a new key starts small again
        assert c.call("HSET", "long-field", "f" * 9, 1) == 1
        assert enc(c, "long-field") == "hashtable"
        assert c.call("HSET", "long-value", "f", "v" * 9) == 1
        assert enc(c, "long-value") == "hashtable"
        # HSETNX of an existing field writes nothing, so nothing converts.
        assert c.call("HSET", "nx", "f", 1) == 1
        assert c.call("HSETNX", "nx", "f", "v" * 20) == 0
        assert enc(c, "nx") == "listpack"
        assert c.call("HSETNX", "nx", "g", "v" * 20) == 1
        assert enc(c, "nx") == "hashtable"
        # HINCRBYFLOAT's result is the value that counts.
        assert c.call("HINCRBYFLOAT", "fl", "x", "1.25") == "1.25"
        assert enc(c, "fl") == "listpack"
        assert c.call("HINCRBYFLOAT", "fl", "x", "1e10") == "10000000001.25"
        assert enc(c, "fl") == "hashtable"
        # More pairs than the limit naming one field: the field count is what counts.
        assert c.call("HSET", "dup", *(["same", "v"] * 6)) == 1
        assert enc(c, "dup") == "listpack"


@case
def hash_lowered_limit_applies_at_the_next_write(t, srv):
    """A listpack past a lowered limit stays one until written, then converts (update too)."""
    with srv.raw() as c:
        assert c.call("HSET", "h", *sum([["f%d" % i, i] for i in range(10)], [])) == 10
        assert c.call("HSET", "zero", "a", 1) == 1
        with Settings(c, hash_max_listpack_entries=4):
            assert enc(c, "h") == "listpack"
            assert c.call("HGET", "h", "f1") == "1"
            assert enc(c, "h") == "listpack"
            assert c.call("HSET", "h", "f1", "new") == 0
            assert enc(c, "h") == "hashtable"
            assert c.call("HGET", "h", "f1") == "new"
            assert c.call("CONFIG", "SET", "hash-max-listpack-entries", 0) == "OK"
            assert c.call("HSET", "none", "a", 1) == 1
            assert enc(c, "none") == "hashtable"
        assert enc(c, "zero") == "listpack"


# ----------------------------------------------------------------------------------------------
# Sets.


@case
def set_encoding_follows_the_limit(t, srv):
    """intset while all integers within the limit; SADD, SMOVE and *STORE apply it."""
    src, dst, other = spread_keys("enc:s:", 3)
    with srv.raw() as c, Settings(c, set_max_intset_entries=3):
        assert c.call("SADD", "s", 1, 2, 3) == 3
        assert enc(c, "s") == "intset"
        assert c.call("SADD", "s", 3) == 0  # a duplicate does not convert
        assert enc(c, "s") == "intset"
        assert c.call("SADD", "s", 4) == 1
        assert enc(c, "s") == "hashtable"
        assert c.call("SREM", "s", 1, 2, 3) == 3
        assert enc(c, "s") == "hashtable"  # one way
        assert c.call("SADD", "text", "a") == 1
        assert enc(c, "text") == "hashtable"
        assert c.call("SADD", "neg", "-1", "0") == 2
        assert enc(c, "neg") == "intset"
        assert c.call("SADD", "noncanon", "01") == 1
        assert enc(c, "noncanon") == "hashtable"
        # Keys on different shards.
        assert c.call("SADD", src, 1, 2, 3) == 3
        assert c.call("SADD", other, 2, 3, 4, 5) == 4
        assert c.call("SINTERSTORE", dst, src, other) == 2
        assert enc(c, dst) == "intset"
        assert c.call("SUNIONSTORE", dst, src, other) == 5
        assert enc(c, dst) == "hashtable"
        assert c.call("SDIFFSTORE", dst, other, src) == 2
        assert enc(c, dst) == "intset"
        assert c.call("DEL", dst) == 1
        assert c.call("CONFIG", "SET", "set-max-intset-entries", 1) == "OK"
        assert c.call("SMOVE", src, dst, 1) == 1
        assert enc(c, dst) == "intset"
        assert c.call("SMOVE", src, dst, 2) == 1
        assert enc(c, dst) == "hashtable"
        assert enc(c, src) == "intset"  # removing never converts
        assert c.call("CONFIG", "SET", "set-max-intset-entries", 0) == "OK"
        assert c.call("SADD", "none", 1) == 1
        assert enc(c, "none") == "hashtable"


# ----------------------------------------------------------------------------------------------
# Strings.


@case
def string_encodings(t, srv):
    """int, embstr (<= 44 bytes), raw; APPEND and SETRANGE make raw; INCRBYFLOAT embstr."""
    with srv.raw() as c:
        for key, value, want in [("i", "12345", "int"), ("neg", "-9223372036854775808", "int"),
                                 ("big", "9223372036854775808", "embstr"),
                                 ("lead0", "012", "embstr"), ("plus", "+1", "embstr"),
                                 ("e44", "x" * 44, "embstr"), ("r45", "x" * 45, "raw"),
                                 ("empty", "", "embstr")]:
            assert c.call("SET", key, value) == "OK"
            assert enc(c, key) == want, (key, enc(c, key))
        assert c.call("APPEND", "i", "6") == 6
        assert enc(c, "i") == "raw"
        assert c.call("INCR", "i") == 123457
        assert enc(c, "i") == "int"
        assert c.call("APPEND", "new", "12") == 2
        assert enc(c, "new") == "int"  # APPEND to a missing key stores the argument as is
        assert c.call("APPEND", "new2", "ab") == 2
        assert enc(c, "new2") == "embstr"
        assert c.call("APPEND", "new2", "c") == 3
        assert enc(c, "new2") == "raw"
        assert c.call("SETRANGE", "e44", 0, "y") == 44
        assert enc(c, "e44") == "raw"
        assert c.call("SETRANGE", "sr", 0, "ab") == 2
        assert enc(c, "sr") == "raw"
        assert c.call("COPY", "sr", "sr-copy") == 1
        assert enc(c, "sr-copy") == "raw"
        assert c.call("SET", "sr", "ab") == "OK"
        assert enc(c, "sr") == "embstr"
        assert c.call("SET", "f", "10") == "OK"
        assert c.call("INCRBYFLOAT", "f", "1") == "11"
        assert enc(c, "f") == "embstr"
        assert c.call("INCRBY", "f", "1") == 12
        assert enc(c, "f") == "int"
        assert c.call("INCRBYFLOAT", "nf", "1.5") == "1.5"
        assert enc(c, "nf") == "embstr"
        assert c.call("MSET", "m1", "7", "m2", "x") == "OK"
        assert [enc(c, "m1"), enc(c, "m2")] == ["int", "embstr"]


# ----------------------------------------------------------------------------------------------
# Start-up.


@case
def settings_from_config_file_and_command_line(t, srv):
    """A config file names the ziplist aliases; the command line the new names."""
    s = t.server(config={"hash-max-ziplist-entries": "2", "hash-max-ziplist-value": "16",
                         "set-max-intset-entries": "1", "stream-node-max-bytes": "1kb"},
                 extra_args=["--stream-node-max-entries", "7"]).start()
    try:
        with s.raw() as c:
            got = pairs(c.call("CONFIG", "GET", "*-max-*"))
            for name, want in [("hash-max-listpack-entries", "2"),
                               ("hash-max-ziplist-entries", "2"),
                               ("hash-max-listpack-value", "16"), ("set-max-intset-entries", "1"),
                               ("stream-node-max-bytes", "1024"),
                               ("stream-node-max-entries", "7")]:
                assert got.get(name) == want, (name, got.get(name))
            assert c.call("HSET", "h", "a", 1, "b", 2) == 2
            assert enc(c, "h") == "listpack"
            assert c.call("HSET", "h", "c", 3) == 1
            assert enc(c, "h") == "hashtable"
            assert c.call("SADD", "s", 1) == 1
            assert enc(c, "s") == "intset"
            assert c.call("SADD", "s", 2) == 1
            assert enc(c, "s") == "hashtable"
    finally:
        s.stop()


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
