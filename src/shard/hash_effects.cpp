// Hash effects in the append-only log (op codes in op_effects.hpp): apply_hash_op replays one,
// encode_hash writes the effects that rebuild a whole hash (the rewrite's snapshot, COPY and
// RENAME). Effects carry final values (HINCRBY and HINCRBYFLOAT log the value they produced),
// so replay only stores strings and never re-runs arithmetic.
#include <memory>
#include <string>

#include "hotkv/shard/op_args.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/hash.hpp"

namespace hotkv {

namespace {

// The hash under key, or nullptr if the key is missing or holds another type.
Hash* existing_hash(Keyspace& ks, const Effect& e, int64_t now_ms) {
  Value* v = ks.find(e.key, now_ms);
  return v != nullptr && v->type() == ValueType::kHash ? v->hash() : nullptr;
}

}  // namespace

bool apply_hash_op(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                   const EncodingLimits& limits) {
  OpArgReader a(e, error);
  switch (static_cast<OpCode>(e.op)) {
    case OpCode::kHashSet: {
      if (a.size() == 0 || a.size() % 2 != 0) {
        return a.fail("field/value pairs expected");
      }
      Value* v = ks.find(e.key, now_ms);
      if (v == nullptr) {
        v = &ks.put(e.key, Value::from_hash(std::make_unique<Hash>()));
      }
      if (v->type() != ValueType::kHash) {
        return true;
      }
      // The same conversion rule the command applied, so with the same limits the encoding
      // comes back as it was.
      for (size_t i = 0; i < a.size(); i += 2) {
        v->hash()->set(a.str(i), a.str(i + 1), limits);
      }
      return true;
    }
    case OpCode::kHashDel: {
      if (!a.at_least(1)) {
        return false;
      }
      if (Hash* h = existing_hash(ks, e, now_ms)) {
        for (size_t i = 0; i < a.size(); ++i) {
          h->erase(a.str(i));
        }
        if (h->empty()) {
          ks.erase(e.key);
        }
      }
      return true;
    }
    case OpCode::kHashConvert:
      if (!a.exactly(0)) {
        return false;
      }
      if (Hash* h = existing_hash(ks, e, now_ms)) {
        h->convert_to_hashtable();
      }
      return true;
    default:
      break;
  }
  error = "unknown hash op code " + std::to_string(e.op);
  return false;
}

void encode_hash(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint) {
  // Batches of 64 pairs, as Redis's rewrite writes HMSET: records stay small. A hashtable says
  // so after its first batch, so a small hashtable (one Redis converted for a long field since
  // deleted, or under a lower limit) comes back as a hashtable.
  constexpr size_t kPairsPerOp = 64;
  const Hash& h = *v.hash();
  OpArgs args;
  size_t pairs = 0;
  bool first = true;
  auto emit = [&] {
    enc.add_op(key, static_cast<uint16_t>(OpCode::kHashSet), args.views());
    args.clear();
    pairs = 0;
    if (first && !h.listpack()) {
      enc.add_op(key, static_cast<uint16_t>(OpCode::kHashConvert), {});
    }
    first = false;
    checkpoint();
  };
  h.for_each([&](std::string_view f, const std::string& val) {
    args.add(f).add(val);
    if (++pairs == kPairsPerOp) {
      emit();
    }
  });
  if (pairs > 0) {
    emit();
  }
}

}  // namespace hotkv
