// CRC-32C (Castagnoli), the checksum on every append-only-log record. Chosen over CRC-32 for
// its better error detection on storage; computed with slicing-by-8 tables built at start-up.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotkv {

// Thread-safe. `seed` continues a previous call (pass the previous result).
uint32_t crc32c(std::string_view data, uint32_t seed = 0);

}  // namespace hotkv
