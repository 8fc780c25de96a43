// Hash commands through the real table and shard, checked against Redis 7's replies and error
// texts: RESP2 and RESP3 shapes, WRONGTYPE both ways, the empty hash that deletes its key,
// encodings, HSCAN's cursor, HRANDFIELD's counts and keyspace events.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/util/clock.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::parse_resp;
using hotkv::test::TestServer;

namespace {

const std::string kWrongType =
    error("WRONGTYPE Operation against a key holding the wrong kind of value");

std::string wrong_args(const std::string& cmd) {
  return error("ERR wrong number of arguments for '" + cmd + "' command");
}

std::string field(int i) { return "f" + std::to_string(i); }

void fill(TestServer& s, const std::string& key, int n, const std::string& prefix = "v") {
  for (int i = 0; i < n; ++i) {
    REQUIRE(s.run({"HSET", key, field(i), prefix + std::to_string(i)}) == integer(1));
  }
}

// Every field -> value of a flat HGETALL/HSCAN/HRANDFIELD WITHVALUES reply (RESP2).
std::map<std::string, std::string> as_map(const hotkv::test::Resp& r) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < r.size(); i += 2) {
    out[r.at(i).str] = r.at(i + 1).str;
  }
  return out;
}

}  // namespace

TEST_CASE("HSET, HGET, HMGET, HSETNX and HMSET reply as Redis", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "a", "1", "b", "2"}) == integer(2));
  CHECK(s.run({"HSET", "h", "a", "10", "c", "3"}) == integer(1));
  CHECK(s.run({"HGET", "h", "a"}) == bulk("10"));
  CHECK(s.run({"HGET", "h", "zz"}) == kNil);
  CHECK(s.run({"HGET", "missing", "a"}) == kNil);
  CHECK(s.run({"HMGET", "h", "a", "zz", "c"}) == arr({bulk("10"), kNil, bulk("3")}));
  CHECK(s.run({"HMGET", "missing", "a", "b"}) == arr({kNil, kNil}));
  CHECK(s.run({"HSETNX", "h", "a", "x"}) == integer(0));
  CHECK(s.run({"HSETNX", "h", "d", "4"}) == integer(1));
  CHECK(s.run({"HSETNX", "n", "f", "v"}) == integer(1));
  CHECK(s.run({"HMSET", "h", "e", "5", "a", "11"}) == kOk);
  CHECK(s.run({"HGET", "h", "a"}) == bulk("11"));
  CHECK(s.run({"HLEN", "h"}) == integer(5));
  CHECK(s.run({"HLEN", "missing"}) == integer(0));
  CHECK(s.run({"TYPE", "h"}) == "+hash\r\n");
  SECTION("odd field/value counts and short commands are arity errors") {
    CHECK(s.run({"HSET", "h", "a", "1", "b"}) == wrong_args("hset"));
    CHECK(s.run({"HSET", "h", "a"}) == wrong_args("hset"));
    CHECK(s.run({"HMSET", "h", "a", "1", "b"}) == wrong_args("hmset"));
    CHECK(s.run({"HSETNX", "h", "a"}) == wrong_args("hsetnx"));
    CHECK(s.run({"HGET", "h"}) == wrong_args("hget"));
    CHECK(s.run({"HMGET", "h"}) == wrong_args("hmget"));
    CHECK(s.run({"HDEL", "h"}) == wrong_args("hdel"));
    CHECK(s.run({"HRANDFIELD"}) == wrong_args("hrandfield"));
    CHECK(s.run({"HSCAN", "h"}) == wrong_args("hscan"));
    CHECK(s.run({"HLEN", "n"}) == integer(1));  // nothing above changed anything
  }
}

TEST_CASE("HGETALL is a map in RESP3 and a flat array in RESP2, HKEYS and HVALS arrays",
          "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "b", "2", "a", "1"}) == integer(2));
  CHECK(s.run({"HGETALL", "h"}) == arr({bulk("b"), bulk("2"), bulk("a"), bulk("1")}));
  CHECK(s.run3({"HGETALL", "h"}) == "%2\r\n" + bulk("b") + bulk("2") + bulk("a") + bulk("1"));
  CHECK(s.run({"HKEYS", "h"}) == arr({bulk("b"), bulk("a")}));
  CHECK(s.run3({"HKEYS", "h"}) == arr({bulk("b"), bulk("a")}));
  CHECK(s.run({"HVALS", "h"}) == arr({bulk("2"), bulk("1")}));
  CHECK(s.run({"HGETALL", "missing"}) == "*0\r\n");
  CHECK(s.run3({"HGETALL", "missing"}) == "%0\r\n");
  CHECK(s.run3({"HKEYS", "missing"}) == "*0\r\n");
  CHECK(s.run({"HVALS", "missing"}) == "*0\r\n");
}

