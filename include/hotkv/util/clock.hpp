// Wall-clock and monotonic time in the units the engine uses. Expiry deadlines are absolute
// unix milliseconds (so they survive restarts); durations are measured monotonically.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace hotkv {

inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The kernel's last tick of the wall clock (a few ms behind at most): a plain memory read,
// for bookkeeping such as a client's last interaction that a request must not pay a clock
// read for.
inline int64_t unix_ms_coarse() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

inline int64_t unix_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline int64_t mono_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace hotkv
