// Unit tests for the configuration registry's appendonly setting, which a running server
// switches through a hook (the log is opened or closed with every shard parked), and the
// access clock settings (maxmemory-policy, lfu-log-factor, lfu-decay-time).
#include "hotkv/util/config.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/util/access_clock.hpp"

using hotkv::Config;

TEST_CASE("appendonly changes freely before the server installs its hook", "[config]") {
  Config c;
  REQUIRE(c.get_string("appendonly") == "no");
  REQUIRE(c.set("appendonly", "YES", true).empty());
  REQUIRE(c.get_string("appendonly") == "yes");
  REQUIRE(c.set("appendonly", "maybe", false) ==
          "argument(s) must be one of the following: yes, no");
  REQUIRE(c.get_string("appendonly") == "yes");
}

TEST_CASE("CONFIG SET appendonly asks the hook only when the value changes", "[config]") {
  Config c;
  std::vector<bool> asked;
  std::string refuse;
  c.set_appendonly_hook([&](bool on) {
    asked.push_back(on);
    return refuse;
  });
  REQUIRE(c.set("appendonly", "no", false).empty());  // already no: nothing to switch
  REQUIRE(asked.empty());
  REQUIRE(c.set("appendonly", "yes", false).empty());
  REQUIRE(asked == std::vector<bool>{true});
  REQUIRE(c.get_string("appendonly") == "yes");
  refuse = "the data set is still loading";
  REQUIRE(c.set("appendonly", "no", false) == refuse);
  REQUIRE(c.get_string("appendonly") == "yes");  // refused: unchanged
  REQUIRE(asked == std::vector<bool>{true, false});
  c.set_appendonly_hook(nullptr);
  REQUIRE(c.set("appendonly", "no", false).empty());
  REQUIRE(c.get_string("appendonly") == "no");
}

TEST_CASE("maxmemory-policy chooses the access clock's kind", "[config][access_clock]") {
  Config c;
  auto& clock = hotkv::access_clock_settings();
  REQUIRE(c.get_string("maxmemory-policy") == "noeviction");
  REQUIRE(c.set("maxmemory-policy", "allkeys-lfu", false).empty());
  REQUIRE(clock.lfu.load());
  REQUIRE(c.set("maxmemory-policy", "volatile-lru", false).empty());
  REQUIRE_FALSE(clock.lfu.load());
  REQUIRE(c.set("maxmemory-policy", "volatile-lfu", false).empty());
  REQUIRE(clock.lfu.load());
  REQUIRE_FALSE(c.set("maxmemory-policy", "lfu", false).empty());
  REQUIRE(c.set("lfu-log-factor", "3", false).empty());
  REQUIRE(clock.lfu_log_factor.load() == 3);
  REQUIRE(c.set("lfu-decay-time", "0", false).empty());
  REQUIRE(clock.lfu_decay_time.load() == 0);
  // Back to the defaults: the settings are process-wide.
  REQUIRE(c.set("maxmemory-policy", "noeviction", false).empty());
  REQUIRE(c.set("lfu-log-factor", "10", false).empty());
  REQUIRE(c.set("lfu-decay-time", "1", false).empty());
  REQUIRE_FALSE(clock.lfu.load());
}
