// Table-driven CRC16-CCITT (XMODEM). The 256-entry table is built at compile time from the
// polynomial, so each input byte costs one lookup instead of eight shift-and-XOR steps.
#include "hotkv/util/crc16.hpp"

#include <array>

namespace hotkv {
namespace {

constexpr uint16_t kPolynomial = 0x1021;

// Entry i is the CRC register after shifting the byte i through it MSB first, starting from
// zero. The variant is unreflected, so the byte enters at the top of the 16-bit register.
constexpr std::array<uint16_t, 256> make_crc16_table() {
  std::array<uint16_t, 256> table{};
  for (unsigned i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      if ((crc & 0x8000) != 0) {
        crc = static_cast<uint16_t>((crc << 1) ^ kPolynomial);
      } else {
        crc = static_cast<uint16_t>(crc << 1);
      }
    }
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Table = make_crc16_table();

// Slicing by 4: entry [k][i] is the register after the byte i followed by k zero bytes, so four
// input bytes cost four independent lookups instead of a chain of four (keys are hashed on
// every command for routing and on every logged effect for its slot).
constexpr std::array<std::array<uint16_t, 256>, 4> make_slice_tables() {
  std::array<std::array<uint16_t, 256>, 4> t{};
  t[0] = make_crc16_table();
  for (size_t k = 1; k < 4; ++k) {
    for (unsigned i = 0; i < 256; ++i) {
      uint16_t prev = t[k - 1][i];
      t[k][i] = static_cast<uint16_t>((prev << 8) ^ t[0][prev >> 8]);
    }
  }
  return t;
}

constexpr std::array<std::array<uint16_t, 256>, 4> kSlices = make_slice_tables();

constexpr uint16_t crc16_impl(std::string_view data) {
  uint16_t crc = 0;
  size_t i = 0;
  for (; i + 4 <= data.size(); i += 4) {
    const auto b0 = static_cast<uint8_t>(data[i]);
    const auto b1 = static_cast<uint8_t>(data[i + 1]);
    const auto b2 = static_cast<uint8_t>(data[i + 2]);
    const auto b3 = static_cast<uint8_t>(data[i + 3]);
    // The register lines up with the first two bytes; the last two enter fresh.
    const auto x = static_cast<uint16_t>(crc ^ ((b0 << 8) | b1));
    crc = static_cast<uint16_t>(kSlices[3][x >> 8] ^ kSlices[2][x & 0xFF] ^ kSlices[1][b2] ^
                                kSlices[0][b3]);
  }
  for (; i < data.size(); ++i) {
    const auto byte = static_cast<uint8_t>(data[i]);
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16Table[((crc >> 8) ^ byte) & 0xFF]);
  }
  return crc;
}

// The published check value of CRC-16/XMODEM; a wrong table fails the build, not a test run.
static_assert(crc16_impl("123456789") == 0x31C3, "CRC-16/XMODEM check value");
static_assert(crc16_impl("12345678") == 0x9015 && crc16_impl("1234") == 0xD789,
              "CRC-16/XMODEM over whole 4-byte slices");

}  // namespace

uint16_t crc16(std::string_view data) { return crc16_impl(data); }

uint16_t key_hash_slot(std::string_view key) {
  // Matches Redis's keyHashSlot(): only the first '{' counts, and the tag ends at the first
  // '}' after it; "{}" (empty tag) or a missing '}' means the whole key is hashed.
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  // 16384 slots: a power of two, so the modulo is a mask.
  return static_cast<uint16_t>(crc16(key) & 16383);
}

}  // namespace hotkv
