// CRC-32C (see crc32c.hpp): the SSE4.2 crc32 instruction where the CPU has it (x86-64 since
// 2008), slicing-by-8 tables elsewhere. The reflected polynomial is 0x82F63B78. Every logged
// record is checksummed on the shard's thread, so this is on the write path.
#include "hotkv/util/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define HOTKV_CRC32C_SSE42 1
#endif

namespace hotkv {
namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) {
      t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
  }
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

#ifdef HOTKV_CRC32C_SSE42
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(std::string_view data, uint32_t seed) {
  uint64_t crc = ~seed;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
    p += 8;
    n -= 8;
  }
  auto c = static_cast<uint32_t>(crc);
  while (n-- > 0) {
    c = _mm_crc32_u8(c, *p++);
  }
  return ~c;
}

bool have_sse42() {
  static const bool have = [] {
    __builtin_cpu_init();  // may run before the constructors that would initialise it
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return have;
}
#endif

}  // namespace

uint32_t crc32c_tables(std::string_view data, uint32_t seed) {
  const Tables& t = tables();
  uint32_t crc = ~seed;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    uint32_t lo = static_cast<uint32_t>(word) ^ crc;
    uint32_t hi = static_cast<uint32_t>(word >> 32);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) {
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  }
  return ~crc;
}

uint32_t crc32c(std::string_view data, uint32_t seed) {
#ifdef HOTKV_CRC32C_SSE42
  if (have_sse42()) {
    return crc32c_sse42(data, seed);
  }
#endif
  return crc32c_tables(data, seed);
}

}  // namespace hotkv
