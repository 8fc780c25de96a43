// Inventory: the value behind INV.* — one stock item with its counters and its holds, and the
// hold state machine. This is HotKV's own type (Redis users build it from scripts and a
// sweeper): at every instant `available + held + sold == total`, checked with HOTKV_ASSERT
// after every transition.
//
// A hold takes `qty` units from available into held until a deadline. It then ends exactly
// once, in one of three ways, and whichever comes first wins:
//   held --commit--> committed  (the units are sold and never return)
//   held --release-> released   (the units go back to available)
//   held --expiry--> expired    (the deadline was reached: the units go back to available)
// A hold whose deadline is at or before `now` counts as expired even before anybody processed
// it (due()), so a commit at the very millisecond of the deadline loses to expiry. A settled
// hold is kept as a record until its purge time (the retention the commands choose) so a late
// retry learns what happened; after that it is invisible and can be dropped (purge()).
//
// Sold-out / back-in-stock use hysteresis: the item becomes sold out when available reaches 0
// and is back in stock only once available climbs to back_in_stock_threshold() (max(1,
// total / 100)) again, so a unit flickering between 0 and 1 does not flood subscribers.
// Transitions return which of these edges they crossed.
//
// Pure: no RESP, no clock, no logging. Times are absolute unix ms passed in by the caller.
// Not thread-safe: an item belongs to one shard and only that shard's thread touches it. The
// one exception is its SoldOutBeacon (if it has one), which every transition keeps current
// and other threads read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "hotkv/types/dict.hpp"
#include "hotkv/types/soldout_beacon.hpp"

namespace hotkv {

enum class HoldState : uint8_t { kHeld, kCommitted, kReleased, kExpired };

// "held", "committed", "released", "expired".
const char* hold_state_name(HoldState s);
// The reverse of hold_state_name; false for anything else.
bool parse_hold_state(std::string_view s, HoldState& out);

struct Hold {
  std::string owner;  // empty: the hold has no owner
  int64_t qty = 0;
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;   // the deadline (kept as it was once the hold is settled)
  int64_t settled_at_ms = -1;  // -1 while held
  int64_t purge_at_ms = -1;    // settled: when the record is forgotten; -1 while held
  HoldState state = HoldState::kHeld;
};

struct InventoryLimits {
  int64_t max_per_owner = 0;  // most units one owner may hold or have bought; 0: no limit
  int64_t max_hold_ms = 0;    // longest a hold may last from its creation; 0: no cap
  std::string events_key;     // stream that receives every transition; empty: none
  int64_t max_events = 0;     // the events stream is trimmed to about this many; 0: unbounded
};

// Edges a transition crossed (bit flags).
enum StockEdge : uint8_t {
  kEdgeNone = 0,
  kEdgeSoldOut = 1,      // available reached 0
  kEdgeBackInStock = 2,  // after a sold-out, available climbed to the threshold
};

// Why a reserve cannot be granted (in the order they are checked).
enum class ReserveCheck { kOk, kHoldExists, kOwnerLimit, kSoldOut };

class Inventory {
 public:
  // REQUIRES 0 <= sold <= total. The item starts with no holds; `sold_out` is the hysteresis
  // state (a fresh item is sold out when nothing is available).
  Inventory(int64_t total, int64_t sold, bool sold_out, InventoryLimits limits);
  Inventory(const Inventory&) = delete;
  Inventory& operator=(const Inventory&) = delete;
  // Marks the beacon, if any, dead: the item is no longer the value of its key.
  ~Inventory();
  // A deep copy (COPY), holds and retained records included; never the beacon.
  std::unique_ptr<Inventory> clone() const;

  int64_t total() const { return total_; }
  int64_t available() const { return available_; }
  int64_t held() const { return held_; }
  int64_t sold() const { return sold_; }
  bool sold_out() const { return sold_out_; }
  const InventoryLimits& limits() const { return limits_; }
  // Holds in state held (including any whose deadline passed and is not processed yet).
  size_t live_holds() const { return live_; }
  // Hold records of any state (live holds and settled records not yet purged).
  size_t hold_records() const { return holds_.size(); }
  int64_t owner_held(std::string_view owner) const;
  // Units the owner's holds committed (tracked only with MAXPEROWNER, which counts them with
  // the live holds: a customer who bought their pair cannot reserve another).
  int64_t owner_bought(std::string_view owner) const;
  int64_t back_in_stock_threshold() const { return total_ / 100 > 1 ? total_ / 100 : 1; }

  // The hold as seen at now_ms: nullptr if there is none, or if it is a settled record whose
  // purge time has come (it only waits to be dropped). A held hold past its deadline is
  // returned as it is; due() tells that it has in fact expired.
  const Hold* find(std::string_view id, int64_t now_ms) const;
  // The record under id whatever its purge time (replay and the timing wheel use this).
  const Hold* find_raw(std::string_view id) const;
  static bool due(const Hold& h, int64_t now_ms) {
    return h.state == HoldState::kHeld && h.expires_at_ms <= now_ms;
  }

