// Key -> hash slot -> shard routing, using Redis Cluster's rule so that keys sharing a
// {hash tag} always land on one shard and cluster mode can later reuse the same slot numbers.
// Slots map to shards in contiguous ranges, which keeps a slot's owner easy to reason about
// (and to migrate) when the shard count changes.
#pragma once

#include <cstddef>
#include <string_view>

namespace hotkv {

// Redis Cluster's fixed number of hash slots.
constexpr int kSlotCount = 16384;

// Returns the hash slot of `key`, in [0, kSlotCount): CRC16 of the key modulo 16384, where a
// key containing '{' followed later by '}' with at least one byte between them is hashed on
// that tag only (the first '{' and the first '}' after it). An empty tag ("foo{}{bar}") hashes
// the whole key, exactly as CLUSTER KEYSLOT does. Pure function: any thread may call it.
int key_slot(std::string_view key);

// Returns the shard that owns `slot`: shard i owns the contiguous range of slots s with
// s * shard_count / kSlotCount == i, so every shard gets floor or ceil of 16384 / shard_count
// slots and the mapping is monotonic in the slot. REQUIRES 0 <= slot < kSlotCount and
// 1 <= shard_count <= kSlotCount. Pure function: any thread may call it.
size_t slot_shard(int slot, size_t shard_count);

// Returns the shard that owns `key`. Same requirements as slot_shard.
inline size_t key_shard(std::string_view key, size_t shard_count) {
  return slot_shard(key_slot(key), shard_count);
}

}  // namespace hotkv
