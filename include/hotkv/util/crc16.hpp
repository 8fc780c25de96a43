// CRC16 as Redis Cluster uses it to map keys to hash slots: the CCITT polynomial 0x1021 in its
// XMODEM form (initial value 0, no bit reflection, no final XOR). Keeping the exact variant
// matters: slot numbers must agree with CLUSTER KEYSLOT so cluster mode can reuse them later.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotkv {

// Returns the CRC16-CCITT (XMODEM) of `data`; crc16("123456789") == 0x31C3.
// Pure function: any thread may call it.
uint16_t crc16(std::string_view data);

// Redis Cluster's hash slot of `key`, in [0, 16384): CRC16 of the key, or of its first non-empty
// {hash tag}. Here (not in shard/) so the log's records can carry the slot of each key they
// name; shard/slot.hpp's key_slot is the same function. Pure: any thread may call it.
uint16_t key_hash_slot(std::string_view key);

}  // namespace hotkv
