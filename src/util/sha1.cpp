#include "hotkv/util/sha1.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace hotkv {
namespace {

uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One 64-byte block into the running state (FIPS 180-4, section 6.1.2).
void compress(std::array<uint32_t, 5>& h, const unsigned char* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) {
    w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  size_t full = n / 64;
  for (size_t i = 0; i < full; ++i) {
    compress(h, p + 64 * i);
  }
  // Padding: 0x80, zeros, then the length in bits as a big-endian u64.
  unsigned char tail[128] = {};
  size_t rest = n - 64 * full;
  std::memcpy(tail, p + 64 * full, rest);
  tail[rest] = 0x80;
  size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = static_cast<uint64_t>(n) * 8;
  for (int i = 0; i < 8; ++i) {
    tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  compress(h, tail);
  if (tail_len == 128) {
    compress(h, tail + 64);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 8; ++j) {
      out[8 * i + j] = kHex[(h[i] >> (28 - 4 * j)) & 0xF];
    }
  }
  return out;
}

}  // namespace hotkv
