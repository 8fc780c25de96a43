// Sorted-set commands through the real table and shard, checked against redis-server 7.0's
// replies and error texts (ZRANK/ZREVRANK WITHSCORE as Redis 7.2 answers it), in RESP2 and
// RESP3, plus keyspace notifications and the replay of the effects they log.
#include <fcntl.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/util/clock.hpp"
#include "support/resp_value.hpp"
#include "support/replay.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kNilArray;
using hotkv::test::kOk;
using hotkv::test::parse_resp;
using hotkv::test::replay;
using hotkv::test::TestServer;

namespace {

const std::string kWrongType =
    error("WRONGTYPE Operation against a key holding the wrong kind of value");
const std::string kSyntax = error("ERR syntax error");
const std::string kNull3 = "_\r\n";
const std::string kEmpty = "*0\r\n";

// A RESP3 double.
std::string dbl(const std::string& text) { return "," + text + "\r\n"; }

void seed(TestServer& s) {
  REQUIRE(s.run({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}) == integer(4));
}

}  // namespace

TEST_CASE("ZADD adds and updates members, reports TYPE zset and listpack/skiplist encoding",
          "[zset]") {
  TestServer s;
  CHECK(s.run({"ZADD", "z", "1", "a", "2", "b", "0.1", "c"}) == integer(3));
  CHECK(s.run({"ZADD", "z", "5", "a", "3", "new"}) == integer(1));
  CHECK(s.run({"ZCARD", "z"}) == integer(4));
  CHECK(s.run({"ZSCORE", "z", "c"}) == bulk("0.10000000000000001"));
  CHECK(s.run3({"ZSCORE", "z", "c"}) == dbl("0.10000000000000001"));
  CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("5"));
  CHECK(s.run({"ZSCORE", "z", "nope"}) == kNil);
  CHECK(s.run3({"ZSCORE", "nokey", "a"}) == kNull3);
  CHECK(s.run({"TYPE", "z"}) == "+zset\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "z"}) == bulk("listpack"));
  CHECK(s.run({"ZADD", "z", "1", std::string(65, 'x')}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "z"}) == bulk("skiplist"));
  std::vector<std::string> many{"ZADD", "big"};
  for (int i = 0; i < 129; ++i) {
    many.push_back(std::to_string(i));
    many.push_back("m" + std::to_string(i));
  }
  CHECK(s.run(many) == integer(129));
  CHECK(s.run({"OBJECT", "ENCODING", "big"}) == bulk("skiplist"));
  CHECK(s.run({"ZADD", "z", "inf", "top", "-inf", "bottom"}) == integer(2));
  CHECK(s.run({"ZSCORE", "z", "top"}) == bulk("inf"));
  CHECK(s.run3({"ZSCORE", "z", "bottom"}) == dbl("-inf"));
}

