// Error texts of HotKV's own families, stock items and holds (INV.*) and rate limits (GCRA.*,
// CL.THROTTLE): Redis has no such commands, so these are ours, in Redis's style (a code, then
// a sentence). CL.THROTTLE's zero-rate text is redis-cell's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv::err {

inline constexpr const char* kPeriodPositive = "ERR period_ms must be a positive integer";
inline constexpr const char* kRateCountPositive = "ERR count must be a positive integer";
inline constexpr const char* kBurstNonNegative = "ERR BURST must be zero or a positive integer";
inline constexpr const char* kCostNonNegative = "ERR COST must be zero or a positive integer";
inline constexpr const char* kRateTooHigh =
    "ERR count is too high for period_ms: at most one request per nanosecond";
inline constexpr const char* kRateOverflow =
    "ERR rate limit arithmetic would overflow: period, count, burst or cost too large";
inline constexpr const char* kZeroRate = "ERR zero rates are not supported";
inline constexpr const char* kNotRateLimiter =
    "ERR key holds a string that is not a rate limiter state (an integer TAT)";
inline constexpr const char* kTotalNonNegative = "ERR total must be a non-negative integer";
inline constexpr const char* kMaxEventsNeedsEvents = "ERR MAXEVENTS needs an EVENTS stream";
inline constexpr const char* kEventsSameKey =
    "ERR the EVENTS stream must be another key than the item";
inline constexpr const char* kOwnerEmpty = "ERR OWNER must not be empty";
inline constexpr const char* kHoldIdEmpty = "ERR hold id must not be empty";
inline constexpr const char* kReserveInvalidExpire =
    "ERR invalid expire time in 'inv.reserve' command";
inline constexpr const char* kQtyPositive = "ERR quantity must be a positive integer";

// Texts that name an argument or a command.
std::string must_be_positive(std::string_view what);
std::string events_stream_slot(std::string_view events, std::string_view key);
std::string restock_below_settled(int64_t total, int64_t held_and_sold);
std::string item_twice_in_cart(std::string_view key);
// A hold's state, one code each: "ERR hold '<id>' is held", "COMMITTED hold '<id>' was already
// committed", "RELEASED ...", "EXPIRED ...".
std::string hold_is_held(std::string_view id);
std::string hold_committed(std::string_view id);
std::string hold_released(std::string_view id);
std::string hold_expired(std::string_view id);
// "SOLDOUT not enough stock for '<key>': <available> available, <qty> requested".
std::string soldout(std::string_view key, int64_t available, int64_t qty);
// "HOLDEXISTS hold '<id>' of '<key>' already exists (<state>)".
std::string hold_exists(std::string_view key, std::string_view id, std::string_view state);
// "NOHOLD no hold '<id>' for '<key>'".
std::string no_hold(std::string_view key, std::string_view id);
// "OWNERLIMIT owner '<owner>' holds <n> [and bought <m>] of '<key>' and asked for <qty> more;
// the limit is <limit>".
std::string owner_limit(std::string_view key, std::string_view owner, int64_t held,
                        int64_t bought, int64_t qty, int64_t limit);

}  // namespace hotkv::err
