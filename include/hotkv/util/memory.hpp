// The process's memory figures: INFO memory, the used-mem field of RDB snapshots, and the
// maxmemory check every write makes (docs/operations.md, "Memory").
//
// used_memory counts what the program holds through malloc: every malloc, calloc, realloc,
// aligned allocation and free of the process (operator new, the Lua heap, asio's buffers and
// every library included) goes through a thin wrapper around jemalloc (memory.cpp) that adds
// or subtracts the allocation's size class. Each thread keeps its running difference to itself
// and folds it into one process-wide total whenever it passes kFoldBytes either way, so an
// allocation costs a thread-local add and the total is one relaxed load; the total lags the
// truth by less than kFoldBytes per thread.
#pragma once

#include <cstdint>
#include <string>

namespace hotkv {

// A thread's allocations and frees are folded into the total each time their sum passes this.
inline constexpr int64_t kFoldBytes = 8 * 1024;

// Bytes the program holds in malloc chunks now (INFO used_memory). One relaxed load; any
// thread. Under a sanitizer, whose allocator replaces malloc, the figure is the sanitizer's
// own count.
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

// The allocator itself: jemalloc in the server, the sanitizer's (through glibc's interface) in
// sanitized builds. INFO mem_allocator: "jemalloc-5.3.0" or "libc".
std::string allocator_name();
// Hands free memory back to the system now (MEMORY PURGE; after many clients left at once).
void release_free_memory();
struct AllocatorFigures {
  uint64_t allocated = 0;  // in live allocations, rounded to their size classes
  uint64_t active = 0;     // in pages holding live allocations
  uint64_t resident = 0;   // mapped and resident (0: the allocator does not know; use RSS)
};
// Reads the allocator's statistics (takes its locks: INFO and MEMORY, not per command).
AllocatorFigures allocator_figures();
// MEMORY MALLOC-STATS: the allocator's own report.
std::string allocator_report();

// While one of these lives on a thread, that thread's allocations come from an arena kept for
// objects that live as long as a client: its ClientInfo, its owner, its hibernation record,
// asio's state for its socket. Packed there, apart from the buffers and frames a connection
// frees when it goes idle, they fill whole pages; mixed with those, each kept one of them
// part-used (docs/performance.md, "Idle connections and memory"). Only around allocations
// that live that long: the arena bypasses the thread caches.
class ClientLifetimeAllocations {
 public:
  ClientLifetimeAllocations();
  ~ClientLifetimeAllocations();
  ClientLifetimeAllocations(const ClientLifetimeAllocations&) = delete;
  ClientLifetimeAllocations& operator=(const ClientLifetimeAllocations&) = delete;
};

}  // namespace hotkv