  // Checks a reserve of qty (> 0) under a new hold id at now_ms, in this order: a visible
  // hold with that id exists (any state: a retried reserve never takes a second unit), the
  // owner would pass MAXPEROWNER (only with an owner), not enough is available.
  ReserveCheck check_reserve(std::string_view id, int64_t qty, std::string_view owner,
                             int64_t now_ms) const;
  // The deadline a new hold with this TTL gets: now + ttl, capped at now + MAXHOLD.
  // REQUIRES ttl_ms > 0 and no overflow (the command checks).
  int64_t hold_deadline(int64_t now_ms, int64_t ttl_ms) const;
  // The deadline INV.EXTEND sets: now + ttl, capped at the hold's creation + MAXHOLD.
  int64_t extended_deadline(const Hold& h, int64_t now_ms, int64_t ttl_ms) const;

  // Transitions. Each asserts the invariant afterwards and returns the StockEdge bits.
  //
  // A new live hold: qty units move from available to held. Replaces a settled record with
  // the same id, if any. REQUIRES 0 < qty <= available, and no live hold with this id.
  uint8_t reserve(std::string_view id, int64_t qty, std::string_view owner, int64_t created_at_ms,
                  int64_t expires_at_ms);
  // Ends a live hold: committed (held -> sold) or released/expired (held -> available).
  // REQUIRES a live hold with this id and to != kHeld.
  uint8_t settle(std::string_view id, HoldState to, int64_t settled_at_ms, int64_t purge_at_ms);
  // Moves a live hold's deadline. REQUIRES a live hold with this id.
  void extend(std::string_view id, int64_t expires_at_ms);
  // Sets the total; available moves by the same amount. REQUIRES new_total >= held + sold.
  uint8_t set_total(int64_t new_total);
  // Drops a settled record; false (and nothing changes) if it is live or missing.
  bool purge(std::string_view id);
  // Re-creates a hold when an item is rebuilt from its encoding (the rewrite, COPY, RENAME):
  // a live hold moves its units from available to held, a settled record moves nothing (the
  // constructor's sold count includes committed units). Unlike reserve() it never changes
  // the sold-out state, which the encoding carries as it was. REQUIRES no live hold with this
  // id and, for a live hold, 0 < qty <= available.
  void restore_hold(std::string_view id, Hold h);

  // Re-creates an owner's bought units when an item is rebuilt from its encoding (settled
  // records are purged after their retention; the count is not).
  void restore_owner_bought(const std::string& owner, int64_t units);
  // Visits every owner with bought units: fn(const std::string& owner, int64_t units).
  template <class F>
  void for_each_owner_bought(F&& fn) const {
    for (const auto& [owner, units] : bought_) {
      fn(owner, units);
    }
  }

  // Visits every hold record: fn(std::string_view id, const Hold&).
  template <class F>
  void for_each(F&& fn) const {
    holds_.for_each([&](std::string_view id, Hold& h) { fn(id, static_cast<const Hold&>(h)); });
  }
  // One step of a cursor walk over the records (Dict::scan's guarantee: a record present for
  // the whole walk is visited at least once). Start with 0; returns 0 when done.
  template <class F>
  uint64_t scan(uint64_t cursor, F&& fn) const {
    return holds_.scan(cursor,
                       [&](std::string_view id, Hold& h) { fn(id, static_cast<const Hold&>(h)); });
  }

  // Full consistency check, O(holds): the invariant, non-negative counters, held equal to the
  // sum of live holds, per-owner sums and limits, the live count. Appends one text per
  // violation.
  void audit(std::vector<std::string>& out) const;

  size_t memory_bytes() const;

  // The beacon other threads read to answer SOLDOUT themselves (nullptr: none). attach_beacon
  // fills it from the item (every record's id, every owner with live or bought units, the
  // available count) and marks it alive; from then on every transition updates it first.
  // drop_beacon marks it dead and forgets it (the key is about to change under the item).
  const std::shared_ptr<SoldOutBeacon>& beacon() const { return beacon_; }
  void attach_beacon(std::shared_ptr<SoldOutBeacon> b);
  void drop_beacon();

 private:
  // Beacon upkeep: an id or owner is added before its hold exists, a rise of available is
  // published before it happens and a fall after (see soldout_beacon.hpp).
  void beacon_add(std::string_view id, std::string_view owner);
  void beacon_raise(int64_t new_available) {
    if (beacon_ != nullptr) {
      beacon_->publish_available(new_available);
    }
  }
  void beacon_lowered() {
    if (beacon_ != nullptr) {
      beacon_->publish_available(available_);
    }
  }
  // Sets sold_out_ from available_ after a change and returns the edge crossed.
  uint8_t update_stock_edge();
  void check_invariant() const;
  void add_owner(const std::string& owner, int64_t qty);

  int64_t total_;
  int64_t available_;
  int64_t held_ = 0;
  int64_t sold_;
  bool sold_out_;
  size_t live_ = 0;
  InventoryLimits limits_;
  // mutable: Dict only iterates through non-const calls; for_each and scan hand out const
  // holds, so nothing is changed through them.
  mutable Dict<Hold> holds_;
  absl::flat_hash_map<std::string, int64_t> owners_;  // owner -> units in its live holds
  absl::flat_hash_map<std::string, int64_t> bought_;  // owner -> units committed (MAXPEROWNER)
  std::shared_ptr<SoldOutBeacon> beacon_;
};

}  // namespace hotkv
