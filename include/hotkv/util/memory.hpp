// The process's memory figures, for INFO memory and the used-mem field of RDB snapshots.
#pragma once

#include <cstdint>

namespace hotkv {

// Bytes the allocator has handed out and not taken back (INFO used_memory). Any thread.
uint64_t used_memory_bytes();

}  // namespace hotkv
