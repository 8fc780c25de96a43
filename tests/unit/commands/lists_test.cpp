// List commands through the real table and shard, checked against redis-server 7.0's replies,
// error texts and keyspace events: pushes and pops (with counts, RESP2 and RESP3 nulls), ranges
// and indexes, LSET/LINSERT/LREM/LTRIM, LPOS's options, LMOVE/LMPOP with keys on different
// shards, the blocking family outside a connection (answers as a timeout), and the config that
// sizes the nodes.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "hotkv/commands/table.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kNil;
using hotkv::test::kOk;
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::TestServer;

namespace {

const std::string kWrong =
    error("WRONGTYPE Operation against a key holding the wrong kind of value");
const std::string kNullArray = "*-1\r\n";

std::string bulks(std::initializer_list<const char*> items) {
  std::vector<std::string> encoded;
  for (const char* i : items) {
    encoded.push_back(bulk(i));
  }
  std::string out = "*" + std::to_string(encoded.size()) + "\r\n";
  for (const auto& e : encoded) {
    out += e;
  }
  return out;
}

}  // namespace

TEST_CASE("pushes and pops keep a list and delete it once empty", "[lists]") {
  TestServer s;
  CHECK(s.run({"RPUSH", "l", "a", "b"}) == integer(2));
  CHECK(s.run({"LPUSH", "l", "y", "z"}) == integer(4));  // z y a b
  CHECK(s.run({"LPUSHX", "missing", "a"}) == integer(0));
  CHECK(s.run({"RPUSHX", "l", "c"}) == integer(5));
  CHECK(s.run({"TYPE", "l"}) == "+list\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "l"}) == bulk("quicklist"));
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == bulks({"z", "y", "a", "b", "c"}));
  CHECK(s.run({"LPOP", "l"}) == bulk("z"));
  CHECK(s.run({"RPOP", "l", "2"}) == bulks({"c", "b"}));
  CHECK(s.run({"LPOP", "l", "0"}) == "*0\r\n");
  CHECK(s.run({"LPOP", "missing"}) == kNil);
  CHECK(s.run3({"LPOP", "missing"}) == "_\r\n");
  CHECK(s.run({"LPOP", "missing", "0"}) == kNullArray);
  CHECK(s.run3({"RPOP", "missing", "2"}) == "_\r\n");
  CHECK(s.run({"LPOP", "l", "-1"}) == error("ERR value is out of range, must be positive"));
  CHECK(s.run({"LPOP", "l", "1", "2"}) ==
        error("ERR wrong number of arguments for 'lpop' command"));
  CHECK(s.run({"RPOP", "l", "10"}) == bulks({"a", "y"}));
  CHECK(s.run({"EXISTS", "l"}) == integer(0));
  CHECK(s.run({"LLEN", "l"}) == integer(0));
}

TEST_CASE("LRANGE LINDEX LSET LINSERT LREM LTRIM follow Redis's index rules", "[lists]") {
  TestServer s;
  REQUIRE(s.run({"RPUSH", "l", "a", "b", "c", "b", "a"}) == integer(5));
  CHECK(s.run({"LRANGE", "l", "-2", "100"}) == bulks({"b", "a"}));
  CHECK(s.run({"LRANGE", "l", "3", "1"}) == "*0\r\n");
  CHECK(s.run({"LRANGE", "l", "x", "1"}) == error("ERR value is not an integer or out of range"));
  CHECK(s.run({"LINDEX", "l", "-1"}) == bulk("a"));
  CHECK(s.run({"LINDEX", "l", "5"}) == kNil);
  CHECK(s.run({"LSET", "l", "-5", "A"}) == kOk);
  CHECK(s.run({"LSET", "l", "5", "x"}) == error("ERR index out of range"));
  CHECK(s.run({"LSET", "none", "0", "x"}) == error("ERR no such key"));
  CHECK(s.run({"LINSERT", "l", "before", "b", "b0"}) == integer(6));
  CHECK(s.run({"LINSERT", "l", "AFTER", "zz", "x"}) == integer(-1));
  CHECK(s.run({"LINSERT", "none", "AFTER", "a", "x"}) == integer(0));
  CHECK(s.run({"LINSERT", "l", "IN", "a", "x"}) == error("ERR syntax error"));
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == bulks({"A", "b0", "b", "c", "b", "a"}));
  CHECK(s.run({"LREM", "l", "-1", "b"}) == integer(1));
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == bulks({"A", "b0", "b", "c", "a"}));
  CHECK(s.run({"LTRIM", "l", "1", "-2"}) == kOk);
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == bulks({"b0", "b", "c"}));
  CHECK(s.run({"LTRIM", "l", "2", "1"}) == kOk);
  CHECK(s.run({"EXISTS", "l"}) == integer(0));
}

