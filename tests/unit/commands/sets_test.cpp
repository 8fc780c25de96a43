// Set commands through the real table and shard, checked against redis-server 7.0's replies,
// error texts and keyspace events: single-key commands, SPOP/SRANDMEMBER counts, SSCAN, SMOVE,
// the set algebra and its *STORE forms, SINTERCARD, WRONGTYPE both ways, RESP3 set replies, and
// the multi-key commands with their keys on different shards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "hotkv/commands/set_helpers.hpp"
#include "hotkv/commands/table.hpp"
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
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::TestServer;

namespace {

const std::string kWrong =
    error("WRONGTYPE Operation against a key holding the wrong kind of value");

// The strings of an array/set reply, sorted (set replies have no defined order).
std::vector<std::string> sorted(const std::string& reply) {
  auto r = parse_resp(reply);
  std::vector<std::string> out;
  for (const auto& item : r.items) {
    out.push_back(item.str);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using Strings = std::vector<std::string>;

// A RESP3 set of already-encoded items.
std::string set3(std::initializer_list<std::string> items) {
  std::string out = "~" + std::to_string(items.size()) + "\r\n";
  for (const auto& i : items) {
    out += i;
  }
  return out;
}

}  // namespace

TEST_CASE("SADD SREM SCARD SISMEMBER SMISMEMBER keep a set and delete it once empty", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "s", "1", "2", "3", "2"}) == integer(3));
  CHECK(s.run({"SADD", "s", "3", "4"}) == integer(1));
  CHECK(s.run({"SCARD", "s"}) == integer(4));
  CHECK(s.run({"SCARD", "missing"}) == integer(0));
  CHECK(s.run({"TYPE", "s"}) == "+set\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("intset"));
  CHECK(s.run({"SISMEMBER", "s", "4"}) == integer(1));
  CHECK(s.run({"SISMEMBER", "s", "5"}) == integer(0));
  CHECK(s.run({"SISMEMBER", "missing", "5"}) == integer(0));
  CHECK(s.run({"SMISMEMBER", "s", "1", "9", "4"}) == arr({integer(1), integer(0), integer(1)}));
  CHECK(s.run({"SMISMEMBER", "missing", "1", "2"}) == arr({integer(0), integer(0)}));
  CHECK(s.run({"SREM", "s", "1", "9", "1"}) == integer(1));
  CHECK(s.run({"SREM", "missing", "1"}) == integer(0));
  CHECK(s.run({"SADD", "s", "x"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("hashtable"));
  CHECK(s.run({"SREM", "s", "x"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == bulk("hashtable"));
  CHECK(s.run({"SREM", "s", "2", "3", "4", "5"}) == integer(3));
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
  CHECK(s.run({"SADD", "s"}) == error("ERR wrong number of arguments for 'sadd' command"));
  CHECK(s.run({"SREM", "s"}) == error("ERR wrong number of arguments for 'srem' command"));
  CHECK(s.run({"SISMEMBER", "s"}) ==
        error("ERR wrong number of arguments for 'sismember' command"));
  CHECK(s.run({"SMISMEMBER", "s"}) ==
        error("ERR wrong number of arguments for 'smismember' command"));
  CHECK(s.run({"SCARD"}) == error("ERR wrong number of arguments for 'scard' command"));
}

TEST_CASE("a set converts to hashtable past 512 integers, as Redis 7.0 reports", "[sets]") {
  TestServer s;
  std::vector<std::string> cmd = {"SADD", "big"};
  for (int i = 0; i < 512; ++i) {
    cmd.push_back(std::to_string(i));
  }
  CHECK(s.run(cmd) == integer(512));
  CHECK(s.run({"OBJECT", "ENCODING", "big"}) == bulk("intset"));
  CHECK(s.run({"SADD", "big", "512"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "big"}) == bulk("hashtable"));
  CHECK(s.run({"SADD", "str", "abc"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "str"}) == bulk("hashtable"));
}

TEST_CASE("SMEMBERS replies a set in RESP3 and an array in RESP2", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "s", "3", "1", "2"}) == integer(3));
  CHECK(s.run({"SMEMBERS", "s"}) == arr({bulk("1"), bulk("2"), bulk("3")}));
  CHECK(s.run3({"SMEMBERS", "s"}) == set3({bulk("1"), bulk("2"), bulk("3")}));
  CHECK(s.run({"SMEMBERS", "missing"}) == "*0\r\n");
  CHECK(s.run3({"SMEMBERS", "missing"}) == "~0\r\n");
  CHECK(s.run({"SADD", "h", "a", "b", "c"}) == integer(3));
  CHECK(sorted(s.run({"SMEMBERS", "h"})) == Strings{"a", "b", "c"});
  CHECK(s.run3({"SMEMBERS", "h"}).substr(0, 4) == "~3\r\n");
}

TEST_CASE("SPOP removes random members, logs them and deletes an emptied set", "[sets]") {
  TestServer s;
  CHECK(s.run({"SPOP", "missing"}) == kNil);
  CHECK(s.run3({"SPOP", "missing"}) == "_\r\n");
  CHECK(s.run({"SPOP", "missing", "3"}) == "*0\r\n");
  CHECK(s.run3({"SPOP", "missing", "3"}) == "~0\r\n");
  CHECK(s.run({"SADD", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}) == integer(10));
  std::set<std::string> all = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  std::set<std::string> popped;
  auto one = parse_resp(s.run({"SPOP", "s"}));
  REQUIRE(one.type == '$');
  popped.insert(one.str);
  CHECK(s.run({"SPOP", "s", "0"}) == "*0\r\n");
  CHECK(s.run3({"SPOP", "s", "0"}) == "~0\r\n");
  // A small share (drawn one at a time) and a large share (a partial shuffle).
  for (const char* n : {"1", "6"}) {
    auto r = parse_resp(s.run3({"SPOP", "s", n}));
    CHECK(r.type == '~');
    CHECK(r.size() == static_cast<size_t>(std::stoi(n)));
    for (const auto& m : r.items) {
      CHECK(popped.insert(m.str).second);  // never popped twice
    }
  }
  CHECK(s.run({"SCARD", "s"}) == integer(2));
  for (const auto& m : sorted(s.run({"SMEMBERS", "s"}))) {
    CHECK(popped.count(m) == 0);
    popped.insert(m);
  }
  CHECK(popped == all);
  auto rest = parse_resp(s.run({"SPOP", "s", "5"}));
  CHECK(rest.size() == 2);
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
}

TEST_CASE("SPOP and SRANDMEMBER argument errors match Redis", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "s", "1", "2", "3"}) == integer(3));
  const std::string positive = error("ERR value is out of range, must be positive");
  CHECK(s.run({"SPOP", "s", "-1"}) == positive);
  CHECK(s.run({"SPOP", "s", "x"}) == positive);
  CHECK(s.run({"SPOP", "s", "99999999999999999999"}) == positive);
  CHECK(s.run({"SPOP", "s", "1", "2"}) == error("ERR syntax error"));
  CHECK(s.run({"SPOP"}) == error("ERR wrong number of arguments for 'spop' command"));
  CHECK(s.run({"SRANDMEMBER", "s", "x"}) == error("ERR value is not an integer or out of range"));
  CHECK(s.run({"SRANDMEMBER", "s", "-9223372036854775808"}) ==
        error("ERR value is out of range, value must between -9223372036854775807 and "
              "9223372036854775807"));
  CHECK(s.run({"SRANDMEMBER", "s", "-9223372036854775807"}) == error("ERR value is out of range"));
  CHECK(s.run({"SRANDMEMBER", "s", "1", "2"}) == error("ERR syntax error"));
  CHECK(s.run({"SCARD", "s"}) == integer(3));
}

