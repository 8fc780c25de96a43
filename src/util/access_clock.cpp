// Access clock arithmetic (see access_clock.hpp).
#include "hotkv/util/access_clock.hpp"

namespace hotkv {

namespace {

constexpr uint32_t kLfuMinutesMax = 0xffff;
constexpr uint32_t kLfuCountMax = 255;

uint32_t lfu_minutes(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 60000) & kLfuMinutesMax;
}

}  // namespace

AccessClockSettings& access_clock_settings() {
  static AccessClockSettings settings;
  return settings;
}

int64_t lru_idle_ms(uint32_t clock, int64_t now_ms) {
  const uint32_t now = lru_clock(now_ms);
  clock &= kAccessClockMax;
  const uint32_t seconds = now >= clock ? now - clock : now + (kAccessClockMax - clock);
  return static_cast<int64_t>(seconds) * 1000;
}

uint32_t lru_clock_idle(int64_t now_ms, int64_t idle_seconds) {
  const int64_t wrapped = idle_seconds % (static_cast<int64_t>(kAccessClockMax) + 1);
  const int64_t clock = static_cast<int64_t>(lru_clock(now_ms)) - wrapped;
  return static_cast<uint32_t>(clock < 0 ? clock + kAccessClockMax : clock) & kAccessClockMax;
}

uint32_t lfu_clock(int64_t now_ms, uint32_t count) {
  return (lfu_minutes(now_ms) << 8) | (count > kLfuCountMax ? kLfuCountMax : count);
}

uint32_t lfu_count(uint32_t clock, int64_t now_ms, int64_t decay_time) {
  const uint32_t stamp = (clock >> 8) & kLfuMinutesMax;
  const uint32_t count = clock & kLfuCountMax;
  if (decay_time <= 0) {
    return count;
  }
  const uint32_t now = lfu_minutes(now_ms);
  // The minute stamp wraps every 45 days; a stamp "ahead" of now wrapped once.
  const uint32_t elapsed = now >= stamp ? now - stamp : kLfuMinutesMax - stamp + now;
  const auto periods = static_cast<uint32_t>(elapsed / static_cast<uint64_t>(decay_time));
  return periods >= count ? 0 : count - periods;
}

uint32_t lfu_accessed(uint32_t clock, int64_t now_ms, int64_t log_factor, int64_t decay_time,
                      double draw) {
  uint32_t count = lfu_count(clock, now_ms, decay_time);
  if (count < kLfuCountMax) {
    const double base = count > kLfuInitialCount ? count - kLfuInitialCount : 0;
    const double factor = log_factor > 0 ? static_cast<double>(log_factor) : 0;
    if (draw < 1.0 / (base * factor + 1.0)) {
      ++count;
    }
  }
  return lfu_clock(now_ms, count);
}

}  // namespace hotkv
