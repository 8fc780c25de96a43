// GCRA.LIMIT and CL.THROTTLE through the real table and shard (TestServer, manual clock): exact
// replies at the boundaries, bursts, costs, peeks, a clock moving backwards, overflow, key
// expiry, CL.THROTTLE against redis-cell's documented examples, and argument errors.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hotkv/commands/table.hpp"
#include "hotkv/util/clock.hpp"
#include "support/test_server.hpp"

using hotkv::test::bulk;
using hotkv::test::integer;
using hotkv::test::kOk;
using hotkv::test::TestServer;

namespace {

// GCRA.LIMIT's reply: allowed, remaining, retry_after_ms, reset_after_ms.
std::string limit_reply(int64_t allowed, int64_t remaining, int64_t retry_ms, int64_t reset_ms) {
  return "*4\r\n" + integer(allowed) + integer(remaining) + integer(retry_ms) + integer(reset_ms);
}

// CL.THROTTLE's reply: limited, limit, remaining, retry_after_s, reset_after_s.
std::string throttle_reply(int64_t limited, int64_t limit, int64_t remaining, int64_t retry_s,
                           int64_t reset_s) {
  return "*5\r\n" + integer(limited) + integer(limit) + integer(remaining) + integer(retry_s) +
         integer(reset_s);
}

bool allowed(const std::string& reply) { return reply.rfind("*4\r\n:1\r\n", 0) == 0; }

const std::string kNotInteger = "-ERR value is not an integer or out of range\r\n";
const std::string kOverflow =
    "-ERR rate limit arithmetic would overflow: period, count, burst or cost too large\r\n";
const std::string kZeroRate = "-ERR zero rates are not supported\r\n";

}  // namespace

TEST_CASE("The seed limit allows two tries at once and then two per ten seconds", "[ratelimit]") {
  TestServer s;
  // Without BURST a fresh customer may use all `count` tries at once (burst = count - 1), then
  // gets one back every period / count: "each customer may try twice per 10 seconds".
  const std::vector<std::string> buy = {"GCRA.LIMIT", "buy:customer:881", "10000", "2"};
  const int64_t t0 = s.now();
  CHECK(s.run(buy) == limit_reply(1, 1, -1, 5000));
  CHECK(s.run(buy) == limit_reply(1, 0, -1, 10000));
  // The state is the TAT in unix nanoseconds; the key lives until the limiter is full again.
  CHECK(s.run({"GET", "buy:customer:881"}) == bulk(std::to_string((t0 + 10000) * 1'000'000)));
  CHECK(s.run({"PEXPIRETIME", "buy:customer:881"}) == integer(t0 + 10000));
  CHECK(s.run(buy) == limit_reply(0, 0, 5000, 10000));
  s.advance(4999);
  CHECK(s.run(buy) == limit_reply(0, 0, 1, 5001));
  s.advance(1);
  CHECK(s.run(buy) == limit_reply(1, 0, -1, 10000));
  SECTION("a customer pressing Buy every 100 ms for a minute gets exactly 13 tries") {
    int tries = 3;  // the two at t0 and the one at t0 + 5000
    for (int i = 0; i < 549; ++i) {
      s.advance(100);
      tries += allowed(s.run(buy)) ? 1 : 0;
    }
    CHECK(s.now() == t0 + 59900);
    CHECK(tries == 13);
  }
  SECTION("BURST 0 keeps at most count tries in every window: one every five seconds") {
    const std::vector<std::string> strict = {"GCRA.LIMIT", "c", "10000", "2", "BURST", "0"};
    CHECK(s.run(strict) == limit_reply(1, 0, -1, 5000));
    CHECK(s.run(strict) == limit_reply(0, 0, 5000, 5000));
  }
  SECTION("BURST 1 allows a double click and then one try every five seconds") {
    const std::vector<std::string> burst = {"GCRA.LIMIT", "b", "10000", "2", "BURST", "1"};
    CHECK(s.run(burst) == limit_reply(1, 1, -1, 5000));
    CHECK(s.run(burst) == limit_reply(1, 0, -1, 10000));
    CHECK(s.run(burst) == limit_reply(0, 0, 5000, 10000));
  }
}

