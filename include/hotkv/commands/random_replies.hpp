// What SRANDMEMBER, ZRANDMEMBER and HRANDFIELD share: each thread's random generator, and the
// bound on a reply with repeats.
#pragma once

#include <cstdint>
#include <random>

namespace hotkv {

// This thread's generator, seeded once from the system.
inline std::mt19937_64& random_reply_engine() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

// The most members a negative count may repeat into one reply. Redis has no bound, but a
// reply is built whole before it is sent, so an absurd count would exhaust memory instead of
// failing: beyond this it gets Redis's out-of-range error.
constexpr uint64_t kMaxRandomReplies = 10'000'000;

}  // namespace hotkv
