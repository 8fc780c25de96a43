// Hash persistence effects: the effects every hash command logs, and encode_hash's snapshot of
// a whole hash, replayed with apply_op_effect into a fresh server must give the same contents,
// encoding and deadline as the original (HINCRBYFLOAT replays its logged result, not the sum).
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "support/resp_value.hpp"
#include "support/replay.hpp"
#include "support/test_server.hpp"

using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::OpCode;
using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::encode_key;
using hotkv::test::replay;
using hotkv::test::TestServer;

namespace {


// Everything observable about hash `key`: sorted pairs (a hashtable's order is its own),
// the insertion order of a listpack, the encoding and the deadline.
std::string snapshot(TestServer& s, const std::string& key) {
  std::string out =
      s.run({"TYPE", key}) + s.run({"OBJECT", "ENCODING", key}) + s.run({"PTTL", key});
  auto all = hotkv::test::parse_resp(s.run({"HGETALL", key}));
  std::map<std::string, std::string> sorted;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    sorted[all.at(i).str] = all.at(i + 1).str;
  }
  for (const auto& [f, v] : sorted) {
    out += f + "=" + v + ";";
  }
  if (s.run({"OBJECT", "ENCODING", key}) == bulk("listpack")) {
    out += s.run({"HKEYS", key});
  }
  return out;
}

}  // namespace

TEST_CASE("the effects hash commands log replay to the same state", "[hashes]") {
  TestServer a;
  hotkv::test::LogFile logfile(a);

  REQUIRE(a.run({"HSET", "h", "a", "1", "b", "2", "c", "3"}) == integer(3));
  REQUIRE(a.run({"HMSET", "h", "d", "4", "a", "10"}) == kOk);
  REQUIRE(a.run({"HSETNX", "h", "e", "5"}) == integer(1));
  REQUIRE(a.run({"HSETNX", "h", "e", "6"}) == integer(0));
  REQUIRE(a.run({"HINCRBY", "h", "a", "-3"}) == integer(7));
  REQUIRE(a.run({"HINCRBYFLOAT", "h", "f", "0.1"}) == bulk("0.1"));
  REQUIRE(a.run({"HINCRBYFLOAT", "h", "f", "0.2"}) == bulk("0.3"));
  REQUIRE(a.run({"HDEL", "h", "b", "zz"}) == integer(1));
  REQUIRE(a.run({"HSET", "h", "b", "again"}) == integer(1));  // goes to the end of the listpack
  REQUIRE(a.run({"PEXPIRE", "h", "100000"}) == integer(1));
  // Emptied by HDEL: gone after replay too.
  REQUIRE(a.run({"HSET", "gone", "x", "1"}) == integer(1));
  REQUIRE(a.run({"HDEL", "gone", "x"}) == integer(1));
  // Converted by size, then shrunk: stays a hashtable.
  for (int i = 0; i < 130; ++i) {
    REQUIRE(a.run({"HSET", "big", "f" + std::to_string(i), std::to_string(i)}) == integer(1));
  }
  for (int i = 0; i < 125; ++i) {
    REQUIRE(a.run({"HDEL", "big", "f" + std::to_string(i)}) == integer(1));
  }
  // Converted by a long value; a command with more than 128 pairs of one field is not.
  REQUIRE(a.run({"HSET", "long", "f", std::string(100, 'x')}) == integer(1));
  std::vector<std::string> dup{"HSET", "dup"};
  for (int i = 0; i < 129; ++i) {
    dup.push_back("same");
    dup.push_back(std::to_string(i));
  }
  REQUIRE(a.run(dup) == integer(1));
  // A copy and a rename are logged as a rebuilt value.
  REQUIRE(a.run({"COPY", "big", "big-copy"}) == integer(1));
  REQUIRE(a.run({"RENAME", "long", "long-renamed"}) == kOk);
  std::string log = logfile.contents();
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key : {"h", "gone", "big", "dup", "big-copy", "long", "long-renamed"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"OBJECT", "ENCODING", "big"}) == bulk("hashtable"));
  CHECK(b.run({"HGET", "h", "f"}) == bulk("0.3"));
  CHECK(b.run({"DBSIZE"}) == a.run({"DBSIZE"}));
}

TEST_CASE("encode_hash then replay rebuilds the hash, encoding included, in batches", "[hashes]") {
  TestServer a;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(a.run({"HSET", "big", "f" + std::to_string(i), std::to_string(i)}) == integer(1));
  }
  for (int i = 0; i < 990; ++i) {
    REQUIRE(a.run({"HDEL", "big", "f" + std::to_string(i)}) == integer(1));
  }
  REQUIRE(a.run({"HSET", "small", "z", "1", "a", "2", "m", "3"}) == integer(3));
  REQUIRE(a.run({"EXPIRE", "small", "100"}) == integer(1));
  for (int i = 0; i < 300; ++i) {
    REQUIRE(a.run({"HSET", "wide", "f" + std::to_string(i), "v"}) == integer(1));
  }
  size_t checkpoints = 0;
  std::string log =
      encode_key(a, "big") + encode_key(a, "small") + encode_key(a, "wide", &checkpoints);
  CHECK(checkpoints == 5);  // 300 pairs in batches of 64
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key : {"big", "small", "wide"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"OBJECT", "ENCODING", "big"}) == bulk("hashtable"));
  CHECK(b.run({"HKEYS", "small"}) == a.run({"HKEYS", "small"}));
}

TEST_CASE("apply_hash_op rejects malformed effects and skips other types", "[hashes]") {
  TestServer s;
  auto op = [&](uint16_t code, std::vector<std::string> args, std::string key = "h") {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  auto code = [](OpCode c) { return static_cast<uint16_t>(c); };
  CHECK_FALSE(op(code(OpCode::kHashSet), {}));
  CHECK_FALSE(op(code(OpCode::kHashSet), {"f"}));
  CHECK_FALSE(op(code(OpCode::kHashDel), {}));
  CHECK_FALSE(op(code(OpCode::kHashConvert), {"x"}));
  CHECK_FALSE(op(31, {}));
  CHECK(s.run({"EXISTS", "h"}) == integer(0));
  // Deleting from or converting a missing key changes nothing.
  CHECK(op(code(OpCode::kHashDel), {"f"}));
  CHECK(op(code(OpCode::kHashConvert), {}));
  CHECK(s.run({"EXISTS", "h"}) == integer(0));
  // A key of another type is left alone.
  REQUIRE(s.run({"SET", "str", "v"}) == kOk);
  CHECK(op(code(OpCode::kHashSet), {"f", "v"}, "str"));
  CHECK(op(code(OpCode::kHashDel), {"f"}, "str"));
  CHECK(s.run({"GET", "str"}) == bulk("v"));
  CHECK(op(code(OpCode::kHashSet), {"f", "v", "g", "w"}));
  CHECK(s.run({"HGETALL", "h"}) == hotkv::test::arr({bulk("f"), bulk("v"), bulk("g"), bulk("w")}));
  CHECK(op(code(OpCode::kHashDel), {"f", "g"}));
  CHECK(s.run({"EXISTS", "h"}) == integer(0));
}
