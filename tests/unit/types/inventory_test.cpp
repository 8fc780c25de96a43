// Unit tests for Inventory, the value behind INV.*: the hold state machine and its races (the
// first of commit, release and expiry wins; a deadline reached is expiry's), owner limits, the
// MAXHOLD cap, restocks while holds are out, retention then purge, the sold-out hysteresis,
// clone, audit, and the invariant available + held + sold == total after random sequences.
#include "hotkv/types/inventory.hpp"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::Hold;
using hotkv::HoldState;
using hotkv::Inventory;
using hotkv::InventoryLimits;
using hotkv::ReserveCheck;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

bool balanced(const Inventory& inv) {
  return inv.available() + inv.held() + inv.sold() == inv.total() && inv.available() >= 0 &&
         inv.held() >= 0 && inv.sold() >= 0;
}

std::vector<std::string> audit(const Inventory& inv) {
  std::vector<std::string> out;
  inv.audit(out);
  return out;
}

InventoryLimits limits(int64_t per_owner, int64_t max_hold) {
  InventoryLimits l;
  l.max_per_owner = per_owner;
  l.max_hold_ms = max_hold;
  return l;
}

}  // namespace

TEST_CASE("A reserve moves units from available to held and a commit sells them", "[inventory]") {
  Inventory inv(10, 0, false, {});
  REQUIRE(inv.check_reserve("h1", 3, "", kT0) == ReserveCheck::kOk);
  inv.reserve("h1", 3, "", kT0, kT0 + 1000);
  CHECK(inv.available() == 7);
  CHECK(inv.held() == 3);
  CHECK(inv.live_holds() == 1);
  inv.settle("h1", HoldState::kCommitted, kT0 + 10, kT0 + 600'010);
  CHECK(inv.available() == 7);
  CHECK(inv.held() == 0);
  CHECK(inv.sold() == 3);
  CHECK(inv.live_holds() == 0);
  CHECK(inv.find("h1", kT0 + 10)->state == HoldState::kCommitted);
  CHECK(audit(inv).empty());
}

TEST_CASE("Release and expiry both return the units to available", "[inventory]") {
  Inventory inv(5, 0, false, {});
  inv.reserve("r", 2, "", kT0, kT0 + 100);
  inv.reserve("e", 1, "", kT0, kT0 + 100);
  CHECK(inv.available() == 2);
  SECTION("release") {
    inv.settle("r", HoldState::kReleased, kT0 + 1, kT0 + 1);
    CHECK(inv.available() == 4);
  }
  SECTION("expiry") {
    inv.settle("e", HoldState::kExpired, kT0 + 100, kT0 + 100);
    CHECK(inv.available() == 3);
  }
  CHECK(inv.sold() == 0);
  CHECK(balanced(inv));
  CHECK(audit(inv).empty());
}

TEST_CASE("A hold at its deadline is due so expiry wins over a commit in that millisecond",
          "[inventory]") {
  Inventory inv(1, 0, false, {});
  inv.reserve("h", 1, "", kT0, kT0 + 500);
  const Hold* h = inv.find("h", kT0 + 499);
  REQUIRE(h != nullptr);
  CHECK_FALSE(Inventory::due(*h, kT0 + 499));
  CHECK(Inventory::due(*h, kT0 + 500));
  CHECK(Inventory::due(*h, kT0 + 501));
}

TEST_CASE("Settling is allowed exactly once so the quantity moves once", "[inventory]") {
  Inventory inv(3, 0, false, {});
  inv.reserve("h", 2, "", kT0, kT0 + 100);
  inv.settle("h", HoldState::kReleased, kT0 + 1, kT0 + 1000);
  CHECK(inv.available() == 3);
  // The state machine only settles live holds: a second transition is the commands' to refuse,
  // and the record shows who won.
  const Hold* h = inv.find("h", kT0 + 2);
  REQUIRE(h != nullptr);
  CHECK(h->state == HoldState::kReleased);
  CHECK(h->settled_at_ms == kT0 + 1);
  CHECK(inv.available() == 3);
  CHECK(inv.held() == 0);
  CHECK(audit(inv).empty());
}

TEST_CASE("A retried reserve with the same hold id is refused whatever the hold's state",
          "[inventory]") {
  Inventory inv(10, 0, false, {});
  inv.reserve("h", 1, "", kT0, kT0 + 100);
  CHECK(inv.check_reserve("h", 1, "", kT0 + 1) == ReserveCheck::kHoldExists);
  inv.settle("h", HoldState::kCommitted, kT0 + 2, kT0 + 1000);
  CHECK(inv.check_reserve("h", 1, "", kT0 + 3) == ReserveCheck::kHoldExists);
  CHECK(inv.check_reserve("h", 1, "", kT0 + 999) == ReserveCheck::kHoldExists);
  // Once the retention passed the id is free again.
  CHECK(inv.check_reserve("h", 1, "", kT0 + 1000) == ReserveCheck::kOk);
  inv.reserve("h", 1, "", kT0 + 1000, kT0 + 2000);
  CHECK(inv.held() == 1);
  CHECK(inv.sold() == 1);
  CHECK(audit(inv).empty());
}

TEST_CASE("Reserve checks hold ids then owner limits then stock", "[inventory]") {
  Inventory inv(2, 0, false, limits(2, 0));
  inv.reserve("a", 2, "alice", kT0, kT0 + 100);
  CHECK(inv.check_reserve("a", 5, "alice", kT0) == ReserveCheck::kHoldExists);
  CHECK(inv.check_reserve("b", 1, "alice", kT0) == ReserveCheck::kOwnerLimit);
  CHECK(inv.check_reserve("b", 1, "bob", kT0) == ReserveCheck::kSoldOut);
  CHECK(inv.check_reserve("b", 1, "", kT0) == ReserveCheck::kSoldOut);
}

TEST_CASE("Owner limits count only the owner's live holds", "[inventory]") {
  Inventory inv(100, 0, false, limits(3, 0));
  inv.reserve("a1", 2, "alice", kT0, kT0 + 100);
  CHECK(inv.owner_held("alice") == 2);
  CHECK(inv.check_reserve("a2", 2, "alice", kT0) == ReserveCheck::kOwnerLimit);
  CHECK(inv.check_reserve("a2", 1, "alice", kT0) == ReserveCheck::kOk);
  CHECK(inv.check_reserve("b1", 3, "bob", kT0) == ReserveCheck::kOk);
  CHECK(inv.check_reserve("x", 4, "bob", kT0) == ReserveCheck::kOwnerLimit);
  // Anonymous holds are never limited.
  CHECK(inv.check_reserve("anon", 50, "", kT0) == ReserveCheck::kOk);
  inv.settle("a1", HoldState::kExpired, kT0 + 100, kT0 + 200);
  CHECK(inv.owner_held("alice") == 0);
  CHECK(inv.check_reserve("a2", 3, "alice", kT0 + 100) == ReserveCheck::kOk);
  CHECK(audit(inv).empty());
}

TEST_CASE("MAXHOLD caps a new hold's TTL and extensions from the hold's creation", "[inventory]") {
  Inventory inv(10, 0, false, limits(0, 1000));
  CHECK(inv.hold_deadline(kT0, 500) == kT0 + 500);
  CHECK(inv.hold_deadline(kT0, 5000) == kT0 + 1000);
  inv.reserve("h", 1, "", kT0, inv.hold_deadline(kT0, 300));
  const Hold* h = inv.find("h", kT0);
  CHECK(inv.extended_deadline(*h, kT0 + 200, 300) == kT0 + 500);
  CHECK(inv.extended_deadline(*h, kT0 + 800, 600) == kT0 + 1000);
  Inventory unlimited(10, 0, false, {});
  CHECK(unlimited.hold_deadline(kT0, 5000) == kT0 + 5000);
  Inventory huge(10, 0, false, limits(0, INT64_MAX));
  huge.reserve("h", 1, "", kT0, huge.hold_deadline(kT0, 100));
  CHECK(huge.extended_deadline(*huge.find("h", kT0), kT0 + 50, 1000) == kT0 + 1050);
}

TEST_CASE("Restock during holds keeps the invariant and never goes below held plus sold",
          "[inventory]") {
  Inventory inv(10, 0, false, {});
  inv.reserve("a", 4, "", kT0, kT0 + 100);
  inv.reserve("b", 3, "", kT0, kT0 + 100);
  inv.settle("b", HoldState::kCommitted, kT0 + 1, kT0 + 1000);
  inv.set_total(15);
  CHECK(inv.available() == 8);
  inv.set_total(7);  // held 4 + sold 3
  CHECK(inv.available() == 0);
  CHECK(inv.sold_out());
  inv.settle("a", HoldState::kReleased, kT0 + 2, kT0 + 1000);
  CHECK(inv.available() == 4);
  CHECK(balanced(inv));
  CHECK(audit(inv).empty());
}

TEST_CASE("Sold out fires at zero and back in stock only at the threshold", "[inventory]") {
  Inventory inv(500, 0, false, {});
  CHECK(inv.back_in_stock_threshold() == 5);
  for (int i = 0; i < 499; ++i) {
    CHECK(inv.reserve("h" + std::to_string(i), 1, "", kT0, kT0 + 100) == hotkv::kEdgeNone);
  }
  CHECK(inv.reserve("last", 1, "", kT0, kT0 + 100) == hotkv::kEdgeSoldOut);
  CHECK(inv.sold_out());
  // A unit flickering between 0 and 1 sends nothing.
  for (int round = 0; round < 3; ++round) {
    CHECK(inv.settle("h" + std::to_string(round), HoldState::kReleased, kT0, kT0) ==
          hotkv::kEdgeNone);
    CHECK(inv.reserve("again" + std::to_string(round), 1, "", kT0, kT0 + 100) == hotkv::kEdgeNone);
  }
  for (int i = 10; i < 14; ++i) {
    CHECK(inv.settle("h" + std::to_string(i), HoldState::kExpired, kT0, kT0) == hotkv::kEdgeNone);
  }
  CHECK(inv.available() == 4);
  CHECK(inv.settle("h20", HoldState::kExpired, kT0, kT0) == hotkv::kEdgeBackInStock);
  CHECK_FALSE(inv.sold_out());
  CHECK(inv.available() == 5);
}

TEST_CASE("A small item uses a threshold of one unit", "[inventory]") {
  Inventory inv(3, 0, false, {});
  CHECK(inv.back_in_stock_threshold() == 1);
  inv.reserve("a", 3, "", kT0, kT0 + 100);
  CHECK(inv.sold_out());
  CHECK(inv.settle("a", HoldState::kReleased, kT0, kT0) == hotkv::kEdgeBackInStock);
  Inventory empty(0, 0, true, {});
  CHECK(empty.sold_out());
  CHECK(empty.set_total(10) == hotkv::kEdgeBackInStock);
}

TEST_CASE("Retention keeps a settled record visible until its purge time then purge drops it",
          "[inventory]") {
  Inventory inv(5, 0, false, {});
  inv.reserve("h", 1, "", kT0, kT0 + 100);
  CHECK_FALSE(inv.purge("h"));  // live holds are never purged
  inv.settle("h", HoldState::kExpired, kT0 + 100, kT0 + 600'100);
  CHECK(inv.find("h", kT0 + 600'099) != nullptr);
  CHECK(inv.find("h", kT0 + 600'100) == nullptr);
  CHECK(inv.find_raw("h") != nullptr);
  CHECK(inv.hold_records() == 1);
  CHECK(inv.purge("h"));
  CHECK(inv.find_raw("h") == nullptr);
  CHECK(inv.hold_records() == 0);
  CHECK_FALSE(inv.purge("h"));
  CHECK(inv.available() == 5);
  CHECK(audit(inv).empty());
}

TEST_CASE("Restoring holds rebuilds an item without crossing sold-out edges", "[inventory]") {
  Inventory original(500, 0, false, limits(100, 0));
  for (int i = 0; i < 498; ++i) {
    original.reserve("h" + std::to_string(i), 1, "o" + std::to_string(i % 7), kT0, kT0 + 100);
  }
  original.reserve("x", 2, "", kT0, kT0 + 100);
  REQUIRE(original.sold_out());
  original.settle("h0", HoldState::kReleased, kT0, kT0 + 10);
  original.settle("h1", HoldState::kCommitted, kT0, kT0 + 10);
  REQUIRE(original.available() == 1);
  REQUIRE(original.sold_out());  // below the threshold of 5

  Inventory copy(original.total(), original.sold(), original.sold_out(), original.limits());
  original.for_each([&](std::string_view id, const Hold& h) { copy.restore_hold(id, h); });
  CHECK(copy.sold_out());
  CHECK(copy.available() == original.available());
  CHECK(copy.held() == original.held());
  CHECK(copy.live_holds() == original.live_holds());
  CHECK(copy.hold_records() == original.hold_records());
  CHECK(copy.owner_held("o3") == original.owner_held("o3"));
  CHECK(audit(copy).empty());
}

TEST_CASE("Clone is a deep copy", "[inventory]") {
  Inventory inv(10, 0, false, limits(5, 1000));
  inv.reserve("a", 2, "alice", kT0, kT0 + 100);
  auto copy = inv.clone();
  copy->settle("a", HoldState::kCommitted, kT0 + 1, kT0 + 10);
  CHECK(inv.find("a", kT0 + 1)->state == HoldState::kHeld);
  CHECK(inv.held() == 2);
  CHECK(copy->sold() == 2);
  CHECK(copy->owner_held("alice") == 0);
  CHECK(inv.owner_held("alice") == 2);
  CHECK(copy->limits().max_hold_ms == 1000);
}

TEST_CASE("Hold states round trip through their names", "[inventory]") {
  for (HoldState s :
       {HoldState::kHeld, HoldState::kCommitted, HoldState::kReleased, HoldState::kExpired}) {
    HoldState back = HoldState::kHeld;
    REQUIRE(hotkv::parse_hold_state(hotkv::hold_state_name(s), back));
    CHECK(back == s);
  }
  HoldState out = HoldState::kHeld;
  CHECK_FALSE(hotkv::parse_hold_state("gone", out));
}

TEST_CASE("Scan visits every live hold", "[inventory]") {
  Inventory inv(1000, 0, false, {});
  for (int i = 0; i < 300; ++i) {
    inv.reserve("h" + std::to_string(i), 1, "", kT0, kT0 + 100);
  }
  std::map<std::string, int> seen;
  uint64_t cursor = 0;
  do {
    cursor = inv.scan(cursor, [&](std::string_view id, const Hold&) { ++seen[std::string(id)]; });
  } while (cursor != 0);
  CHECK(seen.size() == 300);
}

TEST_CASE("Random transitions always keep the invariant and a clean audit", "[inventory]") {
  std::mt19937_64 rng(42);
  Inventory inv(200, 0, false, limits(7, 5000));
  std::vector<std::string> live;
  int64_t now = kT0;
  int next_id = 0;
  for (int step = 0; step < 20000; ++step) {
    now += static_cast<int64_t>(rng() % 3);
    int action = static_cast<int>(rng() % 10);
    if (action < 5) {
      std::string id = "h" + std::to_string(next_id++);
      std::string owner = rng() % 4 == 0 ? "" : "o" + std::to_string(rng() % 20);
      int64_t qty = 1 + static_cast<int64_t>(rng() % 3);
      if (inv.check_reserve(id, qty, owner, now) == ReserveCheck::kOk) {
        inv.reserve(id, qty, owner, now, inv.hold_deadline(now, 1 + rng() % 10000));
        live.push_back(id);
      }
    } else if (action < 8 && !live.empty()) {
      size_t pick = rng() % live.size();
      HoldState to = action == 5   ? HoldState::kCommitted
                     : action == 6 ? HoldState::kReleased
                                   : HoldState::kExpired;
      inv.settle(live[pick], to, now, now + 50);
      live[pick] = live.back();
      live.pop_back();
    } else if (action == 8) {
      int64_t delta = static_cast<int64_t>(rng() % 21) - 10;
      if (inv.total() + delta >= inv.held() + inv.sold()) {
        inv.set_total(inv.total() + delta);
      }
    } else {
      // Purge whatever settled record is past retention, as the wheel would.
      std::vector<std::string> done;
      inv.for_each([&](std::string_view id, const Hold& h) {
        if (h.state != HoldState::kHeld && h.purge_at_ms <= now) {
          done.emplace_back(id);
        }
      });
      for (const auto& id : done) {
        CHECK(inv.purge(id));
      }
    }
    REQUIRE(balanced(inv));
    REQUIRE(inv.live_holds() == live.size());
  }
  CHECK(audit(inv).empty());
}