TEST_CASE("ZADD options NX XX GT LT CH INCR follow Redis", "[zset]") {
  TestServer s;
  seed(s);
  SECTION("NX only adds, XX only updates") {
    CHECK(s.run({"ZADD", "z", "NX", "10", "a", "5", "e"}) == integer(1));
    CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("1"));
    CHECK(s.run({"ZADD", "z", "XX", "10", "a", "6", "f"}) == integer(0));
    CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("10"));
    CHECK(s.run({"ZSCORE", "z", "f"}) == kNil);
    CHECK(s.run({"ZADD", "nokey", "XX", "1", "a"}) == integer(0));
    CHECK(s.run({"EXISTS", "nokey"}) == integer(0));
  }
  SECTION("GT and LT only move scores one way but still add; CH counts changes") {
    CHECK(s.run({"ZADD", "z", "GT", "CH", "0", "a", "5", "b", "9", "new"}) == integer(2));
    CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("1"));
    CHECK(s.run({"ZSCORE", "z", "b"}) == bulk("5"));
    CHECK(s.run({"ZADD", "z", "LT", "CH", "0", "a", "7", "c"}) == integer(1));
    CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("0"));
    CHECK(s.run({"ZADD", "z", "CH", "0", "a"}) == integer(0));  // same score: no change
    CHECK(s.run({"zadd", "z", "xx", "ch", "10", "a", "20", "absent"}) == integer(1));
  }
  SECTION("INCR returns the new score, or nil when an option stops it") {
    CHECK(s.run({"ZADD", "z", "INCR", "1.5", "a"}) == bulk("2.5"));
    CHECK(s.run3({"ZADD", "z", "INCR", "1", "fresh"}) == dbl("1"));
    CHECK(s.run({"ZADD", "z", "INCR", "NX", "1", "a"}) == kNil);
    CHECK(s.run({"ZADD", "z", "XX", "INCR", "1", "absent"}) == kNil);
    CHECK(s.run({"ZADD", "nokey", "XX", "INCR", "1", "absent"}) == kNil);
    CHECK(s.run({"ZADD", "z", "GT", "INCR", "-1", "a"}) == kNil);
    CHECK(s.run({"ZADD", "z", "LT", "INCR", "100", "a"}) == kNil);
    CHECK(s.run({"ZADD", "z", "GT", "INCR", "0", "a"}) == kNil);
    CHECK(s.run({"ZADD", "z", "INCR", "0", "a"}) == bulk("2.5"));
    CHECK(s.run({"ZSCORE", "z", "a"}) == bulk("2.5"));
  }
  SECTION("option conflicts and bad input get Redis's errors, changing nothing") {
    CHECK(s.run({"ZADD", "z", "NX", "XX", "1", "a"}) ==
          error("ERR XX and NX options at the same time are not compatible"));
    const std::string gtlt =
        error("ERR GT, LT, and/or NX options at the same time are not compatible");
    CHECK(s.run({"ZADD", "z", "GT", "LT", "1", "a"}) == gtlt);
    CHECK(s.run({"ZADD", "z", "GT", "NX", "1", "a"}) == gtlt);
    CHECK(s.run({"ZADD", "z", "LT", "NX", "1", "a"}) == gtlt);
    CHECK(s.run({"ZADD", "z", "INCR", "1", "a", "2", "b"}) ==
          error("ERR INCR option supports a single increment-element pair"));
    CHECK(s.run({"ZADD", "z", "nan", "a"}) == error("ERR value is not a valid float"));
    CHECK(s.run({"ZADD", "z", "1", "a", "x", "b"}) == error("ERR value is not a valid float"));
    CHECK(s.run({"ZADD", "z", "1e400", "a"}) == error("ERR value is not a valid float"));
    CHECK(s.run({"ZADD", "z", "1e-400", "a"}) == error("ERR value is not a valid float"));
    CHECK(s.run({"ZINCRBY", "z", "1e400", "a"}) == error("ERR value is not a valid float"));
    CHECK(s.run({"ZADD", "z", "1", "a", "2"}) == kSyntax);
    CHECK(s.run({"ZADD", "z", "CH", "1"}) == kSyntax);
    CHECK(s.run({"ZADD", "z", "1"}) == error("ERR wrong number of arguments for 'zadd' command"));
    CHECK(s.run({"ZADD", "z", "inf", "x"}) == integer(1));
    CHECK(s.run({"ZADD", "z", "INCR", "-inf", "x"}) ==
          error("ERR resulting score is not a number (NaN)"));
    CHECK(s.run({"ZINCRBY", "z", "-inf", "x"}) ==
          error("ERR resulting score is not a number (NaN)"));
    CHECK(s.run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}) ==
          arr({bulk("a"), bulk("1"), bulk("b"), bulk("2"), bulk("c"), bulk("3"), bulk("d"),
               bulk("4"), bulk("x"), bulk("inf")}));
  }
}

TEST_CASE("ZINCRBY creates, increments and parses like Redis", "[zset]") {
  TestServer s;
  CHECK(s.run({"ZINCRBY", "z", "2", "a"}) == bulk("2"));
  CHECK(s.run({"ZINCRBY", "z", "0.1", "a"}) == bulk("2.1000000000000001"));
  CHECK(s.run3({"ZINCRBY", "z", "-2.1", "a"}) == dbl("0"));
  CHECK(s.run({"ZINCRBY", "z", "x", "a"}) == error("ERR value is not a valid float"));
  CHECK(s.run({"ZINCRBY", "z", "1"}) ==
        error("ERR wrong number of arguments for 'zincrby' command"));
}

