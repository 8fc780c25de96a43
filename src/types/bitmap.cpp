// Bit operations on string bytes (see bitmap.hpp). Counting and searching skip 8 bytes at a
// time where they can; field reads and writes go bit by bit, as they touch at most 64 bits.
#include "hotkv/types/bitmap.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace hotkv::bitmap {
namespace {

uint8_t byte_at(std::string_view bytes, uint64_t i) {
  return i < bytes.size() ? static_cast<uint8_t>(bytes[i]) : 0;
}

// The bits of a byte from position `from` (0 = most significant) on.
uint8_t mask_from(uint64_t from) { return static_cast<uint8_t>(0xFFu >> (from & 7)); }
// The bits of a byte up to and including position `to`.
uint8_t mask_to(uint64_t to) { return static_cast<uint8_t>(0xFFu << (7 - (to & 7))); }

// Portable count of one word's bits (the classic parallel sum), for CPUs without POPCNT.
uint64_t swar_count(uint64_t w) {
  w -= (w >> 1) & 0x5555555555555555ULL;
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return (w * 0x0101010101010101ULL) >> 56;
}

template <class CountWord>
uint64_t popcount_with(std::string_view bytes, CountWord count_word) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t count = 0;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    count += count_word(w);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    count += count_word(static_cast<uint8_t>(*p));
    ++p;
    --n;
  }
  return count;
}

}  // namespace

uint64_t popcount_portable(std::string_view bytes) { return popcount_with(bytes, swar_count); }

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// The build targets baseline x86-64, where __builtin_popcountll is a library call; this copy is
// compiled for the POPCNT instruction and chosen at run time when the CPU has it. (The loop is
// written out: a lambda would not inherit the target.)
__attribute__((target("popcnt"))) uint64_t popcount_popcnt(std::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t count = 0;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    count += static_cast<uint64_t>(__builtin_popcountll(w));
    p += 8;
    n -= 8;
  }
  return count + popcount_portable({p, n});
}

bool has_popcnt() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") != 0;
  }();
  return yes;
}

}  // namespace
#endif

uint64_t popcount(std::string_view bytes) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_popcnt()) {
    return popcount_popcnt(bytes);
  }
#endif
  return popcount_portable(bytes);
}

uint64_t count_range(std::string_view bytes, uint64_t first, uint64_t last) {
  uint64_t fb = first >> 3;
  uint64_t lb = last >> 3;
  auto bits = [](uint8_t v) { return swar_count(v); };
  if (fb == lb) {
    return bits(byte_at(bytes, fb) & mask_from(first) & mask_to(last));
  }
  return bits(byte_at(bytes, fb) & mask_from(first)) + popcount(bytes.substr(fb + 1, lb - fb - 1)) +
         bits(byte_at(bytes, lb) & mask_to(last));
}

int64_t find_bit(std::string_view bytes, bool bit, uint64_t first, uint64_t last) {
  uint64_t fb = first >> 3;
  uint64_t lb = last >> 3;
  const uint64_t skip = bit ? 0 : ~uint64_t{0};
  uint64_t b = fb;
  while (b <= lb) {
    // Whole words strictly inside the range that hold nothing sought are skipped at once.
    if (b > fb && b + 8 <= lb) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + b, 8);
      if (w == skip) {
        b += 8;
        continue;
      }
    }
    uint8_t v = byte_at(bytes, b);
    if (!bit) {
      v = static_cast<uint8_t>(~v);  // now look for a set bit either way
    }
    if (b == fb) {
      v &= mask_from(first);
    }
    if (b == lb) {
      v &= mask_to(last);
    }
    if (v != 0) {
      return static_cast<int64_t>(b * 8 + static_cast<uint64_t>(__builtin_clz(v) - 24));
    }
    ++b;
  }
  return -1;
}

bool get_bit(std::string_view bytes, uint64_t offset) {
  return (byte_at(bytes, offset >> 3) & (0x80u >> (offset & 7))) != 0;
}

uint64_t get_unsigned(std::string_view bytes, uint64_t offset, unsigned bits) {
  uint64_t v = 0;
  for (unsigned i = 0; i < bits; ++i) {
    v = (v << 1) | (get_bit(bytes, offset + i) ? 1 : 0);
  }
  return v;
}

