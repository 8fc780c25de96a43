// Keyspace notification classes (notify-keyspace-events) with Redis's flag letters: which
// events a write publishes on __keyspace@0__:<key> and __keyevent@0__:<event>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hotkv {

enum NotifyFlag : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K
  kNotifyKeyevent = 1u << 1,  // E
  kNotifyGeneric = 1u << 2,   // g: DEL, EXPIRE, RENAME, COPY...
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZset = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x
  kNotifyEvicted = 1u << 9,   // e
  kNotifyStream = 1u << 10,   // t
  kNotifyKeyMiss = 1u << 11,  // m (not part of A)
  kNotifyModule = 1u << 12,   // d
  kNotifyNew = 1u << 13,      // n (not part of A)
  // A: every class except m and n.
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// Parses a flag string such as "KEA" or "Ex"; nullopt on an unknown letter. As in Redis, a
// string with classes but neither K nor E enables nothing.
std::optional<uint32_t> parse_notify_flags(std::string_view s);
// The canonical letters for CONFIG GET (A is written when it applies).
std::string format_notify_flags(uint32_t flags);

}  // namespace hotkv
