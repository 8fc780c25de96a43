#include "hotkv/util/eviction_policy.hpp"

namespace hotkv {

const std::vector<std::string>& eviction_policy_names() {
  static const std::vector<std::string> names{"volatile-lru", "volatile-lfu",  "volatile-random",
                                              "volatile-ttl", "allkeys-lru",   "allkeys-lfu",
                                              "allkeys-random", "noeviction"};
  return names;
}

EvictionPolicy parse_eviction_policy(std::string_view name) {
  const auto& names = eviction_policy_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      return static_cast<EvictionPolicy>(i);
    }
  }
  return EvictionPolicy::kNoEviction;
}

}  // namespace hotkv