TEST_CASE("SRANDMEMBER returns distinct members for a positive count and repeats for a negative",
          "[sets]") {
  TestServer s;
  CHECK(s.run({"SRANDMEMBER", "missing"}) == kNil);
  CHECK(s.run({"SRANDMEMBER", "missing", "3"}) == "*0\r\n");
  CHECK(s.run3({"SRANDMEMBER", "missing", "-3"}) == "*0\r\n");
  std::vector<std::string> cmd = {"SADD", "s"};
  for (int i = 0; i < 30; ++i) {
    cmd.push_back("m" + std::to_string(i));
  }
  REQUIRE(s.run(cmd) == integer(30));
  auto one = parse_resp(s.run({"SRANDMEMBER", "s"}));
  CHECK(one.str.substr(0, 1) == "m");
  CHECK(s.run({"SRANDMEMBER", "s", "0"}) == "*0\r\n");
  // Positive counts: a small share (drawn), a large share (shuffled), more than the set.
  for (int n : {3, 20, 30, 100}) {
    INFO(n);
    auto r = parse_resp(s.run3({"SRANDMEMBER", "s", std::to_string(n)}));
    CHECK(r.type == '*');  // an array even in RESP3, as Redis
    CHECK(r.size() == static_cast<size_t>(std::min(n, 30)));
    std::set<std::string> distinct;
    for (const auto& m : r.items) {
      CHECK(s.run({"SISMEMBER", "s", m.str}) == integer(1));
      distinct.insert(m.str);
    }
    CHECK(distinct.size() == r.size());
  }
  auto rep = parse_resp(s.run({"SRANDMEMBER", "s", "-200"}));
  CHECK(rep.size() == 200);
  std::set<std::string> distinct;
  for (const auto& m : rep.items) {
    distinct.insert(m.str);
  }
  CHECK(distinct.size() < 200);  // 200 draws from 30 members must repeat
  CHECK(s.run({"SCARD", "s"}) == integer(30));
  CHECK(s.run({"SADD", "one", "7"}) == integer(1));
  CHECK(s.run({"SRANDMEMBER", "one", "-3"}) == arr({bulk("7"), bulk("7"), bulk("7")}));
}

