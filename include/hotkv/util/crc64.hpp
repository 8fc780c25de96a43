// CRC-64 in the Jones variant (reflected polynomial 0xad93d23594c935a9, initial value 0, no
// final XOR): the checksum Redis puts at the end of DUMP/FUNCTION DUMP payloads and RDB files,
// so payloads HotKV writes are accepted by redis-server and the reverse.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotkv {

// Continues `crc` over `data`; crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
// Pure function: any thread may call it.
uint64_t crc64(uint64_t crc, std::string_view data);

}  // namespace hotkv
