// What every thread may read about a sold-out inventory item without asking the thread that
// owns it, so that a shopper told SOLDOUT is told so by the thread that reads its socket.
//
// A reserve is refused with SOLDOUT only when its hold id is new, its owner is under
// MAXPEROWNER and fewer than qty units are available. The beacon lets another thread prove
// all three at one instant from three facts the owner thread publishes, in this order:
//   - `available()` is never below the item's real available count: the owner publishes a
//     rise before it happens and a fall after it happened;
//   - a Bloom filter of every hold id the item has a record of, and of every owner with live
//     or bought units: an id or owner is added before its hold exists, and never removed
//     (a purged record leaves a false positive, which only costs a hop);
//   - `alive()`: cleared before the item stops being the value of its key (deleted,
//     overwritten, renamed, given a deadline) and never set again.
// A reader that loads available, then the filter, then alive, and finds qty > available, the
// id and owner absent and the beacon alive, has found an instant (its load of available) at
// which the real reserve would have answered SOLDOUT. See docs/inventory.md.
//
// Writers: the item's owner thread only. Readers: any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace hotkv {

class SoldOutBeacon {
 public:
  // Sized for `expected` ids and owners at about 16 bits each (a false positive rate near
  // 0.1%); once more than four times that many were added the beacon reports full().
  SoldOutBeacon(size_t expected, int64_t max_per_owner);
  SoldOutBeacon(const SoldOutBeacon&) = delete;
  SoldOutBeacon& operator=(const SoldOutBeacon&) = delete;

  int64_t available() const { return available_.load(); }
  void publish_available(int64_t v) { available_.store(v); }
  bool alive() const { return alive_.load(); }
  void set_alive(bool v) { alive_.store(v); }
  // MAXPEROWNER of the item (fixed at creation); 0: owners are not limited.
  int64_t max_per_owner() const { return max_per_owner_; }

  void add_hold(std::string_view id) { add(kHoldTag, id); }
  void add_owner(std::string_view owner) { add(kOwnerTag, owner); }
  // False means certainly never added; true means perhaps.
  bool may_have_hold(std::string_view id) const { return may_have(kHoldTag, id); }
  bool may_have_owner(std::string_view owner) const { return may_have(kOwnerTag, owner); }
  // True once so many entries were added that false positives would make most readers hop.
  bool full() const { return added_ > capacity_; }

  size_t memory_bytes() const { return sizeof(*this) + (mask_ + 1) / 8; }

 private:
  static constexpr uint8_t kHoldTag = 1;
  static constexpr uint8_t kOwnerTag = 2;
  static constexpr int kProbes = 4;

  void add(uint8_t tag, std::string_view s);
  bool may_have(uint8_t tag, std::string_view s) const;

  std::atomic<int64_t> available_{0};
  std::atomic<bool> alive_{false};
  int64_t max_per_owner_;
  size_t mask_;      // bits - 1 (bits is a power of two)
  size_t capacity_;  // entries before full()
  size_t added_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> words_;
};

}  // namespace hotkv
