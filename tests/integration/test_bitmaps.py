#!/usr/bin/python3
"""Bitmaps, BITFIELD and LCS end to end, first proven on redis-server 7.0 and then held
against hotkv.

- SETBIT/GETBIT on the ordinary string value (GET, APPEND, SETRANGE, GETRANGE and integer
  strings see the same bytes), offsets up to the 512MB limit, Redis's errors.
- BITCOUNT and BITPOS over random strings and every kind of range (BYTE and BIT units,
  negative indexes) against a model of Redis 7.0's rules, plus BITPOS's edge cases for clear
  bits past the end.
- BITOP AND/OR/XOR/NOT with keys on different shards (spread_keys): padding, the destination
  replaced (TTL gone) or deleted on an empty result, WRONGTYPE.
- Concurrent SETBITs from many connections on one key, and BITOP across shards while writers
  flip the sources: BITOP always sees whole SETBIT pairs.
- BITFIELD GET/SET/INCRBY with i/u types, #N offsets, OVERFLOW WRAP/SAT/FAIL (null replies in
  RESP2 and RESP3), BITFIELD_RO.
- LCS with LEN, IDX, MINMATCHLEN, WITHMATCHLEN (RESP3 map), keys on different shards.
- Keyspace events: setbit, set and del.
- A restart on the same --dir with the append-only log keeps every bitmap.

Every loop is bounded by a count and a deadline.

Run: /usr/bin/python3 test_bitmaps.py --server build/hotkv --threads 4   (or --kind redis)
"""

import os
import random
import shutil
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server import case, expect_error, run_cases, spread_keys  # noqa: E402

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
BIT_OFFSET = "ERR bit offset is not an integer or out of range"
NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"
BF_TYPE = ("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
           "supported but i64 is.")


def bits_of(data):
    return [(b >> (7 - i)) & 1 for b in data for i in range(8)]


def norm_range(total, start, end):
    if start < 0:
        start += total
    if end < 0:
        end += total
    start = max(start, 0)
    end = min(max(end, 0), total - 1)
    return start, end


def model_bitcount(data, start, end, unit):
    if start < 0 and end < 0 and start > end:
        return 0
    bits = bits_of(data)
    total = len(bits) if unit == "BIT" else len(data)
    start, end = norm_range(total, start, end)
    if start > end:
        return 0
    if unit == "BYTE":
        start, end = start * 8, end * 8 + 7
    return sum(bits[start:end + 1])


def model_bitpos(data, bit, start=None, end=None, unit="BYTE"):
    bits = bits_of(data)
    total = len(bits) if unit == "BIT" else len(data)
    s = 0 if start is None else start
    e = total - 1 if end is None else end
    s, e = norm_range(total, s, e)
    if s > e:
        return -1
    if unit == "BYTE":
        s, e = s * 8, e * 8 + 7
    for i in range(s, e + 1):
        if bits[i] == bit:
            return i
    return e + 1 if bit == 0 and end is None else -1


# ----------------------------------------------------------------------------------------------
# SETBIT and GETBIT on string values.


