// Strings and counters through the real table and shard (TestServer), checked against the
// replies and error texts Redis gives.
#include <catch2/catch.hpp>

#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::TestServer;

TEST_CASE("SET and GET round-trip values including binary and integers", "[strings]") {
  TestServer s;
  CHECK(s.run({"SET", "k", "hello"}) == kOk);
  CHECK(s.run({"GET", "k"}) == bulk("hello"));
  CHECK(s.run({"SET", "bin", std::string("a\0\r\nb", 5)}) == kOk);
  CHECK(s.run({"GET", "bin"}) == bulk(std::string("a\0\r\nb", 5)));
  CHECK(s.run({"SET", "n", "-42"}) == kOk);
  CHECK(s.run({"GET", "n"}) == bulk("-42"));
  CHECK(s.run({"OBJECT", "ENCODING", "n"}) == bulk("int"));
  CHECK(s.run({"SET", "z", "007"}) == kOk);
  CHECK(s.run({"OBJECT", "ENCODING", "z"}) == bulk("embstr"));
  CHECK(s.run({"GET", "z"}) == bulk("007"));
  CHECK(s.run({"GET", "missing"}) == kNil);
}

TEST_CASE("SET options NX XX GET and their invalid combinations", "[strings]") {
  TestServer s;
  CHECK(s.run({"SET", "k", "1", "NX"}) == kOk);
  CHECK(s.run({"SET", "k", "2", "NX"}) == kNil);
  CHECK(s.run({"SET", "other", "2", "XX"}) == kNil);
  CHECK(s.run({"SET", "k", "3", "XX", "GET"}) == bulk("1"));
  CHECK(s.run({"GET", "k"}) == bulk("3"));
  CHECK(s.run({"SET", "k", "4", "NX", "GET"}) == bulk("3"));
  CHECK(s.run({"GET", "k"}) == bulk("3"));
  CHECK(s.run({"SET", "k", "v", "NX", "XX"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SET", "k", "v", "EX", "10", "PX", "100"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SET", "k", "v", "EX", "10", "KEEPTTL"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SET", "k", "v", "EX"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SET", "k", "v", "FOO"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"SET", "k", "v", "EX", "abc"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"SET", "k", "v", "EX", "0"}) == "-ERR invalid expire time in 'set' command\r\n");
  CHECK(s.run({"SET", "k", "v", "PX", "-5"}) == "-ERR invalid expire time in 'set' command\r\n");
  CHECK(s.run({"SET", "k", "v", "EX", "9223372036854775807"}) ==
        "-ERR invalid expire time in 'set' command\r\n");
  CHECK(s.run({"GET", "k"}) == bulk("3"));  // nothing half-applied by the failures above
  CHECK(s.run({"SET", "k"}) == "-ERR wrong number of arguments for 'set' command\r\n");
}

TEST_CASE("SET expiry options set absolute deadlines and KEEPTTL keeps them", "[strings]") {
  TestServer s;
  CHECK(s.run({"SET", "k", "v", "EX", "10"}) == kOk);
  CHECK(s.run({"PTTL", "k"}) == integer(10000));
  CHECK(s.run({"SET", "k", "w", "KEEPTTL"}) == kOk);
  CHECK(s.run({"PTTL", "k"}) == integer(10000));
  CHECK(s.run({"SET", "k", "x"}) == kOk);
  CHECK(s.run({"TTL", "k"}) == integer(-1));
  int64_t at = s.now() + 5000;
  CHECK(s.run({"SET", "k", "y", "PXAT", std::to_string(at)}) == kOk);
  CHECK(s.run({"PEXPIRETIME", "k"}) == integer(at));
  SECTION("a deadline in the past deletes the key") {
    CHECK(s.run({"SET", "k", "z", "PXAT", std::to_string(s.now() - 1)}) == kOk);
    CHECK(s.run({"EXISTS", "k"}) == integer(0));
  }
  SECTION("the key disappears exactly at its deadline") {
    s.advance(4999);
    CHECK(s.run({"GET", "k"}) == bulk("y"));
    s.advance(1);
    CHECK(s.run({"GET", "k"}) == kNil);
  }
}