TEST_CASE("SSCAN walks every member with MATCH and COUNT and checks its arguments", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "i", "3", "1", "2"}) == integer(3));
  CHECK(s.run({"SSCAN", "i", "0"}) == arr({bulk("0"), arr({bulk("1"), bulk("2"), bulk("3")})}));
  CHECK(s.run({"SSCAN", "i", "0", "MATCH", "[12]"}) ==
        arr({bulk("0"), arr({bulk("1"), bulk("2")})}));
  CHECK(s.run({"SSCAN", "i", "-1"}) == arr({bulk("0"), arr({bulk("1"), bulk("2"), bulk("3")})}));
  CHECK(s.run({"SSCAN", "missing", "0"}) == arr({bulk("0"), "*0\r\n"}));
  // A missing key ends the scan before the options are read, as in Redis.
  CHECK(s.run({"SSCAN", "missing", "0", "COUNT", "0"}) == arr({bulk("0"), "*0\r\n"}));
  CHECK(s.run({"SSCAN", "i", "x"}) == error("ERR invalid cursor"));
  CHECK(s.run({"SSCAN", "i", " 1"}) == error("ERR invalid cursor"));
  CHECK(s.run({"SSCAN", "i", "18446744073709551616"}) == error("ERR invalid cursor"));
  CHECK(s.run({"SSCAN", "i", "0", "COUNT", "0"}) == error("ERR syntax error"));
  CHECK(s.run({"SSCAN", "i", "0", "COUNT", "x"}) ==
        error("ERR value is not an integer or out of range"));
  CHECK(s.run({"SSCAN", "i", "0", "MATCH"}) == error("ERR syntax error"));
  CHECK(s.run({"SSCAN", "i", "0", "FOO", "bar"}) == error("ERR syntax error"));
  CHECK(s.run({"SSCAN", "i"}) == error("ERR wrong number of arguments for 'sscan' command"));

  std::vector<std::string> cmd = {"SADD", "h"};
  for (int i = 0; i < 300; ++i) {
    cmd.push_back("member:" + std::to_string(i));
  }
  REQUIRE(s.run(cmd) == integer(300));
  std::set<std::string> seen;
  std::set<std::string> matched;
  std::string cursor = "0";
  int calls = 0;
  do {
    auto r = parse_resp(s.run({"SSCAN", "h", cursor, "COUNT", "7"}));
    cursor = r.at(0).str;
    for (const auto& m : r.at(1).items) {
      seen.insert(m.str);
    }
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(seen.size() == 300);
  CHECK(calls > 1);
  cursor = "0";
  calls = 0;
  do {
    auto r = parse_resp(s.run({"SSCAN", "h", cursor, "MATCH", "member:1?", "COUNT", "50"}));
    cursor = r.at(0).str;
    for (const auto& m : r.at(1).items) {
      matched.insert(m.str);
    }
    ++calls;
  } while (cursor != "0" && calls < 1000);
  CHECK(matched.size() == 10);
}

