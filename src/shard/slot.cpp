// Redis Cluster's key -> slot rule (hash tags included) and the slot -> shard range split.
#include "hotkv/shard/slot.hpp"

#include <cstdint>

#include "hotkv/util/assert.hpp"
#include "hotkv/util/crc16.hpp"

namespace hotkv {

int key_slot(std::string_view key) { return key_hash_slot(key); }

size_t slot_shard(int slot, size_t shard_count) {
  HOTKV_ASSERT(slot >= 0 && slot < kSlotCount);
  HOTKV_ASSERT(shard_count >= 1 && shard_count <= static_cast<size_t>(kSlotCount));
  // slot < 2^14 and shard_count <= 2^14, so the product cannot overflow.
  return static_cast<size_t>(slot) * shard_count / static_cast<size_t>(kSlotCount);
}

}  // namespace hotkv