TEST_CASE("HDEL of the last field deletes the key", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "a", "1", "b", "2", "c", "3"}) == integer(3));
  CHECK(s.run({"HDEL", "h", "a", "a", "zz"}) == integer(1));
  CHECK(s.run({"HDEL", "missing", "a"}) == integer(0));
  CHECK(s.run({"HEXISTS", "h", "a"}) == integer(0));
  CHECK(s.run({"HEXISTS", "h", "b"}) == integer(1));
  CHECK(s.run({"HEXISTS", "missing", "b"}) == integer(0));
  CHECK(s.run({"HDEL", "h", "b", "c"}) == integer(2));
  CHECK(s.run({"EXISTS", "h"}) == integer(0));
  CHECK(s.run({"TYPE", "h"}) == "+none\r\n");
  CHECK(s.run({"DBSIZE"}) == integer(0));
}

TEST_CASE("HSTRLEN measures values, 0 for missing fields and keys", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "a", "hello", "n", "-12"}) == integer(2));
  CHECK(s.run({"HSTRLEN", "h", "a"}) == integer(5));
  CHECK(s.run({"HSTRLEN", "h", "n"}) == integer(3));
  CHECK(s.run({"HSTRLEN", "h", "zz"}) == integer(0));
  CHECK(s.run({"HSTRLEN", "missing", "a"}) == integer(0));
}

TEST_CASE("HINCRBY counts, creates and rejects what Redis rejects", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HINCRBY", "h", "n", "5"}) == integer(5));
  CHECK(s.run({"HINCRBY", "h", "n", "-7"}) == integer(-2));
  CHECK(s.run({"HGET", "h", "n"}) == bulk("-2"));
  CHECK(s.run({"HINCRBY", "h", "n", "1.5"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"HINCRBY", "h", "n", "x"}) == error("ERR value is not an integer or out of range"));
  CHECK(s.run({"HSET", "h", "s", "hello", "big", "9223372036854775807", "z", "01"}) == integer(3));
  CHECK(s.run({"HINCRBY", "h", "s", "1"}) == error("ERR hash value is not an integer"));
  CHECK(s.run({"HINCRBY", "h", "z", "1"}) == error("ERR hash value is not an integer"));
  CHECK(s.run({"HINCRBY", "h", "big", "1"}) == error("ERR increment or decrement would overflow"));
  CHECK(s.run({"HINCRBY", "h", "big", "-1"}) == integer(9223372036854775806));
  CHECK(s.run({"HSET", "h", "small", "-9223372036854775808"}) == integer(1));
  CHECK(s.run({"HINCRBY", "h", "small", "-1"}) ==
        error("ERR increment or decrement would overflow"));
  CHECK(s.run({"HGET", "h", "big"}) == bulk("9223372036854775806"));
  // The increment is checked before the key's type.
  CHECK(s.run({"SET", "str", "1"}) == kOk);
  CHECK(s.run({"HINCRBY", "str", "f", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"HINCRBY", "str", "f", "1"}) == kWrongType);
}

TEST_CASE("HINCRBYFLOAT formats like INCRBYFLOAT and rejects NaN and infinity", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "x", "1.5", "i", "10", "s", "hello"}) == integer(3));
  CHECK(s.run({"HINCRBYFLOAT", "h", "x", "0.1"}) == bulk("1.6"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "i", "1.5"}) == bulk("11.5"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "y", "3.0e3"}) == bulk("3000"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "y", "-3000"}) == bulk("0"));
  CHECK(s.run({"HGET", "h", "x"}) == bulk("1.6"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "x", "abc"}) == error("ERR value is not a valid float"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "x", "nan"}) == error("ERR value is not a valid float"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "x", "inf"}) == error("ERR value is NaN or Infinity"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "x", "-inf"}) == error("ERR value is NaN or Infinity"));
  CHECK(s.run({"HINCRBYFLOAT", "h", "s", "1"}) == error("ERR hash value is not a float"));
  CHECK(s.run({"HSET", "h", "huge", "1e4932"}) == integer(1));
  CHECK(s.run({"HINCRBYFLOAT", "h", "huge", "1e4932"}) ==
        error("ERR increment would produce NaN or Infinity"));
  CHECK(s.run({"HGET", "h", "huge"}) == bulk("1e4932"));
  CHECK(s.run({"HINCRBYFLOAT", "n", "f", "2.5"}) == bulk("2.5"));
  CHECK(s.run({"SET", "str", "1"}) == kOk);
  CHECK(s.run({"HINCRBYFLOAT", "str", "f", "1"}) == kWrongType);
}

