// The encoding settings end to end through the command table: CONFIG GET/SET of
// hash-max-listpack-*, set-max-intset-entries and stream-node-max-* (aliases, globs, ranges,
// memory units, Redis's error texts), OBJECT ENCODING of hashes, sets and strings following
// them and Redis's rules, and MEMORY USAGE.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

std::string set_failed(const std::string& name, const std::string& reason) {
  return error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + reason);
}

}  // namespace

TEST_CASE("encoding settings have Redis's names, aliases, defaults and ranges", "[encodings]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "GET", "hash-max-*"}) ==
        arr({bulk("hash-max-listpack-entries"), bulk("128"), bulk("hash-max-listpack-value"),
             bulk("64"), bulk("hash-max-ziplist-entries"), bulk("128"),
             bulk("hash-max-ziplist-value"), bulk("64")}));
  CHECK(s.run({"CONFIG", "GET", "stream-node-*"}) ==
        arr({bulk("stream-node-max-bytes"), bulk("4096"), bulk("stream-node-max-entries"),
             bulk("100")}));
  CHECK(s.run({"CONFIG", "GET", "set-max-*"}) ==
        arr({bulk("set-max-intset-entries"), bulk("512")}));
  // A plain name answers as it was written; each setting once.
  CHECK(s.run({"CONFIG", "GET", "Hash-Max-Ziplist-Value", "hash-max-ziplist-value"}) ==
        arr({bulk("Hash-Max-Ziplist-Value"), bulk("64")}));

  SECTION("an alias and its setting are one value") {
    CHECK(s.run({"CONFIG", "SET", "hash-max-ziplist-entries", "7"}) == kOk);
    CHECK(s.run({"CONFIG", "GET", "hash-max-listpack-entries"}) ==
          arr({bulk("hash-max-listpack-entries"), bulk("7")}));
    CHECK(s.run({"CONFIG", "SET", "hash-max-listpack-value", "1kb"}) == kOk);
    CHECK(s.run({"CONFIG", "GET", "hash-max-ziplist-value"}) ==
          arr({bulk("hash-max-ziplist-value"), bulk("1024")}));
    CHECK(s.run({"CONFIG", "SET", "stream-node-max-bytes", "0", "stream-node-max-entries",
                 "9223372036854775807"}) == kOk);
    CHECK(s.run({"CONFIG", "GET", "stream-node-max-entries"}) ==
          arr({bulk("stream-node-max-entries"), bulk("9223372036854775807")}));
  }
  SECTION("bad values are refused with Redis's reasons") {
    const std::string range = "argument must be between 0 and 9223372036854775807 inclusive";
    CHECK(s.run({"CONFIG", "SET", "set-max-intset-entries", "-1"}) ==
          set_failed("set-max-intset-entries", range));
    CHECK(s.run({"CONFIG", "SET", "hash-max-ziplist-entries", "x"}) ==
          set_failed("hash-max-ziplist-entries", "argument couldn't be parsed into an integer"));
    CHECK(s.run({"CONFIG", "SET", "hash-max-listpack-value", "-1"}) ==
          set_failed("hash-max-listpack-value", "argument must be a memory value"));
    CHECK(s.run({"CONFIG", "SET", "stream-node-max-bytes", "lots"}) ==
          set_failed("stream-node-max-bytes", "argument must be a memory value"));
    CHECK(s.run({"CONFIG", "GET", "set-max-intset-entries"}) ==
          arr({bulk("set-max-intset-entries"), bulk("512")}));
    CHECK(s.run({"CONFIG", "SET", "set-max-listpack-entries", "1"}) ==
          error("ERR Unknown option or number of arguments for CONFIG SET - "
                "'set-max-listpack-entries'"));
  }
}

