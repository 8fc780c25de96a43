// The GCRA core (see gcra.hpp). It follows redis-cell's algorithm step for step (the reference
// that CL.THROTTLE clients are written against) with integer nanoseconds instead of floats and
// every step checked for overflow: intermediates are computed in 128 bits and must fit back in
// int64 before they are used.
#include "hotkv/types/gcra.hpp"

#include <algorithm>

namespace hotkv::gcra {

namespace {

// 128-bit intermediates: a product of two int64 values always fits.
__extension__ typedef __int128 Wide;

constexpr Wide kInt64Max = INT64_MAX;
constexpr Wide kInt64Min = INT64_MIN;

bool fits(Wide v) { return v >= kInt64Min && v <= kInt64Max; }

}  // namespace

Error make_limit(int64_t period, int64_t unit_ns, int64_t count, int64_t burst, Limit& out) {
  if (period <= 0 || unit_ns <= 0 || count <= 0 || burst < 0) {
    return Error::kBadArgument;
  }
  Wide period_ns = static_cast<Wide>(period) * unit_ns;
  if (period_ns < count) {
    return Error::kRateTooHigh;
  }
  // Rounded up: over any stretch of time the limiter never grants more than count per period.
  Wide emission = (period_ns + count - 1) / count;
  Wide limit = static_cast<Wide>(burst) + 1;
  if (!fits(emission) || !fits(limit)) {
    return Error::kOverflow;
  }
  Wide tolerance = emission * limit;  // both below 2^63, so no 128-bit overflow
  if (!fits(tolerance)) {
    return Error::kOverflow;
  }
  out.emission_ns = static_cast<int64_t>(emission);
  out.limit = static_cast<int64_t>(limit);
  out.tolerance_ns = static_cast<int64_t>(tolerance);
  return Error::kNone;
}

Error decide(const Limit& limit, std::optional<int64_t> tat_ns, int64_t now_ns, int64_t cost,
             Decision& out) {
  if (cost < 0) {
    return Error::kBadArgument;
  }
  const Wide t = limit.emission_ns;
  const Wide tau = limit.tolerance_ns;
  const Wide now = now_ns;
  const Wide increment = t * cost;
  // No state, or a TAT in the past: the limiter is full and the schedule restarts at now.
  const Wide tat = tat_ns.value_or(now_ns);
  const Wide new_tat = std::max(tat, now) + increment;
  if (!fits(increment) || !fits(new_tat)) {
    return Error::kOverflow;
  }
  // The request is allowed if, once it is counted, the schedule runs at most tau ahead of now.
  const Wide ahead = new_tat - now;
  if (!fits(ahead)) {
    return Error::kOverflow;
  }
  Decision d;
  d.allowed = ahead <= tau;
  Wide ttl = 0;  // how far the TAT is ahead of now once this request is settled
  if (d.allowed) {
    ttl = ahead;
    d.store = cost > 0;
    d.new_tat_ns = static_cast<int64_t>(new_tat);
  } else {
    // A request heavier than the whole burst can never pass: redis-cell replies -1.
    d.retry_after_ns = increment <= tau ? static_cast<int64_t>(ahead - tau) : -1;
    ttl = std::max<Wide>(tat - now, 0);
  }
  if (!fits(ttl)) {
    return Error::kOverflow;
  }
  d.reset_after_ns = static_cast<int64_t>(ttl);
  d.remaining = ttl < tau ? static_cast<int64_t>((tau - ttl) / t) : 0;
  out = d;
  return Error::kNone;
}

int64_t ceil_millis(int64_t ns) {
  // Division truncates towards zero, which is already the ceiling for a negative ns.
  int64_t ms = ns / kNanosPerMilli;
  if (ns % kNanosPerMilli > 0) {
    ++ms;
  }
  return ms;
}

int64_t redis_cell_seconds(int64_t ns) {
  if (ns < 0) {
    return -1;
  }
  int64_t seconds = ns / kNanosPerSecond;
  if ((ns % kNanosPerSecond) >= kNanosPerMilli) {
    ++seconds;
  }
  return seconds;
}

}  // namespace hotkv::gcra
