// Base-128 varints (7 bits a byte, as listpacks and stream nodes store lengths and ids).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hotkv {

// Bytes of a base-128 varint holding v.
inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

}  // namespace hotkv
