// Set effects in the append-only log (op codes in op_effects.hpp): one typed struct per op code,
// registered in set_effects(); encode_set writes the effects that rebuild a whole set (the
// rewrite's snapshot, COPY, RENAME and the *STORE commands' destination). Replay adds and removes
// the logged members only -- SPOP's random choice was made when it ran -- and the encoding is
// recorded, so a replayed set reports the same OBJECT ENCODING as the one that was logged.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hotkv/shard/op_codec.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/types/set.hpp"

namespace hotkv {
namespace {

// The set under key, or nullptr if the key is missing or holds another type.
Set* existing_set(Keyspace& ks, std::string_view key, int64_t now_ms) {
  Value* v = ks.find(key, now_ms);
  return v != nullptr && v->type() == ValueType::kSet ? v->set() : nullptr;
}

// The set under key, created empty (in `encoding`) if missing; nullptr for another type.
Set* set_or_create(Keyspace& ks, std::string_view key, int64_t now_ms, Set::Encoding encoding) {
  Value* v = ks.find(key, now_ms);
  if (v == nullptr) {
    return ks.put(key, Value::from_set(std::make_unique<Set>(encoding))).set();
  }
  return v->type() == ValueType::kSet ? v->set() : nullptr;
}

// [encoding]: an empty set in "intset" or "hashtable" encoding, if the key is missing.
struct SetCreateOp {
  static constexpr OpCode kCode = OpCode::kSetCreate;
  Set::Encoding encoding = Set::Encoding::kIntset;

  void encode(OpWriter& w) const { w.str(Set::encoding_name(encoding)); }
  static bool decode(OpReader& r, SetCreateOp& out) {
    std::string_view name;
    if (!r.str(name)) {
      return false;
    }
    if (name == Set::encoding_name(Set::Encoding::kHashtable)) {
      out.encoding = Set::Encoding::kHashtable;
    } else if (name == Set::encoding_name(Set::Encoding::kIntset)) {
      out.encoding = Set::Encoding::kIntset;
    } else {
      return r.fail("unknown set encoding '" + std::string(name) + "'");
    }
    return true;
  }
  // Redis keeps no empty set and picks the encoding by its own limits; the kSetAdd that
  // always follows in the same record creates the set there.
  void to_commands(const Effect&, CommandSink&) const {}
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    set_or_create(ks, key, ctx.now_ms, encoding);
    return true;
  }
};

// [member, ...]: add (creating the set as an intset if missing).
struct SetAddOp {
  static constexpr OpCode kCode = OpCode::kSetAdd;
  std::span<const std::string_view> members;
  std::vector<std::string_view> decoded;

  void encode(OpWriter& w) const {
    for (std::string_view m : members) {
      w.str(m);
    }
  }
  static bool decode(OpReader& r, SetAddOp& out) {
    if (!r.rest(out.decoded, 1)) {
      return false;
    }
    out.members = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("SADD").arg(e.key).args(members);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    if (Set* s = set_or_create(ks, key, ctx.now_ms, Set::Encoding::kIntset)) {
      for (std::string_view m : members) {
        s->add(m, ctx.limits);
      }
    }
    return true;
  }
};

// [member, ...]: remove; the key is deleted once the set is empty.
struct SetRemOp {
  static constexpr OpCode kCode = OpCode::kSetRem;
  std::span<const std::string_view> members;
  std::vector<std::string_view> decoded;

  void encode(OpWriter& w) const {
    for (std::string_view m : members) {
      w.str(m);
    }
  }
  static bool decode(OpReader& r, SetRemOp& out) {
    if (!r.rest(out.decoded, 1)) {
      return false;
    }
    out.members = out.decoded;
    return true;
  }
  void to_commands(const Effect& e, CommandSink& out) const {
    out.begin("SREM").arg(e.key).args(members);
  }
  bool apply(Keyspace& ks, std::string_view key, const ReplayContext& ctx, std::string&) const {
    Set* s = existing_set(ks, key, ctx.now_ms);
    if (s == nullptr) {
      return true;
    }
    for (std::string_view m : members) {
      s->remove(m);
    }
    if (s->empty()) {
      ks.erase(key);  // a key never holds an empty set
    }
    return true;
  }
};

}  // namespace

void encode_set(RecordEncoder& enc, std::string_view key, const Value& v,
                const std::function<void()>& checkpoint) {
  // Members per kSetAdd effect, and effects between two checkpoints, so a huge set spreads
  // over several records of bounded size.
  constexpr size_t kMembersPerAdd = 128;
  constexpr size_t kEffectsPerCheckpoint = 64;
  const Set& s = *v.set();
  // An intset formats each member into one reused buffer: its members are copied into `ints`,
  // whose capacity (21 bytes per int64) is fixed up front so the views into it stay valid.
  std::string_view batch[kMembersPerAdd];
  std::string ints;
  ints.reserve(kMembersPerAdd * 21);
  size_t n = 0;
  size_t effects = 0;
  // The create and the first members always share a record: a record boundary never leaves
  // an empty set behind.
  encode_op(enc, key, SetCreateOp{s.encoding()});
  auto emit = [&] {
    encode_op(enc, key, SetAddOp{{batch, n}, {}});
    n = 0;
    ints.clear();
    if (++effects % kEffectsPerCheckpoint == 0) {
      checkpoint();
    }
  };
  const bool intset = s.encoding() == Set::Encoding::kIntset;
  s.for_each([&](std::string_view m) {
    if (intset) {
      size_t at = ints.size();
      ints.append(m);
      m = std::string_view(ints.data() + at, m.size());
    }
    batch[n++] = m;
    if (n >= kMembersPerAdd) {
      emit();
    }
  });
  if (n > 0) {
    emit();
  }
}

const EffectFamily& set_effects() {
  static constexpr EffectOp kOps[] = {
      typed_op<SetAddOp>("set.add"),
      typed_op<SetRemOp>("set.rem"),
      typed_op<SetCreateOp>("set.create"),
  };
  static const EffectFamily kFamily{"set", ValueType::kSet, kSetOpFirst, kSetOpLast, kOps,
                                    &encode_set};
  return kFamily;
}

}  // namespace hotkv
