// The registry of op-effect families: every op code is registered once, in the range of its
// family; replay dispatches through it; every op's effect round-trips through a record and
// applies; malformed or corrupted effects are refused with an error, never a crash.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/util/crc32c.hpp"
#include "support/replay.hpp"
#include "support/test_server.hpp"

using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::OpCode;
using hotkv::test::TestServer;

namespace {

struct Sample {
  OpCode code;
  std::string key;
  std::vector<std::string> args;
};

// One valid effect of every op code, in an order where each applies to what the ones before
// built (a stream with a group and consumer, an item with a hold...).
std::vector<Sample> samples() {
  const std::string far = "99999999999999";
  return {
      {OpCode::kStreamCreate, "st", {}},
      {OpCode::kStreamAdd, "st", {"5-1", "f", "v"}},
      {OpCode::kStreamAdd, "st", {"6-1", "f", "w"}},
      {OpCode::kGroupCreate, "st", {"g", "0-0", "0"}},
      {OpCode::kConsumerTouch, "st", {"g", "c", "100", "100"}},
      {OpCode::kPelSet, "st", {"g", "c", "100", "5-1", "1"}},
      {OpCode::kPelAck, "st", {"g", "5-1"}},
      {OpCode::kGroupSetId, "st", {"g", "5-1", "1"}},
      {OpCode::kStreamDelete, "st", {"5-1"}},
      {OpCode::kStreamTrimBefore, "st", {"6-0"}},
      {OpCode::kStreamSetMeta, "st", {"9-0", "3", "5-1"}},
      {OpCode::kConsumerDelete, "st", {"g", "c"}},
      {OpCode::kGroupDestroy, "st", {"g"}},
      {OpCode::kHashSet, "h", {"f", "v", "g", "w"}},
      {OpCode::kHashDel, "h", {"g"}},
      {OpCode::kHashConvert, "h", {}},
      {OpCode::kSetCreate, "s", {"hashtable"}},
      {OpCode::kSetAdd, "s", {"a", "b"}},
      {OpCode::kSetRem, "s", {"a"}},
      {OpCode::kZSetAdd, "z", {"1.5", "m", "-inf", "n"}},
      {OpCode::kZSetRem, "z", {"n"}},
      {OpCode::kInvCreate, "item", {"10", "0", "0", "0", "0", ""}},
      {OpCode::kInvReserve, "item", {"h1", "2", "bob", "1000", far}},
      {OpCode::kInvExtend, "item", {"h1", far + "1"}},
      {OpCode::kInvSetTotal, "item", {"20"}},
      {OpCode::kInvSettle, "item", {"h1", "committed", "2000", "3000"}},
      {OpCode::kInvRestoreHold, "item", {"h2", "1", "", "1000", far, "held", "0", "0"}},
      {OpCode::kInvOwnerBought, "item", {"bob", "2"}},
      {OpCode::kListPushBack, "l", {"a", "b", "c"}},
      {OpCode::kListPushFront, "l", {"z"}},
      {OpCode::kListPopFront, "l", {"1"}},
      {OpCode::kListPopBack, "l", {"1"}},
      {OpCode::kListSet, "l", {"0", "x"}},
      {OpCode::kListInsert, "l", {"BEFORE", "x", "y"}},
      {OpCode::kListRem, "l", {"1", "y"}},
      {OpCode::kListTrim, "l", {"0", "0"}},
  };
}

// Stream effects replay must refuse whatever the key holds: a wrong number of arguments, an id
// or integer that does not parse, a negative count.
std::vector<Sample> malformed_stream_samples() {
  return {
      {OpCode::kStreamCreate, "st", {"x"}},
      {OpCode::kStreamAdd, "st", {"9-0", "f"}},
      {OpCode::kStreamAdd, "st", {"x", "f", "v"}},
      {OpCode::kStreamAdd, "st", {"0-0", "f", "v"}},
      {OpCode::kStreamDelete, "st", {"1-0", "1-x"}},
      {OpCode::kStreamTrimBefore, "st", {}},
      {OpCode::kStreamTrimBefore, "st", {"1-0", "2-0"}},
      {OpCode::kStreamSetMeta, "st", {"9-0", "1"}},
      {OpCode::kStreamSetMeta, "st", {"9-0", "-1", "0-0"}},
      {OpCode::kGroupCreate, "st", {"g", "0-0"}},
      {OpCode::kGroupSetId, "st", {"g", "-", "0"}},
      {OpCode::kGroupDestroy, "st", {}},
      {OpCode::kConsumerTouch, "st", {"g", "c", "1"}},
      {OpCode::kConsumerDelete, "st", {"g"}},
      {OpCode::kPelSet, "st", {"g", "c", "5", "1-0"}},
      {OpCode::kPelSet, "st", {"g", "c", "5", "1-0", "-1"}},
      {OpCode::kPelAck, "st", {}},
  };
}

// The record holding `s` as one op effect, encoded as the log writes it.
std::string encode_sample(const Sample& s, uint64_t seq) {
  std::string out;
  hotkv::RecordEncoder enc(out);
  enc.open();
  std::vector<std::string_view> views(s.args.begin(), s.args.end());
  enc.add_op(s.key, static_cast<uint16_t>(s.code), views);
  enc.close(0, 1, seq);
  return out;
}

}  // namespace

