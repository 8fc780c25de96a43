// Unit tests for the per-shard WATCH registry: touching marks exactly the watchers of that
// key, flushes mark everyone, clients that went away are forgotten, and an idle registry is
// skipped without taking its lock.
#include "hotkv/shard/watch.hpp"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::WatchFlag;
using hotkv::WatchRegistry;

TEST_CASE("Touching a key marks its watchers and only them", "[watch]") {
  WatchRegistry reg;
  auto a = std::make_shared<WatchFlag>();
  auto b = std::make_shared<WatchFlag>();
  reg.add(0, "k", a);
  reg.add(0, "k", b);
  reg.add(0, "other", b);
  REQUIRE(reg.watched_keys() == 2);
  reg.touch(0, "unwatched");
  REQUIRE_FALSE(a->dirty);
  REQUIRE_FALSE(b->dirty);
  reg.touch(0, "other");
  REQUIRE_FALSE(a->dirty);
  REQUIRE(b->dirty);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch(0, "k");
  REQUIRE(a->dirty);
  REQUIRE(reg.watched_keys() == 0);
}

TEST_CASE("Watching a key twice registers once", "[watch]") {
  WatchRegistry reg;
  auto a = std::make_shared<WatchFlag>();
  reg.add(0, "k", a);
  reg.add(0, "k", a);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch(0, "k");
  REQUIRE(a->dirty);
}

TEST_CASE("A flush marks the watchers of keys that existed, and only those", "[watch]") {
  WatchRegistry reg;
  auto a = std::make_shared<WatchFlag>();
  auto b = std::make_shared<WatchFlag>();
  reg.add(0, "x", a);
  reg.add(0, "y", b);
  reg.touch_existing(0, [](std::string_view key) { return key == "x"; });
  REQUIRE(a->dirty);
  REQUIRE_FALSE(b->dirty);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch(0, "y");
  REQUIRE(b->dirty);
}

TEST_CASE("Watchers that went away are pruned and never marked", "[watch]") {
  WatchRegistry reg;
  for (int i = 0; i < 5000; ++i) {
    auto gone = std::make_shared<WatchFlag>();
    reg.add(0, "key:" + std::to_string(i), gone);
  }  // every flag dropped: UNWATCH, EXEC or a disconnect
  // Pruning runs as registrations continue; the map shrinks to the live watches.
  auto live = std::make_shared<WatchFlag>();
  for (int i = 0; i < 1100; ++i) {
    reg.add(0, "live", live);
  }
  REQUIRE(reg.watched_keys() < 1100);
  reg.touch(0, "key:1");  // nobody alive to mark; must not crash
  reg.touch(0, "live");
  REQUIRE(live->dirty);
}

TEST_CASE("Registration from one thread is seen by touches from another", "[watch]") {
  WatchRegistry reg;
  std::vector<std::shared_ptr<WatchFlag>> flags;
  for (int i = 0; i < 200; ++i) {
    flags.push_back(std::make_shared<WatchFlag>());
  }
  std::thread registrar([&] {
    for (int i = 0; i < 200; ++i) {
      reg.add(0, "k" + std::to_string(i % 20), flags[i]);
    }
  });
  registrar.join();
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) {
      reg.touch(0, "k" + std::to_string(i));
    }
  });
  writer.join();
  for (const auto& f : flags) {
    REQUIRE(f->dirty);
  }
}

TEST_CASE("A watch is on a key of one database", "[watch]") {
  WatchRegistry reg;
  auto in0 = std::make_shared<WatchFlag>();
  auto in5 = std::make_shared<WatchFlag>();
  reg.add(0, "k", in0);
  reg.add(5, "k", in5);
  reg.touch(3, "k");
  REQUIRE_FALSE(in0->dirty);
  REQUIRE_FALSE(in5->dirty);
  reg.touch(5, "k");
  REQUIRE(in5->dirty);
  REQUIRE_FALSE(in0->dirty);
  reg.touch_existing(1, [](std::string_view) { return true; });
  REQUIRE_FALSE(in0->dirty);
  reg.touch_existing(0, [](std::string_view) { return true; });
  REQUIRE(in0->dirty);
  REQUIRE(reg.watched_keys() == 0);
}
