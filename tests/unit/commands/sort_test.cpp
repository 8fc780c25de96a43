// SORT and SORT_RO through the real table and shards, checked against redis-server 7.0's
// replies: the key finder (the sorted key and the last STORE), which calls need every shard
// (BY/GET patterns with '*'), pattern lookups whose keys live on other shards, STORE into
// another shard, and the errors.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/table.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::command_table;
using hotkv::needs_every_shard;
using hotkv::Table;
using hotkv::test::arr;
using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::kNil;
using hotkv::test::TestServer;

namespace {

std::vector<size_t> key_positions(const std::vector<std::string_view>& argv) {
  std::vector<size_t> out;
  Table::key_indexes(*command_table().find(argv[0]), argv, out);
  return out;
}

bool every_shard(const std::vector<std::string_view>& argv) {
  return needs_every_shard(*command_table().find(argv[0]), argv);
}

}  // namespace

TEST_CASE("SORT's keys are the sorted key and the last STORE destination", "[sort]") {
  CHECK(key_positions({"SORT", "k"}) == std::vector<size_t>{1});
  CHECK(key_positions({"SORT", "k", "STORE", "a", "STORE", "b"}) == std::vector<size_t>{1, 5});
  // LIMIT's two arguments and GET's one are skipped: a GET pattern named "store" is no key.
  CHECK(key_positions({"SORT", "k", "GET", "store", "LIMIT", "store", "x"}) ==
        std::vector<size_t>{1});
  CHECK(key_positions({"SORT", "k", "store"}) == std::vector<size_t>{1});  // no argument left
  CHECK(key_positions({"SORT_RO", "k", "BY", "w_*"}) == std::vector<size_t>{1});
}

TEST_CASE("only BY or GET patterns with '*' need every shard", "[sort]") {
  CHECK_FALSE(every_shard({"SORT", "k"}));
  CHECK_FALSE(every_shard({"SORT", "k", "BY", "nosort", "GET", "#", "GET", "const"}));
  CHECK(every_shard({"SORT", "k", "BY", "w_*"}));
  CHECK(every_shard({"SORT_RO", "k", "GET", "obj_*->name"}));
  CHECK_FALSE(every_shard({"SORT", "k", "LIMIT", "*", "*"}));  // LIMIT's arguments are no patterns
  CHECK(every_shard({"KEYS", "*"}));                           // kAllShards commands still do
  CHECK_FALSE(every_shard({"GET", "w_*"}));
}

TEST_CASE("SORT orders numerically, ALPHA, DESC and with LIMIT", "[sort]") {
  TestServer s;
  s.run({"RPUSH", "l", "3", "10", "1", "-2.5"});
  CHECK(s.run({"SORT", "l"}) == arr({bulk("-2.5"), bulk("1"), bulk("3"), bulk("10")}));
  CHECK(s.run({"SORT", "l", "ALPHA"}) == arr({bulk("-2.5"), bulk("1"), bulk("10"), bulk("3")}));
  CHECK(s.run({"SORT", "l", "DESC", "LIMIT", "1", "2"}) == arr({bulk("3"), bulk("1")}));
  CHECK(s.run({"SORT", "l", "BY", "nosort", "DESC"}) ==
        arr({bulk("-2.5"), bulk("1"), bulk("10"), bulk("3")}));
  CHECK(s.run({"SORT", "nothing"}) == "*0\r\n");
  s.run({"ZADD", "z", "1", "a", "3", "b", "2", "c"});
  CHECK(s.run({"SORT", "z", "BY", "nosort", "LIMIT", "1", "5"}) == arr({bulk("c"), bulk("b")}));
}

TEST_CASE("SORT BY and GET reach keys on every shard, STORE writes another", "[sort]") {
  TestServer s(4);
  auto k = keys_on_distinct_shards(s, "sortkey", 3);
  s.run({"RPUSH", k[0], "a", "b", "c"});
  // weight_<x> and name_<x> fall on whichever shards their names hash to.
  s.run({"MSET", "weight_a", "3", "weight_b", "1", "weight_c", "2"});
  s.run({"HSET", "obj_a", "name", "Ann"});
  s.run({"HSET", "obj_c", "name", "Cy"});
  CHECK(s.run({"SORT", k[0], "BY", "weight_*"}) == arr({bulk("b"), bulk("c"), bulk("a")}));
  CHECK(s.run({"SORT_RO", k[0], "BY", "weight_*", "GET", "#", "GET", "obj_*->name"}) ==
        arr({bulk("b"), kNil, bulk("c"), bulk("Cy"), bulk("a"), bulk("Ann")}));
  CHECK(s.run({"SORT", k[0], "BY", "weight_*", "DESC", "GET", "obj_*->name", "STORE", k[1]}) ==
        integer(3));
  CHECK(s.run({"LRANGE", k[1], "0", "-1"}) == arr({bulk("Ann"), bulk("Cy"), bulk("")}));
  // An empty result deletes the destination.
  CHECK(s.run({"SORT", k[2], "STORE", k[1]}) == integer(0));
  CHECK(s.run({"EXISTS", k[1]}) == integer(0));
}

TEST_CASE("SORT's errors", "[sort]") {
  TestServer s;
  s.run({"SADD", "s", "1", "x"});
  CHECK(s.run({"SORT", "s"}) == error("ERR One or more scores can't be converted into double"));
  CHECK(s.run({"SORT", "s", "ALPHA"}) == arr({bulk("1"), bulk("x")}));
  s.run({"SET", "str", "v"});
  CHECK(s.run({"SORT", "str"}) ==
        error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(s.run({"SORT", "s", "BOGUS"}) == error("ERR syntax error"));
  CHECK(s.run({"SORT_RO", "s", "STORE", "d"}) == error("ERR syntax error"));
  CHECK(s.run({"SORT", "s", "LIMIT", "x", "1"}) ==
        error("ERR value is not an integer or out of range"));
}
