// The generic cell rate algorithm (GCRA) behind GCRA.LIMIT and CL.THROTTLE, as pure functions
// on integers: no keyspace, no RESP, no clock. A limiter's whole state is one number, its
// theoretical arrival time (TAT): the instant at which the limiter would be back to full. The
// command handlers read and store that number; everything else is computed here, so both
// commands share one implementation and it is unit-tested on its own.
//
// Units. All times are integer nanoseconds, and the TAT is absolute unix nanoseconds, the unit
// redis-cell and Dragonfly store for CL.THROTTLE. Nanoseconds, rather than the milliseconds of
// the server clock, keep the emission interval T = period / count exact: T is
// ceil(period_ns / count), which is exact whenever count divides period_ns (every count that
// divides the period in milliseconds, and every product of powers of 2 and 5 up to 10^6) and
// otherwise errs on the strict side by less than 1 ns per request (10 000 ms / 3 is
// 3 333 333 334 ns). A TAT rounded to whole milliseconds after every request would instead
// drift by up to 1 ms per request, and cut a limit of 10 000 per second down to 1 000.
//
// Thread-safety: every function is pure and may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>

namespace hotkv::gcra {

inline constexpr int64_t kNanosPerMilli = 1'000'000;
inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

enum class Error : uint8_t {
  kNone,
  kBadArgument,  // period or count not positive, burst or cost negative, unit not positive
  kRateTooHigh,  // period_ns < count: more than one cell per nanosecond
  kOverflow,     // an intermediate or the new TAT does not fit in int64 nanoseconds
};

// The parameters of one limiter, derived from the arguments of a command.
struct Limit {
  int64_t emission_ns = 0;   // T: one cell (request of cost 1) is regained every T
  int64_t limit = 0;         // burst + 1: cells that may be used back to back
  int64_t tolerance_ns = 0;  // tau = T * limit: how far the TAT may run ahead of now
};

// Builds a limiter allowing `count` cells per `period` (in units of unit_ns nanoseconds) with
// `burst` extra cells back to back. REQUIRES nothing: every invalid input is an error.
// Errors: kBadArgument (period <= 0, count <= 0, burst < 0, unit_ns <= 0), kRateTooHigh,
// kOverflow (T or tau out of int64 nanoseconds).
[[nodiscard]] Error make_limit(int64_t period, int64_t unit_ns, int64_t count, int64_t burst,
                               Limit& out);

// The outcome of one request.
struct Decision {
  bool allowed = false;
  // Cells of cost 1 that would still be allowed right now, after this request.
  int64_t remaining = 0;
  // Denied: how long until the same request would be allowed (> 0), or -1 if it never can be
  // (cost > limit). Allowed: -1.
  int64_t retry_after_ns = -1;
  // How long until the limiter is back to full (>= 0): TAT - now after this request.
  int64_t reset_after_ns = 0;
  // True when the caller must store new_tat_ns (allowed with cost > 0). Nothing else ever
  // changes: a denied request or a zero-cost peek leaves the state as it was.
  bool store = false;
  int64_t new_tat_ns = 0;
};

// Applies a request of `cost` cells at `now_ns` to a limiter whose stored TAT is `tat_ns`
// (nullopt: no state, i.e. full). A stored TAT at or before now means full too.
// REQUIRES: limit was filled in by make_limit (so emission_ns >= 1).
//
// Clock moving backwards: a stored TAT is never moved back, so a clock that steps back by d
// makes a limiter that was in use d stricter (its wait lasts until the clock passes the point it
// would have reached). It never admits a request the limiter would have refused before the
// step; retry_after_ns and reset_after_ns are computed from max(TAT, now) and are never
// negative (reset_after_ns may then exceed tolerance_ns).
//
// Errors: kBadArgument (cost < 0), kOverflow (T * cost or the new TAT out of int64).
[[nodiscard]] Error decide(const Limit& limit, std::optional<int64_t> tat_ns, int64_t now_ns,
                           int64_t cost, Decision& out);

// Whole milliseconds, rounded up (for GCRA.LIMIT replies and key deadlines: a caller that
// waits that long is never early). Negative inputs round up too (towards +infinity).
int64_t ceil_millis(int64_t ns);

// Whole seconds as redis-cell replies them: truncated, plus one if at least one whole
// millisecond remains (a sub-millisecond remainder is dropped). -1 stays -1.
int64_t redis_cell_seconds(int64_t ns);

}  // namespace hotkv::gcra
