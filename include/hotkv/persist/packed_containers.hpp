// Readers of the packed containers redis-server 7.0 puts inside the RDB values it DUMPs: a
// listpack (small hashes, sorted sets and every list node) and an intset (small sets of
// integers). Both read untrusted bytes: every length and offset is checked against the input,
// and anything malformed answers false, never reads past the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

// Appends the listpack's entries, in order, to `out` (integers as their decimal text, as
// Redis returns them). False when the bytes are not a whole, well-formed listpack: the
// header's total length, each entry's encoding and back-length, the element count (unless
// the header says "unknown") and the terminator are all checked.
bool listpack_entries(std::string_view lp, std::vector<std::string>& out);

// Appends the intset's members (ascending, as stored) to `out`. False when the width is not
// 2, 4 or 8 bytes or the length does not match the bytes.
bool intset_members(std::string_view is, std::vector<int64_t>& out);

}  // namespace hotkv
