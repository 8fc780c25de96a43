// CRC-32C (Castagnoli), the checksum on every append-only-log record. Chosen over CRC-32 for
// its better error detection on storage; computed with the SSE4.2 instruction where the CPU has
// it, else with slicing-by-8 tables built at start-up.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotkv {

// Thread-safe. `seed` continues a previous call (pass the previous result).
uint32_t crc32c(std::string_view data, uint32_t seed = 0);
// The table-driven computation crc32c falls back to (tests compare the two).
uint32_t crc32c_tables(std::string_view data, uint32_t seed = 0);

}  // namespace hotkv