TEST_CASE("OBJECT ENCODING of hashes and sets follows the configured limits", "[encodings]") {
  TestServer s;
  REQUIRE(s.run({"CONFIG", "SET", "hash-max-listpack-entries", "2", "hash-max-listpack-value", "4",
                 "set-max-intset-entries", "2"}) == kOk);
  CHECK(s.run({"HSET", "h", "a", "1", "b", "1234"}) == integer(2));
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("listpack"));
  CHECK(s.run({"HSET", "h", "c", "1"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("hashtable"));
  CHECK(s.run({"HSET", "v", "a", "12345"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "v"}) == bulk("hashtable"));
  CHECK(s.run({"SADD", "s", "1", "2"}) == integer(2));
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("intset"));
  CHECK(s.run({"SADD", "s", "3"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("hashtable"));
  CHECK(s.run({"SADD", "t", "1", "2"}) == integer(2));
  CHECK(s.run({"SINTERSTORE", "u", "s", "t"}) == integer(2));
  CHECK(s.run({"OBJECT", "ENCODING", "u"}) == bulk("intset"));

  SECTION("raising a limit never turns a converted value back") {
    REQUIRE(s.run({"CONFIG", "SET", "hash-max-listpack-entries", "100"}) == kOk);
    CHECK(s.run({"HDEL", "h", "a", "b"}) == integer(2));
    CHECK(s.run({"HSET", "h", "d", "1"}) == integer(1));
    CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("hashtable"));
  }
  SECTION("lowering a limit converts a value at its next write") {
    CHECK(s.run({"HSET", "two", "a", "1", "b", "2"}) == integer(2));
    REQUIRE(s.run({"CONFIG", "SET", "hash-max-listpack-entries", "1"}) == kOk);
    CHECK(s.run({"OBJECT", "ENCODING", "two"}) == bulk("listpack"));
    CHECK(s.run({"HSET", "two", "a", "3"}) == integer(0));
    CHECK(s.run({"OBJECT", "ENCODING", "two"}) == bulk("hashtable"));
  }
}

TEST_CASE("OBJECT ENCODING of strings: int, embstr, raw as Redis decides", "[encodings]") {
  TestServer s;
  auto encoding = [&](const std::string& key) { return s.run({"OBJECT", "ENCODING", key}); };
  CHECK(s.run({"SET", "i", "-42"}) == kOk);
  CHECK(encoding("i") == bulk("int"));
  CHECK(s.run({"SET", "e", std::string(44, 'x')}) == kOk);
  CHECK(encoding("e") == bulk("embstr"));
  CHECK(s.run({"SET", "r", std::string(45, 'x')}) == kOk);
  CHECK(encoding("r") == bulk("raw"));
  CHECK(s.run({"APPEND", "i", "0"}) == integer(4));
  CHECK(encoding("i") == bulk("raw"));  // changed in place: raw, however short
  CHECK(s.run({"INCR", "i"}) == integer(-419));
  CHECK(encoding("i") == bulk("int"));
  CHECK(s.run({"SETRANGE", "new", "1", "ab"}) == integer(3));
  CHECK(encoding("new") == bulk("raw"));
  CHECK(s.run({"COPY", "new", "copy"}) == integer(1));
  CHECK(encoding("copy") == bulk("raw"));
  CHECK(s.run({"SET", "new", "ab"}) == kOk);
  CHECK(encoding("new") == bulk("embstr"));
  CHECK(s.run({"SET", "f", "10"}) == kOk);
  CHECK(s.run({"INCRBYFLOAT", "f", "1"}) == bulk("11"));
  CHECK(encoding("f") == bulk("embstr"));  // Redis stores the result as text
  CHECK(s.run({"INCR", "f"}) == integer(12));
  CHECK(encoding("f") == bulk("int"));
}

TEST_CASE("MEMORY USAGE estimates a key, validates SAMPLES, nil when missing", "[encodings]") {
  TestServer s;
  CHECK(s.run({"MEMORY", "USAGE", "nothing"}) == kNil);
  REQUIRE(s.run({"SET", "k", std::string(1000, 'x')}) == kOk);
  REQUIRE(s.run({"SET", "small", "x"}) == kOk);
  std::string big = s.run({"MEMORY", "USAGE", "k", "SAMPLES", "0"});
  std::string tiny = s.run({"MEMORY", "USAGE", "small"});
  REQUIRE(big.size() > 1);
  REQUIRE(tiny.size() > 1);
  CHECK(big[0] == ':');
  CHECK(std::stoll(big.substr(1)) > 1000);
  CHECK(std::stoll(tiny.substr(1)) < std::stoll(big.substr(1)));
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES", "-1"}) == error("ERR syntax error"));
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES"}) == error("ERR syntax error"));
  CHECK(s.run({"MEMORY", "USAGE", "k", "SAMPLES", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"MEMORY", "USAGE"}) ==
        error("ERR wrong number of arguments for 'memory|usage' command"));
  CHECK(s.run({"MEMORY", "NOPE"}) == error("ERR unknown subcommand 'NOPE'. Try MEMORY HELP."));
}
