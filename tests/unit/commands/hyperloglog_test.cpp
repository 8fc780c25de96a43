// HyperLogLog commands through the real table and shards: PFADD/PFCOUNT/PFMERGE replies and
// the cached cardinality, keys on several shards, PFDEBUG, hll-sparse-max-bytes, and Redis's
// error texts.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::error;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::keys_on_distinct_shards;
using hotkv::test::TestServer;

namespace {

const std::string kNotHll = error("WRONGTYPE Key is not a valid HyperLogLog string value.");
const std::string kCorrupt = error("INVALIDOBJ Corrupted HLL object detected");

std::vector<std::string> pfadd(const std::string& key, const std::string& prefix, int from,
                               int to) {
  std::vector<std::string> cmd = {"PFADD", key};
  for (int i = from; i < to; ++i) {
    cmd.push_back(prefix + std::to_string(i));
  }
  return cmd;
}

}  // namespace

TEST_CASE("PFADD and PFCOUNT answer as redis-server and cache the count", "[hyperloglog]") {
  TestServer s;
  CHECK(s.run({"PFADD", "h"}) == integer(1));
  CHECK(s.run({"PFADD", "h"}) == integer(0));
  CHECK(s.run({"PFCOUNT", "h"}) == integer(0));
  CHECK(s.run({"PFADD", "h", "a", "b", "c"}) == integer(1));
  CHECK(s.run({"PFADD", "h", "a", "b", "c"}) == integer(0));
  CHECK(s.run({"GETRANGE", "h", "15", "15"}) == bulk("\x80"));
  CHECK(s.run({"PFCOUNT", "h"}) == integer(3));
  CHECK(s.run({"GETRANGE", "h", "15", "15"}) == bulk(std::string(1, '\0')));
  CHECK(s.run({"PFCOUNT", "missing"}) == integer(0));
  CHECK(s.run({"TYPE", "h"}) == "+string\r\n");
  CHECK(s.run(pfadd("k", "ele:", 0, 1000)) == integer(1));
  CHECK(s.run({"PFCOUNT", "k"}) == integer(1002));  // redis-server 7.0.15's count
  CHECK(s.run({"PFDEBUG", "ENCODING", "k"}) == "+sparse\r\n");
  CHECK(s.run({"PFDEBUG", "DECODE", "h"}) == bulk("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"));
  CHECK(s.run({"PFDEBUG", "TODENSE", "h"}) == integer(1));
  CHECK(s.run({"PFDEBUG", "TODENSE", "h"}) == integer(0));
  CHECK(s.run({"PFDEBUG", "ENCODING", "h"}) == "+dense\r\n");
  CHECK(s.run({"STRLEN", "h"}) == integer(16 + 12288));
  CHECK(s.run({"PFCOUNT", "h"}) == integer(3));
  CHECK(s.run({"PFDEBUG", "DECODE", "h"}) == error("ERR HLL encoding is not sparse"));
  CHECK(s.run({"PFDEBUG", "NOPE", "h"}) == error("ERR Unknown PFDEBUG subcommand 'NOPE'"));
  CHECK(s.run({"PFDEBUG", "GETREG", "missing"}) == error("ERR The specified key does not exist"));
}

TEST_CASE("PFCOUNT and PFMERGE over keys of several shards", "[hyperloglog]") {
  TestServer s(4);
  auto keys = keys_on_distinct_shards(s, "hll", 4);
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(s.run(pfadd(keys[i], "x", static_cast<int>(i) * 100, 1000)) == integer(1));
  }
  TestServer one;
  REQUIRE(one.run(pfadd("all", "x", 0, 1000)) == integer(1));
  std::string expect = one.run({"PFCOUNT", "all"});
  CHECK(s.run({"PFCOUNT", keys[0], keys[1], keys[2], keys[3], "missing"}) == expect);
  // Counting a union changes none of the keys.
  CHECK(s.run({"GETRANGE", keys[1], "15", "15"}) == bulk("\x80"));
  CHECK(s.run({"PFMERGE", keys[3], keys[0], keys[1], keys[2]}) == kOk);
  CHECK(s.run({"PFCOUNT", keys[3]}) == expect);
  CHECK(s.run({"GET", keys[3]}) == one.run({"GET", "all"}));
  CHECK(s.run({"PFMERGE", "fresh", keys[1]}) == kOk);
  CHECK(s.run({"PFCOUNT", "fresh"}) == s.run({"PFCOUNT", keys[1]}));
}

TEST_CASE("hll-sparse-max-bytes decides when a value turns dense", "[hyperloglog]") {
  TestServer s;
  CHECK(s.run({"CONFIG", "GET", "hll-sparse-max-bytes"}) ==
        "*2\r\n" + bulk("hll-sparse-max-bytes") + bulk("3000"));
  CHECK(s.run({"CONFIG", "SET", "hll-sparse-max-bytes", "100"}) == kOk);
  CHECK(s.run(pfadd("h", "t", 0, 30)) == integer(1));
  CHECK(s.run({"PFDEBUG", "ENCODING", "h"}) == "+dense\r\n");
  CHECK(s.run({"PFCOUNT", "h"}) == integer(30));
}

TEST_CASE("PF commands refuse other types, other strings and corrupt values", "[hyperloglog]") {
  TestServer s;
  const std::string wrong =
      error("WRONGTYPE Operation against a key holding the wrong kind of value");
  s.run({"SADD", "set", "x"});
  CHECK(s.run({"PFADD", "set", "a"}) == wrong);
  CHECK(s.run({"PFCOUNT", "set"}) == wrong);
  CHECK(s.run({"PFMERGE", "d", "set"}) == wrong);
  CHECK(s.run({"PFMERGE", "set"}) == wrong);
  s.run({"SET", "str", "hello"});
  s.run({"SET", "num", "42"});
  for (const char* k : {"str", "num"}) {
    CHECK(s.run({"PFADD", k, "a"}) == kNotHll);
    CHECK(s.run({"PFCOUNT", k}) == kNotHll);
    CHECK(s.run({"PFCOUNT", k, "other"}) == kNotHll);
    CHECK(s.run({"PFMERGE", "d", k}) == kNotHll);
  }
  CHECK(s.run({"EXISTS", "d"}) == integer(0));
  s.run({"PFADD", "h", "a", "b", "c"});
  s.run({"APPEND", "h", "hello"});
  CHECK(s.run({"PFCOUNT", "h"}) == kCorrupt);
  CHECK(s.run({"PFMERGE", "d", "h"}) == kCorrupt);
  CHECK(s.run({"EXISTS", "d"}) == integer(0));
  s.run({"SETRANGE", "h", "4", "x"});
  CHECK(s.run({"PFCOUNT", "h"}) == kNotHll);
  CHECK(s.run({"PFADD"}) == error("ERR wrong number of arguments for 'pfadd' command"));
  CHECK(s.run({"PFDEBUG", "GETREG"}) ==
        error("ERR wrong number of arguments for 'pfdebug' command"));
}
