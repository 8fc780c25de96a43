// The memory figures INFO memory and MEMORY STATS/DOCTOR report, read in one place so the
// two agree. Measured: used (the allocator's bytes in use, util/memory.hpp), rss
// (/proc/self/statm), the allocator's own statistics (util/memory.hpp), total system memory,
// the script cache. Estimated: overhead (what the server held at start-up plus the script
// cache and the replication backlog) and so dataset (used minus overhead).
#pragma once

#include <cstdint>
#include <string>

namespace hotkv {

class Engine;
struct ServerStats;

struct MemoryFigures {
  uint64_t used = 0;
  uint64_t peak = 0;
  uint64_t startup = 0;
  uint64_t rss = 0;
  uint64_t allocator_allocated = 0;  // in live allocations
  uint64_t allocator_active = 0;     // in pages holding live allocations
  uint64_t allocator_resident = 0;   // resident (RSS where the allocator has no figure)
  uint64_t total_system = 0;
  uint64_t scripts = 0;              // the script cache's bodies
  uint64_t replication_backlog = 0;  // the bytes the backlog holds
  uint64_t overhead = 0;
  uint64_t dataset = 0;
  uint64_t keys = 0;
};

// Any thread. Also raises the recorded peak to the current figure.
MemoryFigures memory_figures(Engine& engine);

// Raises stats.used_memory_peak to `used` if higher; returns the peak.
uint64_t note_used_memory(ServerStats& stats, uint64_t used);

// a / b, 0 when b is 0: INFO memory's and MEMORY STATS's fragmentation and overhead ratios.
inline double memory_ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

// a - b as a signed figure (fragmentation bytes may be negative).
inline int64_t memory_difference(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(a) - static_cast<int64_t>(b);
}

// "1.09M", "200B": INFO's *_human fields.
std::string human_bytes(uint64_t n);

// The process's resident set (bytes).
uint64_t rss_bytes();

}  // namespace hotkv
