// Set effects in the append-only log (op codes in op_effects.hpp): apply_set_op replays one,
// encode_set writes the effects that rebuild a whole set (the rewrite's snapshot, COPY, RENAME
// and the *STORE commands' destination). Replay adds and removes the logged members only --
// SPOP's random choice was made when it ran -- and the encoding is recorded, so a replayed set
// reports the same OBJECT ENCODING as the one that was logged.
#include <memory>
#include <string>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/set.hpp"

namespace hotkv {
namespace {

// The set under key, or nullptr if the key is missing or holds another type.
Set* existing_set(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  return v != nullptr && v->type() == ValueType::kSet ? v->set() : nullptr;
}

// The set under key, created empty (in `encoding`) if missing; nullptr for another type.
Set* set_or_create(Keyspace& ks, const Effect& e, int64_t now_ms, Set::Encoding encoding) {
  Value* v = ks.find(e.key, now_ms);
  if (v == nullptr) {
    return ks.put(e.key, Value::from_set(std::make_unique<Set>(encoding))).set();
  }
  return v->type() == ValueType::kSet ? v->set() : nullptr;
}

}  // namespace

bool apply_set_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                  const EncodingLimits& limits) {
  OpArgReader a(e, error);
  switch (static_cast<OpCode>(e.op)) {
    case OpCode::kSetCreate: {
      if (!a.exactly(1)) {
        return false;
      }
      Set::Encoding enc = Set::Encoding::kIntset;
      if (a.str(0) == Set::encoding_name(Set::Encoding::kHashtable)) {
        enc = Set::Encoding::kHashtable;
      } else if (a.str(0) != Set::encoding_name(Set::Encoding::kIntset)) {
        return a.fail("unknown set encoding '" + a.str(0) + "'");
      }
      set_or_create(ks, e, now_ms, enc);
      return true;
    }
    case OpCode::kSetAdd: {
      if (!a.at_least(1)) {
        return false;
      }
      if (Set* s = set_or_create(ks, e, now_ms, Set::Encoding::kIntset)) {
        for (const std::string& m : e.args) {
          s->add(m, limits);
        }
      }
      return true;
    }
    case OpCode::kSetRem: {
      if (!a.at_least(1)) {
        return false;
      }
      Set* s = existing_set(ks, e, now_ms);
      if (s == nullptr) {
        return true;
      }
      for (const std::string& m : e.args) {
        s->remove(m);
      }
      if (s->empty()) {
        ks.erase(e.key);  // a key never holds an empty set
      }
      return true;
    }
    default:
      break;
  }
  error = "unknown set op code " + std::to_string(e.op);
  return false;
}

void encode_set(RecordEncoder& enc, std::string_view key, const Value& v,
                const std::function<void()>& checkpoint) {
  // Members per kSetAdd effect, and effects between two checkpoints, so a huge set spreads
  // over several records of bounded size.
  constexpr size_t kMembersPerAdd = 128;
  constexpr size_t kEffectsPerCheckpoint = 64;
  const Set& s = *v.set();
  OpArgs args;
  size_t effects = 0;
  auto emit = [&](OpCode op) {
    enc.add_op(key, static_cast<uint16_t>(op), args.views());
    args.clear();
    // The create and the first members always share a record: a record boundary never leaves
    // an empty set behind.
    if (op != OpCode::kSetCreate && ++effects % kEffectsPerCheckpoint == 0) {
      checkpoint();
    }
  };
  args.add(s.encoding_name());
  emit(OpCode::kSetCreate);
  s.for_each([&](std::string_view m) {
    args.add(m);
    if (args.size() >= kMembersPerAdd) {
      emit(OpCode::kSetAdd);
    }
  });
  if (args.size() > 0) {
    emit(OpCode::kSetAdd);
  }
}

}  // namespace hotkv
