// ZSet: order, ranks, range lookups and the encoding switch, checked against a plain std::set
// model under thousands of random inserts, score changes and removals.
#include "hotkv/types/zset.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::LexBound;
using hotkv::LexRange;
using hotkv::ScoreRange;
using hotkv::ZSet;

namespace {

using Model = std::set<std::pair<double, std::string>>;

// Checks every observable property of z against the model: size, order both ways, ranks,
// at_rank and scores.
void check_same(const ZSet& z, const Model& m) {
  REQUIRE(z.size() == m.size());
  size_t r = 0;
  const ZSet::Node* n = z.first();
  for (const auto& [score, member] : m) {
    REQUIRE(n != nullptr);
    CHECK(n->score() == score);
    CHECK(n->member() == member);
    CHECK(z.rank(member) == r);
    CHECK(z.at_rank(r) == n);
    CHECK(z.score(member) == score);
    n = n->next();
    ++r;
  }
  CHECK(n == nullptr);
  // Backwards through prev() visits the same nodes in reverse.
  size_t back = 0;
  for (const ZSet::Node* p = z.last(); p != nullptr; p = p->prev()) {
    ++back;
  }
  CHECK(back == m.size());
}

ScoreRange range(double min, double max, bool minex = false, bool maxex = false) {
  ScoreRange r;
  r.min = min;
  r.max = max;
  r.min_exclusive = minex;
  r.max_exclusive = maxex;
  return r;
}

LexBound lex(const std::string& v, bool exclusive = false) {
  LexBound b;
  b.kind = LexBound::kValue;
  b.value = v;
  b.exclusive = exclusive;
  return b;
}

LexBound minus_inf() {
  LexBound b;
  b.kind = LexBound::kMinusInf;
  b.exclusive = true;
  return b;
}

LexBound plus_inf() {
  LexBound b;
  b.kind = LexBound::kPlusInf;
  b.exclusive = true;
  return b;
}

}  // namespace

TEST_CASE("ZSet orders by score then member bytes and ranks members", "[zset]") {
  ZSet z;
  CHECK(z.set("b", 1));
  CHECK(z.set("a", 1));
  CHECK(z.set("c", 0.5));
  CHECK(z.set("\xff", 1));  // bytes compare unsigned: 0xff sorts after 'b'
  CHECK_FALSE(z.set("c", 2));
  Model m{{1, "a"}, {1, "b"}, {1, "\xff"}, {2, "c"}};
  check_same(z, m);
  CHECK(z.rank("nope") == std::nullopt);
  CHECK(z.score("nope") == std::nullopt);
  CHECK(z.erase("b"));
  CHECK_FALSE(z.erase("b"));
  m.erase({1, "b"});
  check_same(z, m);
}

TEST_CASE("ZSet matches a model under random inserts, updates and removals", "[zset]") {
  std::mt19937 rng(7);
  ZSet z;
  Model m;
  std::map<std::string, double> scores;
  for (int step = 0; step < 20000; ++step) {
    std::string member = "m" + std::to_string(rng() % 700);
    double score = static_cast<double>(rng() % 50) / 4;
    if (rng() % 3 == 0) {
      bool had = scores.count(member) > 0;
      CHECK(z.erase(member) == had);
      if (had) {
        m.erase({scores[member], member});
        scores.erase(member);
      }
    } else {
      bool had = scores.count(member) > 0;
      CHECK(z.set(member, score) == !had);
      if (had) {
        m.erase({scores[member], member});
      }
      scores[member] = score;
      m.insert({score, member});
    }
    if (step % 2000 == 0) {
      check_same(z, m);
    }
  }
  check_same(z, m);
  SECTION("score range lookups and counts agree with the model") {
    for (int i = 0; i < 200; ++i) {
      double a = static_cast<double>(rng() % 60) / 4 - 1;
      double b = static_cast<double>(rng() % 60) / 4 - 1;
      ScoreRange r = range(a, b, rng() % 2 == 0, rng() % 2 == 0);
      std::vector<std::string> want;
      for (const auto& [s, mem] : m) {
        if (r.contains(s)) {
          want.push_back(mem);
        }
      }
      CHECK(z.count(r) == want.size());
      const ZSet::Node* f = z.first_in(r);
      const ZSet::Node* l = z.last_in(r);
      if (want.empty()) {
        CHECK(f == nullptr);
        CHECK(l == nullptr);
      } else {
        REQUIRE(f != nullptr);
        REQUIRE(l != nullptr);
        CHECK(f->member() == want.front());
        CHECK(l->member() == want.back());
      }
    }
  }
  SECTION("clone is an equal, independent copy") {
    auto copy = z.clone();
    check_same(*copy, m);
    copy->set("extra", 1);
    check_same(z, m);
  }
}

