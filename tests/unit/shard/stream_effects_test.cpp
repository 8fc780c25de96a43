// Stream persistence effects: the effects every stream command logs, and encode_stream's
// snapshot of a whole stream, replayed with apply_op_effect into a fresh server must give the
// same XINFO STREAM FULL (and group and consumer views) as the original.
#include <fcntl.h>
#include <unistd.h>

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


// Everything observable about stream `key`.
std::string snapshot(TestServer& s, const std::string& key) {
  std::string out = s.run({"XINFO", "STREAM", key, "FULL", "COUNT", "0"});
  std::string groups = s.run({"XINFO", "GROUPS", key});
  out += groups;
  for (const auto& g : hotkv::test::parse_resp(groups).items) {
    out += s.run({"XINFO", "CONSUMERS", key, g["name"].str});
    out += s.run({"XPENDING", key, g["name"].str});
  }
  out += s.run({"PTTL", key});
  return out;
}

// A stream with every kind of state: deleted entries, XSETID counters, two groups with
// consumers, pending entries with different owners, times and counts.
void build_rich_stream(TestServer& s) {
  for (int i = 1; i <= 40; ++i) {
    REQUIRE(s.run({"XADD", "s", std::to_string(i) + "-" + std::to_string(i % 3), "f",
                   std::to_string(i), "g", "x"}) != "");
  }
  REQUIRE(s.run({"XDEL", "s", "5-2", "17-2"}) == integer(2));
  REQUIRE(s.run({"XGROUP", "CREATE", "s", "g1", "0"}) == kOk);
  REQUIRE(s.run({"XGROUP", "CREATE", "s", "g2", "10", "ENTRIESREAD", "9"}) == kOk);
  REQUIRE(s.run({"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", "s", ">"}) != "");
  s.advance(250);
  REQUIRE(s.run({"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s", ">"}) != "");
  REQUIRE(s.run({"XREADGROUP", "GROUP", "g2", "carol", "NOACK", "STREAMS", "s", ">"}) != "");
  REQUIRE(s.run({"XGROUP", "CREATECONSUMER", "s", "g2", "dave"}) == integer(1));
  s.advance(1000);
  REQUIRE(s.run({"XCLAIM", "s", "g1", "dave", "100", "2-2", "3-0", "RETRYCOUNT", "4"}) != "");
  REQUIRE(s.run({"XACK", "s", "g1", "1-1"}) == integer(1));
  REQUIRE(s.run({"XSETID", "s", "99-0", "ENTRIESADDED", "60", "MAXDELETEDID", "17-2"}) == kOk);
  REQUIRE(s.run({"PEXPIRE", "s", "100000"}) == integer(1));
}

}  // namespace

TEST_CASE("encode_stream then replay rebuilds an identical stream", "[streams]") {
  TestServer a;
  build_rich_stream(a);
  std::string log = encode_key(a, "s");
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  CHECK(snapshot(b, "s") == snapshot(a, "s"));
  CHECK(b.run({"XADD", "s", "*", "f", "v"}) == a.run({"XADD", "s", "*", "f", "v"}));
}

TEST_CASE("encode_stream calls checkpoint between effects of a large stream", "[streams]") {
  TestServer a;
  for (int i = 1; i <= 1000; ++i) {
    REQUIRE(a.run({"XADD", "big", std::to_string(i), "f", "v"}) != "");
  }
  REQUIRE(a.run({"XTRIM", "big", "MAXLEN", "950"}) == integer(50));
  REQUIRE(a.run({"XGROUP", "CREATE", "big", "g", "0"}) == kOk);
  REQUIRE(a.run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "big", ">"}) != "");
  size_t checkpoints = 0;
  std::string log = encode_key(a, "big", &checkpoints);
  CHECK(checkpoints >= 3);
  CHECK(hotkv::test::count_records(log, 256) == checkpoints + 1);
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  CHECK(snapshot(b, "big") == snapshot(a, "big"));
}

TEST_CASE("the effects stream commands log replay to the same state", "[streams]") {
  TestServer a;
  hotkv::test::LogFile logfile(a);

  build_rich_stream(a);
  REQUIRE(a.run({"XADD", "s", "MAXLEN", "30", "*", "f", "v"}) != "");
  REQUIRE(a.run({"XADD", "t", "MINID", "~", "1", "1-1", "a", "b"}) == bulk("1-1"));
  REQUIRE(a.run({"XTRIM", "s", "MINID", "25"}) != "");
  REQUIRE(a.run({"XGROUP", "SETID", "s", "g2", "30-0", "ENTRIESREAD", "20"}) == kOk);
  a.advance(5000);
  REQUIRE(a.run({"XAUTOCLAIM", "s", "g1", "erin", "10", "0", "COUNT", "3"}) != "");
  REQUIRE(a.run({"XCLAIM", "s", "g1", "frank", "0", "12-0", "FORCE", "LASTID", "50-0"}) != "");
  REQUIRE(a.run({"XREADGROUP", "GROUP", "g1", "bob", "STREAMS", "s", "0"}) != "");
  REQUIRE(a.run({"XGROUP", "DELCONSUMER", "s", "g1", "alice"}) != "");
  REQUIRE(a.run({"XGROUP", "CREATE", "s", "g3", "$"}) == kOk);
  REQUIRE(a.run({"XGROUP", "DESTROY", "s", "g3"}) == integer(1));
  REQUIRE(a.run({"XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"}) == kOk);
  REQUIRE(a.run({"XADD", "e", "1-0", "f", "v"}) == bulk("1-0"));
  REQUIRE(a.run({"XADD", "e", "MAXLEN", "0", "2-0", "f", "v"}) == bulk("2-0"));
  std::string log = logfile.contents();
  TestServer b;
  b.advance(a.now() - b.now());
  replay(log, b);
  for (const char* key : {"s", "t", "m", "e"}) {
    INFO(key);
    CHECK(snapshot(b, key) == snapshot(a, key));
  }
}