TEST_CASE("SMOVE moves a member and follows Redis's order of checks", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "a", "1", "2"}) == integer(2));
  CHECK(s.run({"SET", "str", "v"}) == kOk);
  CHECK(s.run({"SMOVE", "missing", "str", "1"}) == integer(0));  // source first
  CHECK(s.run({"SMOVE", "a", "str", "1"}) == kWrong);
  CHECK(s.run({"SMOVE", "str", "a", "1"}) == kWrong);
  CHECK(s.run({"SMOVE", "a", "a", "1"}) == integer(1));
  CHECK(s.run({"SMOVE", "a", "a", "9"}) == integer(0));
  CHECK(s.run({"SMOVE", "a", "b", "9"}) == integer(0));
  CHECK(s.run({"EXISTS", "b"}) == integer(0));
  CHECK(s.run({"SMOVE", "a", "b", "1"}) == integer(1));
  CHECK(s.run({"SMEMBERS", "a"}) == arr({bulk("2")}));
  CHECK(s.run({"SMEMBERS", "b"}) == arr({bulk("1")}));
  CHECK(s.run({"SADD", "c", "2"}) == integer(1));
  CHECK(s.run({"SMOVE", "a", "c", "2"}) == integer(1));  // already in c: still 1
  CHECK(s.run({"EXISTS", "a"}) == integer(0));
  CHECK(s.run({"SMEMBERS", "c"}) == arr({bulk("2")}));
  CHECK(s.run({"SMOVE", "a", "b"}) == error("ERR wrong number of arguments for 'smove' command"));
}

TEST_CASE("SINTER SUNION SDIFF compute over missing keys and reply sets", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "a", "1", "2", "3", "x"}) == integer(4));
  CHECK(s.run({"SADD", "b", "2", "3", "4", "x"}) == integer(4));
  CHECK(s.run({"SADD", "c", "3", "5", "x"}) == integer(3));
  CHECK(sorted(s.run({"SINTER", "a", "b", "c"})) == Strings{"3", "x"});
  CHECK(sorted(s.run({"SINTER", "a"})) == Strings{"1", "2", "3", "x"});
  CHECK(s.run({"SINTER", "a", "missing"}) == "*0\r\n");
  CHECK(s.run3({"SINTER", "missing", "a"}) == "~0\r\n");
  CHECK(sorted(s.run({"SUNION", "a", "b", "missing", "c"})) ==
        Strings{"1", "2", "3", "4", "5", "x"});
  CHECK(sorted(s.run({"SDIFF", "a", "b"})) == Strings{"1"});
  CHECK(sorted(s.run({"SDIFF", "a", "missing", "c"})) == Strings{"1", "2"});
  CHECK(s.run({"SDIFF", "missing", "a"}) == "*0\r\n");
  CHECK(s.run({"SDIFF", "a", "a"}) == "*0\r\n");
  CHECK(s.run3({"SUNION", "missing"}) == "~0\r\n");
  CHECK(s.run({"SADD", "n1", "3", "1"}) == integer(2));
  CHECK(s.run({"SADD", "n2", "2"}) == integer(1));
  CHECK(s.run3({"SUNION", "n1", "n2"}) == set3({bulk("1"), bulk("2"), bulk("3")}));
  auto r = parse_resp(s.run3({"SINTER", "a", "b"}));
  CHECK(r.type == '~');
  CHECK(r.size() == 3);
  CHECK(s.run({"SINTER"}) == error("ERR wrong number of arguments for 'sinter' command"));
}

