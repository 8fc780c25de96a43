// Unit tests for notify-keyspace-events letters: Redis's classes, the A alias, rejection of
// unknown letters and the canonical form CONFIG GET shows.
#include "hotkv/util/notify.hpp"

#include <catch2/catch.hpp>

using namespace hotkv;

TEST_CASE("Notification letters parse to their classes", "[notify]") {
  REQUIRE(parse_notify_flags("") == 0u);
  REQUIRE(parse_notify_flags("Kx") == (kNotifyKeyspace | kNotifyExpired));
  REQUIRE(parse_notify_flags("E$g") == (kNotifyKeyevent | kNotifyString | kNotifyGeneric));
  auto all = parse_notify_flags("KEA");
  REQUIRE(all.has_value());
  REQUIRE((*all & kNotifyStream) != 0);
  REQUIRE((*all & kNotifyKeyMiss) == 0);  // A excludes m and n, as in Redis
  REQUIRE((*all & kNotifyNew) == 0);
  REQUIRE_FALSE(parse_notify_flags("KEQ").has_value());
}

TEST_CASE("Notification flags print in canonical form", "[notify]") {
  REQUIRE(format_notify_flags(*parse_notify_flags("AKE")) == "AKE");
  REQUIRE(format_notify_flags(*parse_notify_flags("xE")) == "xE");
  REQUIRE(format_notify_flags(*parse_notify_flags("Ktg")) == "gtK");
  REQUIRE(format_notify_flags(0) == "");
}
