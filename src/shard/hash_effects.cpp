// Hash effects in the append-only log (op codes in op_effects.hpp): one typed struct per op
// code, registered in hash_effects(); encode_hash writes the effects that rebuild a whole hash
// (the rewrite's snapshot, COPY and RENAME). Effects carry final values (HINCRBY and HINCRBYFLOAT
// log the value they produced), so replay only stores strings and never re-runs arithmetic.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/hash.hpp"

namespace hotkv {
namespace {

// The hash under key, or nullptr if the key is missing or holds another type.
Hash* existing_hash(Keyspace& ks, std::string_view key, int64_t now_ms) {
  Value* v = ks.find(key, now_ms);
  return v != nullptr && v->type() == ValueType::kHash ? v->hash() : nullptr;
}

// [field, value, ...]: set each pair, creating the hash if missing.
struct HashSetOp {
  static constexpr OpCode kCode = OpCode::kHashSet;
  std::span<const std::string_view> pairs;  // field, value, field, value...
  std::vector<std::string_view> decoded;    // what `pairs` views after decode

  void encode(OpWriter& w) const {
    for (std::string_view p : pairs) {
      w.str(p);
    }
  }
  static bool decode(OpReader& r, HashSetOp& out) {
    if (!r.rest(out.decoded, 2) || out.decoded.size() % 2 != 0) {
      return r.fail("field/value pairs expected");
    }
    out.pairs = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("HSET").arg(e.key).args(pairs);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Value* v = ks.find(key, ctx.now_ms);
    if (v == nullptr) {
      v = &ks.put(key, Value::from_hash(std::make_unique<Hash>()));
    }
    if (v->type() != ValueType::kHash) {
      return true;
    }
    // The same conversion rule the command applied, so with the same limits the encoding
    // comes back as it was.
    for (size_t i = 0; i < pairs.size(); i += 2) {
      v->hash()->set(pairs[i], pairs[i + 1], ctx.limits);
    }
    return true;
  }
};

// [field, ...]: HDEL; a hash left empty removes its key.
struct HashDelOp {
  static constexpr OpCode kCode = OpCode::kHashDel;
  std::span<const std::string_view> fields;
  std::vector<std::string_view> decoded;

  void encode(OpWriter& w) const {
    for (std::string_view f : fields) {
      w.str(f);
    }
  }
  static bool decode(OpReader& r, HashDelOp& out) {
    if (!r.rest(out.decoded, 1)) {
      return false;
    }
    out.fields = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("HDEL").arg(e.key).args(fields);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Hash* h = existing_hash(ks, key, ctx.now_ms)) {
      for (std::string_view f : fields) {
        h->erase(f);
      }
      if (h->empty()) {
        ks.erase(key);
      }
    }
    return true;
  }
};

// []: the hash moves to the hashtable encoding (a rebuilt hash keeps its encoding).
struct HashConvertOp {
  static constexpr OpCode kCode = OpCode::kHashConvert;

  void encode(OpWriter&) const {}
  static bool decode(OpReader&, HashConvertOp&) { return true; }
  // An encoding only: Redis picks a hash's encoding by its own limits.
  void to_commands(const Effect&, CommandSink&) const {}
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Hash* h = existing_hash(ks, key, ctx.now_ms)) {
      h->convert_to_hashtable();
    }
    return true;
  }
};

}  // namespace

void encode_hash(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint) {
  // Batches of 64 pairs, as Redis's rewrite writes HMSET: records stay small. A hashtable says
  // so after its first batch, so a small hashtable (one Redis converted for a long field since
  // deleted, or under a lower limit) comes back as a hashtable.
  constexpr size_t kPairsPerOp = 64;
  const Hash& h = *v.hash();
  std::string_view batch[2 * kPairsPerOp];
  size_t n = 0;
  bool first = true;
  auto emit = [&] {
    encode_op(enc, key, HashSetOp{{batch, n}, {}});
    n = 0;
    if (first && !h.listpack()) {
      encode_op(enc, key, HashConvertOp{});
    }
    first = false;
    checkpoint();
  };
  h.for_each([&](std::string_view f, const std::string& val) {
    batch[n++] = f;
    batch[n++] = val;
    if (n == 2 * kPairsPerOp) {
      emit();
    }
  });
  if (n > 0) {
    emit();
  }
}

const EffectFamily& hash_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<HashSetOp>("hash.set"),
      typed_op<HashDelOp>("hash.del"),
      typed_op<HashConvertOp>("hash.convert"),
  };
  static const EffectFamily kFamily{"hash", ValueType::kHash, 16, 31, kOps, &encode_hash};
  return kFamily;
}

}  // namespace hotkv
