// Per-key access clocks, as Redis keeps them in its object header: 24 bits per key that hold
// either the LRU clock (unix seconds, wrapping every 194 days) or, under an LFU
// maxmemory-policy, a logarithmic access counter (low 8 bits) and the minute it was last
// decremented (high 16 bits). Which one a key holds follows the policy at the time of access;
// after a switch, keys read as nonsense until touched again, which Redis's error texts warn of.
//
// The functions are pure (time and randomness come in as arguments) so they can be tested;
// the keyspace calls them on every key access and OBJECT reads them.
#pragma once

#include <atomic>
#include <cstdint>

namespace hotkv {

// Process-wide, because every keyspace of every shard reads them on each access and CONFIG SET
// changes them at run time: maxmemory-policy sets `lfu`; lfu-log-factor and lfu-decay-time
// are Redis's settings of the same names.
struct AccessClockSettings {
  std::atomic<bool> lfu{false};
  std::atomic<int64_t> lfu_log_factor{10};
  std::atomic<int64_t> lfu_decay_time{1};  // minutes per decrement; 0 never decays
};
AccessClockSettings& access_clock_settings();

// Set while a command of a CLIENT NO-TOUCH client runs on this thread: its reads leave the
// keys' access clocks alone (shard/tracking.hpp's ScopedTrackingCaller sets it).
inline thread_local bool access_clock_frozen = false;

inline constexpr uint32_t kAccessClockMax = (1u << 24) - 1;
// A new key's counter under LFU: a little above zero, so it survives a while before it
// has a chance to be accessed again.
inline constexpr uint32_t kLfuInitialCount = 5;

// The LRU clock at now_ms: unix seconds modulo 2^24.
inline uint32_t lru_clock(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 1000) & kAccessClockMax;
}
// Milliseconds since the key's LRU clock, allowing for one wrap of the clock.
int64_t lru_idle_ms(uint32_t clock, int64_t now_ms);
// The LRU clock of a key last accessed idle_seconds before now_ms (RESTORE ... IDLETIME).
uint32_t lru_clock_idle(int64_t now_ms, int64_t idle_seconds);

// The LFU clock of a key whose counter is `count` (0..255) at now_ms.
uint32_t lfu_clock(int64_t now_ms, uint32_t count);
// The counter after the decay owed since its minute stamp (OBJECT FREQ; no change stored).
uint32_t lfu_count(uint32_t clock, int64_t now_ms, int64_t decay_time);
// The clock after one access: decayed, then incremented with probability
// 1 / ((count - initial) * log_factor + 1), so the counter grows about logarithmically with
// the number of accesses. `draw` is uniform in [0, 1).
uint32_t lfu_accessed(uint32_t clock, int64_t now_ms, int64_t log_factor, int64_t decay_time,
                      double draw);

}  // namespace hotkv
