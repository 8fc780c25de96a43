// The one registry of aggregate-value effect families (streams, hashes, sets, sorted sets,
// inventory items, lists). Each family, in its own *_effects.cpp, describes itself once: the op
// codes it owns and, per op code, its name and how replay applies it, plus how a whole value of
// its type is written as effects (the rewrite's snapshot, COPY, RENAME). Replay, encode_value
// and hotkv-check-aof find a family or an op through these lookups, never through a chain of
// range checks, so a new family is one more entry in effect_families() and nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/keyspace.hpp"
#include "hotkv/types/encoding_limits.hpp"

namespace hotkv {

class CommandSink;

// What replay hands every op: the load's clock and the encoding limits configured at start-up
// (hashes and sets that grow during replay convert by them, as Redis re-encodes what it loads).
struct ReplayContext {
  int64_t now_ms = 0;
  const EncodingLimits& limits;
};

// Applies one kOp effect on the owning shard's thread. Returns false with `error` set if its
// arguments are malformed; an op that finds its key missing or of another type is a no-op (a
// later effect deleted or replaced it).
using ApplyOpFn = bool (*)(Keyspace& ks, const Effect& e, const ReplayContext& ctx,
                           std::string& error);
// Appends effects that recreate `v` under `key` (its deadline excepted: encode_value adds it);
// `checkpoint` is called between effects of a large value so the caller may cut the record.
using EncodeValueFn = void (*)(RecordEncoder& enc, std::string_view key, const Value& v,
                               const std::function<void()>& checkpoint);

// Appends to `out` the Redis commands that give a Redis server the state this kOp effect
// gives HotKV (effect_commands.hpp; docs/replication.md has the table). Returns false with
// `error` set if the effect's arguments are malformed. Any thread.
using ToCommandsFn = bool (*)(const Effect& e, CommandSink& out, std::string& error);

struct EffectOp {
  uint16_t code = 0;
  std::string_view name;  // "family.op", as hotkv-check-aof --verbose prints it
  ApplyOpFn apply = nullptr;
  // The Redis commands giving a Redis server the same state (effect_commands.hpp).
  ToCommandsFn to_commands = nullptr;
};

struct EffectFamily {
  std::string_view name;
  ValueType type;
  uint16_t first_code;  // the op-code range the family owns (docs/aof-format.md)
  uint16_t last_code;
  std::span<const EffectOp> ops;
  EncodeValueFn encode = nullptr;
};

// Every family, in no particular order. Defined in op_effects.cpp, from the families' own
// descriptions below. Any thread (the table never changes).
std::span<const EffectFamily* const> effect_families();
// The op with this code, or nullptr if no family defines it. Any thread; a table lookup.
const EffectOp* find_effect_op(uint16_t code);
// The family owning this code's range, or nullptr. Any thread.
const EffectFamily* family_of_op(uint16_t code);
// The family that writes values of this type, or nullptr (strings are plain puts). Any thread.
const EffectFamily* family_of_type(ValueType type);

// The families' descriptions (stream_effects.cpp, hash_effects.cpp, ...).
const EffectFamily& stream_effects();
const EffectFamily& hash_effects();
const EffectFamily& set_effects();
const EffectFamily& zset_effects();
const EffectFamily& inventory_effects();
const EffectFamily& list_effects();

}  // namespace hotkv