int64_t get_signed(std::string_view bytes, uint64_t offset, unsigned bits) {
  uint64_t v = get_unsigned(bytes, offset, bits);
  if (bits < 64 && (v & (uint64_t{1} << (bits - 1))) != 0) {
    v |= ~uint64_t{0} << bits;  // sign-extend
  }
  return static_cast<int64_t>(v);
}

void set_field(std::span<char> bytes, uint64_t offset, unsigned bits, uint64_t value) {
  for (unsigned i = 0; i < bits; ++i) {
    bool on = ((value >> (bits - 1 - i)) & 1) != 0;
    uint64_t pos = offset + i;
    auto& byte = reinterpret_cast<uint8_t&>(bytes[pos >> 3]);
    uint8_t m = static_cast<uint8_t>(0x80u >> (pos & 7));
    byte = on ? static_cast<uint8_t>(byte | m) : static_cast<uint8_t>(byte & ~m);
  }
}

std::optional<uint64_t> add_unsigned(uint64_t value, int64_t incr, unsigned bits, Overflow ow) {
  const uint64_t max = (uint64_t{1} << bits) - 1;
  const __int128 r = static_cast<__int128>(value) + incr;
  if (r >= 0 && r <= static_cast<__int128>(max)) {
    return static_cast<uint64_t>(r);
  }
  switch (ow) {
    case Overflow::kWrap:
      return static_cast<uint64_t>(r) & max;
    case Overflow::kSat:
      return r < 0 ? 0 : max;
    case Overflow::kFail:
      break;
  }
  return std::nullopt;
}

std::optional<int64_t> add_signed(int64_t value, int64_t incr, unsigned bits, Overflow ow) {
  const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max()
                                 : static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
  const int64_t min = -max - 1;
  const __int128 r = static_cast<__int128>(value) + incr;
  if (r >= min && r <= max) {
    return static_cast<int64_t>(r);
  }
  switch (ow) {
    case Overflow::kWrap: {
      // Keep the low `bits` bits and sign-extend from the field's top bit.
      auto u = static_cast<uint64_t>(r);
      if (bits < 64) {
        u &= (uint64_t{1} << bits) - 1;
        if ((u & (uint64_t{1} << (bits - 1))) != 0) {
          u |= ~uint64_t{0} << bits;
        }
      }
      return static_cast<int64_t>(u);
    }
    case Overflow::kSat:
      return r < min ? min : max;
    case Overflow::kFail:
      break;
  }
  return std::nullopt;
}

std::string bit_op(BitOp op, std::span<const std::string_view> sources) {
  size_t maxlen = 0;
  for (std::string_view s : sources) {
    maxlen = std::max(maxlen, s.size());
  }
  std::string out(maxlen, '\0');
  if (maxlen == 0 || sources.empty()) {
    return out;
  }
  if (!sources[0].empty()) {  // an empty view's data() may be null: no memcpy from it
    std::memcpy(out.data(), sources[0].data(), sources[0].size());
  }
  auto* o = reinterpret_cast<uint8_t*>(out.data());
  if (op == BitOp::kNot) {
    for (size_t j = 0; j < maxlen; ++j) {
      o[j] = static_cast<uint8_t>(~o[j]);
    }
    return out;
  }
  for (size_t i = 1; i < sources.size(); ++i) {
    const auto* s = reinterpret_cast<const uint8_t*>(sources[i].data());
    size_t n = sources[i].size();
    switch (op) {
      case BitOp::kAnd:
        for (size_t j = 0; j < n; ++j) {
          o[j] &= s[j];
        }
        // A shorter source reads as zero bytes past its end.
        std::memset(o + n, 0, maxlen - n);
        break;
      case BitOp::kOr:
        for (size_t j = 0; j < n; ++j) {
          o[j] |= s[j];
        }
        break;
      case BitOp::kXor:
        for (size_t j = 0; j < n; ++j) {
          o[j] ^= s[j];
        }
        break;
      case BitOp::kNot:
        break;
    }
  }
  return out;
}

}  // namespace hotkv::bitmap
