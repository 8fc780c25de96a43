#include "hotkv/util/memory.hpp"

#include <malloc.h>

namespace hotkv {

uint64_t used_memory_bytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

}  // namespace hotkv