TEST_CASE("hash commands on other types, and other commands on a hash, reply WRONGTYPE",
          "[hashes]") {
  TestServer s;
  CHECK(s.run({"SET", "str", "v"}) == kOk);
  CHECK(s.run({"XADD", "stream", "1-0", "f", "v"}) == bulk("1-0"));
  for (const std::string key : {"str", "stream"}) {
    INFO(key);
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"HSET", key, "f", "v"},
                                               {"HSETNX", key, "f", "v"},
                                               {"HMSET", key, "f", "v"},
                                               {"HGET", key, "f"},
                                               {"HMGET", key, "f"},
                                               {"HGETALL", key},
                                               {"HKEYS", key},
                                               {"HVALS", key},
                                               {"HDEL", key, "f"},
                                               {"HEXISTS", key, "f"},
                                               {"HLEN", key},
                                               {"HSTRLEN", key, "f"},
                                               {"HINCRBY", key, "f", "1"},
                                               {"HINCRBYFLOAT", key, "f", "1"},
                                               {"HSCAN", key, "0"},
                                               {"HRANDFIELD", key},
                                               {"HRANDFIELD", key, "2"}}) {
      INFO(cmd[0]);
      CHECK(s.run(cmd) == kWrongType);
    }
  }
  CHECK(s.run({"HSET", "h", "f", "1"}) == integer(1));
  CHECK(s.run({"GET", "h"}) == kWrongType);
  CHECK(s.run({"INCR", "h"}) == kWrongType);
  CHECK(s.run({"APPEND", "h", "x"}) == kWrongType);
  CHECK(s.run({"XADD", "h", "*", "f", "v"}) == kWrongType);
  CHECK(s.run({"XLEN", "h"}) == kWrongType);
  CHECK(s.run({"GET", "str"}) == bulk("v"));
  CHECK(s.run({"HGET", "h", "f"}) == bulk("1"));
}

TEST_CASE("OBJECT ENCODING is listpack while small and hashtable past 128 fields or 64 bytes",
          "[hashes]") {
  TestServer s;
  fill(s, "h", 128);
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("listpack"));
  CHECK(s.run({"HSET", "h", "one-more", "v"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("hashtable"));
  for (int i = 0; i < 128; ++i) {
    REQUIRE(s.run({"HDEL", "h", field(i)}) == integer(1));
  }
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == bulk("hashtable"));  // never back
  CHECK(s.run({"HSET", "v", "f", std::string(64, 'x')}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "v"}) == bulk("listpack"));
  CHECK(s.run({"HSET", "v", "f", std::string(65, 'x')}) == integer(0));
  CHECK(s.run({"OBJECT", "ENCODING", "v"}) == bulk("hashtable"));
  // 129 pairs in one HSET that name one field: Redis 7.0 counts fields, not pairs.
  std::vector<std::string> cmd{"HSET", "dup"};
  for (int i = 0; i < 129; ++i) {
    cmd.push_back("same");
    cmd.push_back(std::to_string(i));
  }
  CHECK(s.run(cmd) == integer(1));
  CHECK(s.run({"HLEN", "dup"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "dup"}) == bulk("listpack"));
  // A long HINCRBYFLOAT result converts too, as in Redis 7.0.
  CHECK(s.run({"HINCRBYFLOAT", "f", "x", "1e100"}) != "");
  CHECK(s.run({"OBJECT", "ENCODING", "f"}) == bulk("hashtable"));
}

