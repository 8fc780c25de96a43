// The latency monitor behind LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR: for each
// named event ("command", "fast-command", "expire-cycle"), its latest 160 samples, at most
// one per second (the worst of that second), and its worst ever, as Redis keeps them.
//
// Only events that took at least latency-monitor-threshold milliseconds are recorded (0, the
// default, records nothing), so a sample is rare by construction: one mutex guards the lot,
// and the common case (under the threshold) reads one atomic and takes no lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;

  struct Sample {
    int64_t time_s = 0;  // unix seconds
    uint64_t latency_ms = 0;
  };
  // LATENCY LATEST's row for one event.
  struct Latest {
    std::string event;
    Sample last;
    uint64_t max_ms = 0;
  };

  // `threshold_ms` is read at each call (the configuration's latency-monitor-threshold).
  explicit LatencyMonitor(const std::atomic<int64_t>& threshold_ms) : threshold_ms_(threshold_ms) {}

  // Any thread: true when events of `latency_ms` are to be recorded now (cheap; no lock).
  bool wanted(uint64_t latency_ms) const {
    int64_t t = threshold_ms_.load(std::memory_order_relaxed);
    return t > 0 && latency_ms >= static_cast<uint64_t>(t);
  }
  // Any thread: records the sample if wanted().
  void add_if_needed(std::string_view event, int64_t now_s, uint64_t latency_ms) {
    if (wanted(latency_ms)) {
      add(event, now_s, latency_ms);
    }
  }
  // Any thread: records the sample whatever the threshold. A second sample within the same
  // second keeps the worse of the two.
  void add(std::string_view event, int64_t now_s, uint64_t latency_ms);

  // Every event with a sample, by name.
  std::vector<Latest> latest() const;
  // The event's samples, oldest first (empty for an unknown event).
  std::vector<Sample> history(std::string_view event) const;
  // Forgets the named events (every event when `events` is empty); returns how many existed.
  size_t reset(std::span<const std::string_view> events);

  // LATENCY GRAPH: an ASCII chart of the event's samples, or nullopt for an unknown event.
  std::optional<std::string> graph(std::string_view event, int64_t now_s) const;
  // LATENCY DOCTOR: a plain-language report on every event, with advice.
  std::string doctor(int64_t now_s) const;

 private:
  struct Series {
    Sample samples[kSamples];
    size_t next = 0;  // where the next sample goes (the ring's oldest once full)
    uint64_t max_ms = 0;
    std::vector<Sample> in_order() const;
  };
  const std::atomic<int64_t>& threshold_ms_;
  mutable std::mutex mutex_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace hotkv