TEST_CASE("LPOS finds matches with RANK, COUNT and MAXLEN", "[lists]") {
  TestServer s;
  REQUIRE(s.run({"RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"}) == integer(8));
  CHECK(s.run({"LPOS", "l", "c"}) == integer(2));
  CHECK(s.run({"LPOS", "l", "c", "RANK", "2"}) == integer(6));
  CHECK(s.run({"LPOS", "l", "c", "RANK", "-1"}) == integer(7));
  CHECK(s.run({"LPOS", "l", "c", "COUNT", "0"}) == arr({integer(2), integer(6), integer(7)}));
  CHECK(s.run({"LPOS", "l", "c", "RANK", "-1", "COUNT", "2"}) == arr({integer(7), integer(6)}));
  CHECK(s.run({"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"}) == arr({integer(2), integer(6)}));
  CHECK(s.run({"LPOS", "l", "x"}) == kNil);
  CHECK(s.run({"LPOS", "l", "x", "COUNT", "2"}) == "*0\r\n");
  CHECK(s.run({"LPOS", "none", "x", "COUNT", "2"}) == "*0\r\n");
  CHECK(s.run({"LPOS", "l", "c", "RANK", "0"}).rfind("-ERR RANK can't be zero", 0) == 0);
  CHECK(s.run({"LPOS", "l", "c", "MAXLEN", "-1"}) == error("ERR MAXLEN can't be negative"));
  CHECK(s.run({"LPOS", "l", "c", "COUNT"}) == error("ERR syntax error"));
}

TEST_CASE("LMOVE RPOPLPUSH and LMPOP work with keys on different shards", "[lists]") {
  TestServer s(4);
  auto k = keys_on_distinct_shards(s, "lk", 3);
  REQUIRE(s.run({"RPUSH", k[0], "1", "2", "3"}) == integer(3));
  CHECK(s.run({"LMOVE", k[0], k[1], "LEFT", "RIGHT"}) == bulk("1"));
  CHECK(s.run({"RPOPLPUSH", k[0], k[1]}) == bulk("3"));
  CHECK(s.run({"LRANGE", k[1], "0", "-1"}) == bulks({"3", "1"}));
  CHECK(s.run({"LMOVE", k[2], k[1], "LEFT", "LEFT"}) == kNil);
  REQUIRE(s.run({"SET", k[2], "x"}) == kOk);
  CHECK(s.run({"LMOVE", k[0], k[2], "LEFT", "LEFT"}) == kWrong);
  CHECK(s.run({"LRANGE", k[0], "0", "-1"}) == bulks({"2"}));  // nothing moved
  CHECK(s.run({"LMOVE", k[0], k[1], "UP", "LEFT"}) == error("ERR syntax error"));
  CHECK(s.run({"LMPOP", "2", "missing", k[1], "LEFT", "COUNT", "5"}) ==
        "*2\r\n" + bulk(k[1]) + bulks({"3", "1"}));
  CHECK(s.run({"LMPOP", "1", k[1], "LEFT"}) == kNullArray);
  CHECK(s.run({"LMPOP", "0", k[0], "LEFT"}) == error("ERR numkeys should be greater than 0"));
  CHECK(s.run({"LMPOP", "1", k[0], "LEFT", "COUNT", "0"}) ==
        error("ERR count should be greater than 0"));
}

TEST_CASE("blocking pops answer at once where a client cannot block", "[lists]") {
  TestServer s;
  REQUIRE(s.run({"RPUSH", "l", "a", "b"}) == integer(2));
  CHECK(s.run({"BLPOP", "none", "l", "0"}) == bulks({"l", "a"}));
  CHECK(s.run({"BRPOP", "l", "0.5"}) == bulks({"l", "b"}));
  CHECK(s.run({"BLPOP", "l", "0"}) == kNullArray);
  CHECK(s.run({"BLMOVE", "l", "m", "LEFT", "LEFT", "0"}) == kNil);
  CHECK(s.run({"BLPOP", "l", "abc"}) == error("ERR timeout is not a float or out of range"));
  CHECK(s.run({"BLPOP", "l", "-0.5"}) == error("ERR timeout is negative"));
  CHECK(s.run({"SET", "str", "x"}) == kOk);
  CHECK(s.run({"BLPOP", "str", "0"}) == kWrong);
  CHECK(s.run({"LPUSH", "str", "x"}) == kWrong);
}

TEST_CASE("list-max-listpack-size and its ziplist alias are one setting", "[lists]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "SET", "list-max-ziplist-size", "4"}) == kOk);
  CHECK(s.run({"CONFIG", "GET", "list-max-listpack-size"}) ==
        arr({bulk("list-max-listpack-size"), bulk("4")}));
  std::vector<std::string> cmd{"RPUSH", "l"};
  for (int i = 0; i < 100; ++i) {
    cmd.push_back(std::to_string(i));
  }
  REQUIRE(s.run(cmd) == integer(100));
  CHECK(s.run({"LINDEX", "l", "57"}) == bulk("57"));
  CHECK(s.run({"CONFIG", "SET", "list-max-listpack-size", "-2"}) == kOk);
  CHECK(s.run({"CONFIG", "SET", "list-compress-depth", "1"}) == kOk);
  CHECK(s.run({"CONFIG", "SET", "list-compress-depth", "-1"}).rfind("-ERR", 0) == 0);
}