@case
def setbit_getbit_share_the_string(t, srv):
    """SETBIT/GETBIT read and write the same bytes GET, APPEND, SETRANGE and GETRANGE see."""
    r = srv.client(decode_responses=False)
    assert r.setbit("k", 7, 1) == 0
    assert r.get("k") == b"\x01"
    assert r.setbit("k", 7, 1) == 1
    assert r.setbit("k", 0, 1) == 0
    assert r.get("k") == b"\x81"
    assert r.setbit("k", 23, 1) == 0  # pads with zero bytes
    assert r.get("k") == b"\x81\x00\x01"
    assert r.getbit("k", 0) == 1 and r.getbit("k", 1) == 0 and r.getbit("k", 23) == 1
    assert r.getbit("k", 1000000) == 0 and r.getbit("missing", 5) == 0
    assert r.append("k", b"A") == 4
    assert r.getbit("k", 25) == 1  # 'A' = 0x41
    assert r.getrange("k", 3, 3) == b"A"
    assert r.setrange("k", 0, b"\xff") == 4
    assert r.getbit("k", 1) == 1
    assert r.setbit("k", 1, 0) == 1
    assert r.get("k") == b"\xbf\x00\x01A"
    # An integer string is its decimal text: "1" is 0x31.
    r.set("n", 1)
    assert [r.getbit("n", i) for i in range(8)] == [0, 0, 1, 1, 0, 0, 0, 1]
    assert r.setbit("n", 6, 1) == 0
    assert r.get("n") == b"3"
    assert r.incr("n") == 4
    assert r.strlen("k") == 4
    # The largest offset (byte 512MB - 1) is accepted for reading; one more is refused.
    assert r.getbit("k", 4294967295) == 0
    with srv.raw() as c:
        expect_error(c.call("GETBIT", "k", 4294967296), BIT_OFFSET)
        expect_error(c.call("SETBIT", "k", 4294967296, 1), BIT_OFFSET)
        expect_error(c.call("SETBIT", "k", -1, 1), BIT_OFFSET)
        expect_error(c.call("SETBIT", "k", "x", 1), BIT_OFFSET)
        expect_error(c.call("SETBIT", "k", 0, 2), "ERR bit is not an integer or out of range")
        expect_error(c.call("SETBIT", "k", 0, "on"), "ERR bit is not an integer or out of range")
        expect_error(c.call("GETBIT", "k", -1), BIT_OFFSET)
        c.call("RPUSH", "list", "a")
        expect_error(c.call("SETBIT", "list", 0, 1), WRONGTYPE)
        expect_error(c.call("GETBIT", "list", 0), WRONGTYPE)
        expect_error(c.call("SETBIT", "k", 0), "ERR wrong number of arguments for 'setbit' command")
    assert r.get("k") == b"\xbf\x00\x01A"
    # A key's TTL survives SETBIT.
    r.expire("k", 100)
    r.setbit("k", 2, 1)
    assert 0 < r.ttl("k") <= 100


# ----------------------------------------------------------------------------------------------
# BITCOUNT and BITPOS.


@case
def bitcount_matches_the_model(t, srv):
    """BITCOUNT over random strings, BYTE and BIT ranges, negative indexes, and its errors."""
    r = srv.client(decode_responses=False)
    rng = random.Random(42)
    for n in range(40):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))
        r.set("s", data)
        assert r.bitcount("s") == sum(bits_of(data))
        for _ in range(12):
            unit = rng.choice(["BYTE", "BIT"])
            span = 8 * len(data) + 10 if unit == "BIT" else len(data) + 3
            a, b = rng.randrange(-span, span), rng.randrange(-span, span)
            got = r.execute_command("BITCOUNT", "s", a, b, unit)
            assert got == model_bitcount(data, a, b, unit), (data, a, b, unit, got)
            if unit == "BYTE":
                assert r.execute_command("BITCOUNT", "s", a, b) == got
    with srv.raw() as c:
        c.call("SET", "s", "foobar")
        assert c.call("BITCOUNT", "s") == 26
        assert c.call("BITCOUNT", "s", 1, 1) == 6
        assert c.call("BITCOUNT", "s", 5, 30, "BIT") == 17
        assert c.call("BITCOUNT", "s", 0, -1, "bit") == 26
        assert c.call("BITCOUNT", "missing") == 0
        assert c.call("BITCOUNT", "missing", 1) == 0  # Redis 7.0 answers before the syntax
        expect_error(c.call("BITCOUNT", "s", 1), SYNTAX)
        expect_error(c.call("BITCOUNT", "s", 0, 1, "BYTE", "x"), SYNTAX)
        expect_error(c.call("BITCOUNT", "s", 0, 1, "WORD"), SYNTAX)
        assert c.call("BITCOUNT", "s", -1, -2, "WORD") == 0  # an empty range wins
        expect_error(c.call("BITCOUNT", "s", "a", 1), NOT_INT)
        c.call("SADD", "set", "m")
        expect_error(c.call("BITCOUNT", "set"), WRONGTYPE)
        c.call("SET", "empty", "")
        assert c.call("BITCOUNT", "empty") == 0 and c.call("BITCOUNT", "empty", 0, -1) == 0


