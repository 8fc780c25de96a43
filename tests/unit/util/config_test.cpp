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
  REQUIRE(c.set("appendonly", "YES", true).is_ok());
  REQUIRE(c.get_string("appendonly") == "yes");
  hotkv::Status bad = c.set("appendonly", "maybe", false);
  REQUIRE(bad.code() == hotkv::StatusCode::kInvalidArgument);
  REQUIRE(bad.message() == "argument must be 'yes' or 'no'");  // Redis's wording for booleans
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
  REQUIRE(c.set("appendonly", "no", false).is_ok());  // already no: nothing to switch
  REQUIRE(asked.empty());
  REQUIRE(c.set("appendonly", "yes", false).is_ok());
  REQUIRE(asked == std::vector<bool>{true});
  REQUIRE(c.get_string("appendonly") == "yes");
  refuse = "the data set is still loading";
  hotkv::Status refused = c.set("appendonly", "no", false);
  REQUIRE(refused.code() == hotkv::StatusCode::kRefused);
  REQUIRE(refused.message() == refuse);
  REQUIRE(c.get_string("appendonly") == "yes");  // refused: unchanged
  REQUIRE(asked == std::vector<bool>{true, false});
  c.set_appendonly_hook(nullptr);
  REQUIRE(c.set("appendonly", "no", false).is_ok());
  REQUIRE(c.get_string("appendonly") == "no");
}

TEST_CASE("maxmemory-policy chooses the access clock's kind", "[config][access_clock]") {
  Config c;
  auto& clock = hotkv::access_clock_settings();
  REQUIRE(c.get_string("maxmemory-policy") == "noeviction");
  REQUIRE(c.set("maxmemory-policy", "allkeys-lfu", false).is_ok());
  REQUIRE(clock.lfu.load());
  REQUIRE(c.set("maxmemory-policy", "volatile-lru", false).is_ok());
  REQUIRE_FALSE(clock.lfu.load());
  REQUIRE(c.set("maxmemory-policy", "volatile-lfu", false).is_ok());
  REQUIRE(clock.lfu.load());
  REQUIRE_FALSE(c.set("maxmemory-policy", "lfu", false).is_ok());
  REQUIRE(c.set("lfu-log-factor", "3", false).is_ok());
  REQUIRE(clock.lfu_log_factor.load() == 3);
  REQUIRE(c.set("lfu-decay-time", "0", false).is_ok());
  REQUIRE(clock.lfu_decay_time.load() == 0);
  // Back to the defaults: the settings are process-wide.
  REQUIRE(c.set("maxmemory-policy", "noeviction", false).is_ok());
  REQUIRE(c.set("lfu-log-factor", "10", false).is_ok());
  REQUIRE(c.set("lfu-decay-time", "1", false).is_ok());
  REQUIRE_FALSE(clock.lfu.load());
}

TEST_CASE("Config::set says which kind of failure it is", "[config]") {
  Config c;
  SECTION("an unknown setting is not found") {
    hotkv::Status st = c.set("no-such-setting", "1", false);
    REQUIRE(st.code() == hotkv::StatusCode::kNotFound);
    REQUIRE(st.message() == "unknown option");
  }
  SECTION("an immutable setting is refused at runtime, accepted at start-up") {
    hotkv::Status st = c.set("databases", "4", false);
    REQUIRE(st.code() == hotkv::StatusCode::kRefused);
    REQUIRE(st.message() == "can't set immutable config");
    REQUIRE(c.set("databases", "4", true).is_ok());
  }
  SECTION("a value out of range is an invalid argument") {
    hotkv::Status st = c.set("databases", "0", true);
    REQUIRE(st.code() == hotkv::StatusCode::kInvalidArgument);
    REQUIRE(st.message() == "argument must be between 1 and 1024 inclusive");
  }
}

TEST_CASE("Config::set_many changes all of its settings or none", "[config]") {
  Config c;
  std::string failed;
  using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;
  SECTION("every pair applies") {
    Pairs p{{"timeout", "30"}, {"slowlog-max-len", "7"}};
    REQUIRE(c.set_many(p, failed).is_ok());
    CHECK(c.get_string("timeout") == "30");
    CHECK(c.get_string("slowlog-max-len") == "7");
  }
  SECTION("a bad value restores the settings already changed") {
    Pairs p{{"timeout", "30"}, {"maxmemory-clients", "200%"}, {"slowlog-max-len", "x"}};
    hotkv::Status st = c.set_many(p, failed);
    REQUIRE_FALSE(st.is_ok());
    CHECK(failed == "maxmemory-clients");
    CHECK(st.message() == "percentage argument must be less or equal to 100");
    CHECK(c.get_string("timeout") == "0");
  }
  SECTION("a name given twice is refused before anything changes") {
    Pairs p{{"timeout", "30"}, {"TIMEOUT", "31"}};
    hotkv::Status st = c.set_many(p, failed);
    CHECK(st.message() == "duplicate parameter");
    CHECK(failed == "TIMEOUT");
    CHECK(c.get_string("timeout") == "0");
  }
  SECTION("an immutable setting: refused for a new value, a no-op for its own") {
    Pairs change{{"timeout", "30"}, {"databases", "4"}};
    CHECK(c.set_many(change, failed).message() == "can't set immutable config");
    CHECK(c.get_string("timeout") == "0");
    Pairs same{{"timeout", "30"}, {"databases", "16"}};
    CHECK(c.set_many(same, failed).is_ok());
    CHECK(c.get_string("timeout") == "30");
  }
  SECTION("an unknown name is not found") {
    Pairs p{{"timeout", "30"}, {"nope", "1"}};
    CHECK(c.set_many(p, failed).code() == hotkv::StatusCode::kNotFound);
    CHECK(failed == "nope");
  }
  SECTION("hidden settings answer only by name") {
    CHECK(c.get_matching("key-load-*").empty());
    CHECK(c.exists("key-load-delay"));
  }
}

TEST_CASE("A config file that cannot be read or parsed names the place", "[config]") {
  Config c;
  REQUIRE(c.load_file("/nonexistent/hotkv.conf").code() == hotkv::StatusCode::kNotFound);
}

TEST_CASE("latency-tracking and its INFO percentiles", "[config][latency]") {
  Config c;
  CHECK(c.latency_tracking.load());
  CHECK(c.get_string("latency-tracking-info-percentiles") == "50 99 99.9");
  REQUIRE(c.set("latency-tracking", "no", false).is_ok());
  CHECK_FALSE(c.latency_tracking.load());
  CHECK_FALSE(c.set("latency-tracking", "maybe", false).is_ok());
  REQUIRE(c.set("latency-tracking-info-percentiles", " 90  99.99 ", false).is_ok());
  CHECK(c.latency_percentiles() == std::vector<double>{90, 99.99});
  CHECK(c.get_string("latency-tracking-info-percentiles") == "90 99.99");
  CHECK(c.set("latency-tracking-info-percentiles", "abc", false).message() ==
        "Invalid latency-tracking-info-percentiles parameters");
  CHECK(c.set("latency-tracking-info-percentiles", "101", false).message() ==
        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
  CHECK(c.latency_percentiles() == std::vector<double>{90, 99.99});
  REQUIRE(c.set("latency-tracking-info-percentiles", "", false).is_ok());
  CHECK(c.latency_percentiles().empty());
}