TEST_CASE("WRONGTYPE both ways between sorted sets and other types", "[zset]") {
  TestServer s;
  REQUIRE(s.run({"SET", "str", "x"}) == kOk);
  REQUIRE(s.run({"XADD", "stream", "1-1", "f", "v"}) == bulk("1-1"));
  seed(s);
  for (const char* key : {"str", "stream"}) {
    INFO(key);
    CHECK(s.run({"ZADD", key, "1", "a"}) == kWrongType);
    CHECK(s.run({"ZINCRBY", key, "1", "a"}) == kWrongType);
    CHECK(s.run({"ZREM", key, "a"}) == kWrongType);
    CHECK(s.run({"ZSCORE", key, "a"}) == kWrongType);
    CHECK(s.run({"ZMSCORE", key, "a"}) == kWrongType);
    CHECK(s.run({"ZCARD", key}) == kWrongType);
    CHECK(s.run({"ZCOUNT", key, "1", "2"}) == kWrongType);
    CHECK(s.run({"ZLEXCOUNT", key, "-", "+"}) == kWrongType);
    CHECK(s.run({"ZRANGE", key, "0", "1"}) == kWrongType);
    CHECK(s.run({"ZRANGEBYSCORE", key, "1", "2"}) == kWrongType);
    CHECK(s.run({"ZREVRANGEBYSCORE", key, "2", "1"}) == kWrongType);
    CHECK(s.run({"ZRANGEBYLEX", key, "-", "+"}) == kWrongType);
    CHECK(s.run({"ZREVRANGE", key, "0", "1"}) == kWrongType);
    CHECK(s.run({"ZRANK", key, "a"}) == kWrongType);
    CHECK(s.run({"ZREVRANK", key, "a"}) == kWrongType);
    CHECK(s.run({"ZPOPMIN", key}) == kWrongType);
    CHECK(s.run({"ZPOPMAX", key, "0"}) == kWrongType);
    CHECK(s.run({"ZREMRANGEBYSCORE", key, "1", "2"}) == kWrongType);
    CHECK(s.run({"ZREMRANGEBYRANK", key, "0", "1"}) == kWrongType);
    CHECK(s.run({"ZSCAN", key, "0"}) == kWrongType);
  }
  CHECK(s.run({"GET", "z"}) == kWrongType);
  CHECK(s.run({"INCR", "z"}) == kWrongType);
  CHECK(s.run({"APPEND", "z", "x"}) == kWrongType);
  CHECK(s.run({"XADD", "z", "*", "f", "v"}) == kWrongType);
  CHECK(s.run({"XLEN", "z"}) == kWrongType);
  CHECK(s.run({"ZCARD", "z"}) == integer(4));
}

TEST_CASE("ZREM removes members and deletes the emptied key", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZREM", "z", "a", "a", "nope"}) == integer(1));
  CHECK(s.run({"ZREM", "nokey", "a"}) == integer(0));
  CHECK(s.run({"ZREM", "z"}) == error("ERR wrong number of arguments for 'zrem' command"));
  CHECK(s.run({"ZREM", "z", "b", "c", "d"}) == integer(3));
  CHECK(s.run({"EXISTS", "z"}) == integer(0));
  CHECK(s.run({"TYPE", "z"}) == "+none\r\n");
}

TEST_CASE("ZMSCORE, ZCARD, ZCOUNT and ZLEXCOUNT", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZMSCORE", "z", "a", "nope", "d"}) == arr({bulk("1"), kNil, bulk("4")}));
  CHECK(s.run3({"ZMSCORE", "z", "a", "nope"}) == "*2\r\n" + dbl("1") + kNull3);
  CHECK(s.run({"ZMSCORE", "nokey", "a", "b"}) == arr({kNil, kNil}));
  CHECK(s.run({"ZCARD", "nokey"}) == integer(0));
  CHECK(s.run({"ZCOUNT", "z", "2", "3"}) == integer(2));
  CHECK(s.run({"ZCOUNT", "z", "(2", "+inf"}) == integer(2));
  CHECK(s.run({"ZCOUNT", "z", "-inf", "(1"}) == integer(0));
  CHECK(s.run({"ZCOUNT", "z", "", "1"}) == integer(1));  // strtod reads "" as 0, as in Redis
  CHECK(s.run({"ZCOUNT", "nokey", "a", "1"}) == error("ERR min or max is not a float"));
  CHECK(s.run({"ZCOUNT", "z", "nan", "1"}) == error("ERR min or max is not a float"));
  CHECK(s.run({"ZCOUNT", "z", "1", "(nan"}) == error("ERR min or max is not a float"));
  CHECK(s.run({"ZCOUNT", "nokey", "1", "2"}) == integer(0));
  CHECK(s.run({"ZLEXCOUNT", "z", "-", "+"}) == integer(4));
  CHECK(s.run({"ZLEXCOUNT", "z", "[b", "(d"}) == integer(2));
  CHECK(s.run({"ZLEXCOUNT", "z", "b", "d"}) == error("ERR min or max not valid string range item"));
}

