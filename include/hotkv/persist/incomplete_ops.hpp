// Where replay must stop reading each log file so that no operation over several shards is
// half applied (docs/aof-format.md, "Operations over several shards").
//
// Each part of such an operation is one record in its shard's file, carrying the operation's
// id and its number of parts. A crash can leave an operation with parts missing; replay then
// reads each file only up to its first record of such an operation: nothing after it in that
// file was acknowledged (split_seals.hpp holds replies back until it is so). Cutting a file
// can in turn remove a part of an operation that was whole, whose other parts sit earlier in
// other files: that operation is incomplete too, and those files are cut before it. The cuts
// are repeated until none moves.
#pragma once

#include <cstdint>
#include <vector>

namespace hotkv {

// One record of an operation over several shards, in its file.
struct PartMark {
  uint64_t offset = 0;  // where the record starts
  uint64_t txn_id = 0;
  uint32_t parts = 0;  // how many records (one per shard) the operation has
};

// `marks[f]`: file f's part records in file order; `lengths[f]`: its readable length. Returns
// each file's length once cut before its first record of an operation not whole within the
// kept prefixes.
std::vector<uint64_t> cut_incomplete_operations(const std::vector<std::vector<PartMark>>& marks,
                                                std::vector<uint64_t> lengths);

}  // namespace hotkv
