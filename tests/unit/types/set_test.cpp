// Set: membership in both encodings, Redis 7.0's intset -> hashtable conversion rules, random
// members, clone, and the SSCAN guarantee while the table resizes between calls.
#include "hotkv/types/set.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using hotkv::EncodingLimits;
using hotkv::Set;

namespace {

const EncodingLimits kLimits;  // the defaults: set-max-intset-entries 512

std::vector<std::string> sorted_members(const Set& s) {
  std::vector<std::string> out = s.members();
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a set of small integers is an intset that iterates in ascending order", "[sets]") {
  Set s;
  CHECK(s.empty());
  CHECK(s.add("30", kLimits));
  CHECK(s.add("-7", kLimits));
  CHECK(s.add("5", kLimits));
  CHECK_FALSE(s.add("5", kLimits));
  CHECK(s.size() == 3);
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK(std::string(s.encoding_name()) == "intset");
  CHECK(s.members() == std::vector<std::string>{"-7", "5", "30"});
  CHECK(s.contains("30"));
  CHECK_FALSE(s.contains("31"));
  CHECK_FALSE(s.contains("abc"));
  CHECK_FALSE(s.contains("030"));  // not the canonical text of 30
  CHECK(s.remove("-7"));
  CHECK_FALSE(s.remove("-7"));
  CHECK_FALSE(s.remove("x"));
  CHECK(s.members() == std::vector<std::string>{"5", "30"});
  CHECK(s.add("9223372036854775807", kLimits));
  CHECK(s.add("-9223372036854775808", kLimits));
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK(s.contains("-9223372036854775808"));
}

TEST_CASE("a non-integer member converts the set to a hashtable for good", "[sets]") {
  for (const char* odd : {"a", "01", "-0", "+1", " 1", "9223372036854775808", ""}) {
    INFO(odd);
    Set s;
    REQUIRE(s.add("1", kLimits));
    REQUIRE(s.add("2", kLimits));
    CHECK(s.add(odd, kLimits));
    CHECK(s.encoding() == Set::Encoding::kHashtable);
    CHECK(std::string(s.encoding_name()) == "hashtable");
    CHECK(s.contains(odd));
    CHECK(s.contains("1"));
    CHECK(s.contains("2"));
    CHECK(s.remove(odd));
    CHECK(s.encoding() == Set::Encoding::kHashtable);  // Redis never converts back
    CHECK(sorted_members(s) == std::vector<std::string>{"1", "2"});
  }
}

TEST_CASE("set-max-intset-entries lowered or zero converts at the next added integer", "[sets]") {
  Set s;
  for (int i = 0; i < 10; ++i) {
    REQUIRE(s.add(std::to_string(i), kLimits));
  }
  EncodingLimits lower;
  lower.set_max_intset_entries = 5;
  CHECK(s.remove("0"));  // removing never converts, even past the limit
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK_FALSE(s.add("1", lower));  // nor does a duplicate
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK(s.add("100", lower));
  CHECK(s.encoding() == Set::Encoding::kHashtable);
  Set none;
  lower.set_max_intset_entries = 0;
  CHECK(none.add("1", lower));
  CHECK(none.encoding() == Set::Encoding::kHashtable);
}

TEST_CASE("the 513th integer converts an intset to a hashtable", "[sets]") {
  Set s;
  for (int i = 0; i < 512; ++i) {
    REQUIRE(s.add(std::to_string(i * 3), kLimits));
  }
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK_FALSE(s.add("0", kLimits));  // a duplicate does not convert
  CHECK(s.encoding() == Set::Encoding::kIntset);
  CHECK(s.add("1", kLimits));
  CHECK(s.encoding() == Set::Encoding::kHashtable);
  CHECK(s.size() == 513);
  for (int i = 0; i < 512; ++i) {
    REQUIRE(s.contains(std::to_string(i * 3)));
  }
}

TEST_CASE("binary members with NUL and high bytes are kept exactly", "[sets]") {
  Set s;
  std::string a("a\0b", 3);
  std::string b("\xff\xfe", 2);
  CHECK(s.add(a, kLimits));
  CHECK(s.add(b, kLimits));
  CHECK_FALSE(s.add(std::string("a\0b", 3), kLimits));
  CHECK(s.contains(a));
  CHECK_FALSE(s.contains("a"));
  CHECK(sorted_members(s) == std::vector<std::string>{a, b});
}

TEST_CASE("clone keeps members and encoding and is independent", "[sets]") {
  Set h(Set::Encoding::kHashtable);
  h.add("1", kLimits);
  h.add("2", kLimits);
  auto c = h.clone();
  CHECK(c->encoding() == Set::Encoding::kHashtable);
  CHECK(sorted_members(*c) == sorted_members(h));
  c->add("3", kLimits);
  CHECK(h.size() == 2);
  Set i;
  i.add("4", kLimits);
  auto ci = i.clone();
  CHECK(ci->encoding() == Set::Encoding::kIntset);
  CHECK(ci->members() == std::vector<std::string>{"4"});
  ci->remove("4");
  CHECK(i.contains("4"));
}

TEST_CASE("random_member returns members and reaches all of them", "[sets]") {
  std::mt19937_64 rng(42);
  for (bool ints : {true, false}) {
    INFO(ints);
    Set s;
    for (int i = 0; i < 20; ++i) {
      s.add(ints ? std::to_string(i) : "m" + std::to_string(i), kLimits);
    }
    std::set<std::string> seen;
    for (int draw = 0; draw < 2000; ++draw) {
      std::string m = s.random_member(rng);
      REQUIRE(s.contains(m));
      seen.insert(m);
    }
    CHECK(seen.size() == 20);
  }
}

TEST_CASE("scan returns an intset whole and a hashtable's members despite resizes", "[sets]") {
  Set small;
  small.add("3", kLimits);
  small.add("1", kLimits);
  std::vector<std::string> got;
  CHECK(small.scan(0, [&](std::string_view m) { got.emplace_back(m); }) == 0);
  CHECK(got == std::vector<std::string>{"1", "3"});

  Set s;
  for (int i = 0; i < 1000; ++i) {
    s.add("k" + std::to_string(i), kLimits);
  }
  std::map<std::string, int> seen;
  uint64_t cursor = 0;
  int step = 0;
  int calls = 0;
  do {
    cursor = s.scan(cursor, [&](std::string_view m) { ++seen[std::string(m)]; });
    ++calls;
    // Grow and shrink the table between calls: members 0..499 stay throughout.
    if (step < 30) {
      for (int j = 0; j < 200; ++j) {
        s.add("extra" + std::to_string(step * 200 + j), kLimits);
      }
    } else if (step < 60) {
      for (int j = 500; j < 1000; ++j) {
        s.remove("k" + std::to_string(j));
      }
      for (int j = 0; j < 6000; ++j) {
        s.remove("extra" + std::to_string(j));
      }
    }
    ++step;
  } while (cursor != 0 && calls < 100000);
  CHECK(cursor == 0);
  for (int i = 0; i < 500; ++i) {
    INFO(i);
    CHECK(seen.count("k" + std::to_string(i)) == 1);
  }
}

TEST_CASE("memory grows with members", "[sets]") {
  Set s;
  size_t empty = s.memory_bytes();
  for (int i = 0; i < 100; ++i) {
    s.add("member-" + std::to_string(i), kLimits);
  }
  CHECK(s.memory_bytes() > empty + 100 * 8);
}

TEST_CASE("for_each_until visits each member once and stops when told", "[sets]") {
  for (bool ints : {true, false}) {
    INFO(ints);
    Set s;
    for (int i = 0; i < 300; ++i) {
      s.add(ints ? std::to_string(i) : "m" + std::to_string(i), kLimits);
    }
    std::vector<std::string> all;
    s.for_each_until([&](std::string_view m) {
      all.emplace_back(m);
      return true;
    });
    std::sort(all.begin(), all.end());
    CHECK(all == sorted_members(s));
    size_t calls = 0;
    s.for_each_until([&](std::string_view) { return ++calls < 7; });
    CHECK(calls == 7);
  }
}
