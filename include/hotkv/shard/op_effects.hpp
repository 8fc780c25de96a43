// Effects on aggregate values (streams, inventory items, hashes, sets, sorted sets, lists) as they
// go to the append-only log: EffectKind::kOp records carrying an op code and concrete arguments
// (ids, absolute times, counts), so replay applies exactly what happened and never re-runs a
// command. Each family owns a range of op codes and describes its ops in the one registry
// (effect_registry.hpp), through which replay and encode_value dispatch; encode_value writes
// any value as effects that recreate it (the rewrite's snapshot, COPY, RENAME). Every family
// defines a typed struct per op (op_codec.hpp) in its family's file.
//
// Arguments are strings: ids as "ms-seq", integers in decimal. docs/aof-format.md lists them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hotkv/persist/record.hpp"
#include "hotkv/shard/keyspace.hpp"
#include "hotkv/types/encoding_limits.hpp"

namespace hotkv {

enum class OpCode : uint16_t {
  // Streams (1..15): typed structs in stream_effects.cpp.
  kStreamCreate = 1,      // []: an empty stream under key, if the key is missing
  kStreamAdd = 2,         // [id, field, value, ...]: append (creating the stream if missing)
  kStreamDelete = 3,      // [id, ...]: XDEL
  kStreamTrimBefore = 4,  // [id]: remove every entry with a smaller id (any trim's effect)
  kStreamSetMeta = 5,     // [last_id, entries_added, max_deleted_id]
  kGroupCreate = 6,       // [group, last_delivered_id, entries_read]
  kGroupSetId = 7,        // [group, last_delivered_id, entries_read]
  kGroupDestroy = 8,      // [group]
  kConsumerTouch = 9,     // [group, consumer, seen_ms, active_ms]: create or set its times
  kConsumerDelete = 10,   // [group, consumer]
  kPelSet = 11,           // [group, consumer, delivery_ms, id, count, id, count, ...]
  kPelAck = 12,           // [group, id, ...]

  // Hashes (16..31): typed structs in hash_effects.cpp.
  kHashSet = 16,      // [field, value, ...]: set each pair (creating the hash if missing)
  kHashDel = 17,      // [field, ...]: remove the fields; an emptied hash removes the key
  kHashConvert = 18,  // []: move to the hashtable encoding (a rebuilt hash keeps its encoding)

  // Sets (32..47): typed structs in set_effects.cpp.
  kSetAdd = 32,     // [member, ...]: add (creating the set if missing)
  kSetRem = 33,     // [member, ...]: remove; the key is deleted once the set is empty
  kSetCreate = 34,  // [encoding]: an empty set in "intset" or "hashtable" encoding, if missing
  // Sorted sets (48..63): typed structs in zset_effects.cpp. Scores are written as
  // replies print them (%.17g, "inf", "-inf", "-0"), which round-trips every double exactly.
  kZSetAdd = 48,  // [score, member, ...]: set each member's final score (creating the zset)
  kZSetRem = 49,  // [member, ...]: remove them (the key goes when the zset is emptied)

  // Inventory items (64..127): typed structs in inventory_effects.cpp. Owners
  // are "" when a hold has none; times are absolute unix ms; states are hold_state_name().
  kInvCreate = 64,       // [total, sold, sold_out 0|1, max_per_owner, max_hold_ms, events_key,
                         //  max_events (only when > 0)]
  kInvReserve = 65,      // [hold, qty, owner, created_ms, expires_ms]: available -> held
  kInvSettle = 66,       // [hold, state, settled_ms, purge_ms]: commit/release/expiry
  kInvExtend = 67,       // [hold, expires_ms]
  kInvSetTotal = 68,     // [total]: restock (available moves with it)
  kInvRestoreHold = 69,  // [hold, qty, owner, created_ms, expires_ms, state, settled_ms,
                         //  purge_ms]: rebuilding an item (no sold-out edge)
  kInvOwnerBought = 70,  // [owner, units]: rebuilding an item with MAXPEROWNER (units its
                         //  committed holds took, records purged or not)

  // Lists (128..143): typed structs in list_effects.cpp. Indexes are normalised
  // (0-based from the head) when logged.
  kListPushFront = 128,  // [element, ...]: LPUSH order (creating the list if missing)
  kListPushBack = 129,   // [element, ...]: RPUSH order (creating the list if missing)
  kListPopFront = 130,   // [count]: remove count elements from the head (key goes once empty)
  kListPopBack = 131,    // [count]: remove count elements from the tail
  kListSet = 132,        // [index, element]: LSET
  kListInsert = 133,     // [BEFORE|AFTER, pivot, element]: LINSERT at the first pivot
  kListRem = 134,        // [count, element]: LREM
  kListTrim = 135,       // [start, stop]: keep only that range (LTRIM)
};

inline constexpr uint16_t kStreamOpFirst = 1;
inline constexpr uint16_t kStreamOpLast = 15;
inline constexpr uint16_t kSetOpFirst = 32;
inline constexpr uint16_t kSetOpLast = 47;
inline constexpr uint16_t kZSetOpFirst = 48;
inline constexpr uint16_t kZSetOpLast = 63;
inline constexpr uint16_t kInventoryOpFirst = 64;
inline constexpr uint16_t kInventoryOpLast = 127;
inline constexpr uint16_t kHashOpFirst = 16;
inline constexpr uint16_t kHashOpLast = 31;
inline constexpr uint16_t kListOpFirst = 128;
inline constexpr uint16_t kListOpLast = 143;

// Applies one kOp effect during replay (on the owning shard's thread). Returns false with
// `error` set if the op code is unknown or its arguments are malformed; ops that find their
// key missing or of another type are no-ops (a later effect deleted or replaced it). Hashes
// and sets that grow during replay convert by `limits` (the configured ones at start-up, as
// Redis re-encodes what it loads by its current settings).
bool apply_op_effect(Keyspace& ks, const Effect& e, int64_t now_ms, std::string& error,
                     const EncodingLimits& limits = EncodingLimits{});

// Appends effects that recreate `v` under `key` from nothing, deadline included (the caller
// deletes the key first where it might exist). `checkpoint` is called between effects of a
// large aggregate so the caller may close the record and open a new one.
void encode_value(RecordEncoder& enc, std::string_view key, const Value& v, std::string& scratch,
                  const std::function<void()>& checkpoint);
// The effects that make `key` hold `v` whatever it held before (a delete when `v` is null; an
// aggregate is cleared first and rebuilt): COPY's and RENAME's destination, a script's undo.
void encode_replacement(RecordEncoder& enc, std::string_view key, const Value* v,
                        std::string& scratch);
void encode_stream(RecordEncoder& enc, std::string_view key, const Value& v,
                   const std::function<void()>& checkpoint);
void encode_inventory(RecordEncoder& enc, std::string_view key, const Value& v,
                      const std::function<void()>& checkpoint);
void encode_set(RecordEncoder& enc, std::string_view key, const Value& v,
                const std::function<void()>& checkpoint);
void encode_hash(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint);
void encode_zset(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint);
void encode_list(RecordEncoder& enc, std::string_view key, const Value& v,
                 const std::function<void()>& checkpoint);

}  // namespace hotkv
