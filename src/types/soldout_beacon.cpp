// The sold-out beacon's Bloom filter (see soldout_beacon.hpp). Bits are set with an atomic OR
// so a reader on another thread sees either the old or the new word, never a torn one; the
// probes come from one 64-bit hash split in two (double hashing).
#include "hotkv/types/soldout_beacon.hpp"

#include <absl/hash/hash.h>

namespace hotkv {

namespace {

size_t bits_for(size_t expected) {
  size_t want = (expected < 1024 ? 1024 : expected) * 16;
  size_t bits = 1 << 14;
  while (bits < want) {
    bits <<= 1;
  }
  return bits;
}

uint64_t tagged_hash(uint8_t tag, std::string_view s) {
  return static_cast<uint64_t>(absl::HashOf(tag, s));
}

}  // namespace

SoldOutBeacon::SoldOutBeacon(size_t expected, int64_t max_per_owner)
    : max_per_owner_(max_per_owner), mask_(bits_for(expected) - 1) {
  capacity_ = (mask_ + 1) / 4;  // 4 bits per entry: the false positive rate stays under 20%
  words_ = std::make_unique<std::atomic<uint64_t>[]>((mask_ + 1) / 64);
  for (size_t i = 0; i < (mask_ + 1) / 64; ++i) {
    words_[i].store(0, std::memory_order_relaxed);
  }
}

void SoldOutBeacon::add(uint8_t tag, std::string_view s) {
  uint64_t h = tagged_hash(tag, s);
  uint64_t a = h & 0xffffffffu;
  uint64_t b = (h >> 32) | 1;
  for (int i = 0; i < kProbes; ++i) {
    size_t bit = (a + static_cast<uint64_t>(i) * b) & mask_;
    words_[bit / 64].fetch_or(uint64_t{1} << (bit % 64));
  }
  ++added_;
}

bool SoldOutBeacon::may_have(uint8_t tag, std::string_view s) const {
  uint64_t h = tagged_hash(tag, s);
  uint64_t a = h & 0xffffffffu;
  uint64_t b = (h >> 32) | 1;
  for (int i = 0; i < kProbes; ++i) {
    size_t bit = (a + static_cast<uint64_t>(i) * b) & mask_;
    if ((words_[bit / 64].load() & (uint64_t{1} << (bit % 64))) == 0) {
      return false;
    }
  }
  return true;
}

}  // namespace hotkv