TEST_CASE("ZRANGE by rank, score and lex, reversed, limited, with scores", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZRANGE", "z", "0", "-1"}) == arr({bulk("a"), bulk("b"), bulk("c"), bulk("d")}));
  CHECK(s.run({"ZRANGE", "z", "-2", "100"}) == arr({bulk("c"), bulk("d")}));
  CHECK(s.run({"ZRANGE", "z", "3", "1"}) == kEmpty);
  CHECK(s.run({"ZRANGE", "z", "5", "10"}) == kEmpty);
  CHECK(s.run({"ZRANGE", "z", "0", "1", "REV", "WITHSCORES"}) ==
        arr({bulk("d"), bulk("4"), bulk("c"), bulk("3")}));
  CHECK(s.run3({"ZRANGE", "z", "0", "1", "WITHSCORES"}) ==
        "*2\r\n*2\r\n" + bulk("a") + dbl("1") + "*2\r\n" + bulk("b") + dbl("2"));
  CHECK(s.run({"ZREVRANGE", "z", "0", "0", "WITHSCORES"}) == arr({bulk("d"), bulk("4")}));
  CHECK(s.run({"ZRANGE", "z", "(1", "3", "BYSCORE"}) == arr({bulk("b"), bulk("c")}));
  CHECK(s.run({"ZRANGE", "z", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "1", "2"}) ==
        arr({bulk("c"), bulk("b")}));
  CHECK(s.run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "1", "2"}) ==
        arr({bulk("b"), bulk("2"), bulk("c"), bulk("3")}));
  CHECK(s.run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "2"}) == kEmpty);
  CHECK(s.run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "-1"}) ==
        arr({bulk("b"), bulk("c"), bulk("d")}));
  CHECK(s.run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "4", "1"}) == kEmpty);
  CHECK(s.run({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "0", "0"}) == kEmpty);
  CHECK(s.run({"ZRANGEBYSCORE", "z", "3", "1"}) == kEmpty);
  CHECK(s.run({"ZREVRANGEBYSCORE", "z", "3", "(1", "WITHSCORES"}) ==
        arr({bulk("c"), bulk("3"), bulk("b"), bulk("2")}));
  CHECK(s.run({"ZRANGE", "nokey", "0", "-1"}) == kEmpty);
  REQUIRE(s.run({"ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"}) == integer(4));
  CHECK(s.run({"ZRANGEBYLEX", "lex", "[b", "+"}) == arr({bulk("b"), bulk("c"), bulk("d")}));
  CHECK(s.run({"ZRANGEBYLEX", "lex", "-", "+", "LIMIT", "1", "1"}) == arr({bulk("b")}));
  CHECK(s.run({"ZREVRANGEBYLEX", "lex", "(d", "-"}) == arr({bulk("c"), bulk("b"), bulk("a")}));
  CHECK(s.run({"ZRANGE", "lex", "+", "[c", "BYLEX", "REV"}) == arr({bulk("d"), bulk("c")}));
  CHECK(s.run({"ZRANGEBYLEX", "lex", "[a", "(b"}) == arr({bulk("a")}));
  SECTION("options and conflicts are refused with Redis's texts") {
    CHECK(s.run({"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) ==
          error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE "
                "or BYLEX"));
    CHECK(s.run({"ZREVRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) ==
          error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE "
                "or BYLEX"));
    CHECK(s.run({"ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"}) ==
          arr({bulk("a"), bulk("b"), bulk("c"), bulk("d")}));
    CHECK(s.run({"ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"}) ==
          error("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    CHECK(s.run({"ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"}) == kSyntax);
    CHECK(s.run({"ZRANGE", "z", "0", "1", "REV", "REV"}) == kSyntax);
    CHECK(s.run({"ZRANGEBYSCORE", "z", "1", "2", "REV"}) == kSyntax);
    CHECK(s.run({"ZRANGEBYSCORE", "z", "1", "2", "LIMIT", "0"}) == kSyntax);
    CHECK(s.run({"ZRANGEBYSCORE", "z", "1", "2", "LIMIT", "x", "1"}) ==
          error("ERR value is not an integer or out of range"));
    CHECK(s.run({"ZRANGE", "z", "x", "1"}) == error("ERR value is not an integer or out of range"));
    CHECK(s.run({"ZRANGE", "z", "(1", "5", "BYLEX"}) ==
          error("ERR min or max not valid string range item"));
    CHECK(s.run({"ZRANGEBYSCORE", "nokey", "a", "1"}) == error("ERR min or max is not a float"));
    CHECK(s.run({"ZRANGE", "z", "0"}) ==
          error("ERR wrong number of arguments for 'zrange' command"));
  }
}

TEST_CASE("ZRANK and ZREVRANK, with WITHSCORE as Redis 7.2", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZRANK", "z", "a"}) == integer(0));
  CHECK(s.run({"ZREVRANK", "z", "a"}) == integer(3));
  CHECK(s.run({"ZRANK", "z", "nope"}) == kNil);
  CHECK(s.run3({"ZRANK", "nokey", "a"}) == kNull3);
  CHECK(s.run({"ZRANK", "z", "c", "WITHSCORE"}) == arr({integer(2), bulk("3")}));
  CHECK(s.run3({"ZREVRANK", "z", "c", "withscore"}) == "*2\r\n" + integer(1) + dbl("3"));
  CHECK(s.run({"ZRANK", "z", "nope", "WITHSCORE"}) == kNilArray);
  CHECK(s.run({"ZRANK", "z", "a", "BOGUS"}) == kSyntax);
  CHECK(s.run({"ZRANK", "z", "a", "WITHSCORE", "x"}) ==
        error("ERR wrong number of arguments for 'zrank' command"));
}

TEST_CASE("ZPOPMIN and ZPOPMAX pop by score, reply flat or nested as Redis 7", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZPOPMIN", "z"}) == arr({bulk("a"), bulk("1")}));
  CHECK(s.run3({"ZPOPMAX", "z"}) == "*2\r\n" + bulk("d") + dbl("4"));
  CHECK(s.run3({"ZPOPMIN", "z", "1"}) == "*1\r\n*2\r\n" + bulk("b") + dbl("2"));
  CHECK(s.run({"ZPOPMIN", "z", "0"}) == kEmpty);
  CHECK(s.run({"ZPOPMIN", "z", "-1"}) == error("ERR value is out of range, must be positive"));
  CHECK(s.run({"ZPOPMIN", "z", "x"}) == error("ERR value is out of range, must be positive"));
  CHECK(s.run({"ZPOPMIN", "z", "1", "2"}) == kSyntax);
  CHECK(s.run({"ZPOPMAX", "z", "10"}) == arr({bulk("c"), bulk("3")}));
  CHECK(s.run({"EXISTS", "z"}) == integer(0));
  CHECK(s.run({"ZPOPMIN", "z"}) == kEmpty);
  CHECK(s.run3({"ZPOPMIN", "z", "3"}) == kEmpty);
}

TEST_CASE("ZREMRANGEBYSCORE, ZREMRANGEBYRANK and ZREMRANGEBYLEX", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZREMRANGEBYSCORE", "z", "(1", "3"}) == integer(2));
  CHECK(s.run({"ZRANGE", "z", "0", "-1"}) == arr({bulk("a"), bulk("d")}));
  CHECK(s.run({"ZREMRANGEBYSCORE", "z", "a", "1"}) == error("ERR min or max is not a float"));
  CHECK(s.run({"ZREMRANGEBYSCORE", "nokey", "a", "1"}) == error("ERR min or max is not a float"));
  CHECK(s.run({"ZREMRANGEBYSCORE", "nokey", "1", "2"}) == integer(0));
  CHECK(s.run({"ZREMRANGEBYRANK", "z", "x", "1"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"ZREMRANGEBYRANK", "z", "5", "9"}) == integer(0));
  CHECK(s.run({"ZREMRANGEBYRANK", "z", "-1", "-1"}) == integer(1));
  CHECK(s.run({"ZRANGE", "z", "0", "-1"}) == arr({bulk("a")}));
  CHECK(s.run({"ZREMRANGEBYRANK", "z", "0", "-1"}) == integer(1));
  CHECK(s.run({"EXISTS", "z"}) == integer(0));
  REQUIRE(s.run({"ZADD", "lex", "0", "a", "0", "b", "0", "c"}) == integer(3));
  CHECK(s.run({"ZREMRANGEBYLEX", "lex", "(a", "+"}) == integer(2));
  CHECK(s.run({"ZRANGE", "lex", "0", "-1"}) == arr({bulk("a")}));
}

TEST_CASE("ZSCAN returns a small zset whole and walks a large one with a cursor", "[zset]") {
  TestServer s;
  seed(s);
  CHECK(s.run({"ZSCAN", "z", "0"}) ==
        arr({bulk("0"), arr({bulk("a"), bulk("1"), bulk("b"), bulk("2"), bulk("c"), bulk("3"),
                             bulk("d"), bulk("4")})}));
  CHECK(s.run3({"ZSCAN", "z", "0", "MATCH", "[bc]", "COUNT", "1"}) ==
        arr({bulk("0"), arr({bulk("b"), bulk("2"), bulk("c"), bulk("3")})}));
  CHECK(s.run({"ZSCAN", "nokey", "0", "COUNT", "0"}) == arr({bulk("0"), kEmpty}));
  CHECK(s.run({"ZSCAN", "z", "x"}) == error("ERR invalid cursor"));
  CHECK(s.run({"ZSCAN", "z", "0", "COUNT", "0"}) == kSyntax);
  CHECK(s.run({"ZSCAN", "z", "0", "COUNT", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"ZSCAN", "z", "0", "MATCH"}) == kSyntax);
  CHECK(s.run({"ZSCAN", "z", "0", "NOVALUES"}) == kSyntax);
  std::vector<std::string> add{"ZADD", "big"};
  for (int i = 0; i < 500; ++i) {
    add.push_back(std::to_string(i) + ".5");
    add.push_back("m" + std::to_string(i));
  }
  REQUIRE(s.run(add) == integer(500));
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    auto r = parse_resp(s.run({"ZSCAN", "big", cursor, "COUNT", "20", "MATCH", "m*"}));
    cursor = r.items.at(0).str;
    const auto& items = r.items.at(1).items;
    REQUIRE(items.size() % 2 == 0);
    for (size_t i = 0; i < items.size(); i += 2) {
      CHECK(items[i + 1].str == items[i].str.substr(1) + ".5");
      seen.insert(items[i].str);
    }
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(cursor == "0");
  CHECK(calls > 1);
  CHECK(seen.size() == 500);
}

TEST_CASE("Sorted-set writes publish Redis's keyspace events", "[zset]") {
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Ezg"}) == kOk);
  s.run3({"PSUBSCRIBE", "__keyevent@0__:*"});
  s.pushes();
  s.run3({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"});
  s.run3({"ZADD", "z", "NX", "1", "a"});  // no change, no event
  s.run3({"ZADD", "z", "INCR", "1", "a"});
  s.run3({"ZINCRBY", "z", "1", "a"});
  s.run3({"ZREM", "z", "nope"});  // nothing removed, no event
  s.run3({"ZREM", "z", "a"});
  s.run3({"ZPOPMIN", "z"});
  s.run3({"ZPOPMAX", "z"});
  s.run3({"ZREMRANGEBYSCORE", "z", "100", "200"});  // nothing removed, no event
  s.run3({"ZREMRANGEBYSCORE", "z", "3", "3"});
  s.run3({"ZREMRANGEBYRANK", "z", "0", "-1"});
  std::vector<std::string> events;
  for (const auto& m : s.pushes()) {
    events.push_back(m.channel.substr(m.channel.find(':') + 1) + "|" + m.payload);
  }
  CHECK(events == std::vector<std::string>{"zadd|z", "zincr|z", "zincr|z", "zrem|z", "zpopmin|z",
                                           "zpopmax|z", "zremrangebyscore|z", "zremrangebyrank|z",
                                           "del|z"});
}

namespace {


std::string snapshot(TestServer& s, const std::string& key) {
  return s.run({"ZRANGE", key, "0", "-1", "WITHSCORES"}) + s.run({"TYPE", key}) +
         s.run({"PTTL", key});
}

}  // namespace

TEST_CASE("The effects sorted-set writes log replay to the same sets", "[zset]") {
  TestServer a;
  hotkv::test::LogFile logfile(a);

  seed(a);
  REQUIRE(a.run({"ZADD", "z", "0.1", "e", "inf", "f", "-inf", "g", "2.5", "a"}) == integer(3));
  REQUIRE(a.run({"ZADD", "z", "GT", "CH", "0", "a", "9", "b"}) == integer(1));
  REQUIRE(a.run({"ZINCRBY", "z", "0.2", "e"}) != "");
  REQUIRE(a.run({"ZADD", "z", "INCR", "-3.25", "c"}) != "");
  REQUIRE(a.run({"ZREM", "z", "d", "nope"}) == integer(1));
  REQUIRE(a.run({"ZPOPMIN", "z"}) != "");
  REQUIRE(a.run({"ZPOPMAX", "z", "1"}) != "");
  REQUIRE(a.run({"PEXPIRE", "z", "100000"}) == integer(1));
  std::vector<std::string> add{"ZADD", "big"};
  for (int i = 0; i < 300; ++i) {
    add.push_back(std::to_string(i * 0.7));
    add.push_back("m" + std::to_string(i));
  }
  REQUIRE(a.run(add) == integer(300));
  REQUIRE(a.run({"ZREMRANGEBYSCORE", "big", "(10", "20"}) != integer(0));
  REQUIRE(a.run({"ZREMRANGEBYRANK", "big", "-10", "-1"}) == integer(10));
  REQUIRE(a.run({"ZADD", "gone", "1", "x"}) == integer(1));
  REQUIRE(a.run({"ZPOPMIN", "gone"}) != "");
  REQUIRE(a.run({"ZADD", "copy-src", "1", "x", "2", "y"}) == integer(2));
  REQUIRE(a.run({"COPY", "copy-src", "copy-dst"}) == integer(1));
  REQUIRE(a.run({"RENAME", "copy-src", "renamed"}) == kOk);
  std::string log = logfile.contents();
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key : {"z", "big", "gone", "copy-src", "copy-dst", "renamed"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"OBJECT", "ENCODING", "big"}) == bulk("skiplist"));
  CHECK(b.run({"EXISTS", "gone"}) == integer(0));
}

TEST_CASE("encode_value rebuilds a sorted set in bounded records", "[zset]") {
  TestServer a;
  std::vector<std::string> add{"ZADD", "big"};
  for (int i = 0; i < 3000; ++i) {
    add.push_back(std::to_string(i % 97) + "." + std::to_string(i % 7));
    add.push_back("member:" + std::to_string(i));
  }
  REQUIRE(a.run(add) == integer(3000));
  REQUIRE(a.run({"PEXPIRE", "big", "5000"}) == integer(1));
  size_t cuts = 0;
  std::string buf = hotkv::test::encode_key(a, "big", &cuts);
  CHECK(cuts >= 2);
  TestServer b;
  b.advance(a.now() - b.now());
  replay(buf, b);
  CHECK(snapshot(b, "big") == snapshot(a, "big"));
}

TEST_CASE("apply_zset_op rejects malformed effects and skips other types", "[zset]") {
  TestServer s;
  REQUIRE(s.run({"SET", "str", "x"}) == kOk);
  auto op = [&](hotkv::OpCode code, std::vector<std::string> args, std::string key) {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  CHECK_FALSE(op(hotkv::OpCode::kZSetAdd, {"1"}, "z"));
  CHECK_FALSE(op(hotkv::OpCode::kZSetAdd, {"nan", "a"}, "z"));
  CHECK_FALSE(op(hotkv::OpCode::kZSetAdd, {"1", "a", "x", "b"}, "z"));
  CHECK(s.run({"EXISTS", "z"}) == integer(0));
  CHECK_FALSE(op(hotkv::OpCode::kZSetRem, {}, "z"));
  CHECK(op(hotkv::OpCode::kZSetRem, {"a"}, "z"));
  CHECK(op(hotkv::OpCode::kZSetAdd, {"1", "a"}, "str"));
  CHECK(s.run({"GET", "str"}) == bulk("x"));
  CHECK(op(hotkv::OpCode::kZSetAdd, {"-inf", "a", "2", "b"}, "z"));
  CHECK(s.run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}) ==
        arr({bulk("a"), bulk("-inf"), bulk("b"), bulk("2")}));
  CHECK_FALSE(op(static_cast<hotkv::OpCode>(60), {"a"}, "z"));
}
