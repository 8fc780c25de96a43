// HOTKV.EFFECT: an op sent as its logged arguments applies as replay applies it (an item, a
// hold, a hash field), and a malformed or inapplicable one is refused without a change.
#include <catch2/catch.hpp>

#include <string>

#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

std::string inv_get(int64_t total, int64_t available, int64_t held, int64_t sold, int64_t holds) {
  return "*10\r\n" + bulk("total") + integer(total) + bulk("available") + integer(available) +
         bulk("held") + integer(held) + bulk("sold") + integer(sold) + bulk("holds") +
         integer(holds);
}

}  // namespace

TEST_CASE("HOTKV.EFFECT applies an op as replay does", "[replication]") {
  TestServer s;
  const std::string later = std::to_string(s.now() + 60000);
  const std::string now = std::to_string(s.now());
  CHECK(s.run({"HOTKV.EFFECT", "item", "64", "10", "0", "0", "0", "0", ""}) == kOk);
  CHECK(s.run({"HOTKV.EFFECT", "item", "65", "h1", "3", "alice", now, later}) == kOk);
  CHECK(s.run({"INV.GET", "item"}) == inv_get(10, 7, 3, 0, 1));
  CHECK(s.run({"HOTKV.EFFECT", "h", "16", "f", "v"}) == kOk);
  CHECK(s.run({"HGET", "h", "f"}) == bulk("v"));

  SECTION("an unknown op code is refused") {
    CHECK(s.run({"HOTKV.EFFECT", "item", "250"}).rfind("-ERR unknown effect op code", 0) == 0);
    CHECK(s.run({"HOTKV.EFFECT", "item", "x"}).rfind("-ERR unknown effect op code", 0) == 0);
  }
  SECTION("malformed or inapplicable arguments are refused and change nothing") {
    CHECK(s.run({"HOTKV.EFFECT", "h", "16", "lonely"}).rfind("-ERR hash.set: ", 0) == 0);
    std::string again = s.run({"HOTKV.EFFECT", "item", "65", "h1", "1", "", now, later});
    CHECK(again.rfind("-ERR inventory.reserve: ", 0) == 0);
    CHECK(s.run({"INV.GET", "item"}) == inv_get(10, 7, 3, 0, 1));
  }
  SECTION("scripts may not send it") {
    CHECK(s.run({"EVAL", "return redis.call('HOTKV.EFFECT', 'k', '68', '1')", "0"})
              .find("not allowed from script") != std::string::npos);
  }
}