TEST_CASE("SETEX PSETEX SETNX GETSET GETDEL GETEX", "[strings]") {
  TestServer s;
  CHECK(s.run({"SETEX", "a", "10", "v"}) == kOk);
  CHECK(s.run({"TTL", "a"}) == integer(10));
  CHECK(s.run({"SETEX", "a", "0", "v"}) == "-ERR invalid expire time in 'setex' command\r\n");
  CHECK(s.run({"PSETEX", "b", "1500", "v"}) == kOk);
  CHECK(s.run({"PTTL", "b"}) == integer(1500));
  CHECK(s.run({"SETNX", "a", "x"}) == integer(0));
  CHECK(s.run({"SETNX", "c", "x"}) == integer(1));
  CHECK(s.run({"GETSET", "c", "y"}) == bulk("x"));
  CHECK(s.run({"GETSET", "new", "y"}) == kNil);
  CHECK(s.run({"GETDEL", "c"}) == bulk("y"));
  CHECK(s.run({"GETDEL", "c"}) == kNil);
  CHECK(s.run({"GETEX", "a", "PERSIST"}) == bulk("v"));
  CHECK(s.run({"TTL", "a"}) == integer(-1));
  CHECK(s.run({"GETEX", "a", "EX", "100"}) == bulk("v"));
  CHECK(s.run({"TTL", "a"}) == integer(100));
  CHECK(s.run({"GETEX", "a", "EX", "100", "PERSIST"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"GETEX", "a", "KEEPTTL"}) == "-ERR syntax error\r\n");
  CHECK(s.run({"GETEX", "nokey", "EX", "1"}) == kNil);
}

TEST_CASE("MSET MGET MSETNX", "[strings]") {
  TestServer s;
  CHECK(s.run({"MSET", "a", "1", "b", "2"}) == kOk);
  CHECK(s.run({"MGET", "a", "b", "c"}) == "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n");
  CHECK(s.run({"MSET", "a", "1", "b"}) == "-ERR wrong number of arguments for 'mset' command\r\n");
  CHECK(s.run({"MSETNX", "c", "3", "a", "9"}) == integer(0));
  CHECK(s.run({"EXISTS", "c"}) == integer(0));
  CHECK(s.run({"MSETNX", "c", "3", "d", "4"}) == integer(1));
  CHECK(s.run({"MGET", "c", "d"}) == "*2\r\n$1\r\n3\r\n$1\r\n4\r\n");
}

