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

}  // namespace hotkv
