// maxmemory-policy as a value the data path can load from an atomic (Config::maxmemory_policy),
// and what each policy means for a key: which keys it may evict and how it ranks them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

// In the order CONFIG SET lists them in its refusal (Redis's order); the value is the index.
enum class EvictionPolicy : int {
  kVolatileLru = 0,
  kVolatileLfu = 1,
  kVolatileRandom = 2,
  kVolatileTtl = 3,
  kAllKeysLru = 4,
  kAllKeysLfu = 5,
  kAllKeysRandom = 6,
  kNoEviction = 7,
};

// The names, indexed by EvictionPolicy.
const std::vector<std::string>& eviction_policy_names();
// kNoEviction for an unknown name (Config validates before it calls this).
EvictionPolicy parse_eviction_policy(std::string_view name);

// Only keys with a deadline are candidates.
inline bool policy_volatile_only(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}
inline bool policy_random(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kAllKeysRandom;
}
inline bool policy_lfu(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLfu || p == EvictionPolicy::kAllKeysLfu;
}

}  // namespace hotkv
