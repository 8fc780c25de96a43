// Unit tests for the configuration registry's appendonly setting, which a running server
// switches through a hook (the log is opened or closed with every shard parked).
#include "hotkv/util/config.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

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