@case
def bitpos_matches_the_model(t, srv):
    """BITPOS over random strings and ranges, and the edge cases for clear bits at the end."""
    r = srv.client(decode_responses=False)
    rng = random.Random(7)
    for n in range(40):
        pick = rng.choice([0, 0xFF, None])
        data = bytes((rng.randrange(256) if pick is None else pick)
                     for _ in range(rng.randrange(1, 10)))
        r.set("s", data)
        for bit in (0, 1):
            assert r.bitpos("s", bit) == model_bitpos(data, bit), (data, bit)
            for _ in range(8):
                unit = rng.choice(["BYTE", "BIT"])
                span = 8 * len(data) + 10 if unit == "BIT" else len(data) + 3
                a, b = rng.randrange(-span, span), rng.randrange(-span, span)
                assert (r.execute_command("BITPOS", "s", bit, a) ==
                        model_bitpos(data, bit, a)), (data, bit, a)
                got = r.execute_command("BITPOS", "s", bit, a, b, unit)
                assert got == model_bitpos(data, bit, a, b, unit), (data, bit, a, b, unit, got)
    with srv.raw() as c:
        c.call("SET", "ones", b"\xff\xff\xff")
        assert c.call("BITPOS", "ones", 0) == 24  # the first clear bit past the end
        assert c.call("BITPOS", "ones", 0, 1) == 24
        assert c.call("BITPOS", "ones", 0, 0, -1) == -1  # an explicit end: none in range
        assert c.call("BITPOS", "ones", 0, 0, 100) == -1
        assert c.call("BITPOS", "ones", 1) == 0
        c.call("SET", "zeros", b"\x00\x00")
        assert c.call("BITPOS", "zeros", 1) == -1
        assert c.call("BITPOS", "zeros", 0, 1) == 8
        assert c.call("BITPOS", "missing", 0) == 0 and c.call("BITPOS", "missing", 1) == -1
        c.call("SET", "empty", "")
        assert c.call("BITPOS", "empty", 0) == -1 and c.call("BITPOS", "empty", 1) == -1
        c.call("SET", "s", b"\x00\xff\xf0")
        assert c.call("BITPOS", "s", 1, 7, 15, "BIT") == 8
        assert c.call("BITPOS", "s", 0, 12, -1, "BIT") == 20
        assert c.call("BITPOS", "s", 1, 2, -1, "byte") == 16
        expect_error(c.call("BITPOS", "s", 2), "ERR The bit argument must be 1 or 0.")
        expect_error(c.call("BITPOS", "s", "x"), NOT_INT)
        expect_error(c.call("BITPOS", "s", 1, 0, 1, "WORD"), SYNTAX)
        expect_error(c.call("BITPOS", "s", 1, 0, 1, "BIT", "x"), SYNTAX)
        expect_error(c.call("BITPOS", "s", 1, "a"), NOT_INT)
        c.call("HSET", "h", "f", "v")
        expect_error(c.call("BITPOS", "h", 1), WRONGTYPE)


# ----------------------------------------------------------------------------------------------
# BITOP across shards.


@case
def bitop_across_shards(t, srv):
    """AND/OR/XOR/NOT over keys on different shards; empty result deletes the destination."""
    a, b, c_key, dst = spread_keys("bitop:", 4)
    r = srv.client(decode_responses=False)
    r.set(a, b"\xff\x0f\x01")
    r.set(b, b"\x0f")
    assert r.bitop("AND", dst, a, b) == 3
    assert r.get(dst) == b"\x0f\x00\x00"
    assert r.bitop("OR", dst, a, b, c_key) == 3  # a missing key is an empty string
    assert r.get(dst) == b"\xff\x0f\x01"
    assert r.bitop("XOR", dst, a, b) == 3
    assert r.get(dst) == b"\xf0\x0f\x01"
    assert r.bitop("NOT", dst, a) == 3
    assert r.get(dst) == b"\x00\xf0\xfe"
    assert r.bitop("and", dst, a, c_key) == 3
    assert r.get(dst) == b"\x00\x00\x00"
    r.set(c_key, 12)  # an integer string is its text
    assert r.bitop("OR", dst, c_key) == 2 and r.get(dst) == b"12"
    r.expire(dst, 100)
    assert r.bitop("OR", dst, a) == 3 and r.ttl(dst) == -1  # replaced: the TTL goes
    assert r.bitop("OR", dst, "nope1", "nope2") == 0
    assert r.exists(dst) == 0
    r.rpush(dst, "x")
    assert r.bitop("AND", dst, "nope1") == 0 and r.exists(dst) == 0  # any type is replaced
    with srv.raw() as c:
        c.call("DEL", b)
        c.call("SADD", b, "m")
        expect_error(c.call("BITOP", "AND", dst, a, b), WRONGTYPE)
        assert c.call("EXISTS", dst) == 0
        expect_error(c.call("BITOP", "NOT", dst, a, a),
                     "ERR BITOP NOT must be called with a single source key.")
        expect_error(c.call("BITOP", "NAND", dst, a), SYNTAX)
        expect_error(c.call("BITOP", "AND", dst),
                     "ERR wrong number of arguments for 'bitop' command")