TEST_CASE("HSCAN returns a small hash whole and walks a large one with a cursor", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "a1", "1", "b1", "2", "a2", "3"}) == integer(3));
  CHECK(s.run({"HSCAN", "h", "0"}) == arr({bulk("0"), arr({bulk("a1"), bulk("1"), bulk("b1"),
                                                           bulk("2"), bulk("a2"), bulk("3")})}));
  CHECK(s.run({"HSCAN", "h", "0", "COUNT", "1", "MATCH", "a*"}) ==
        arr({bulk("0"), arr({bulk("a1"), bulk("1"), bulk("a2"), bulk("3")})}));
  CHECK(s.run({"HSCAN", "h", "0", "NOVALUES"}) ==
        arr({bulk("0"), arr({bulk("a1"), bulk("b1"), bulk("a2")})}));
  CHECK(s.run3({"HSCAN", "h", "0", "match", "b*"}) ==
        arr({bulk("0"), arr({bulk("b1"), bulk("2")})}));
  CHECK(s.run({"HSCAN", "missing", "0"}) == arr({bulk("0"), "*0\r\n"}));
  SECTION("errors") {
    CHECK(s.run({"HSCAN", "h", "x"}) == error("ERR invalid cursor"));
    CHECK(s.run({"HSCAN", "h", " 1"}) == error("ERR invalid cursor"));
    CHECK(s.run({"HSCAN", "h", "18446744073709551616"}) == error("ERR invalid cursor"));
    CHECK(s.run({"HSCAN", "h", "18446744073709551615"}) != error("ERR invalid cursor"));
    CHECK(s.run({"HSCAN", "h", "0", "COUNT", "0"}) == error("ERR syntax error"));
    CHECK(s.run({"HSCAN", "h", "0", "COUNT", "-1"}) == error("ERR syntax error"));
    CHECK(s.run({"HSCAN", "h", "0", "COUNT", "x"}) ==
          error("ERR value is not an integer or out of range"));
    CHECK(s.run({"HSCAN", "h", "0", "MATCH"}) == error("ERR syntax error"));
    CHECK(s.run({"HSCAN", "h", "0", "TYPE", "hash"}) == error("ERR syntax error"));
    // A missing key answers before the options are read, as in Redis.
    CHECK(s.run({"HSCAN", "missing", "0", "BOGUS"}) == arr({bulk("0"), "*0\r\n"}));
  }
  SECTION("a hashtable is walked in steps, each field at least once") {
    fill(s, "big", 1000);
    std::map<std::string, std::string> seen;
    std::string cursor = "0";
    int calls = 0;
    do {
      auto r = parse_resp(s.run({"HSCAN", "big", cursor, "COUNT", "20"}));
      cursor = r.at(0).str;
      for (const auto& [f, v] : as_map(r.at(1))) {
        seen[f] = v;
      }
      ++calls;
    } while (cursor != "0" && calls < 10000);
    CHECK(cursor == "0");
    CHECK(calls > 5);
    CHECK(seen.size() == 1000);
    CHECK(seen["f17"] == "v17");
    auto r = parse_resp(s.run({"HSCAN", "big", "0", "COUNT", "2000", "NOVALUES"}));
    CHECK(r.at(1).size() == 1000);
  }
}

TEST_CASE("HRANDFIELD picks fields with Redis's count rules and reply shapes", "[hashes]") {
  TestServer s;
  CHECK(s.run({"HSET", "h", "a", "1", "b", "2", "c", "3"}) == integer(3));
  std::set<std::string> all{"a", "b", "c"};
  CHECK(all.count(parse_resp(s.run({"HRANDFIELD", "h"})).str) == 1);
  CHECK(s.run({"HRANDFIELD", "missing"}) == kNil);
  CHECK(s.run3({"HRANDFIELD", "missing"}) == "_\r\n");
  CHECK(s.run({"HRANDFIELD", "missing", "5"}) == "*0\r\n");
  CHECK(s.run3({"HRANDFIELD", "missing", "-5", "WITHVALUES"}) == "*0\r\n");
  CHECK(s.run({"HRANDFIELD", "h", "0"}) == "*0\r\n");
  CHECK(s.run({"HRANDFIELD", "h", "0", "WITHVALUES"}) == "*0\r\n");
  // count >= size: the whole hash.
  CHECK(s.run({"HRANDFIELD", "h", "5", "WITHVALUES"}) ==
        arr({bulk("a"), bulk("1"), bulk("b"), bulk("2"), bulk("c"), bulk("3")}));
  CHECK(
      s.run3({"HRANDFIELD", "h", "3", "WITHVALUES"}) ==
      arr({arr({bulk("a"), bulk("1")}), arr({bulk("b"), bulk("2")}), arr({bulk("c"), bulk("3")})}));
  SECTION("a negative count repeats fields and returns exactly that many") {
    auto r = parse_resp(s.run({"HRANDFIELD", "h", "-20"}));
    REQUIRE(r.size() == 20);
    for (const auto& f : r.items) {
      CHECK(all.count(f.str) == 1);
    }
    auto p = parse_resp(s.run({"HRANDFIELD", "h", "-7", "WITHVALUES"}));
    REQUIRE(p.size() == 14);
    for (size_t i = 0; i < p.size(); i += 2) {
      CHECK(p.at(i + 1).str == std::to_string(p.at(i).str[0] - 'a' + 1));
    }
    auto p3 = parse_resp(s.run3({"HRANDFIELD", "h", "-4", "WITHVALUES"}));
    REQUIRE(p3.size() == 4);
    CHECK(p3.at(0).size() == 2);
  }
  SECTION("a positive count below the size gives distinct fields") {
    fill(s, "big", 300);
    for (const char* n : {"2", "50", "150", "299"}) {
      INFO(n);
      auto r = parse_resp(s.run({"HRANDFIELD", "big", n, "WITHVALUES"}));
      auto m = as_map(r);
      CHECK(r.size() == 2 * std::stoul(n));
      CHECK(m.size() == std::stoul(n));
      for (const auto& [f, v] : m) {
        CHECK(v == "v" + f.substr(1));
      }
    }
  }
  SECTION("errors") {
    CHECK(s.run({"HRANDFIELD", "h", "x"}) == error("ERR value is not an integer or out of range"));
    CHECK(s.run({"HRANDFIELD", "h", "WITHVALUES"}) ==
          error("ERR value is not an integer or out of range"));
    CHECK(s.run({"HRANDFIELD", "h", "-5", "xx"}) == error("ERR syntax error"));
    CHECK(s.run({"HRANDFIELD", "missing", "1", "WITHVALUES", "x"}) == error("ERR syntax error"));
    CHECK(s.run({"HRANDFIELD", "h", "-9223372036854775808"}) ==
          error("ERR value is out of range, value must between -9223372036854775807 and "
                "9223372036854775807"));
    CHECK(s.run({"HRANDFIELD", "h", "9223372036854775807", "WITHVALUES"}) ==
          error("ERR value is out of range"));
    CHECK(s.run({"HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"}) ==
          error("ERR value is out of range"));
    // HotKV's bound on repeated picks (Redis would try to build the reply).
    CHECK(s.run({"HRANDFIELD", "h", "-100000000"}) == error("ERR value is out of range"));
  }
}

