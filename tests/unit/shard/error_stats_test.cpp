// Unit tests for INFO errorstats' counters: the code is the error's first word (ERR when none
// ends within 32 bytes), counts per code, reset, and the cap on distinct codes.
#include "hotkv/shard/error_stats.hpp"

#include <catch2/catch.hpp>

using hotkv::ErrorStats;

TEST_CASE("An error's code is its first word, as Redis counts it", "[errorstats]") {
  CHECK(ErrorStats::code_of("-NOGROUP No such key 'k'") == "NOGROUP");
  CHECK(ErrorStats::code_of("WRONGTYPE Operation against a key") == "WRONGTYPE");
  CHECK(ErrorStats::code_of("-ERR\r\n") == "ERR");
  CHECK(ErrorStats::code_of(std::string(40, 'X') + " text") == "ERR");
  CHECK(ErrorStats::code_of(" leading space") == "ERR");
}

TEST_CASE("Error replies are counted per code and reset", "[errorstats]") {
  ErrorStats stats;
  stats.count("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  stats.count("ERR syntax error");
  stats.count("ERR value is not an integer");
  using Rows = std::vector<std::pair<std::string, uint64_t>>;
  CHECK(stats.snapshot() == Rows{{"ERR", 2}, {"WRONGTYPE", 1}});
  stats.reset();
  CHECK(stats.snapshot().empty());
  stats.count("NOGROUP gone");
  CHECK(stats.snapshot() == Rows{{"NOGROUP", 1}});
  SECTION("past kMaxCodes distinct codes new ones are not tracked") {
    for (size_t i = 0; i < ErrorStats::kMaxCodes + 10; ++i) {
      stats.count("C" + std::to_string(i) + " x");
    }
    // ERR and WRONGTYPE keep their slots through the reset, at count 0 (not listed).
    CHECK(stats.snapshot().size() == ErrorStats::kMaxCodes - 2);
  }
}
