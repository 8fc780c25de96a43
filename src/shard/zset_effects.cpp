// Sorted-set effects in the append-only log (op codes in op_effects.hpp): one typed struct per
// op code, registered in zset_effects(); encode_zset writes the effects that rebuild a whole
// zset (the rewrite's snapshot, COPY and RENAME). Effects carry final scores, never increments, so
// ZINCRBY and ZADD INCR replay without recomputing anything, and removals name the members that
// went.
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// [score, member, ...]: set each member's final score (creating the sorted set if missing).
struct ZSetAddOp {
  static constexpr OpCode kCode = OpCode::kZSetAdd;
  std::span<const ZSet::Node* const> nodes;  // encode: the members as they are
  std::vector<std::pair<double, std::string_view>> decoded;

  void encode(OpWriter& w) const {
    for (const ZSet::Node* n : nodes) {
      w.score(n->score()).str(n->member());
    }
  }
  static bool decode(OpReader& r, ZSetAddOp& out) {
    if (r.remaining() < 2 || r.remaining() % 2 != 0) {
      return r.fail("score/member pairs expected");
    }
    // Everything is parsed before anything changes, so a malformed effect changes nothing.
    out.decoded.reserve(r.remaining() / 2);
    while (!r.at_end()) {
      double score = 0;
      std::string_view member;
      if (!r.score(score) || !r.str(member)) {
        return false;
      }
      out.decoded.emplace_back(score, member);
    }
    return true;
  }
  // Final scores in Redis's own double text (17 significant digits, "inf"/"-inf", which ZADD
  // reads): the replica's double is bit for bit HotKV's.
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("ZADD").arg(e.key);
    for (const auto& [score, member] : decoded) {
      out.arg(format_double(score)).arg(member);
    }
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Value* v = ks.find(key, ctx.now_ms);
    if (v == nullptr) {
      v = &ks.put(key, Value::from_zset(std::make_unique<ZSet>()));
    } else if (v->type() != ValueType::kZSet) {
      return true;
    }
    for (const auto& [score, member] : decoded) {
      v->zset()->set(member, score);
    }
    return true;
  }
};

// [member, ...]: remove them (the key goes when the sorted set is emptied).
struct ZSetRemOp {
  static constexpr OpCode kCode = OpCode::kZSetRem;
  std::span<const std::string_view> members;
  std::vector<std::string_view> decoded;

  void encode(OpWriter& w) const {
    for (std::string_view m : members) {
      w.str(m);
    }
  }
  static bool decode(OpReader& r, ZSetRemOp& out) {
    if (!r.rest(out.decoded, 1)) {
      return false;
    }
    out.members = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("ZREM").arg(e.key).args(members);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Value* v = ks.find(key, ctx.now_ms);
    if (v == nullptr || v->type() != ValueType::kZSet) {
      return true;
    }
    for (std::string_view m : members) {
      v->zset()->erase(m);
    }
    if (v->zset()->empty()) {
      ks.erase(key);
    }
    return true;
  }
};

}  // namespace

void encode_zset(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint) {
  // 128 members per effect and a checkpoint every 8 effects: a million-member zset spreads
  // over about a thousand records.
  constexpr size_t kMembersPerEffect = 128;
  constexpr size_t kEffectsPerCheckpoint = 8;
  const ZSet& z = *v.zset();
  const ZSet::Node* batch[kMembersPerEffect];
  size_t count = 0;
  size_t effects = 0;
  for (const ZSet::Node* n = z.first(); n != nullptr; n = n->next()) {
    batch[count++] = n;
    if (count >= kMembersPerEffect || n->next() == nullptr) {
      encode_op(enc, key, ZSetAddOp{{batch, count}, {}});
      count = 0;
      if (++effects % kEffectsPerCheckpoint == 0 && n->next() != nullptr) {
        checkpoint();
      }
    }
  }
}

const EffectFamily& zset_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<ZSetAddOp>("zset.add"),
      typed_op<ZSetRemOp>("zset.rem"),
  };
  static const EffectFamily kFamily{"zset", ValueType::kZSet, kZSetOpFirst, kZSetOpLast, kOps,
                                    &encode_zset};
  return kFamily;
}

}  // namespace hotkv
