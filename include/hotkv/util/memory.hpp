// The process's memory figures: INFO memory, the used-mem field of RDB snapshots, and the
// maxmemory check every write makes (docs/operations.md, "Memory").
//
// used_memory counts what the program holds through malloc: every malloc, calloc, realloc,
// aligned allocation and free of the process (operator new, the Lua heap, asio's buffers and
// every library included) goes through a thin wrapper around glibc's allocator (memory.cpp)
// that adds or subtracts the chunk's size. Each thread keeps its running difference to itself
// and folds it into one process-wide total whenever it passes kFoldBytes either way, so an
// allocation costs a thread-local add and the total is one relaxed load; the total lags the
// truth by less than kFoldBytes per thread.
#pragma once

#include <cstdint>

namespace hotkv {

// A thread's allocations and frees are folded into the total each time their sum passes this.
inline constexpr int64_t kFoldBytes = 8 * 1024;

// Bytes the program holds in malloc chunks now (INFO used_memory). One relaxed load; any
// thread. Under a sanitizer, whose allocator replaces glibc's, the figure comes from
// mallinfo2 instead (slower, and only for INFO there).
uint64_t used_memory_bytes();
// used_memory_bytes() plus what this thread has not folded in yet: what a loop that frees
// memory (eviction) compares with the limit, so its own frees count at once.
uint64_t used_memory_bytes_here();
// Folds this thread's pending sum into the total now: eviction calls it after freeing, so that
// every thread sees the room it made at once.
void fold_thread_memory();
// The highest used_memory seen since start or the last reset (INFO used_memory_peak).
uint64_t used_memory_peak_bytes();
// MEMORY PURGE / CONFIG RESETSTAT-style reset of the peak to the current figure.
void reset_used_memory_peak();
// Whether used_memory counts exactly what the program holds: the counting wrapper, or under a
// sanitizer that allocator's own count.
bool counting_allocator_active();

}  // namespace hotkv