TEST_CASE("every op code is registered once, inside its family's range", "[persist][effects]") {
  std::set<uint16_t> codes;
  std::set<std::string_view> names;
  size_t ops = 0;
  for (const hotkv::EffectFamily* f : hotkv::effect_families()) {
    INFO("family " << f->name);
    CHECK(hotkv::family_of_type(f->type) == f);
    CHECK(f->encode != nullptr);
    for (const hotkv::EffectOp& op : f->ops) {
      ++ops;
      CHECK(op.code >= f->first_code);
      CHECK(op.code <= f->last_code);
      CHECK(codes.insert(op.code).second);
      CHECK(names.insert(op.name).second);
      CHECK(op.name.substr(0, f->name.size()) == f->name);
      CHECK(hotkv::find_effect_op(op.code) == &op);
      CHECK(hotkv::family_of_op(op.code) == f);
    }
  }
  CHECK(hotkv::effect_families().size() == 6);
  // The samples name every op code there is.
  std::set<uint16_t> sampled;
  for (const Sample& s : samples()) {
    sampled.insert(static_cast<uint16_t>(s.code));
  }
  CHECK(sampled == codes);
  CHECK(ops == codes.size());
  CHECK(hotkv::family_of_type(hotkv::ValueType::kString) == nullptr);
  for (uint16_t unknown : {0, 13, 15, 19, 35, 50, 71, 127, 136, 144, 255, 256, 65535}) {
    INFO("code " << unknown);
    CHECK(hotkv::find_effect_op(unknown) == nullptr);
  }
}

TEST_CASE("every op round-trips through a record and replays through the registry",
          "[persist][effects]") {
  TestServer s;
  uint64_t seq = 0;
  for (const Sample& sample : samples()) {
    INFO("op " << static_cast<int>(sample.code) << " on " << sample.key);
    std::string log = encode_sample(sample, ++seq);
    hotkv::RecordDecoder dec(log);
    hotkv::Record r;
    REQUIRE(dec.next(r) == hotkv::DecodeStatus::kOk);
    CHECK(r.seq == seq);
    REQUIRE(r.effects.size() == 1);
    const Effect& e = r.effects[0];
    CHECK(e.kind == EffectKind::kOp);
    CHECK(e.op == static_cast<uint16_t>(sample.code));
    CHECK(e.key == sample.key);
    CHECK(e.args == sample.args);
    CHECK(hotkv::test::apply_op(s, e.op, e.args, e.key));
  }
  CHECK(s.run({"TYPE", "h"}) == "+hash\r\n");
  CHECK(s.run({"HGETALL", "h"}) == "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "h"}) == "$9\r\nhashtable\r\n");
  CHECK(s.run({"SMEMBERS", "s"}) == "*1\r\n$1\r\nb\r\n");
  CHECK(s.run({"OBJECT", "ENCODING", "s"}) == "$9\r\nhashtable\r\n");
  CHECK(s.run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}) == "*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n");
  CHECK(s.run({"LRANGE", "l", "0", "-1"}) == "*1\r\n$1\r\nx\r\n");
  CHECK(s.run({"XLEN", "st"}) == ":1\r\n");
}