TEST_CASE("APPEND STRLEN GETRANGE SETRANGE follow Redis's index rules", "[strings]") {
  TestServer s;
  CHECK(s.run({"APPEND", "k", "Hello"}) == integer(5));
  CHECK(s.run({"APPEND", "k", " World"}) == integer(11));
  CHECK(s.run({"STRLEN", "k"}) == integer(11));
  CHECK(s.run({"STRLEN", "nokey"}) == integer(0));
  CHECK(s.run({"GETRANGE", "k", "0", "4"}) == bulk("Hello"));
  CHECK(s.run({"GETRANGE", "k", "-5", "-1"}) == bulk("World"));
  CHECK(s.run({"GETRANGE", "k", "-1", "-5"}) == bulk(""));
  CHECK(s.run({"GETRANGE", "k", "5", "3"}) == bulk(""));
  CHECK(s.run({"GETRANGE", "k", "0", "1000"}) == bulk("Hello World"));
  CHECK(s.run({"GETRANGE", "nokey", "0", "-1"}) == bulk(""));
  CHECK(s.run({"SETRANGE", "k", "6", "Redis"}) == integer(11));
  CHECK(s.run({"GET", "k"}) == bulk("Hello Redis"));
  CHECK(s.run({"SETRANGE", "pad", "3", "x"}) == integer(4));
  CHECK(s.run({"GET", "pad"}) == bulk(std::string("\0\0\0x", 4)));
  CHECK(s.run({"SETRANGE", "k", "-1", "x"}) == "-ERR offset is out of range\r\n");
  CHECK(s.run({"SETRANGE", "k", "536870911", "xx"}) ==
        "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
  CHECK(s.run({"SETRANGE", "empty", "10", ""}) == integer(0));
  CHECK(s.run({"EXISTS", "empty"}) == integer(0));
  CHECK(s.run({"SET", "n", "12"}) == kOk);
  CHECK(s.run({"APPEND", "n", "3"}) == integer(3));
  CHECK(s.run({"INCR", "n"}) == integer(124));
}

TEST_CASE("INCR family keeps integers and reports overflow like Redis", "[strings]") {
  TestServer s;
  CHECK(s.run({"INCR", "c"}) == integer(1));
  CHECK(s.run({"INCRBY", "c", "10"}) == integer(11));
  CHECK(s.run({"DECRBY", "c", "20"}) == integer(-9));
  CHECK(s.run({"DECR", "c"}) == integer(-10));
  CHECK(s.run({"OBJECT", "ENCODING", "c"}) == bulk("int"));
  CHECK(s.run({"SET", "max", "9223372036854775807"}) == kOk);
  CHECK(s.run({"INCR", "max"}) == "-ERR increment or decrement would overflow\r\n");
  CHECK(s.run({"SET", "min", "-9223372036854775808"}) == kOk);
  CHECK(s.run({"DECR", "min"}) == "-ERR increment or decrement would overflow\r\n");
  CHECK(s.run({"DECRBY", "c", "-9223372036854775808"}) == "-ERR decrement would overflow\r\n");
  CHECK(s.run({"INCRBY", "c", "1.5"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"SET", "s", "abc"}) == kOk);
  CHECK(s.run({"INCR", "s"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"SET", "sp", " 1"}) == kOk);
  CHECK(s.run({"INCR", "sp"}) == "-ERR value is not an integer or out of range\r\n");
  CHECK(s.run({"SET", "t", "5", "EX", "100"}) == kOk);
  CHECK(s.run({"INCR", "t"}) == integer(6));
  CHECK(s.run({"TTL", "t"}) == integer(100));  // INCR keeps the TTL
}

TEST_CASE("INCRBYFLOAT formats like Redis and refuses NaN and infinity", "[strings]") {
  TestServer s;
  CHECK(s.run({"SET", "f", "10.50"}) == kOk);
  CHECK(s.run({"INCRBYFLOAT", "f", "0.1"}) == bulk("10.6"));
  CHECK(s.run({"INCRBYFLOAT", "f", "-5"}) == bulk("5.6"));
  CHECK(s.run({"SET", "g", "5.0e3"}) == kOk);
  CHECK(s.run({"INCRBYFLOAT", "g", "2.0e2"}) == bulk("5200"));
  CHECK(s.run({"INCRBYFLOAT", "new", "3"}) == bulk("3"));
  CHECK(s.run({"INCRBYFLOAT", "f", "abc"}) == "-ERR value is not a valid float\r\n");
  CHECK(s.run({"INCRBYFLOAT", "f", "inf"}) == "-ERR increment would produce NaN or Infinity\r\n");
  CHECK(s.run({"SET", "s", "x"}) == kOk);
  CHECK(s.run({"INCRBYFLOAT", "s", "1"}) == "-ERR value is not a valid float\r\n");
}

TEST_CASE("commands spanning shards give single-server results", "[strings][shard]") {
  TestServer s(4);
  CHECK(s.run({"MSET", "a", "1", "b", "2", "c", "3", "d", "4"}) == kOk);
  CHECK(s.run({"MGET", "a", "b", "c", "d", "e"}) ==
        "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$-1\r\n");
  CHECK(s.run({"DEL", "a", "b", "zz"}) == integer(2));
  CHECK(s.run({"EXISTS", "a", "c", "c", "d"}) == integer(3));
  CHECK(s.run({"MSETNX", "x", "1", "c", "9"}) == integer(0));
  CHECK(s.run({"EXISTS", "x"}) == integer(0));
  CHECK(s.run({"DBSIZE"}) == integer(2));
  CHECK(s.run({"RENAME", "c", "zz"}) == kOk);
  CHECK(s.run({"GET", "zz"}) == bulk("3"));
  CHECK(s.run({"KEYS", "*"}).substr(0, 4) == "*2\r\n");
}
