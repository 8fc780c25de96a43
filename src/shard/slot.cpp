// Redis Cluster's key -> slot rule (hash tags included) and the slot -> shard range split.
#include "hotkv/shard/slot.hpp"

#include <cstdint>

#include "hotkv/util/assert.hpp"
#include "hotkv/util/crc16.hpp"

namespace hotkv {

int key_slot(std::string_view key) {
  // Matches Redis's keyHashSlot(): only the first '{' counts, and the tag ends at the first
  // '}' after it; "{}" (empty tag) or a missing '}' means the whole key is hashed.
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  // kSlotCount is a power of two, so the modulo is a mask.
  return static_cast<int>(crc16(key) & (kSlotCount - 1));
}

size_t slot_shard(int slot, size_t shard_count) {
  HOTKV_ASSERT(slot >= 0 && slot < kSlotCount);
  HOTKV_ASSERT(shard_count >= 1 && shard_count <= static_cast<size_t>(kSlotCount));
  // slot < 2^14 and shard_count <= 2^14, so the product cannot overflow.
  return static_cast<size_t>(slot) * shard_count / static_cast<size_t>(kSlotCount);
}

}  // namespace hotkv
