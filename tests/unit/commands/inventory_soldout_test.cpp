// Sold-out answers on every thread (commands/inventory_soldout.hpp), with two shards: once the
// item's shard answered SOLDOUT, the other shard refuses the same kind of reserve itself with
// the same reply, and hands back to the item's shard everything it cannot prove: a hold id or
// owner that may exist, stock that came back, bad arguments, a key that changed.
#include "hotkv/commands/inventory_soldout.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"
#include "support/test_server.hpp"

using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

// A key the engine keeps on shard `want`.
std::string key_on(TestServer& s, size_t want, const std::string& stem) {
  for (int i = 0;; ++i) {
    std::string k = stem + std::to_string(i);
    if (s.engine().shard_of(k) == want) {
      return k;
    }
  }
}

// What shard 0 answers by itself for this command (empty: it would send it to the item's
// shard). Posted beacons are delivered first.
std::string answered_on_shard0(TestServer& s, const std::vector<std::string>& argv) {
  s.pushes();
  std::vector<std::string_view> views(argv.begin(), argv.end());
  const hotkv::CommandSpec* spec = s.engine().table().find(views[0]);
  REQUIRE(spec != nullptr);
  std::string out;
  hotkv::ReplyWriter w(out, 2);
  bool answered = hotkv::answer_soldout_here(*spec, views, s.engine(), s.engine().shard(0), w);
  CHECK(answered == !out.empty());
  return out;
}

std::string soldout(const std::string& key, int qty) {
  return "-SOLDOUT not enough stock for '" + key + "': 0 available, " + std::to_string(qty) +
         " requested\r\n";
}

}  // namespace

TEST_CASE("Another thread refuses a sold-out reserve exactly as the item's shard does",
          "[inventory][soldout]") {
  TestServer s(2);
  std::string key = key_on(s, 1, "sneaker");
  REQUIRE(s.run({"INV.CREATE", key, "2", "MAXPEROWNER", "1"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", key, "h1", "1", "60000", "OWNER", "o1"}) == integer(1));
  // In stock: nothing is answered away from the item.
  CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "x", "1", "60000"}).empty());
  REQUIRE(s.run({"INV.RESERVE", key, "h2", "1", "60000", "OWNER", "o2"}) == integer(0));
  CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "x", "1", "60000"}).empty());
  // The item's shard answers the first SOLDOUT and hands out the beacon.
  REQUIRE(s.run({"INV.RESERVE", key, "h3", "1", "60000"}) == soldout(key, 1));

  CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "h4", "1", "60000"}) == soldout(key, 1));
  CHECK(answered_on_shard0(s, {"inv.reserve", key, "h5", "1", "60000", "owner", "o9"}) ==
        soldout(key, 1));
  CHECK(s.run({"INV.RESERVE", key, "h5", "1", "60000", "OWNER", "o9"}) == soldout(key, 1));

  SECTION("what the beacon cannot prove goes to the item's shard") {
    // A retry of an existing hold: HOLDEXISTS comes before SOLDOUT.
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "h1", "1", "60000"}).empty());
    // An owner with units: OWNERLIMIT comes before SOLDOUT; so does asking past the limit.
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000", "OWNER", "o1"}).empty());
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "2", "60000", "OWNER", "o7"}).empty());
    // Arguments the command rejects get the command's own error there.
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n3", "0", "60000"}).empty());
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n3", "1", "soon"}).empty());
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n3", "1", "60000", "OWNER"}).empty());
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "", "1", "60000"}).empty());
    // Other commands and other keys.
    CHECK(answered_on_shard0(s, {"INV.GET", key}).empty());
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key + "x", "n4", "1", "60000"}).empty());
  }

  SECTION("stock that comes back is seen at once") {
    REQUIRE(s.run({"INV.RELEASE", key, "h1"}) == integer(1));
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
    REQUIRE(s.run({"INV.RESERVE", key, "n1", "1", "60000"}) == integer(0));
    // Sold out again: the same beacon answers, with the new hold id known.
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "1", "60000"}) == soldout(key, 1));
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
    REQUIRE(s.run({"INV.RESTOCK", key, "1"}) == integer(3));
    CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "1", "60000"}).empty());
  }

  SECTION("a key that changes loses its beacon") {
    SECTION("deleted and created again") {
      REQUIRE(s.run({"DEL", key}) == integer(1));
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
      CHECK(s.engine().shard(0).soldout_index().empty());
      REQUIRE(s.run({"INV.CREATE", key, "0"}) == kOk);
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
      REQUIRE(s.run({"INV.RESERVE", key, "n1", "1", "60000"}) == soldout(key, 1));
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "1", "60000"}) == soldout(key, 1));
    }
    SECTION("given a deadline") {
      REQUIRE(s.run({"EXPIRE", key, "100"}) == integer(1));
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
      // No beacon for an item with a deadline; one again once it has none.
      REQUIRE(s.run({"INV.RESERVE", key, "n1", "1", "60000"}) == soldout(key, 1));
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "1", "60000"}).empty());
      REQUIRE(s.run({"PERSIST", key}) == integer(1));
      REQUIRE(s.run({"INV.RESERVE", key, "n1", "1", "60000"}) == soldout(key, 1));
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n2", "1", "60000"}) == soldout(key, 1));
    }
    SECTION("renamed") {
      std::string other = key_on(s, 0, "moved");
      REQUIRE(s.run({"RENAME", key, other}) == kOk);
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
      CHECK(s.run({"INV.RESERVE", key, "n1", "1", "60000"}) == "-ERR no such key\r\n");
    }
    SECTION("overwritten") {
      REQUIRE(s.run({"SET", key, "shoe"}) == kOk);
      CHECK(answered_on_shard0(s, {"INV.RESERVE", key, "n1", "1", "60000"}).empty());
    }
  }

  SECTION("answers here are counted as the command's") {
    std::string info = s.run({"INFO", "inventory"});
    CHECK(info.find("inv_soldout_answered_here:2\r\n") != std::string::npos);
    CHECK(info.find("inv_rejected_soldout:4\r\n") != std::string::npos);
  }
}

TEST_CASE("One shard hands out no beacons", "[inventory][soldout]") {
  TestServer s(1);
  REQUIRE(s.run({"INV.CREATE", "item", "0"}) == kOk);
  REQUIRE(s.run({"INV.RESERVE", "item", "n1", "1", "60000"}) == soldout("item", 1));
  s.pushes();
  CHECK(s.engine().shard(0).soldout_index().empty());
}