TEST_CASE("stream effects reject malformed arguments and skip missing keys", "[streams]") {
  TestServer s;
  auto op = [&](OpCode code, std::vector<std::string> args, std::string key = "s") {
    return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), std::move(key));
  };
  // Effects on a missing key change nothing.
  CHECK(op(OpCode::kStreamDelete, {"1-0"}));
  CHECK(op(OpCode::kGroupCreate, {"g", "0-0", "-1"}));
  CHECK(op(OpCode::kPelSet, {"g", "c", "5", "1-0", "1"}));
  CHECK(s.run({"EXISTS", "s"}) == integer(0));
  // kStreamAdd creates the stream; ids must keep increasing.
  CHECK(op(OpCode::kStreamAdd, {"3-0", "f", "v"}));
  CHECK(s.run({"XLEN", "s"}) == integer(1));
  CHECK(!op(OpCode::kStreamAdd, {"3-0", "f", "v"}));
  CHECK(!op(OpCode::kStreamAdd, {"4-0", "f"}));
  CHECK(!op(OpCode::kStreamAdd, {"x", "f", "v"}));
  // A refused add on a missing key leaves no empty stream behind.
  CHECK(!op(OpCode::kStreamAdd, {"0-0", "f", "v"}, "fresh"));
  CHECK(s.run({"EXISTS", "fresh"}) == integer(0));
  CHECK(!op(OpCode::kStreamSetMeta, {"4-0", "1"}));
  CHECK(!op(OpCode::kStreamSetMeta, {"4-0", "-1", "0-0"}));
  CHECK(!op(OpCode::kStreamTrimBefore, {}));
  CHECK(!op(OpCode::kGroupCreate, {"g", "0-0", "x"}));
  CHECK(!op(OpCode::kConsumerTouch, {"g", "c", "1"}));
  CHECK(!op(OpCode::kPelSet, {"g", "c", "5", "1-0"}));
  CHECK(!op(OpCode::kPelAck, {}));
  CHECK(!op(static_cast<OpCode>(63), {}));
  // A string under the key: stream effects leave it alone.
  CHECK(s.run({"SET", "str", "x"}) == kOk);
  CHECK(op(OpCode::kStreamAdd, {"1-0", "f", "v"}, "str"));
  CHECK(op(OpCode::kStreamCreate, {}, "str"));
  CHECK(s.run({"GET", "str"}) == bulk("x"));
  // Well-formed group effects apply.
  CHECK(op(OpCode::kGroupCreate, {"g", "0-0", "-1"}));
  CHECK(op(OpCode::kConsumerTouch, {"g", "c", "10", "-1"}));
  CHECK(op(OpCode::kPelSet, {"g", "c", "20", "3-0", "4"}));
  CHECK(s.run({"XPENDING", "s", "g"}) ==
        "*4\r\n:1\r\n" + bulk("3-0") + bulk("3-0") + "*1\r\n*2\r\n" + bulk("c") + bulk("1"));
  CHECK(op(OpCode::kPelAck, {"g", "3-0"}));
  CHECK(op(OpCode::kConsumerDelete, {"g", "c"}));
  CHECK(op(OpCode::kGroupDestroy, {"g"}));
  CHECK(s.run({"XINFO", "GROUPS", "s"}) == "*0\r\n");
}

TEST_CASE("encode_stream writes each op's arguments as the log always held them", "[streams]") {
  // A stream built from these effects is written back as exactly them, in this order (entries,
  // counters, then each group with each consumer and its pending runs), byte for byte the
  // record a generic argument list gives: logs written before typed effects still read alike.
  const std::vector<std::pair<OpCode, std::vector<std::string>>> effects = {
      {OpCode::kStreamCreate, {}},
      {OpCode::kStreamAdd, {"2-0", "b", "2", "c", "3"}},
      {OpCode::kStreamAdd, {"7-3", "d", "4"}},
      {OpCode::kStreamSetMeta, {"9-0", "5", "1-1"}},
      {OpCode::kGroupCreate, {"g", "2-0", "1"}},
      {OpCode::kConsumerTouch, {"g", "alice", "100", "90"}},
      {OpCode::kPelSet, {"g", "alice", "90", "2-0", "1"}},
      {OpCode::kPelSet, {"g", "alice", "95", "7-3", "2"}},
      {OpCode::kConsumerTouch, {"g", "bob", "100", "-1"}},
      {OpCode::kGroupCreate, {"h", "0-0", "-1"}},
  };
  TestServer s;
  std::string expected;
  hotkv::RecordEncoder enc(expected);
  enc.open();
  for (const auto& [code, args] : effects) {
    REQUIRE(hotkv::test::apply_op(s, static_cast<uint16_t>(code), args, "s"));
    std::vector<std::string_view> views(args.begin(), args.end());
    enc.add_op("s", static_cast<uint16_t>(code), views);
  }
  enc.close(0, 1, 1);
  std::string log = encode_key(s, "s");
  hotkv::RecordDecoder dec(log);
  hotkv::Record r;
  REQUIRE(dec.next(r) == hotkv::DecodeStatus::kOk);
  REQUIRE(r.effects.size() == effects.size());
  for (size_t i = 0; i < effects.size(); ++i) {
    INFO("effect " << i);
    CHECK(r.effects[i].op == static_cast<uint16_t>(effects[i].first));
    CHECK(r.effects[i].args == effects[i].second);
  }
  CHECK(log == expected);
}