TEST_CASE("replay refuses unknown op codes and malformed arguments with an error",
          "[persist][effects]") {
  TestServer s;
  SECTION("unknown codes, inside a family's range or not") {
    CHECK_FALSE(hotkv::test::apply_op(s, 0, {}, "k"));
    CHECK_FALSE(hotkv::test::apply_op(s, 19, {"x"}, "k"));
    CHECK_FALSE(hotkv::test::apply_op(s, 1000, {}, "k"));
  }
  SECTION("typed ops: too few, too many, or unparsable arguments") {
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kHashSet), {"f"}, "h"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kHashSet), {}, "h"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kHashDel), {}, "h"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kHashConvert), {"x"}, "h"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kSetCreate), {"zip"}, "s"));
    CHECK_FALSE(
        hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kSetCreate), {"intset", "x"}, "s"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kSetAdd), {}, "s"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kZSetAdd), {"x", "m"}, "z"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kZSetAdd), {"1"}, "z"));
    CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(OpCode::kZSetRem), {}, "z"));
    for (const Sample& bad : malformed_stream_samples()) {
      INFO("stream op " << static_cast<int>(bad.code));
      CHECK_FALSE(hotkv::test::apply_op(s, static_cast<uint16_t>(bad.code), bad.args, "st"));
    }
    // Nothing was created by the refused effects.
    CHECK(s.run({"DBSIZE"}) == ":0\r\n");
  }
  SECTION("a refused stream effect leaves an existing stream as it was") {
    auto op = [&](OpCode code, std::vector<std::string> args) {
      return hotkv::test::apply_op(s, static_cast<uint16_t>(code), std::move(args), "st");
    };
    REQUIRE(op(OpCode::kStreamAdd, {"1-0", "f", "v"}));
    REQUIRE(op(OpCode::kStreamAdd, {"2-0", "f", "w"}));
    REQUIRE(op(OpCode::kGroupCreate, {"g", "1-0", "1"}));
    REQUIRE(op(OpCode::kPelSet, {"g", "c", "50", "1-0", "1"}));
    auto state = [&] {
      return s.run({"XINFO", "STREAM", "st", "FULL"}) + s.run({"XPENDING", "st", "g"});
    };
    const std::string before = state();
    for (const Sample& bad : malformed_stream_samples()) {
      INFO("stream op " << static_cast<int>(bad.code));
      CHECK_FALSE(op(bad.code, bad.args));
    }
    // A bad field after good ones: nothing of the effect applies.
    CHECK_FALSE(op(OpCode::kStreamAdd, {"2-0", "f", "v"}));
    CHECK_FALSE(op(OpCode::kStreamDelete, {"1-0", "bad"}));
    CHECK_FALSE(op(OpCode::kPelSet, {"g", "d", "60", "2-0", "1", "1-0", "x"}));
    CHECK_FALSE(op(OpCode::kPelAck, {"g", "1-0", "bad"}));
    CHECK_FALSE(op(OpCode::kGroupCreate, {"g2", "0-0", "1", "extra"}));
    CHECK(state() == before);
  }
  SECTION("every sample cut short or padded is applied or refused, never a crash") {
    for (const Sample& sample : samples()) {
      for (size_t keep = 0; keep < sample.args.size(); ++keep) {
        std::vector<std::string> cut(sample.args.begin(), sample.args.begin() + keep);
        hotkv::test::apply_op(s, static_cast<uint16_t>(sample.code), cut, sample.key);
      }
      auto padded = sample.args;
      padded.push_back("junk");
      hotkv::test::apply_op(s, static_cast<uint16_t>(sample.code), padded, sample.key);
      auto garbled = sample.args;
      for (auto& a : garbled) {
        a = "-x";
      }
      hotkv::test::apply_op(s, static_cast<uint16_t>(sample.code), garbled, sample.key);
    }
    CHECK(s.run({"PING"}) == "+PONG\r\n");
  }
}

TEST_CASE("a record corrupted behind a valid checksum is refused or replayed, never a crash",
          "[persist][effects]") {
  // Every op in one record; then bytes of the body are changed and the checksum recomputed, as
  // a writer bug (not a disk) would produce.
  std::string log;
  hotkv::RecordEncoder enc(log);
  enc.open();
  for (const Sample& sample : samples()) {
    std::vector<std::string_view> views(sample.args.begin(), sample.args.end());
    enc.add_op(sample.key, static_cast<uint16_t>(sample.code), views);
  }
  enc.close(0, 1, 1);
  std::mt19937 rng(17);
  TestServer s;
  size_t refused = 0;
  size_t replayed = 0;
  for (int round = 0; round < 400; ++round) {
    std::string bad = log;
    for (int flips = 0; flips < 3; ++flips) {
      size_t at = hotkv::kRecordFrame + rng() % (bad.size() - hotkv::kRecordFrame);
      bad[at] = static_cast<char>(rng());
    }
    uint32_t crc = hotkv::crc32c(std::string_view(bad).substr(hotkv::kRecordFrame));
    std::memcpy(bad.data() + 4, &crc, 4);
    hotkv::RecordDecoder dec(bad);
    hotkv::Record r;
    hotkv::DecodeStatus st = dec.next(r);
    CHECK((st == hotkv::DecodeStatus::kOk || st == hotkv::DecodeStatus::kCorrupt));
    if (st != hotkv::DecodeStatus::kOk) {
      ++refused;
      continue;
    }
    ++replayed;
    for (const Effect& e : r.effects) {
      if (e.kind == EffectKind::kOp) {
        std::string error;
        bool ok = hotkv::apply_op_effect(s.engine().shard(0).keyspace(0), e, s.now(), error);
        CHECK(ok == error.empty());
      }
    }
  }
  CHECK(refused > 0);
  CHECK(refused + replayed == 400);
}

TEST_CASE("a list made by replay takes the configured node size and compress depth",
          "[persist][effects][list]") {
  TestServer s;
  hotkv::EncodingLimits limits;
  limits.list_fill = 4;
  limits.list_compress_depth = 1;
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = "q";
  e.op = static_cast<uint16_t>(OpCode::kListPushBack);
  for (int i = 0; i < 40; ++i) {
    // Compressible elements: a compressed node must save bytes, as in Redis.
    e.args.push_back("event:user:0000000" + std::to_string(i % 10) + ":checkout:ok");
  }
  std::string err;
  hotkv::Keyspace& ks = s.engine().shard(0).keyspace(0);
  REQUIRE(hotkv::apply_op_effect(ks, e, s.now(), err, limits));
  hotkv::Value* v = ks.find("q", s.now());
  REQUIRE(v != nullptr);
  const hotkv::List& l = *v->list();
  CHECK(l.size() == 40);
  CHECK(l.compress_depth() == 1);
  CHECK(l.node_count() == 10);              // 4 entries a node, not the default 8 KB
  CHECK(l.compressed_node_count() == 8);    // every node but the two ends
}
