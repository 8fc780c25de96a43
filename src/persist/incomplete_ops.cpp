// Cutting log files before incomplete operations over several shards (incomplete_ops.hpp).
#include "hotkv/persist/incomplete_ops.hpp"

#include <cstddef>
#include <unordered_map>

namespace hotkv {

std::vector<uint64_t> cut_incomplete_operations(const std::vector<std::vector<PartMark>>& marks,
                                                std::vector<uint64_t> lengths) {
  std::unordered_map<uint64_t, uint32_t> kept;
  for (bool moved = true; moved;) {
    moved = false;
    kept.clear();
    for (size_t f = 0; f < marks.size(); ++f) {
      for (const PartMark& m : marks[f]) {
        if (m.offset >= lengths[f]) {
          break;
        }
        ++kept[m.txn_id];
      }
    }
    for (size_t f = 0; f < marks.size(); ++f) {
      for (const PartMark& m : marks[f]) {
        if (m.offset >= lengths[f]) {
          break;
        }
        if (kept[m.txn_id] < m.parts) {
          lengths[f] = m.offset;
          moved = true;
          break;
        }
      }
    }
  }
  return lengths;
}

}  // namespace hotkv
