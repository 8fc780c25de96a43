// Sorted-set effects in the append-only log (op codes in op_effects.hpp): apply_zset_op replays
// one, encode_zset writes the effects that rebuild a whole zset (the rewrite's snapshot, COPY
// and RENAME). Effects carry final scores, never increments, so ZINCRBY and ZADD INCR replay
// without recomputing anything, and removals name the members that went.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// %.17g round-trips every double; glibc spells the infinities "inf"/"-inf" and keeps "-0",
// all of which parse_double reads back.
std::string_view score_text(double score, char (&buf)[32]) {
  int n = std::snprintf(buf, sizeof(buf), "%.17g", score);
  return {buf, static_cast<size_t>(n)};
}

bool apply_add(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  if (a.size() < 2 || a.size() % 2 != 0) {
    return a.fail("score/member pairs expected");
  }
  // Everything is parsed before anything changes, so a malformed effect changes nothing.
  std::vector<double> scores;
  scores.reserve(a.size() / 2);
  for (size_t i = 0; i < a.size(); i += 2) {
    std::optional<double> s = parse_double(a.str(i));
    if (!s) {
      return a.fail("bad score '" + a.str(i) + "'");
    }
    scores.push_back(*s);
  }
  Value* v = ks.find(e.key, now_ms);
  if (v == nullptr) {
    v = &ks.put(e.key, Value::from_zset(std::make_unique<ZSet>()));
  } else if (v->type() != ValueType::kZSet) {
    return true;
  }
  for (size_t i = 0; i < a.size(); i += 2) {
    v->zset()->set(a.str(i + 1), scores[i / 2]);
  }
  return true;
}

bool apply_rem(Keyspace& ks, const Effect& e, int64_t now_ms, OpArgReader& a) {
  if (!a.at_least(1)) {
    return false;
  }
  Value* v = ks.find(e.key, now_ms);
  if (v == nullptr || v->type() != ValueType::kZSet) {
    return true;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    v->zset()->erase(a.str(i));
  }
  if (v->zset()->empty()) {
    ks.erase(e.key);
  }
  return true;
}

}  // namespace

bool apply_zset_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error) {
  OpArgReader a(e, error);
  switch (static_cast<OpCode>(e.op)) {
    case OpCode::kZSetAdd:
      return apply_add(ks, e, now_ms, a);
    case OpCode::kZSetRem:
      return apply_rem(ks, e, now_ms, a);
    default:
      break;
  }
  return a.fail("unknown sorted set op code " + std::to_string(e.op));
}

void encode_zset(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint) {
  // 128 members per effect and a checkpoint every 8 effects: a million-member zset spreads
  // over about a thousand records.
  constexpr size_t kMembersPerEffect = 128;
  constexpr size_t kEffectsPerCheckpoint = 8;
  const ZSet& z = *v.zset();
  OpArgs args;
  char buf[32];
  size_t effects = 0;
  for (const ZSet::Node* n = z.first(); n != nullptr; n = n->next()) {
    args.add(score_text(n->score(), buf)).add(n->member());
    if (args.size() >= 2 * kMembersPerEffect || n->next() == nullptr) {
      enc.add_op(key, static_cast<uint16_t>(OpCode::kZSetAdd), args.views());
      args.clear();
      if (++effects % kEffectsPerCheckpoint == 0 && n->next() != nullptr) {
        checkpoint();
      }
    }
  }
}

}  // namespace hotkv
