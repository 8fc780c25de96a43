// Client eviction, Redis 7's maxmemory-clients (docs/operations.md, "Memory"). Query buffers of
// requests sent slowly and replies not read pile up per client; each is bounded by its own
// limit (client-query-buffer-limit, client-output-buffer-limit), but ten thousand clients each
// under their limit can still exhaust the server. Past maxmemory-clients in all, the clients
// holding the most are disconnected first, as Redis does, until the rest fit; CLIENT NO-EVICT,
// a replica's link and the link to our master are never evicted.
//
// The pass reads every client's published buffer sizes (atomics the connections keep for
// CLIENT LIST), so it costs nothing per request: it runs from the cron and when one client's
// buffer grows large (Connection::note_large_buffer), at most once per 10 ms in all, except for
// a client over the whole limit by itself: its pass runs at once, before its reply is written
// (a 30 MB reply to a client that reads would otherwise be delivered before the next pass).
#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "hotkv/shard/client_registry.hpp"

namespace hotkv {

namespace {
// What an idle connection costs the process besides its buffers: the connection, its
// coroutine frames and its ClientInfo (docs/performance.md, "Idle connections and memory").
constexpr uint64_t kConnectionFixedBytes = 6 * 1024;
constexpr int64_t kPassIntervalMs = 10;
}  // namespace

uint64_t ClientRegistry::memory_of(const ClientInfo& info) {
  return kConnectionFixedBytes + info.query_buffer.load(std::memory_order_relaxed) +
         info.output_buffer.load(std::memory_order_relaxed);
}

size_t ClientRegistry::evict_over(uint64_t limit, int64_t now_ms, bool urgent) {
  if (limit == 0) {
    return 0;
  }
  int64_t last = last_eviction_pass_ms_.load(std::memory_order_relaxed);
  if (urgent) {
    last_eviction_pass_ms_.store(now_ms, std::memory_order_relaxed);
  } else if (now_ms - last < kPassIntervalMs ||
             !last_eviction_pass_ms_.compare_exchange_strong(last, now_ms,
                                                             std::memory_order_relaxed)) {
    return 0;  // another thread's pass is this one
  }
  std::vector<std::pair<uint64_t, std::shared_ptr<ClientInfo>>> candidates;
  uint64_t total = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, info] : clients_) {
      if (info->evicted.load(std::memory_order_relaxed)) {
        continue;  // already closing: its memory goes
      }
      uint64_t bytes = memory_of(*info);
      total += bytes;
      if (!info->no_evict && info->link.load(std::memory_order_relaxed) == ClientInfo::kNoLink &&
          info->control) {
        candidates.emplace_back(bytes, info);
      }
    }
  }
  if (total <= limit) {
    return 0;
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  size_t evicted = 0;
  for (auto& [bytes, info] : candidates) {
    if (total <= limit) {
      break;
    }
    total -= bytes;
    // An urgent pass on another thread may have taken it meanwhile: it goes once, counted once.
    if (info->evicted.exchange(true, std::memory_order_relaxed)) {
      continue;
    }
    spdlog::warn("evicting client {} ({}): {} bytes, clients hold {} of maxmemory-clients {}",
                 info->id, info->addr, bytes, total + bytes, limit);
    info->control->kill();
    ++evicted;
  }
  evicted_.fetch_add(evicted, std::memory_order_relaxed);
  return evicted;
}

}  // namespace hotkv
