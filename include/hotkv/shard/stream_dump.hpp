// A stream's body in Redis's RDB stream encoding, after the object type byte that
// value_dump.cpp writes and reads.
//
// Written as RDB_TYPE_STREAM_LISTPACKS_2 (Redis 7.0): the entries as listpack nodes keyed by
// their master id, then length, last id, first id, max deleted id and entries added, then the
// consumer groups (last delivered id, entries read, the PEL with delivery times and counts,
// the consumers with their seen time and their share of the PEL). HotKV writes only live
// entries, at most stream-node-max-entries to a node, so node boundaries and tombstones of
// the source are not carried; the counters that depend on them (max deleted id, entries
// added, each group's entries read) are.
//
// Read: that, and RDB_TYPE_STREAM_LISTPACKS (Redis 5 to 6.2), which lacks the first id, max
// deleted id, entries added and entries read; those are then derived as Redis 7.0 does when it
// loads such a payload (entries added = length, each group's entries read estimated from its
// last delivered id). Entries flagged deleted inside a node are skipped.
#pragma once

#include <memory>
#include <string>

#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/types/stream.hpp"

namespace hotkv {

// Appends the RDB_TYPE_STREAM_LISTPACKS_2 body of `s`.
void append_stream_body(std::string& out, const Stream& s, const EncodingLimits& limits);

// Reads a stream body (legacy: the pre-7.0 layout). nullptr when the bytes are short or
// inconsistent: malformed nodes, entries out of order, a length that does not match the live
// entries, repeated groups, consumers or PEL ids, a consumer PEL id missing from its group's
// PEL, or a group PEL entry no consumer owns (Redis only refuses that last one when it
// sanitizes payloads; HotKV always does, since every pending entry needs an owner).
std::unique_ptr<Stream> read_stream_body(RdbReader& in, bool legacy, const EncodingLimits& limits);

}  // namespace hotkv