TEST_CASE("hash writes publish Redis's keyspace events", "[hashes]") {
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  s.run3({"PSUBSCRIBE", "__keyevent@0__:*"});
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Egh"}) == kOk);
  s.run3({"HSET", "h", "a", "1", "b", "2"});
  s.run3({"HMSET", "h", "c", "3"});
  s.run3({"HSETNX", "h", "a", "9"});  // not set: no event
  s.run3({"HSETNX", "h", "d", "4"});
  s.run3({"HINCRBY", "h", "n", "1"});
  s.run3({"HINCRBY", "h", "a", "x"});  // error: no event
  s.run3({"HINCRBYFLOAT", "h", "n", "0.5"});
  s.run3({"HDEL", "h", "zz"});  // nothing deleted: no event
  s.run3({"HDEL", "h", "a", "b"});
  s.run3({"HDEL", "h", "c", "d", "n"});
  std::vector<std::string> seen;
  for (const auto& m : s.pushes()) {
    seen.push_back(m.channel.substr(std::string("__keyevent@0__:").size()) + " " + m.payload);
  }
  CHECK(seen == std::vector<std::string>{"hset h", "hset h", "hset h", "hincrby h",
                                         "hincrbyfloat h", "hdel h", "hdel h", "del h"});
}

TEST_CASE("COPY and RENAME carry a hash with its encoding", "[hashes]") {
  TestServer s;
  fill(s, "small", 3);
  fill(s, "big", 200);
  CHECK(s.run({"COPY", "small", "small2"}) == integer(1));
  CHECK(s.run({"HGETALL", "small2"}) == s.run({"HGETALL", "small"}));
  CHECK(s.run({"HSET", "small2", "f0", "changed"}) == integer(0));
  CHECK(s.run({"HGET", "small", "f0"}) == bulk("v0"));  // the copy is independent
  CHECK(s.run({"COPY", "big", "big2"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "big2"}) == bulk("hashtable"));
  CHECK(s.run({"HLEN", "big2"}) == integer(200));
  CHECK(s.run({"RENAME", "small", "moved"}) == kOk);
  CHECK(s.run({"HGET", "moved", "f2"}) == bulk("v2"));
  CHECK(s.run({"EXISTS", "small"}) == integer(0));
}

TEST_CASE("hash keys on several shards are served by their owners", "[hashes]") {
  TestServer s(4);
  for (int k = 0; k < 40; ++k) {
    std::string key = "hash:" + std::to_string(k);
    REQUIRE(s.run({"HSET", key, "n", std::to_string(k)}) == integer(1));
    REQUIRE(s.run({"HINCRBY", key, "n", "1"}) == integer(k + 1));
  }
  for (int k = 0; k < 40; ++k) {
    CHECK(s.run({"HGET", "hash:" + std::to_string(k), "n"}) == bulk(std::to_string(k + 1)));
  }
  CHECK(s.run({"DBSIZE"}) == integer(40));
}