TEST_CASE("the *STORE commands replace the destination or delete it when empty", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "a", "1", "2", "3"}) == integer(3));
  CHECK(s.run({"SADD", "b", "2", "3", "y"}) == integer(3));
  CHECK(s.run({"SET", "dst", "string", "EX", "100"}) == kOk);
  CHECK(s.run({"SINTERSTORE", "dst", "a", "b"}) == integer(2));
  CHECK(s.run({"TYPE", "dst"}) == "+set\r\n");
  CHECK(s.run({"TTL", "dst"}) == integer(-1));
  CHECK(s.run({"OBJECT", "ENCODING", "dst"}) == bulk("intset"));  // fresh set: integers only
  CHECK(s.run({"SMEMBERS", "dst"}) == arr({bulk("2"), bulk("3")}));
  CHECK(s.run({"SUNIONSTORE", "dst", "a", "b"}) == integer(4));
  CHECK(s.run({"OBJECT", "ENCODING", "dst"}) == bulk("hashtable"));
  CHECK(s.run({"SDIFFSTORE", "dst", "a", "b"}) == integer(1));
  CHECK(s.run({"SMEMBERS", "dst"}) == arr({bulk("1")}));
  // The destination may be a source.
  CHECK(s.run({"SUNIONSTORE", "a", "a", "b"}) == integer(4));
  CHECK(s.run({"SCARD", "a"}) == integer(4));
  CHECK(s.run({"SDIFFSTORE", "dst", "a", "a"}) == integer(0));
  CHECK(s.run({"EXISTS", "dst"}) == integer(0));
  CHECK(s.run({"SET", "str", "v"}) == kOk);
  CHECK(s.run({"SINTERSTORE", "str", "a", "missing"}) == integer(0));
  CHECK(s.run({"EXISTS", "str"}) == integer(0));
  CHECK(s.run({"SINTERSTORE", "nothing", "missing"}) == integer(0));
  CHECK(s.run({"EXISTS", "nothing"}) == integer(0));
  CHECK(s.run({"SINTERSTORE", "d"}) ==
        error("ERR wrong number of arguments for 'sinterstore' command"));
}

TEST_CASE("SINTERCARD counts the intersection up to LIMIT and checks numkeys", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "a", "1", "2", "3", "4"}) == integer(4));
  CHECK(s.run({"SADD", "b", "2", "3", "4", "5"}) == integer(4));
  CHECK(s.run({"SINTERCARD", "2", "a", "b"}) == integer(3));
  CHECK(s.run({"SINTERCARD", "2", "a", "b", "LIMIT", "2"}) == integer(2));
  CHECK(s.run({"SINTERCARD", "2", "a", "b", "limit", "0"}) == integer(3));
  CHECK(s.run({"SINTERCARD", "2", "a", "b", "LIMIT", "10"}) == integer(3));
  CHECK(s.run({"SINTERCARD", "1", "a"}) == integer(4));
  CHECK(s.run({"SINTERCARD", "2", "a", "missing"}) == integer(0));
  const std::string numkeys = error("ERR numkeys should be greater than 0");
  CHECK(s.run({"SINTERCARD", "0", "a"}) == numkeys);
  CHECK(s.run({"SINTERCARD", "-1", "a"}) == numkeys);
  CHECK(s.run({"SINTERCARD", "x", "a"}) == numkeys);
  CHECK(s.run({"SINTERCARD", "3", "a", "b"}) ==
        error("ERR Number of keys can't be greater than number of args"));
  const std::string limit = error("ERR LIMIT can't be negative");
  CHECK(s.run({"SINTERCARD", "1", "a", "LIMIT", "-1"}) == limit);
  CHECK(s.run({"SINTERCARD", "1", "a", "LIMIT", "x"}) == limit);
  CHECK(s.run({"SINTERCARD", "1", "a", "LIMIT"}) == error("ERR syntax error"));
  CHECK(s.run({"SINTERCARD", "1", "a", "FOO", "1"}) == error("ERR syntax error"));
  CHECK(s.run({"SINTERCARD", "1"}) ==
        error("ERR wrong number of arguments for 'sintercard' command"));
  const auto& t = hotkv::command_table();
  std::vector<size_t> idx;
  std::vector<std::string_view> argv = {"SINTERCARD", "2", "a", "b", "LIMIT", "1"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("SINTERCARD"), argv, idx));
  CHECK(idx == std::vector<size_t>{2, 3});
  idx.clear();
  std::vector<std::string_view> bad = {"SINTERCARD", "5", "a"};
  REQUIRE(hotkv::Table::key_indexes(*t.find("SINTERCARD"), bad, idx));
  CHECK(idx.empty());
}

