// A key's value in Redis's DUMP format (the RDB encoding of one object, then the RDB version
// and a CRC-64), so DUMP/RESTORE move values between HotKV and redis-server 7.0 both ways.
//
// Written in the plainest object types every Redis since 2.8 loads (STRING, LIST, SET, HASH,
// ZSET_2: lengths and strings, scores as binary doubles); redis-server re-packs them into its
// own encodings on RESTORE. A stream is written as STREAM_LISTPACKS_2 (shard/stream_dump.hpp:
// streams have no plainer form) and an inventory item in HotKV's own object type
// (shard/inventory_dump.hpp), which redis-server refuses. Read: those, what redis-server 7.0
// itself writes (SET_INTSET, HASH_LISTPACK, ZSET_LISTPACK, LIST_QUICKLIST_2 with packed and
// plain nodes), ZSET with text scores and the pre-7.0 STREAM_LISTPACKS.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/types/value.hpp"

namespace hotkv {

class Config;
class RdbReader;

// The sealed payload for `v` (a stream's entries go at most stream-node-max-entries of
// `limits` to a node), or nullopt for a type without a DUMP form (none today).
std::optional<std::string> dump_value(const Value& v, const EncodingLimits& limits = {});

// The object bytes RDB files hold after a key -- the type byte, then the body -- appended to
// `out`; what dump_value seals. False for a type without an RDB form (none today).
bool dump_object(const Value& v, std::string& out, const EncodingLimits& limits = {});

// Reads the body of one object of RDB type `type` from `in` (positioned after the key in an
// RDB file), built with the configured encoding limits as restore_value does. nullopt for a
// short or malformed body or a type HotKV does not read.
std::optional<Value> read_object_body(RdbReader& in, uint8_t type, const Config& config);

// Why a payload was refused, with RESTORE's error text.
enum class RestoreError { kNone, kChecksum, kBadFormat };

// Decodes a sealed payload into a value built with the configured encoding limits (a hash of
// more fields than hash-max-listpack-entries becomes a hashtable, as on Redis). Empty
// aggregates, unknown types and trailing bytes are bad data. On failure `error` says which.
std::optional<Value> restore_value(std::string_view payload, const Config& config,
                                   RestoreError& error);

}  // namespace hotkv