TEST_CASE("Retry times are exact to the millisecond at the boundary", "[ratelimit]") {
  TestServer s;
  // 3 per second: T = 333.333334 ms, so every reply is rounded up to a whole millisecond.
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "3", "BURST", "0"}) == limit_reply(1, 0, -1, 334));
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "3", "BURST", "0"}) == limit_reply(0, 0, 334, 334));
  s.advance(333);
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "3", "BURST", "0"}) == limit_reply(0, 0, 1, 1));
  s.advance(1);
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "3", "BURST", "0"}) == limit_reply(1, 0, -1, 334));
  SECTION("waiting retry_after_ms always succeeds and one millisecond less never does") {
    const std::vector<std::vector<std::string>> requests = {
        {"GCRA.LIMIT", "a", "1000", "3", "BURST", "0"},
        {"GCRA.LIMIT", "b", "10000", "7", "BURST", "2"},
        {"GCRA.LIMIT", "c", "60000", "9", "BURST", "5", "COST", "4"},
        {"GCRA.LIMIT", "d", "999", "1000", "BURST", "10", "COST", "3"},
    };
    for (const auto& req : requests) {
      INFO(req[1]);
      for (int round = 0; round < 20; ++round) {
        std::string r = s.run(req);
        while (allowed(r)) {
          r = s.run(req);
        }
        // Denied: "*4\r\n:0\r\n:<remaining>\r\n:<retry>\r\n..."
        size_t at = r.find('\n', r.find('\n', r.find('\n') + 1) + 1) + 2;
        int64_t retry = std::stoll(r.substr(at, r.find('\r', at) - at));
        REQUIRE(retry > 0);
        s.advance(retry - 1);
        CHECK_FALSE(allowed(s.run(req)));
        s.advance(1);
        CHECK(allowed(s.run(req)));
      }
    }
  }
}

TEST_CASE("BURST lets extra requests through back to back", "[ratelimit]") {
  TestServer s;
  const std::vector<std::string> req = {"GCRA.LIMIT", "k", "1000", "10", "BURST", "4"};
  CHECK(s.run(req) == limit_reply(1, 4, -1, 100));
  CHECK(s.run(req) == limit_reply(1, 3, -1, 200));
  CHECK(s.run(req) == limit_reply(1, 2, -1, 300));
  CHECK(s.run(req) == limit_reply(1, 1, -1, 400));
  CHECK(s.run(req) == limit_reply(1, 0, -1, 500));
  CHECK(s.run(req) == limit_reply(0, 0, 100, 500));
  s.advance(100);
  CHECK(s.run(req) == limit_reply(1, 0, -1, 500));
  s.advance(250);
  CHECK(s.run(req) == limit_reply(1, 1, -1, 350));
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "10", "burst", "4"}) == limit_reply(1, 0, -1, 450));
}

TEST_CASE("COST weighs a request as several cells", "[ratelimit]") {
  TestServer s;
  auto req = [&](const char* key, const char* cost) {
    return s.run({"GCRA.LIMIT", key, "1000", "10", "BURST", "4", "COST", cost});
  };
  CHECK(req("k", "3") == limit_reply(1, 2, -1, 300));
  CHECK(req("k", "3") == limit_reply(0, 2, 100, 300));  // 2 single cells are still free
  CHECK(req("k", "2") == limit_reply(1, 0, -1, 500));
  SECTION("a cost above BURST + 1 can never pass and says so with -1") {
    CHECK(req("k", "6") == limit_reply(0, 0, -1, 500));
    CHECK(req("fresh", "6") == limit_reply(0, 5, -1, 0));
    CHECK(s.run({"EXISTS", "fresh"}) == integer(0));
    CHECK(req("fresh", "5") == limit_reply(1, 0, -1, 500));
  }
  SECTION("options may come in any order") {
    s.advance(500);
    CHECK(s.run({"GCRA.LIMIT", "k", "1000", "10", "COST", "4", "BURST", "4"}) ==
          limit_reply(1, 1, -1, 400));
  }
}