TEST_CASE("set commands reject other types and other commands reject sets", "[sets]") {
  TestServer s;
  CHECK(s.run({"SET", "str", "x"}) == kOk);
  CHECK(s.run({"XADD", "stream", "1-0", "f", "v"}) == bulk("1-0"));
  CHECK(s.run({"SADD", "set", "1"}) == integer(1));
  for (const char* other : {"str", "stream"}) {
    INFO(other);
    CHECK(s.run({"SADD", other, "1"}) == kWrong);
    CHECK(s.run({"SREM", other, "1"}) == kWrong);
    CHECK(s.run({"SISMEMBER", other, "1"}) == kWrong);
    CHECK(s.run({"SMISMEMBER", other, "1"}) == kWrong);
    CHECK(s.run({"SMEMBERS", other}) == kWrong);
    CHECK(s.run({"SCARD", other}) == kWrong);
    CHECK(s.run({"SPOP", other}) == kWrong);
    CHECK(s.run({"SPOP", other, "0"}) == kWrong);
    CHECK(s.run({"SRANDMEMBER", other}) == kWrong);
    CHECK(s.run({"SRANDMEMBER", other, "0"}) == kWrong);
    CHECK(s.run({"SSCAN", other, "0", "COUNT", "0"}) == kWrong);
    CHECK(s.run({"SINTER", "missing", other}) == kWrong);
    CHECK(s.run({"SUNION", "set", other}) == kWrong);
    CHECK(s.run({"SDIFF", "missing", other}) == kWrong);
    CHECK(s.run({"SINTERSTORE", "d", "missing", other}) == kWrong);
    CHECK(s.run({"SUNIONSTORE", "d", other}) == kWrong);
    CHECK(s.run({"SDIFFSTORE", "d", "set", other}) == kWrong);
    CHECK(s.run({"SINTERCARD", "2", "missing", other}) == kWrong);
  }
  CHECK(s.run({"EXISTS", "d"}) == integer(0));
  CHECK(s.run({"GET", "set"}) == kWrong);
  CHECK(s.run({"INCR", "set"}) == kWrong);
  CHECK(s.run({"APPEND", "set", "x"}) == kWrong);
  CHECK(s.run({"XADD", "set", "*", "f", "v"}) == kWrong);
  CHECK(s.run({"XLEN", "set"}) == kWrong);
  CHECK(s.run({"SMEMBERS", "set"}) == arr({bulk("1")}));
  CHECK(s.run({"GET", "str"}) == bulk("x"));
}

TEST_CASE("set commands publish Redis's keyspace events", "[sets]") {
  // pushes() runs the shards' io contexts, whose timers follow the real clock: keep the manual
  // clock far ahead of it so nothing expires behind the test's back.
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  s.run3({"PSUBSCRIBE", "__keyevent@0__:*"});
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "Esg"}) == kOk);
  s.run3({"SADD", "a", "1", "2"});
  s.run3({"SADD", "a", "1"});  // nothing added: no event
  s.run3({"SREM", "a", "9"});  // nothing removed: no event
  s.run3({"SREM", "a", "1"});
  s.run3({"SMOVE", "a", "b", "2"});  // srem a, del a, sadd b
  s.run3({"SMOVE", "b", "b", "2"});  // same key: no event
  s.run3({"SADD", "x", "5", "6"});
  s.run3({"SPOP", "x"});
  s.run3({"SPOP", "x", "1"});  // spop x, del x
  s.run3({"SET", "str", "v"});
  s.run3({"SINTERSTORE", "str", "b", "missing"});  // del str
  s.run3({"SINTERSTORE", "d", "b", "b"});
  s.run3({"SUNIONSTORE", "d", "b"});
  s.run3({"SDIFFSTORE", "d", "b", "b"});  // del d
  s.run3({"SDIFFSTORE", "d", "b", "b"});  // nothing to delete: no event
  std::vector<std::string> seen;
  for (const auto& m : s.pushes()) {
    seen.push_back(m.channel.substr(std::string("__keyevent@0__:").size()) + " " + m.payload);
  }
  CHECK(seen == std::vector<std::string>{"sadd a", "srem a", "srem a", "del a", "sadd b", "sadd x",
                                         "spop x", "spop x", "del x", "del str", "sinterstore d",
                                         "sunionstore d", "del d"});
}

