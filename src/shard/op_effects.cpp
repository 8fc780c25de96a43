// The registry of aggregate-value effect families (effect_registry.hpp) and the dispatch of
// replay and of whole-value encoding through it (op_effects.hpp).
#include "hotkv/shard/op_effects.hpp"

#include <array>

#include "hotkv/shard/effect_registry.hpp"
#include "hotkv/util/assert.hpp"

namespace hotkv {
namespace {

// Op codes stay below this (lists, the highest range, end at 143).
constexpr size_t kOpTableSize = 256;

struct Tables {
  std::array<const EffectFamily*, 6> families{};
  std::array<const EffectOp*, kOpTableSize> ops{};
  std::array<const EffectFamily*, kOpTableSize> owners{};
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    t.families = {&stream_effects(), &hash_effects(), &set_effects(),
                  &zset_effects(),   &inventory_effects(), &list_effects()};
    for (const EffectFamily* f : t.families) {
      HOTKV_ASSERT(f->last_code < kOpTableSize && f->first_code <= f->last_code);
      for (size_t c = f->first_code; c <= f->last_code; ++c) {
        HOTKV_ASSERT(t.owners[c] == nullptr);  // ranges never overlap
        t.owners[c] = f;
      }
      for (const EffectOp& op : f->ops) {
        HOTKV_ASSERT(op.code >= f->first_code && op.code <= f->last_code);
        HOTKV_ASSERT(t.ops[op.code] == nullptr);
        t.ops[op.code] = &op;
      }
    }
    return t;
  }();
  return t;
}

}  // namespace

std::span<const EffectFamily* const> effect_families() { return tables().families; }

const EffectOp* find_effect_op(uint16_t code) {
  return code < kOpTableSize ? tables().ops[code] : nullptr;
}

const EffectFamily* family_of_op(uint16_t code) {
  return code < kOpTableSize ? tables().owners[code] : nullptr;
}

const EffectFamily* family_of_type(ValueType type) {
  for (const EffectFamily* f : tables().families) {
    if (f->type == type) {
      return f;
    }
  }
  return nullptr;
}

bool apply_op_effect(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                     const EncodingLimits& limits) {
  const EffectOp* op = find_effect_op(e.op);
  if (op == nullptr) {
    const EffectFamily* f = family_of_op(e.op);
    error = "unknown " + std::string(f != nullptr ? f->name : "") + (f != nullptr ? " " : "") +
            "op code " + std::to_string(e.op);
    return false;
  }
  return op->apply(ks, e, ReplayContext{now_ms, limits}, error);
}

void encode_replacement(RecordEncoder& enc, std::string_view key, const Value* v,
                        std::string& scratch) {
  if (v == nullptr || v->type() != ValueType::kString) {
    enc.add_del(key);  // a string's put replaces whatever was there; an aggregate is rebuilt
  }
  if (v != nullptr) {
    encode_value(enc, key, *v, scratch, [] {});
  }
}

void encode_value(RecordEncoder& enc, std::string_view key, const Value& v, std::string& scratch,
                  const std::function<void()>& checkpoint) {
  if (v.type() == ValueType::kString) {
    if (v.is_int()) {
      enc.add_put_int(key, v.int_value(), v.expire_at_ms());
    } else {
      enc.add_put_string(key, v.str(scratch), v.expire_at_ms());
    }
    return;
  }
  const EffectFamily* f = family_of_type(v.type());
  HOTKV_ASSERT(f != nullptr);
  f->encode(enc, key, v, checkpoint);
  if (v.has_expiry()) {
    enc.add_expire(key, v.expire_at_ms());
  }
}

}  // namespace hotkv