TEST_CASE("COST 0 peeks without changing anything", "[ratelimit]") {
  TestServer s;
  const std::vector<std::string> peek = {"GCRA.LIMIT", "k", "10000", "2",
                                         "BURST",      "0", "COST",  "0"};
  CHECK(s.run(peek) == limit_reply(1, 1, -1, 0));
  CHECK(s.run({"EXISTS", "k"}) == integer(0));
  CHECK(s.run({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0"}) == limit_reply(1, 0, -1, 5000));
  const std::string tat = s.run({"GET", "k"});
  const std::string deadline = s.run({"PEXPIRETIME", "k"});
  CHECK(s.run(peek) == limit_reply(1, 0, -1, 5000));
  s.advance(2000);
  CHECK(s.run(peek) == limit_reply(1, 0, -1, 3000));
  CHECK(s.run({"GET", "k"}) == tat);
  CHECK(s.run({"PEXPIRETIME", "k"}) == deadline);
  CHECK(s.run({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0"}) == limit_reply(0, 0, 3000, 3000));
}

TEST_CASE("A clock that moves backwards never admits more and never gives a negative retry",
          "[ratelimit]") {
  TestServer s;
  const std::vector<std::string> buy = {"GCRA.LIMIT", "k", "10000", "2", "BURST", "0"};
  CHECK(s.run(buy) == limit_reply(1, 0, -1, 5000));
  const std::string tat = s.run({"GET", "k"});
  s.advance(-3000);
  // The 3 s the clock went back count as not yet elapsed: the wait ends at the same clock time.
  CHECK(s.run(buy) == limit_reply(0, 0, 8000, 8000));
  CHECK(s.run({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0", "COST", "0"}) ==
        limit_reply(0, 0, 3000, 8000));
  CHECK(s.run({"GET", "k"}) == tat);
  for (int i = 0; i < 7999; ++i) {
    s.advance(1);
    std::string r = s.run(buy);
    REQUIRE_FALSE(allowed(r));
    REQUIRE(r.find(":-") == std::string::npos);  // no negative retry or reset
  }
  s.advance(1);
  CHECK(s.run(buy) == limit_reply(1, 0, -1, 5000));
  SECTION("a step back and forth again leaves the limiter as it was") {
    s.advance(-60000);
    CHECK(s.run(buy) == limit_reply(0, 0, 65000, 65000));
    s.advance(60000);
    CHECK(s.run(buy) == limit_reply(0, 0, 5000, 5000));
  }
}

TEST_CASE("Huge periods and counts report overflow instead of wrapping", "[ratelimit]") {
  TestServer s;
  CHECK(s.run({"GCRA.LIMIT", "k", "9223372036854775807", "1"}) == kOverflow);
  // 285 years per request fits in nanoseconds, but now + 285 years does not.
  CHECK(s.run({"GCRA.LIMIT", "k", "9000000000000", "1"}) == kOverflow);
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "1", "BURST", "9223372036854775807"}) == kOverflow);
  CHECK(s.run({"GCRA.LIMIT", "k", "1000", "1", "COST", "9223372036854775807"}) == kOverflow);
  CHECK(s.run({"GCRA.LIMIT", "k", "1000000000000", "1", "BURST", "10000000"}) == kOverflow);
  CHECK(s.run({"GCRA.LIMIT", "k", "9223372036854775808", "1"}) == kNotInteger);
  CHECK(s.run({"GCRA.LIMIT", "k", "1", "1000001", "BURST", "0"}) ==
        "-ERR count is too high for period_ms: at most one request per nanosecond\r\n");
  CHECK(s.run({"EXISTS", "k"}) == integer(0));
  SECTION("long but representable limits work") {
    CHECK(s.run({"GCRA.LIMIT", "day", "86400000", "1"}) == limit_reply(1, 0, -1, 86400000));
    CHECK(s.run({"GCRA.LIMIT", "century", "3153600000000", "1"}) ==
          limit_reply(1, 0, -1, 3153600000000));
    CHECK(s.run({"GCRA.LIMIT", "ns", "1", "1000000", "BURST", "0"}) == limit_reply(1, 0, -1, 1));
    CHECK(s.run({"GCRA.LIMIT", "big", "9223372036854775807", "1000000000", "BURST", "0"}) ==
          limit_reply(1, 0, -1, 9223372037));
  }
}

TEST_CASE("An idle limiter key expires by itself once back to full", "[ratelimit]") {
  TestServer s;
  const std::vector<std::string> req = {"GCRA.LIMIT", "k", "1000", "10", "BURST", "4"};
  for (int i = 0; i < 5; ++i) {
    REQUIRE(allowed(s.run(req)));
  }
  CHECK(s.run({"PTTL", "k"}) == integer(500));
  s.advance(499);
  CHECK(s.expire_cycle() == 0);
  CHECK(s.run({"EXISTS", "k"}) == integer(1));
  s.advance(1);
  CHECK(s.expire_cycle() == 1);
  CHECK(s.run({"DBSIZE"}) == integer(0));
  CHECK(s.run(req) == limit_reply(1, 4, -1, 100));
  SECTION("CL.THROTTLE keys expire the same way") {
    CHECK(s.run({"CL.THROTTLE", "c", "0", "1", "2"}) == throttle_reply(0, 1, 0, -1, 2));
    CHECK(s.run({"PTTL", "c"}) == integer(2000));
    s.advance(2000);
    CHECK(s.expire_cycle() == 2);
    CHECK(s.run({"DBSIZE"}) == integer(0));
  }
}

TEST_CASE("CL.THROTTLE replies as the redis-cell README shows", "[ratelimit]") {
  TestServer s;
  CHECK(s.run({"CL.THROTTLE", "user123", "15", "30", "60"}) == throttle_reply(0, 16, 15, -1, 2));
  CHECK(s.run({"CL.THROTTLE", "user123", "15", "30", "60", "1"}) ==
        throttle_reply(0, 16, 14, -1, 4));
  CHECK(s.run({"cl.throttle", "user123", "15", "30", "60", "14"}) ==
        throttle_reply(0, 16, 0, -1, 32));
  CHECK(s.run({"CL.THROTTLE", "user123", "15", "30", "60"}) == throttle_reply(1, 16, 0, 2, 32));
}

TEST_CASE("CL.THROTTLE follows redis-cell's rate limit test step by step", "[ratelimit]") {
  // redis-cell src/cell/mod.rs it_rate_limits: limit 5 (max_burst 4), 1 per second.
  TestServer s;
  const int64_t start = s.now();
  auto at = [&](int64_t offset_ms, const char* quantity) {
    s.advance(start + offset_ms - s.now());
    return s.run({"CL.THROTTLE", "foo", "4", "1", "1", quantity});
  };
  CHECK(at(0, "6") == throttle_reply(1, 5, 5, -1, 0));  // never larger than the maximum
  CHECK(at(0, "1") == throttle_reply(0, 5, 4, -1, 1));
  CHECK(at(0, "1") == throttle_reply(0, 5, 3, -1, 2));
  CHECK(at(0, "1") == throttle_reply(0, 5, 2, -1, 3));
  CHECK(at(0, "1") == throttle_reply(0, 5, 1, -1, 4));
  CHECK(at(0, "1") == throttle_reply(0, 5, 0, -1, 5));
  CHECK(at(0, "1") == throttle_reply(1, 5, 0, 1, 5));
  CHECK(at(3000, "1") == throttle_reply(0, 5, 2, -1, 3));
  CHECK(at(3100, "1") == throttle_reply(0, 5, 1, -1, 4));  // 3.9 s rounds up
  CHECK(at(4000, "1") == throttle_reply(0, 5, 1, -1, 4));
  CHECK(at(8000, "1") == throttle_reply(0, 5, 4, -1, 1));
  CHECK(at(9500, "1") == throttle_reply(0, 5, 4, -1, 1));
  CHECK(at(9500, "0") == throttle_reply(0, 5, 4, -1, 1));  // zero quantity peeks
  CHECK(at(9500, "2") == throttle_reply(0, 5, 2, -1, 3));
  CHECK(at(9500, "5") == throttle_reply(1, 5, 2, 3, 3));
}

TEST_CASE("CL.THROTTLE matches redis-cell's end to end test", "[ratelimit]") {
  // redis-cell tests/e2e.rs: max_burst 0, 1 token per 2 seconds.
  TestServer s;
  const std::vector<std::string> req = {"CL.THROTTLE", "user123", "0", "1", "2", "1"};
  CHECK(s.run(req) == throttle_reply(0, 1, 0, -1, 2));
  CHECK(s.run(req) == throttle_reply(1, 1, 0, 2, 2));
  s.advance(2000);
  CHECK(s.run(req) == throttle_reply(0, 1, 0, -1, 2));
  SECTION("seconds round as redis-cell rounds them") {
    // Dragonfly's 2 us interval case: redis-cell drops the sub-millisecond reset (0 s) where
    // Dragonfly replies 1.
    CHECK(s.run({"CL.THROTTLE", "bar", "4", "500000", "1", "2"}) == throttle_reply(0, 5, 3, -1, 0));
    s.advance(500);
    CHECK(s.run(req) == throttle_reply(1, 1, 0, 2, 2));  // 1.5 s left: 1 + 1
  }
}

TEST_CASE("GCRA.LIMIT and CL.THROTTLE share one limiter state", "[ratelimit]") {
  TestServer s;
  CHECK(s.run({"GCRA.LIMIT", "k", "2000", "1"}) == limit_reply(1, 0, -1, 2000));
  CHECK(s.run({"CL.THROTTLE", "k", "0", "1", "2"}) == throttle_reply(1, 1, 0, 2, 2));
  s.advance(2000);
  CHECK(s.run({"CL.THROTTLE", "k", "0", "1", "2"}) == throttle_reply(0, 1, 0, -1, 2));
  CHECK(s.run({"GCRA.LIMIT", "k", "2000", "1"}) == limit_reply(0, 0, 2000, 2000));
}

TEST_CASE("Bad arguments are refused before anything changes", "[ratelimit]") {
  TestServer s;
  auto limit = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {"GCRA.LIMIT", "k"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return s.run(argv);
  };
  CHECK(limit({"abc", "2"}) == kNotInteger);
  CHECK(limit({"10000", "2.5"}) == kNotInteger);
  CHECK(limit({"10000", "2", "BURST", "x"}) == kNotInteger);
  CHECK(limit({"0", "2", "COST", "x"}) == kNotInteger);
  CHECK(limit({"0", "2"}) == "-ERR period_ms must be a positive integer\r\n");
  CHECK(limit({"-5", "2"}) == "-ERR period_ms must be a positive integer\r\n");
  CHECK(limit({"10000", "0"}) == "-ERR count must be a positive integer\r\n");
  CHECK(limit({"10000", "-1"}) == "-ERR count must be a positive integer\r\n");
  CHECK(limit({"10000", "2", "BURST", "-1"}) ==
        "-ERR BURST must be zero or a positive integer\r\n");
  CHECK(limit({"10000", "2", "COST", "-1"}) == "-ERR COST must be zero or a positive integer\r\n");
  CHECK(limit({"10000", "2", "BURST"}) == "-ERR syntax error\r\n");
  CHECK(limit({"10000", "2", "FOO", "1"}) == "-ERR syntax error\r\n");
  CHECK(limit({"10000", "2", "BURST", "1", "BURST", "2"}) == "-ERR syntax error\r\n");
  CHECK(limit({"10000", "2", "COST", "1", "COST", "1"}) == "-ERR syntax error\r\n");
  CHECK(limit({"10000"}) == "-ERR wrong number of arguments for 'gcra.limit' command\r\n");
  CHECK(s.run({"CL.THROTTLE", "k", "1", "1"}) ==
        "-ERR wrong number of arguments for 'cl.throttle' command\r\n");
  CHECK(s.run({"CL.THROTTLE", "k", "1", "1", "1", "1", "1"}) ==
        "-ERR wrong number of arguments for 'cl.throttle' command\r\n");
  CHECK(s.run({"CL.THROTTLE", "k", "x", "1", "1"}) == kNotInteger);
  CHECK(s.run({"CL.THROTTLE", "k", "-1", "1", "1"}) == kNotInteger);
  CHECK(s.run({"CL.THROTTLE", "k", "1", "1", "1", "-2"}) == kNotInteger);
  CHECK(s.run({"CL.THROTTLE", "k", "10", "1", "0"}) == kZeroRate);
  CHECK(s.run({"CL.THROTTLE", "k", "10", "0", "1"}) == kZeroRate);
  CHECK(s.run({"CL.THROTTLE", "k", "10", "2000000000", "1"}) == kZeroRate);
  CHECK(s.run({"CL.THROTTLE", "k", "0", "1", "9223372036854775807"}) == kOverflow);
  CHECK(s.run({"DBSIZE"}) == integer(0));
}

TEST_CASE("Wrong types and foreign strings are errors and stay untouched", "[ratelimit]") {
  TestServer s;
  REQUIRE(s.run({"XADD", "stream", "1-1", "f", "v"}) == bulk("1-1"));
  const std::string wrongtype =
      "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  CHECK(s.run({"GCRA.LIMIT", "stream", "1000", "1"}) == wrongtype);
  CHECK(s.run({"CL.THROTTLE", "stream", "0", "1", "1"}) == wrongtype);
  const std::string not_tat =
      "-ERR key holds a string that is not a rate limiter state (an integer TAT)\r\n";
  CHECK(s.run({"SET", "word", "hello"}) == kOk);
  CHECK(s.run({"GCRA.LIMIT", "word", "1000", "1"}) == not_tat);
  CHECK(s.run({"CL.THROTTLE", "word", "0", "1", "1"}) == not_tat);
  CHECK(s.run({"GET", "word"}) == bulk("hello"));
  CHECK(s.run({"SET", "padded", "007"}) == kOk);
  CHECK(s.run({"GCRA.LIMIT", "padded", "1000", "1"}) == not_tat);
  SECTION("any integer is a TAT and one in the past means a full limiter") {
    CHECK(s.run({"SET", "old", "-5"}) == kOk);
    CHECK(s.run({"GCRA.LIMIT", "old", "1000", "1"}) == limit_reply(1, 0, -1, 1000));
    CHECK(s.run({"GET", "old"}) == bulk(std::to_string((s.now() + 1000) * 1'000'000)));
  }
}

TEST_CASE("Allowed requests publish a gcra keyspace event and nothing else does", "[ratelimit]") {
  // pushes() runs the shards' io contexts, whose expiry timers follow the real clock: start the
  // manual clock far ahead of it so nothing expires behind the test's back.
  TestServer s(1, hotkv::unix_ms() + 100'000'000);
  REQUIRE(s.run3({"CONFIG", "SET", "notify-keyspace-events", "KEA"}) == kOk);
  s.run3({"PSUBSCRIBE", "__key*__:*"});
  REQUIRE(s.pushes().empty());
  CHECK(s.run3({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0"}) == limit_reply(1, 0, -1, 5000));
  CHECK(s.run3({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0"}) == limit_reply(0, 0, 5000, 5000));
  CHECK(s.run3({"GCRA.LIMIT", "k", "10000", "2", "BURST", "0", "COST", "0"}) ==
        limit_reply(1, 0, -1, 5000));
  CHECK(s.run3({"CL.THROTTLE", "c", "0", "1", "1"}) == throttle_reply(0, 1, 0, -1, 1));
  std::vector<std::string> seen;
  for (const auto& m : s.pushes()) {
    seen.push_back(m.channel + "|" + m.payload);
  }
  CHECK(seen == std::vector<std::string>{
                    "__keyspace@0__:k|gcra",
                    "__keyevent@0__:gcra|k",
                    "__keyspace@0__:c|gcra",
                    "__keyevent@0__:gcra|c",
                });
}

TEST_CASE("Both commands are fast writes in the ratelimit group keyed on their first argument",
          "[ratelimit]") {
  const auto& table = hotkv::command_table();
  for (const char* name : {"GCRA.LIMIT", "CL.THROTTLE"}) {
    INFO(name);
    const hotkv::CommandSpec* spec = table.find(name);
    REQUIRE(spec != nullptr);
    CHECK(spec->flags == (hotkv::kWrite | hotkv::kDenyOom | hotkv::kFast));
    CHECK(spec->group == "ratelimit");
    CHECK(spec->keys.first == 1);
    CHECK(spec->keys.last == 1);
    CHECK(spec->keys.step == 1);
  }
  CHECK(table.find("GCRA.LIMIT")->arity == -4);
  CHECK(table.find("CL.THROTTLE")->arity == -5);
}
