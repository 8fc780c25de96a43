// Inventory DUMP payloads (HotKV's private object type): an item with live holds, settled
// records and owners' bought units restores to an equal item, and payloads that would break
// the item's invariant are refused.
#include "hotkv/shard/inventory_dump.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hotkv/shard/value_dump.hpp"
#include "hotkv/types/inventory.hpp"
#include "hotkv/util/config.hpp"

using namespace hotkv;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

std::unique_ptr<Inventory> sample_item() {
  InventoryLimits limits;
  limits.max_per_owner = 4;
  limits.max_hold_ms = 60'000;
  limits.events_key = "inv:events";
  limits.max_events = 1000;
  auto inv = std::make_unique<Inventory>(100, 7, false, limits);
  inv->reserve("live", 3, "ann", kT0, kT0 + 30'000);
  inv->reserve("anon", 5, "", kT0 + 1, kT0 + 20'000);
  inv->reserve("bought", 2, "bob", kT0, kT0 + 30'000);
  inv->settle("bought", HoldState::kCommitted, kT0 + 5, kT0 + 600'005);
  inv->reserve("gone", 1, "ann", kT0, kT0 + 30'000);
  inv->settle("gone", HoldState::kReleased, kT0 + 6, kT0 + 600'006);
  return inv;
}

std::optional<Value> restore(const std::string& payload) {
  Config c;
  RestoreError why = RestoreError::kNone;
  return restore_value(payload, c, why);
}

std::string sealed(std::string body) {
  rdb_seal_payload(body);
  return body;
}

}  // namespace

TEST_CASE("an inventory item restores with its holds, records and owners", "[dump]") {
  std::unique_ptr<Inventory> inv = sample_item();
  std::optional<std::string> payload = dump_value(Value::from_inventory(inv->clone()));
  REQUIRE(payload.has_value());
  CHECK(static_cast<uint8_t>((*payload)[0]) == kRdbTypeInventory);
  std::optional<Value> v = restore(*payload);
  REQUIRE(v.has_value());
  REQUIRE(v->type() == ValueType::kInventory);
  const Inventory& r = *v->inventory();
  CHECK(r.total() == 100);
  CHECK(r.sold() == 9);
  CHECK(r.held() == 8);
  CHECK(r.available() == 83);
  CHECK_FALSE(r.sold_out());
  CHECK(r.limits().max_per_owner == 4);
  CHECK(r.limits().max_hold_ms == 60'000);
  CHECK(r.limits().events_key == "inv:events");
  CHECK(r.limits().max_events == 1000);
  CHECK(r.live_holds() == 2);
  CHECK(r.hold_records() == 4);
  CHECK(r.owner_held("ann") == 3);
  CHECK(r.owner_bought("bob") == 2);
  const Hold* live = r.find_raw("live");
  REQUIRE(live != nullptr);
  CHECK(live->state == HoldState::kHeld);
  CHECK(live->owner == "ann");
  CHECK(live->created_at_ms == kT0);
  CHECK(live->expires_at_ms == kT0 + 30'000);
  CHECK(live->settled_at_ms == -1);
  const Hold* gone = r.find_raw("gone");
  REQUIRE(gone != nullptr);
  CHECK(gone->state == HoldState::kReleased);
  CHECK(gone->settled_at_ms == kT0 + 6);
  CHECK(gone->purge_at_ms == kT0 + 600'006);
  std::vector<std::string> problems;
  r.audit(problems);
  CHECK(problems.empty());
}

TEST_CASE("a sold-out item stays sold out", "[dump]") {
  auto inv = std::make_unique<Inventory>(2, 2, true, InventoryLimits{});
  std::optional<Value> v = restore(*dump_value(Value::from_inventory(std::move(inv))));
  REQUIRE(v.has_value());
  CHECK(v->inventory()->sold_out());
  CHECK(v->inventory()->available() == 0);
}

TEST_CASE("inventory payloads that break the item are bad data", "[dump]") {
  std::string good = *dump_value(Value::from_inventory(sample_item()));
  std::string body = good.substr(0, good.size() - 10);
  REQUIRE(restore(sealed(body)).has_value());
  for (size_t n = 1; n < body.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    CHECK_FALSE(restore(sealed(body.substr(0, n))).has_value());
  }
  // Layout: type, version, total (100), sold (7), sold-out flag...
  std::string bad_version = body;
  bad_version[1] = 2;
  CHECK_FALSE(restore(sealed(bad_version)).has_value());
  std::string sold_over_total = body;
  REQUIRE(static_cast<uint8_t>(sold_over_total[2]) == 0x40);  // 14-bit length: 100
  sold_over_total[2] = 0;                                     // total 0 < sold
  sold_over_total.erase(3, 1);
  CHECK_FALSE(restore(sealed(sold_over_total)).has_value());
  // A live hold larger than what is available.
  auto inv = std::make_unique<Inventory>(10, 0, false, InventoryLimits{});
  inv->reserve("h", 10, "", kT0, kT0 + 1000);
  std::string full = *dump_value(Value::from_inventory(std::move(inv)));
  std::string smaller = full.substr(0, full.size() - 10);
  REQUIRE(static_cast<uint8_t>(smaller[2]) == 10);
  smaller[2] = 9;  // total 9, the hold still takes 10
  CHECK_FALSE(restore(sealed(smaller)).has_value());
}

TEST_CASE("inventory payloads with any byte changed never crash the reader", "[dump]") {
  const std::string good = *dump_value(Value::from_inventory(sample_item()));
  const std::string body = good.substr(0, good.size() - 10);
  size_t restored = 0;
  for (size_t at = 0; at < body.size(); ++at) {
    for (int delta : {1, -1, 0x40, 0x80}) {
      std::string bad = body;
      bad[at] = static_cast<char>(static_cast<uint8_t>(bad[at]) + delta);
      // Refused or restored as a consistent item (audited), never an abort.
      std::optional<Value> v = restore(sealed(bad));
      if (v.has_value()) {
        std::vector<std::string> problems;
        v->inventory()->audit(problems);
        CHECK(problems.empty());
        ++restored;
      }
    }
  }
  CHECK(restored < 4 * body.size());
}
