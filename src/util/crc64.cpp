// Table-driven CRC-64 (Jones), reflected: the low bit of the register meets the next input
// byte, so each byte costs one lookup and a shift. The table is built at compile time.
#include "hotkv/util/crc64.hpp"

#include <array>

namespace hotkv {
namespace {

// 0xad93d23594c935a9 with its bits reversed (the reflected form).
constexpr uint64_t kReflectedPolynomial = 0x95ac9329ac4bc9b5ULL;

constexpr std::array<uint64_t, 256> make_crc64_table() {
  std::array<uint64_t, 256> table{};
  for (unsigned i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) != 0 ? (crc >> 1) ^ kReflectedPolynomial : crc >> 1;
    }
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint64_t, 256> kCrc64Table = make_crc64_table();

}  // namespace

uint64_t crc64(uint64_t crc, std::string_view data) {
  for (unsigned char c : data) {
    crc = kCrc64Table[(crc ^ c) & 0xff] ^ (crc >> 8);
  }
  return crc;
}

}  // namespace hotkv
