// Readers of the packed containers redis-server 7.0 puts inside the RDB values it DUMPs: a
// listpack (small hashes, sorted sets, every list node and every stream node) and an intset
// (small sets of integers). Both read untrusted bytes: every length and offset is checked
// against the input, and anything malformed answers false, never reads past the end.
//
// And a listpack writer: a stream's RDB form has no plain alternative (its nodes are
// listpacks in every Redis version), so DUMP of a stream builds them.
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

// Builds one listpack, entry by entry, in the encodings Redis picks: a string that spells a
// canonical int64 is stored as an integer (and reads back as the same text).
class ListpackWriter {
 public:
  ListpackWriter();
  void add(std::string_view s);
  void add_integer(int64_t v);
  size_t count() const { return count_; }
  // The finished listpack (header filled in, terminator appended); the writer is then spent.
  std::string finish();

 private:
  // Appends the back-length of an entry of `entry_bytes` (encoding and data).
  void end_entry(size_t entry_start);
  std::string buf_;
  size_t count_ = 0;
};

}  // namespace hotkv
