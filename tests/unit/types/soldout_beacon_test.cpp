// SoldOutBeacon: the Bloom filter never forgets what was added, keeps hold ids and owners
// apart, reports full() past its capacity; and Inventory keeps its beacon's available count
// an upper bound of the real one through every transition, fills it from existing records,
// never copies it and kills it when the item goes.
#include "hotkv/types/soldout_beacon.hpp"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/types/inventory.hpp"

using hotkv::Hold;
using hotkv::HoldState;
using hotkv::Inventory;
using hotkv::InventoryLimits;
using hotkv::SoldOutBeacon;

TEST_CASE("The beacon's filter has no false negatives and few false positives", "[beacon]") {
  SoldOutBeacon b(10000, 0);
  for (int i = 0; i < 10000; ++i) {
    b.add_hold("order-" + std::to_string(i));
  }
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(b.may_have_hold("order-" + std::to_string(i)));
  }
  int false_positives = 0;
  for (int i = 10000; i < 110000; ++i) {
    false_positives += b.may_have_hold("order-" + std::to_string(i)) ? 1 : 0;
  }
  CHECK(false_positives < 1000);  // under 1% at 16+ bits per id
  // Ids and owners are different names: hold ids asked as owners are found no more often
  // than the filter's false positives (one given name may be one of them: the hash is seeded
  // per process).
  int owner_hits = 0;
  for (int i = 0; i < 10000; ++i) {
    owner_hits += b.may_have_owner("order-" + std::to_string(i)) ? 1 : 0;
  }
  CHECK(owner_hits < 200);
  b.add_owner("customer:1");
  CHECK(b.may_have_owner("customer:1"));
  CHECK_FALSE(b.full());
}

TEST_CASE("A beacon reports full once four times its expected entries were added", "[beacon]") {
  SoldOutBeacon b(1024, 0);
  int added = 0;
  while (!b.full() && added < 10'000'000) {
    b.add_hold(std::to_string(added++));
  }
  CHECK(b.full());
  CHECK(added >= 4 * 1024);
}

TEST_CASE("An item keeps its beacon's available count at or above its own", "[beacon]") {
  InventoryLimits limits;
  limits.max_per_owner = 2;
  Inventory inv(10, 0, false, limits);
  inv.reserve("before", 3, "early", 1, 1000);
  auto b = std::make_shared<SoldOutBeacon>(16, limits.max_per_owner);
  CHECK_FALSE(b->alive());
  inv.attach_beacon(b);
  // Filled from what exists.
  CHECK(b->alive());
  CHECK(b->available() == 7);
  CHECK(b->may_have_hold("before"));
  CHECK(b->may_have_owner("early"));
  CHECK(b->max_per_owner() == 2);

  inv.reserve("a", 7, "late", 2, 1000);
  CHECK(b->available() == 0);
  CHECK(b->may_have_hold("a"));
  CHECK(b->may_have_owner("late"));
  inv.settle("a", HoldState::kReleased, 3, 100);
  CHECK(b->available() == 7);
  inv.settle("before", HoldState::kCommitted, 4, 100);
  CHECK(b->available() == 7);
  inv.set_total(20);
  CHECK(b->available() == 17);
  inv.set_total(3);
  CHECK(b->available() == 0);
  Hold h;
  h.qty = 0;
  h.state = HoldState::kReleased;
  h.settled_at_ms = 5;
  h.purge_at_ms = 500;
  inv.restore_hold("restored", h);
  CHECK(b->may_have_hold("restored"));
  inv.restore_owner_bought("buyer", 1);
  CHECK(b->may_have_owner("buyer"));
  CHECK(b->available() == inv.available());

  // A copy has no beacon; the original's beacon dies with it.
  auto copy = inv.clone();
  CHECK(copy->beacon() == nullptr);
  copy.reset();
  CHECK(b->alive());
  {
    auto doomed = std::make_unique<Inventory>(1, 0, false, InventoryLimits{});
    auto b2 = std::make_shared<SoldOutBeacon>(16, 0);
    doomed->attach_beacon(b2);
    CHECK(b2->alive());
    doomed.reset();
    CHECK_FALSE(b2->alive());
  }
  inv.drop_beacon();
  CHECK_FALSE(b->alive());
  CHECK(inv.beacon() == nullptr);
}

TEST_CASE("An item drops a beacon that filled up", "[beacon]") {
  Inventory inv(1'000'000, 0, false, InventoryLimits{});
  auto b = std::make_shared<SoldOutBeacon>(16, 0);
  inv.attach_beacon(b);
  int n = 0;
  while (inv.beacon() != nullptr && n < 1'000'000) {
    inv.reserve("h" + std::to_string(n++), 1, "", 1, 1000);
  }
  CHECK(inv.beacon() == nullptr);
  CHECK_FALSE(b->alive());
}
