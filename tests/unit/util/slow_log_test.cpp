// Unit tests for the slow log: the threshold (negative off, 0 everything), the per-thread
// rings merged in id order, the length cap, reset, and Redis's trimming of long commands.
#include "hotkv/util/slow_log.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace hotkv;

namespace {
std::vector<std::string> words(std::initializer_list<const char*> w) {
  return std::vector<std::string>(w.begin(), w.end());
}
}  // namespace

TEST_CASE("The slow log threshold: negative logs nothing, 0 everything", "[slowlog]") {
  std::atomic<int64_t> slower{-1};
  std::atomic<int64_t> max_len{128};
  SlowLog log(slower, max_len, 1);
  CHECK_FALSE(log.wanted(0));
  CHECK_FALSE(log.wanted(1000000));
  slower = 0;
  CHECK(log.wanted(0));
  slower = 10000;
  CHECK_FALSE(log.wanted(9999));
  CHECK(log.wanted(10000));
}

TEST_CASE("The slow log merges its rings newest first, by id", "[slowlog]") {
  std::atomic<int64_t> slower{0};
  std::atomic<int64_t> max_len{128};
  SlowLog log(slower, max_len, 3);
  auto a = words({"set", "a", "1"});
  auto b = words({"get", "b"});
  auto c = words({"ping"});
  log.add(0, a, 5, 100, "127.0.0.1:1", "x");
  log.add(2, b, 6, 101, "127.0.0.1:2", "");
  log.add(1, c, 7, 102, "127.0.0.1:3", "y");
  log.add(0, c, 8, 103, "127.0.0.1:1", "x");
  auto all = log.get(-1);
  REQUIRE(all.size() == 4);
  CHECK(all[0].id == 3);
  CHECK(all[1].id == 2);
  CHECK(all[1].args == c);
  CHECK(all[1].name == "y");
  CHECK(all[2].id == 1);
  CHECK(all[2].addr == "127.0.0.1:2");
  CHECK(all[3].id == 0);
  CHECK(all[3].usec == 5);
  CHECK(all[3].time_s == 100);
  CHECK(log.get(2).size() == 2);
  CHECK(log.get(0).empty());
  CHECK(log.len() == 4);
}

TEST_CASE("The slow log keeps the newest slowlog-max-len entries server-wide", "[slowlog]") {
  std::atomic<int64_t> slower{0};
  std::atomic<int64_t> max_len{10};
  SlowLog log(slower, max_len, 4);
  auto p = words({"ping"});
  for (int i = 0; i < 100; ++i) {
    log.add(static_cast<size_t>(i % 4), p, 1, 0, "", "");
  }
  CHECK(log.len() == 10);
  auto all = log.get(-1);
  REQUIRE(all.size() == 10);
  CHECK(all.front().id == 99);
  CHECK(all.back().id == 90);
  max_len = 3;
  CHECK(log.len() == 3);
  CHECK(log.get(50).size() == 3);
  log.reset();
  CHECK(log.len() == 0);
  log.add(1, p, 1, 0, "", "");
  CHECK(log.get(-1).at(0).id == 100);  // ids go on after a reset
}

TEST_CASE("The slow log trims commands as Redis does", "[slowlog]") {
  std::vector<std::string> many{"sadd", "set"};
  for (int i = 3; i <= 33; ++i) {
    many.push_back(std::to_string(i));
  }
  REQUIRE(many.size() == 33);
  auto t = SlowLog::trim(many);
  REQUIRE(t.size() == 32);
  CHECK(t[30] == "31");
  CHECK(t[31] == "... (2 more arguments)");

  std::vector<std::string> exact(32, "x");
  CHECK(SlowLog::trim(exact) == exact);

  std::vector<std::string> long_arg{"sadd", "set", "foo", std::string(129, 'A')};
  auto l = SlowLog::trim(long_arg);
  CHECK(l[3] == std::string(128, 'A') + "... (1 more bytes)");
  std::vector<std::string> fits{std::string(128, 'B')};
  CHECK(SlowLog::trim(fits)[0] == fits[0]);
}
