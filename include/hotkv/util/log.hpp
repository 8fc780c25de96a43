// Logging helpers on top of spdlog. Warnings that a client can trigger (protocol errors,
// refused connections) go through warn_limited so a flood of bad clients cannot fill the disk.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include <spdlog/spdlog.h>

#include "hotkv/util/clock.hpp"

namespace hotkv {

// At most kPerSecond messages per category per second; the rest are counted and reported as
// "N similar messages suppressed" with the next message that gets through.
class RateLimitedLog {
 public:
  static constexpr int kPerSecond = 5;

  template <class... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) {
    int64_t sec = unix_ms() / 1000;
    int64_t cur = second_.load(std::memory_order_relaxed);
    if (sec != cur && second_.compare_exchange_strong(cur, sec)) {
      count_.store(0, std::memory_order_relaxed);
    }
    if (count_.fetch_add(1, std::memory_order_relaxed) >= kPerSecond) {
      suppressed_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    uint64_t dropped = suppressed_.exchange(0, std::memory_order_relaxed);
    if (dropped > 0) {
      spdlog::warn("{} similar messages suppressed", dropped);
    }
    spdlog::warn(f, std::forward<Args>(args)...);
  }

 private:
  std::atomic<int64_t> second_{0};
  std::atomic<int> count_{0};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace hotkv
