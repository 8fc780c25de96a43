// One thread's map from an inventory key to the SoldOutBeacon of the item another shard keeps
// under it, so a reserve that would be refused is refused here without a hop (see
// commands/inventory_soldout.hpp). Owner thread only: the item's shard fills every thread's
// index by posting to it. An entry whose beacon died is dropped by the lookup that finds it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/string_view.h>

#include "hotkv/types/soldout_beacon.hpp"

namespace hotkv {

class SoldOutIndex {
 public:
  bool empty() const { return beacons_.empty(); }
  size_t size() const { return beacons_.size(); }

  // The live beacon under key, or nullptr (a dead one is forgotten on the way).
  SoldOutBeacon* find(std::string_view key) {
    auto it = beacons_.find(absl::string_view(key.data(), key.size()));
    if (it == beacons_.end()) {
      return nullptr;
    }
    if (!it->second->alive()) {
      beacons_.erase(it);
      return nullptr;
    }
    return it->second.get();
  }
  // The entry under key, dead or alive (nullptr: none).
  std::shared_ptr<SoldOutBeacon> entry(std::string_view key) const {
    auto it = beacons_.find(absl::string_view(key.data(), key.size()));
    return it == beacons_.end() ? nullptr : it->second;
  }
  // SWAPDB of database 0 (the only one whose items get beacons): every item may now be
  // somewhere else, so no beacon may answer for its key any more.
  void kill_all() {
    for (auto& kv : beacons_) {
      kv.second->set_alive(false);
    }
  }
  void put(std::string_view key, std::shared_ptr<SoldOutBeacon> b) {
    beacons_.insert_or_assign(std::string(key), std::move(b));
  }
  // Forgets key's entry if it is still `b` (a newer beacon under the same key stays).
  void erase(std::string_view key, const SoldOutBeacon* b) {
    auto it = beacons_.find(absl::string_view(key.data(), key.size()));
    if (it != beacons_.end() && it->second.get() == b) {
      beacons_.erase(it);
    }
  }

 private:
  absl::flat_hash_map<std::string, std::shared_ptr<SoldOutBeacon>> beacons_;
};

}  // namespace hotkv