TEST_CASE("ZSet score ranges handle exclusive ends and infinities", "[zset]") {
  ZSet z;
  double inf = std::numeric_limits<double>::infinity();
  z.set("ninf", -inf);
  z.set("one", 1);
  z.set("two", 2);
  z.set("pinf", inf);
  CHECK(z.count(range(-inf, inf)) == 4);
  CHECK(z.count(range(-inf, inf, true, true)) == 2);
  CHECK(z.count(range(1, 2, true, false)) == 1);
  CHECK(z.first_in(range(1, 2, true, false))->member() == "two");
  CHECK(z.count(range(2, 1)) == 0);
  CHECK(z.count(range(1, 1, true, false)) == 0);
  CHECK(z.first_in(range(3, 4)) == nullptr);
  CHECK(z.last_in(range(-inf, 0))->member() == "ninf");
  CHECK(z.last_in(range(-5, 0)) == nullptr);
}

TEST_CASE("ZSet lex ranges follow Redis's inclusive, exclusive and unbounded ends", "[zset]") {
  ZSet z;
  for (const char* m : {"a", "b", "c", "d", "e"}) {
    z.set(m, 0);
  }
  CHECK(z.count(LexRange{minus_inf(), plus_inf()}) == 5);
  CHECK(z.count(LexRange{lex("b"), lex("d")}) == 3);
  CHECK(z.count(LexRange{lex("b", true), lex("d", true)}) == 1);
  CHECK(z.first_in(LexRange{lex("bb"), plus_inf()})->member() == "c");
  CHECK(z.last_in(LexRange{minus_inf(), lex("c", true)})->member() == "b");
  CHECK(z.count(LexRange{minus_inf(), minus_inf()}) == 0);
  CHECK(z.count(LexRange{plus_inf(), plus_inf()}) == 0);
  CHECK(z.count(LexRange{plus_inf(), minus_inf()}) == 0);
  CHECK(z.count(LexRange{lex("c"), lex("c")}) == 1);
  CHECK(z.count(LexRange{lex("c", true), lex("c")}) == 0);
  CHECK(z.count(LexRange{lex("d"), lex("b")}) == 0);
}

TEST_CASE("ZSet reports listpack until 128 members or a 65-byte member, then skiplist for good",
          "[zset]") {
  ZSet z;
  for (int i = 0; i < 128; ++i) {
    z.set("m" + std::to_string(i), i);
  }
  CHECK(std::string(z.encoding_name()) == "listpack");
  z.set("m128", 128);
  CHECK(std::string(z.encoding_name()) == "skiplist");
  for (int i = 0; i < 100; ++i) {
    z.erase("m" + std::to_string(i));
  }
  CHECK(std::string(z.encoding_name()) == "skiplist");
  ZSet small;
  small.set(std::string(64, 'x'), 1);
  CHECK(std::string(small.encoding_name()) == "listpack");
  small.set(std::string(65, 'y'), 1);
  CHECK(std::string(small.encoding_name()) == "skiplist");
  CHECK(std::string(small.clone()->encoding_name()) == "skiplist");
}

TEST_CASE("ZSet takes its listpack limits from its creator (zset-max-listpack-*)", "[zset]") {
  ZSet z(3, 4);
  z.set("a", 1);
  z.set("b", 2);
  z.set("c", 3);
  CHECK(z.listpack_encoded());
  z.set("c", 4);  // an update adds nothing
  CHECK(z.listpack_encoded());
  z.set("d", 4);
  CHECK_FALSE(z.listpack_encoded());
  ZSet v(128, 4);
  v.set("abcd", 1);
  CHECK(v.listpack_encoded());
  v.set("abcde", 1);
  CHECK_FALSE(v.listpack_encoded());
  ZSet none(0, 0);
  none.set("a", -0.0);
  CHECK_FALSE(none.listpack_encoded());
  CHECK(std::signbit(*none.score("a")));
  ZSet c(2, 64);
  c.set("x", 1);
  std::unique_ptr<ZSet> copy = c.clone();
  copy->set("y", 2);
  copy->set("z", 3);
  CHECK_FALSE(copy->listpack_encoded());
}

TEST_CASE("ZSet keeps -0 only once skiplist-encoded, as Redis's listpack turns it into 0",
          "[zset]") {
  ZSet z;
  z.set("a", -0.0);
  CHECK_FALSE(std::signbit(*z.score("a")));
  z.set(std::string(65, 'x'), -0.0);  // converts first, so it keeps its -0
  CHECK(std::signbit(*z.score(std::string(65, 'x'))));
  CHECK_FALSE(std::signbit(*z.score("a")));
  z.set("b", -0.0);
  CHECK(std::signbit(*z.score("b")));
}

TEST_CASE("ZSet scan visits every member present for the whole scan", "[zset]") {
  ZSet z;
  for (int i = 0; i < 1000; ++i) {
    z.set("m" + std::to_string(i), i);
  }
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = z.scan(cursor, [&](std::string_view member, double score) {
      CHECK(*z.score(member) == score);
      seen.emplace(member);
    });
    // Members 0..499 come and go during the scan; 500..999 stay throughout.
    if (calls % 10 == 0) {
      for (int i = 0; i < 50; ++i) {
        std::string m = "m" + std::to_string((calls * 7 + i) % 500);
        if (!z.erase(m)) {
          z.set(m, 1);
        }
      }
    }
    ++calls;
  } while (cursor != 0 && calls < 100000);
  CHECK(cursor == 0);
  for (int i = 500; i < 1000; ++i) {
    CHECK(seen.count("m" + std::to_string(i)) == 1);
  }
  CHECK(z.memory_bytes() > 0);
}
