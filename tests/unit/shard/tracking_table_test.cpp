// Unit tests for the per-shard table of client-side caching: a key remembers each reader once,
// its first change takes every reader, the counts INFO reports follow, and BCAST prefixes
// overlap exactly when one starts the other.
#include "hotkv/shard/tracking_table.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::prefixes_overlap;
using hotkv::TrackingTable;

TEST_CASE("A tracked key is taken whole by its first change", "[tracking]") {
  TrackingTable t;
  REQUIRE(t.empty());
  REQUIRE(t.remember("k", 7));
  REQUIRE_FALSE(t.remember("k", 8));  // the key was already there
  REQUIRE_FALSE(t.remember("k", 7));  // and 7 already reads it
  REQUIRE(t.keys() == 1);
  REQUIRE(t.items() == 2);
  std::vector<uint64_t> readers = t.take("k");
  REQUIRE(readers == std::vector<uint64_t>{7, 8});
  REQUIRE(t.take("k").empty());  // a second change tells nobody
  REQUIRE(t.empty());
  REQUIRE(t.keys() == 0);
  REQUIRE(t.items() == 0);
}

TEST_CASE("An untracked key changes nothing", "[tracking]") {
  TrackingTable t;
  t.remember("a", 1);
  REQUIRE(t.take("b").empty());
  REQUIRE(t.keys() == 1);
  REQUIRE(t.items() == 1);
}

TEST_CASE("Eviction takes keys one at a time until the table is empty", "[tracking]") {
  TrackingTable t;
  t.remember("a", 1);
  t.remember("b", 1);
  t.remember("b", 2);
  std::string key;
  std::vector<uint64_t> readers;
  size_t taken_items = 0;
  for (int i = 0; i < 2; ++i) {
    REQUIRE(t.take_any(key, readers));
    REQUIRE((key == "a" || key == "b"));
    taken_items += readers.size();
  }
  REQUIRE(taken_items == 3);
  REQUIRE_FALSE(t.take_any(key, readers));
  REQUIRE(t.keys() == 0);
  REQUIRE(t.items() == 0);
}

TEST_CASE("take_if takes only the keys the predicate names", "[tracking]") {
  TrackingTable t;
  t.remember("x:1", 1);
  t.remember("x:2", 2);
  t.remember("y:1", 3);
  std::vector<std::string> taken;
  t.take_if([](std::string_view k) { return k.starts_with("x:"); },
            [&](std::string_view k, const std::vector<uint64_t>& readers) {
              REQUIRE(readers.size() == 1);
              taken.emplace_back(k);
            });
  REQUIRE(taken.size() == 2);
  REQUIRE(t.keys() == 1);
  REQUIRE(t.items() == 1);
  REQUIRE(t.take("y:1") == std::vector<uint64_t>{3});
}

TEST_CASE("Clearing forgets every key and resets the counts", "[tracking]") {
  TrackingTable t;
  for (int i = 0; i < 100; ++i) {
    t.remember("k" + std::to_string(i), static_cast<uint64_t>(i % 3));
  }
  REQUIRE(t.keys() == 100);
  t.clear();
  REQUIRE(t.empty());
  REQUIRE(t.keys() == 0);
  REQUIRE(t.items() == 0);
  REQUIRE(t.remember("k1", 1));
}

TEST_CASE("Prefixes overlap when one starts the other", "[tracking]") {
  REQUIRE(prefixes_overlap("FOO", "FOOBAR"));
  REQUIRE(prefixes_overlap("FOOBAR", "FOO"));
  REQUIRE(prefixes_overlap("FOO", "FOO"));
  REQUIRE(prefixes_overlap("", "anything"));
  REQUIRE_FALSE(prefixes_overlap("FOO", "BAR"));
  REQUIRE_FALSE(prefixes_overlap("BARB", "BARC"));
}