@case
def concurrent_setbits_and_bitop(t, srv):
    """Connections SETBIT distinct bits of one key; BITOP across shards sees whole pairs."""
    key = "shared"
    conns, per = 16, 64
    errors = []

    def setter(i):
        try:
            r = srv.client()
            p = r.pipeline(transaction=False)
            for j in range(per):
                p.setbit(key, i * per + j, 1)
            assert all(x == 0 for x in p.execute())
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=setter, args=(i,)) for i in range(conns)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in threads) and not errors, errors[:3]
    r = srv.client()
    assert r.bitcount(key) == conns * per
    assert r.strlen(key) == conns * per // 8

    # Writers keep a and b complementary with MULTI (one bit each, flipped together); BITOP XOR
    # of the two on other shards must always give all ones in that byte.
    a, b, dst = spread_keys("pair:", 3)
    r.setbit(a, 0, 1)
    r.setbit(b, 0, 0)
    stop = time.monotonic() + 2.0
    bad = []

    def flipper():
        try:
            w = srv.client()
            n = 0
            while time.monotonic() < stop and n < 5000:
                p = w.pipeline(transaction=True)
                v = n % 2
                p.setbit(a, 0, v)
                p.setbit(b, 0, 1 - v)
                p.execute()
                n += 1
        except Exception as e:  # noqa: BLE001 -- reported below
            bad.append(repr(e))

    th = threading.Thread(target=flipper)
    th.start()
    rr = srv.client(decode_responses=False)
    checks = 0
    while time.monotonic() < stop and checks < 5000:
        assert rr.bitop("XOR", dst, a, b) == 1
        got = rr.getbit(dst, 0)
        assert got == 1, "BITOP saw half of a MULTI"
        checks += 1
    th.join(timeout=30)
    assert not th.is_alive() and not bad, bad[:3]
    assert checks > 0


# ----------------------------------------------------------------------------------------------
# BITFIELD.


