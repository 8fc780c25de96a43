// Memory figures shared by INFO memory and MEMORY STATS/DOCTOR (see memory_figures.hpp).
#include "hotkv/commands/memory_figures.hpp"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "hotkv/commands/script_store.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/replication.hpp"
#include "hotkv/shard/shard.hpp"
#include "hotkv/util/memory.hpp"

namespace hotkv {

std::string human_bytes(uint64_t n) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{}B", n) : fmt::format("{:.2f}{}", v, units[u]);
}

uint64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t note_used_memory(ServerStats& stats, uint64_t used) {
  uint64_t peak = stats.used_memory_peak.load(std::memory_order_relaxed);
  while (used > peak &&
         !stats.used_memory_peak.compare_exchange_weak(peak, used, std::memory_order_relaxed)) {
  }
  return std::max(peak, used);
}

MemoryFigures memory_figures(Engine& engine) {
  MemoryFigures m;
  m.used = used_memory_bytes();
  m.peak = note_used_memory(engine.stats(), m.used);
  m.startup = engine.stats().used_memory_startup.load(std::memory_order_relaxed);
  m.rss = rss_bytes();
  AllocatorFigures a = allocator_figures();
  m.allocator_allocated = a.allocated;
  m.allocator_active = a.active;
  m.allocator_resident = a.resident > 0 ? a.resident : m.rss;
  m.total_system =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  m.scripts = engine.scripts().memory_bytes();
  Replication::BacklogInfo backlog = engine.replication().backlog_info();
  m.replication_backlog = backlog.active ? backlog.histlen : 0;
  m.overhead = m.startup + m.scripts + m.replication_backlog;
  m.dataset = m.used > m.overhead ? m.used - m.overhead : 0;
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    Shard& s = engine.shard(i);
    for (uint32_t db = 0; db < s.db_count(); ++db) {
      m.keys += s.keyspace(db).stats().keys.load(std::memory_order_relaxed);
    }
  }
  return m;
}

}  // namespace hotkv