TEST_CASE("multi-key set commands work atomically with keys on different shards", "[sets]") {
  TestServer s(4);
  auto k = keys_on_distinct_shards(s, "set", 4);
  CHECK(s.run({"SADD", k[0], "1", "2", "3", "a"}) == integer(4));
  CHECK(s.run({"SADD", k[1], "2", "3", "4", "a"}) == integer(4));
  CHECK(s.run({"SADD", k[2], "3", "a", "9"}) == integer(3));
  CHECK(sorted(s.run({"SINTER", k[0], k[1], k[2]})) == Strings{"3", "a"});
  CHECK(sorted(s.run({"SUNION", k[0], k[1], k[2]})) == Strings{"1", "2", "3", "4", "9", "a"});
  CHECK(sorted(s.run({"SDIFF", k[0], k[1], k[2]})) == Strings{"1"});
  CHECK(s.run({"SINTERCARD", "3", k[0], k[1], k[2], "LIMIT", "1"}) == integer(1));
  CHECK(s.run({"SINTERSTORE", k[3], k[0], k[1]}) == integer(3));
  CHECK(sorted(s.run({"SMEMBERS", k[3]})) == Strings{"2", "3", "a"});
  CHECK(s.run({"SUNIONSTORE", k[3], k[1], k[2]}) == integer(5));
  CHECK(s.run({"SDIFFSTORE", k[3], k[2], k[0], k[1]}) == integer(1));
  CHECK(s.run({"SMEMBERS", k[3]}) == arr({bulk("9")}));
  CHECK(s.run({"SMOVE", k[2], k[3], "a"}) == integer(1));
  CHECK(sorted(s.run({"SMEMBERS", k[3]})) == Strings{"9", "a"});
  CHECK(s.run({"SMOVE", k[3], k[0], "9"}) == integer(1));
  CHECK(s.run({"SMOVE", k[3], k[0], "a"}) == integer(1));
  CHECK(s.run({"EXISTS", k[3]}) == integer(0));
  CHECK(sorted(s.run({"SMEMBERS", k[0]})) == Strings{"1", "2", "3", "9", "a"});
  CHECK(s.run({"SDIFFSTORE", k[3], k[2], k[2]}) == integer(0));
  CHECK(s.run({"EXISTS", k[3]}) == integer(0));
}

TEST_CASE("COPY and RENAME carry a set with its encoding", "[sets]") {
  TestServer s;
  CHECK(s.run({"SADD", "h", "1", "x"}) == integer(2));
  CHECK(s.run({"SREM", "h", "x"}) == integer(1));
  CHECK(s.run({"COPY", "h", "c"}) == integer(1));
  CHECK(s.run({"OBJECT", "ENCODING", "c"}) == bulk("hashtable"));
  CHECK(s.run({"SADD", "c", "2"}) == integer(1));
  CHECK(s.run({"SCARD", "h"}) == integer(1));  // the copy is independent
  CHECK(s.run({"RENAME", "c", "moved"}) == kOk);
  CHECK(s.run({"SMEMBERS", "moved"}).size() > 0);
  CHECK(sorted(s.run({"SMEMBERS", "moved"})) == Strings{"1", "2"});
  CHECK(s.run({"EXISTS", "c"}) == integer(0));
}