@case
def bitfield_get_set_incrby_overflow(t, srv):
    """BITFIELD's types, #N offsets, WRAP/SAT/FAIL, RESP3 nulls, BITFIELD_RO and errors."""
    r = srv.client(decode_responses=False)
    assert r.execute_command("BITFIELD", "bf", "SET", "i8", 0, 100, "GET", "i8", 0) == [0, 100]
    assert r.get("bf") == b"\x64"
    assert r.execute_command("BITFIELD", "bf", "INCRBY", "i8", 0, 27, "INCRBY", "i8", 0, 1) == [
        127, -128]
    assert r.execute_command("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", 0, -1000,
                             "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1,
                             "GET", "i8", 0) == [-128, None, -128]
    assert r.execute_command("BITFIELD", "bf", "SET", "u8", "#1", 255, "GET", "u16", 0) == [
        0, 0x80FF]
    assert r.execute_command("BITFIELD", "bf", "OVERFLOW", "WRAP", "INCRBY", "u8", "#1", 2) == [1]
    assert r.execute_command("BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "u8", 8, -1,
                             "GET", "u8", 8) == [1, 255]
    assert r.execute_command("BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "i4", 3, 100,
                             "GET", "i4", 3, "SET", "u3", 13, 9, "GET", "u3", 13) == [0, 7, 7, 7]
    assert r.execute_command("BITFIELD", "bf", "SET", "i64", 64,
                             -9223372036854775808, "INCRBY", "i64", 64, -1) == [
        0, 9223372036854775807]
    assert r.execute_command("BITFIELD", "bf", "SET", "u63", 200, 9223372036854775807,
                             "OVERFLOW", "FAIL", "INCRBY", "u63", 200, 1, "GET", "u63", 200) == [
        0, None, 9223372036854775807]
    assert r.strlen("bf") == (200 + 63 + 7) // 8
    assert r.execute_command("BITFIELD", "missing", "GET", "u4", 0, "GET", "i5", 100) == [0, 0]
    assert r.exists("missing") == 0
    assert r.execute_command("BITFIELD", "bf") == []
    # A refused write still makes room for the field, as on Redis.
    assert r.execute_command("BITFIELD", "fail", "OVERFLOW", "FAIL", "INCRBY", "u2", 100,
                             5) == [None]
    assert r.get("fail") == b"\x00" * 13
    assert r.execute_command("BITFIELD_RO", "bf", "GET", "u8", 8, "GET", "i4", 3) == [255, 7]
    assert r.execute_command("BITFIELD_RO", "nothing", "GET", "u8", 0) == [0]
    r.set("int", 255)  # "255"
    assert r.execute_command("BITFIELD", "int", "GET", "u8", 0, "GET", "u16", 8) == [
        ord("2"), ord("5") * 256 + ord("5")]
    with srv.raw() as c:
        assert c.call("BITFIELD", "bf", "SET", "i8", 0, -128) == [-114]
        assert c.call("HELLO", "3")["proto"] == 3
        assert c.call("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1) == [None]
        raw = c.call_bytes("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1)
        assert raw == b"*1\r\n_\r\n", raw
        expect_error(c.call("BITFIELD_RO", "bf", "GET", "u8", 0, "SET", "u8", 0, 1),
                     "ERR BITFIELD_RO only supports the GET subcommand")
        expect_error(c.call("BITFIELD", "bf", "GET", "u64", 0), BF_TYPE)
        expect_error(c.call("BITFIELD", "bf", "GET", "i65", 0), BF_TYPE)
        expect_error(c.call("BITFIELD", "bf", "GET", "I8", 0), BF_TYPE)
        expect_error(c.call("BITFIELD", "bf", "GET", "u0", 0), BF_TYPE)
        expect_error(c.call("BITFIELD", "bf", "GET", "u8", -1), BIT_OFFSET)
        expect_error(c.call("BITFIELD", "bf", "GET", "u8", "#x"), BIT_OFFSET)
        expect_error(c.call("BITFIELD", "bf", "GET", "u8", 4294967296), BIT_OFFSET)
        expect_error(c.call("BITFIELD", "bf", "GET", "u8", "#536870912"), BIT_OFFSET)
        expect_error(c.call("BITFIELD", "bf", "SET", "u8", 0, "x"), NOT_INT)
        expect_error(c.call("BITFIELD", "bf", "OVERFLOW", "MAYBE"),
                     "ERR Invalid OVERFLOW type specified")
        expect_error(c.call("BITFIELD", "bf", "GET", "u8"), SYNTAX)
        expect_error(c.call("BITFIELD", "bf", "FOO", "u8", 0), SYNTAX)
        c.call("RPUSH", "list", "x")
        expect_error(c.call("BITFIELD", "list", "GET", "u8", 0), WRONGTYPE)
        expect_error(c.call("BITFIELD", "list", "SET", "u8", 0, 1), WRONGTYPE)
        expect_error(c.call("BITFIELD_RO", "list", "GET", "u8", 0), WRONGTYPE)
        # Every subcommand is checked before any runs.
        before = c.call("GET", "bf")
        expect_error(c.call("BITFIELD", "bf", "SET", "u8", 0, 1, "GET", "x8", 0), BF_TYPE)
        assert c.call("GET", "bf") == before


# ----------------------------------------------------------------------------------------------
# LCS.


@case
def lcs_options_and_shards(t, srv):
    """LCS, LEN, IDX with MINMATCHLEN and WITHMATCHLEN (RESP2 and RESP3), keys on two shards."""
    a, b = spread_keys("lcs:", 2)
    r = srv.client()
    r.set(a, "ohmytext")
    r.set(b, "mynewtext")
    assert r.execute_command("LCS", a, b) == "mytext"
    assert r.execute_command("LCS", a, b, "LEN") == 6
    with srv.raw() as c:
        assert c.call("LCS", a, b, "IDX") == [
            "matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
        assert c.call("LCS", a, b, "IDX", "MINMATCHLEN", 4, "WITHMATCHLEN") == [
            "matches", [[[4, 7], [5, 8], 4]], "len", 6]
        assert c.call("LCS", a, b, "IDX", "WITHMATCHLEN", "MINMATCHLEN", -5) == [
            "matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len", 6]
        assert c.call("LCS", a, "missing") == ""
        assert c.call("LCS", a, "missing", "IDX") == ["matches", [], "len", 0]
        c.call("SET", "n1", 12345)
        c.call("SET", "n2", 2468)
        assert c.call("LCS", "n1", "n2") == "24"
        expect_error(c.call("LCS", a, b, "LEN", "IDX"),
                     "ERR If you want both the length and indexes, please just use IDX.")
        expect_error(c.call("LCS", a, b, "MINMATCHLEN"), SYNTAX)
        expect_error(c.call("LCS", a, b, "MINMATCHLEN", "x"), NOT_INT)
        expect_error(c.call("LCS", a, b, "FOO"), SYNTAX)
        c.call("SADD", "set", "m")
        expect_error(c.call("LCS", a, "set"), "ERR The specified keys must contain string values")
        expect_error(c.call("LCS", "set", a, "FOO"),
                     "ERR The specified keys must contain string values")
        assert c.call("HELLO", "3")["proto"] == 3
        assert c.call("LCS", a, b, "IDX", "WITHMATCHLEN") == {
            "matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len": 6}
    # A longer random pair: LEN agrees with the string's length and IDX's total.
    rng = random.Random(3)
    x = "".join(rng.choice("abc") for _ in range(300))
    y = "".join(rng.choice("abc") for _ in range(200))
    r.set(a, x)
    r.set(b, y)
    common = r.execute_command("LCS", a, b)
    assert r.execute_command("LCS", a, b, "LEN") == len(common)
    it = iter(x)
    assert all(ch in it for ch in common)  # a subsequence of x
    it = iter(y)
    assert all(ch in it for ch in common)


# ----------------------------------------------------------------------------------------------
# Keyspace events.


@case
def keyspace_events(t, srv):
    """setbit (SETBIT, BITFIELD), set and del (BITOP) as Redis fires them."""
    with srv.raw() as c, srv.raw() as sub:
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "E$g") == "OK"
        try:
            sub.call("PSUBSCRIBE", "__keyevent@0__:*")
            steps = [
                ("SETBIT", "k", 3, 1),
                ("SETBIT", "k", 3, 1),          # unchanged: no event
                ("SETBIT", "k", 3, 0),
                ("BITFIELD", "k", "GET", "u8", 0),            # read only: no event
                ("BITFIELD", "k", "SET", "u8", 0, 0),         # unchanged: no event
                ("BITFIELD", "k", "INCRBY", "u8", 0, 1),
                ("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1000),  # refused
                ("BITOP", "OR", "d", "k"),
                ("BITOP", "OR", "d", "nope"),   # del d
                ("BITOP", "OR", "d", "nope"),   # nothing to delete: no event
                ("GETBIT", "k", 0),
            ]
            for cmd in steps:
                c.call(*cmd)
            expected = [("setbit", "k"), ("setbit", "k"), ("setbit", "k"), ("set", "d"),
                        ("del", "d")]
            got = []
            deadline = time.monotonic() + 5
            while len(got) < len(expected) and time.monotonic() < deadline:
                m = sub.read_reply()
                if m and m[0] == "pmessage":
                    got.append((m[2].split(":", 1)[1], m[3]))
            assert got == expected, got
        finally:
            c.call("CONFIG", "SET", "notify-keyspace-events", "")


# ----------------------------------------------------------------------------------------------
# Persistence.


@case
def restart_keeps_bitmaps(t, srv):
    """Bits written by SETBIT, BITFIELD and BITOP come back after a restart on the same --dir."""
    d = tempfile.mkdtemp(prefix="hotkv-bitmaps-")
    args = ["--appendonly", "yes", "--appendfsync", "always", "--dir", d]
    a, b, dst = spread_keys("keep:", 3)
    keys = [a, b, dst, "bf"]
    try:
        s = t.server(extra_args=args).start()
        try:
            r = s.client(decode_responses=False)
            for i in range(0, 300, 7):
                r.setbit(a, i, 1)
            r.setbit(a, 14, 0)
            r.set(b, b"\x0f\xf0")
            r.setbit(b, 1, 1)
            r.bitop("XOR", dst, a, b)
            r.execute_command("BITFIELD", "bf", "SET", "i16", "#3", -1234, "INCRBY", "u5", 3, 9)
            r.expire(a, 1000)
            before = {k: r.get(k) for k in keys}
        finally:
            s.stop()
        s2 = t.server(extra_args=args).start()
        try:
            r = s2.client(decode_responses=False)
            after = {k: r.get(k) for k in keys}
            assert after == before, (before, after)
            assert 0 < r.ttl(a) <= 1000
            assert r.execute_command("BITFIELD_RO", "bf", "GET", "i16", "#3") == [-1234]
        finally:
            s2.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run_cases(__doc__.splitlines()[0])
