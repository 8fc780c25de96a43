// List persistence effects: the effects every list command logs, and encode_list's snapshot of
// a whole list, replayed with apply_op_effect into a fresh server must give the same elements
// and deadline as the original; malformed effects are refused and other types skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "support/replay.hpp"
#include "support/resp_value.hpp"
#include "support/test_server.hpp"

using hotkv::OpCode;
using hotkv::test::bulk;
using hotkv::test::encode_key;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::replay;
using hotkv::test::TestServer;

namespace {

// Everything observable about list `key`.
std::string snapshot(TestServer& s, const std::string& key) {
  return s.run({"TYPE", key}) + s.run({"OBJECT", "ENCODING", key}) + s.run({"PTTL", key}) +
         s.run({"LRANGE", key, "0", "-1"});
}

}  // namespace

TEST_CASE("the effects list commands log replay to the same lists", "[lists]") {
  TestServer a;
  hotkv::test::LogFile logfile(a);
  REQUIRE(a.run({"RPUSH", "l", "a", "b", "c", "d", "e", "f"}) == integer(6));
  REQUIRE(a.run({"LPUSH", "l", "z", "y"}) == integer(8));
  REQUIRE(a.run({"LPOP", "l"}) == bulk("y"));
  REQUIRE(a.run({"RPOP", "l", "2"}) == "*2\r\n$1\r\nf\r\n$1\r\ne\r\n");
  REQUIRE(a.run({"LSET", "l", "-1", "D"}) == kOk);
  REQUIRE(a.run({"LINSERT", "l", "AFTER", "b", "b2"}) == integer(6));
  REQUIRE(a.run({"LINSERT", "l", "BEFORE", "nothere", "x"}) == integer(-1));
  REQUIRE(a.run({"RPUSH", "l", "b", "b"}) == integer(8));
  REQUIRE(a.run({"LREM", "l", "-2", "b"}) == integer(2));
  REQUIRE(a.run({"LTRIM", "l", "1", "-2"}) == kOk);
  REQUIRE(a.run({"RPUSH", "m", "1", "2", "3"}) == integer(3));
  REQUIRE(a.run({"LMOVE", "m", "l", "LEFT", "RIGHT"}) == bulk("1"));
  REQUIRE(a.run({"RPOPLPUSH", "m", "m"}) == bulk("3"));  // rotates
  REQUIRE(a.run({"LMPOP", "2", "none", "m", "RIGHT", "COUNT", "5"}) ==
          "*2\r\n$1\r\nm\r\n*2\r\n$1\r\n2\r\n$1\r\n3\r\n");
  REQUIRE(a.run({"PEXPIRE", "l", "100000"}) == integer(1));
  // Emptied by a trim that keeps nothing, and by LREM: gone after replay too.
  REQUIRE(a.run({"RPUSH", "gone", "x"}) == integer(1));
  REQUIRE(a.run({"LTRIM", "gone", "5", "10"}) == kOk);
  REQUIRE(a.run({"RPUSH", "gone2", "x", "x"}) == integer(2));
  REQUIRE(a.run({"LREM", "gone2", "0", "x"}) == integer(2));
  // A large list over many nodes, then a copy and a rename (logged as a rebuilt value).
  std::vector<std::string> big{"RPUSH", "big"};
  for (int i = 0; i < 3000; ++i) {
    big.push_back("element-" + std::to_string(i));
  }
  REQUIRE(a.run(big) == integer(3000));
  REQUIRE(a.run({"LTRIM", "big", "100", "2899"}) == kOk);
  REQUIRE(a.run({"COPY", "big", "big-copy"}) == integer(1));
  REQUIRE(a.run({"RENAME", "l", "l-renamed"}) == kOk);
  std::string log = logfile.contents();
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key : {"l", "l-renamed", "m", "gone", "gone2", "big", "big-copy"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
  CHECK(b.run({"DBSIZE"}) == a.run({"DBSIZE"}));
}

TEST_CASE("encode_list then replay rebuilds a list in bounded records", "[lists]") {
  TestServer a;
  std::vector<std::string> cmd{"RPUSH", "wide"};
  for (int i = 0; i < 2000; ++i) {
    cmd.push_back(std::to_string(i));
  }
  REQUIRE(a.run(cmd) == integer(2000));
  REQUIRE(a.run({"RPUSH", "small", "a", "", "b"}) == integer(3));
  REQUIRE(a.run({"EXPIRE", "small", "100"}) == integer(1));
  size_t checkpoints = 0;
  std::string log = encode_key(a, "small") + encode_key(a, "wide", &checkpoints);
  CHECK(checkpoints == 1);  // 16 effects of 128 elements, a checkpoint after the 8th
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  CHECK(snapshot(b, "wide") == snapshot(a, "wide"));
  CHECK(snapshot(b, "small") == snapshot(a, "small"));
}

TEST_CASE("apply_list_op rejects malformed effects and skips other types", "[lists]") {
  TestServer s;
  auto op = [&](OpCode code, std::vector<std::string> args, std::string key = "l") {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  CHECK_FALSE(op(OpCode::kListPushBack, {}));
  CHECK_FALSE(op(OpCode::kListPopFront, {"x"}));
  CHECK_FALSE(op(OpCode::kListInsert, {"MIDDLE", "a", "b"}));
  CHECK_FALSE(op(OpCode::kListTrim, {"1"}));
  CHECK_FALSE(op(static_cast<OpCode>(143), {}));
  // Pops and trims of a missing key change nothing.
  CHECK(op(OpCode::kListPopBack, {"3"}));
  CHECK(op(OpCode::kListTrim, {"0", "1"}));
  CHECK(s.run({"EXISTS", "l"}) == integer(0));
  // A key of another type is left alone.
  REQUIRE(s.run({"SET", "str", "x"}) == kOk);
  CHECK(op(OpCode::kListPushBack, {"a"}, "str"));
  CHECK(s.run({"GET", "str"}) == bulk("x"));
  CHECK(op(OpCode::kListPushBack, {"a", "b"}));
  CHECK(op(OpCode::kListSet, {"7", "z"}));  // out of range: nothing changes
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  CHECK(op(OpCode::kListPopFront, {"5"}));
  CHECK(s.run({"EXISTS", "l"}) == integer(0));
}
