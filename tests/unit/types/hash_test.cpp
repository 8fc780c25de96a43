// Unit tests for Hash: set/get/erase in both encodings, the listpack -> hashtable conversion
// rules (Redis's 128 entries / 64 bytes defaults, one way only), insertion order while small,
// the HSCAN cursor guarantee while the table grows and shrinks, random_pair coverage, clone.
#include "hotkv/types/hash.hpp"

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::EncodingLimits;
using hotkv::Hash;

namespace {

// hash-max-listpack-entries 128, hash-max-listpack-value 64 (the defaults).
const EncodingLimits kLimits;

std::string field(int i) { return "f" + std::to_string(i); }

std::vector<std::string> fields_in_order(const Hash& h) {
  std::vector<std::string> out;
  h.for_each([&](const std::string& f, const std::string&) { out.push_back(f); });
  return out;
}

}  // namespace

TEST_CASE("a hash sets, updates, finds and erases fields", "[hash]") {
  for (bool big : {false, true}) {
    INFO("hashtable: " << big);
    Hash h;
    if (big) {
      h.convert_to_hashtable();
    }
    CHECK(h.empty());
    CHECK(h.get("a") == nullptr);
    CHECK(h.set("a", "1", kLimits));
    CHECK(h.set("b", std::string("\0x", 2), kLimits));
    CHECK_FALSE(h.set("a", "2", kLimits));
    CHECK(h.size() == 2);
    REQUIRE(h.get("a") != nullptr);
    CHECK(*h.get("a") == "2");
    CHECK(*h.get("b") == std::string("\0x", 2));
    CHECK(h.erase("a"));
    CHECK_FALSE(h.erase("a"));
    CHECK(h.size() == 1);
    CHECK(h.get("a") == nullptr);
    CHECK(h.listpack() == !big);
  }
}

TEST_CASE("a small hash keeps insertion order, updates keep their place", "[hash]") {
  Hash h;
  h.set("c", "1", kLimits);
  h.set("a", "2", kLimits);
  h.set("b", "3", kLimits);
  h.set("a", "4", kLimits);
  CHECK(fields_in_order(h) == std::vector<std::string>{"c", "a", "b"});
  h.erase("c");
  h.set("c", "5", kLimits);
  CHECK(fields_in_order(h) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("a hash converts to a hashtable past 128 fields or 64 bytes, and never back", "[hash]") {
  SECTION("the 129th field") {
    Hash h;
    for (int i = 0; i < 128; ++i) {
      h.set(field(i), "v", kLimits);
    }
    CHECK(h.listpack());
    h.set(field(0), "updated", kLimits);  // not a new field
    CHECK(h.listpack());
    h.set(field(128), "v", kLimits);
    CHECK_FALSE(h.listpack());
    CHECK(h.size() == 129);
    for (int i = 0; i < 129; ++i) {
      REQUIRE(h.get(field(i)) != nullptr);
    }
    CHECK(*h.get(field(0)) == "updated");
    for (int i = 0; i < 120; ++i) {
      h.erase(field(i));
    }
    CHECK_FALSE(h.listpack());
  }
  SECTION("a 65-byte value or field, but not a 64-byte one") {
    Hash h;
    h.set("f", std::string(64, 'x'), kLimits);
    h.set(std::string(64, 'k'), "v", kLimits);
    CHECK(h.listpack());
    h.set("f", std::string(65, 'x'), kLimits);
    CHECK_FALSE(h.listpack());
    CHECK(h.get("f")->size() == 65);
    Hash g;
    g.set(std::string(65, 'k'), "v", kLimits);
    CHECK_FALSE(g.listpack());
  }
  SECTION("limits lowered after the hash was built apply at its next write") {
    Hash h;
    for (int i = 0; i < 10; ++i) {
      h.set(field(i), "v", kLimits);
    }
    EncodingLimits lower = kLimits;
    lower.hash_max_listpack_entries = 4;
    CHECK(h.listpack());  // nothing happens until the next write
    CHECK_FALSE(h.erase(field(99)));
    CHECK(h.listpack());
    CHECK_FALSE(h.set(field(0), "updated", lower));  // an update converts too, as in Redis
    CHECK_FALSE(h.listpack());
    CHECK(*h.get(field(0)) == "updated");
    CHECK(h.size() == 10);
    Hash g;
    lower.hash_max_listpack_entries = 0;  // no listpack at all: the first field converts
    g.set("a", "1", lower);
    CHECK_FALSE(g.listpack());
    Hash k;
    lower = kLimits;
    lower.hash_max_listpack_value = 3;
    k.set("abc", "xyz", lower);
    CHECK(k.listpack());
    k.set("abc", "wxyz", lower);
    CHECK_FALSE(k.listpack());
  }
}

TEST_CASE("a listpack scan returns everything at once with cursor 0", "[hash]") {
  Hash h;
  for (int i = 0; i < 20; ++i) {
    h.set(field(i), std::to_string(i), kLimits);
  }
  std::map<std::string, std::string> seen;
  uint64_t next = h.scan(0, [&](const std::string& f, const std::string& v) { seen[f] = v; });
  CHECK(next == 0);
  CHECK(seen.size() == 20);
  CHECK(seen["f7"] == "7");
}

TEST_CASE("a hashtable scan returns every field present throughout, while it resizes", "[hash]") {
  Hash h;
  for (int i = 0; i < 2000; ++i) {
    h.set(field(i), "v", kLimits);
  }
  REQUIRE_FALSE(h.listpack());
  // Fields 0..999 stay for the whole scan; 1000..1999 are deleted and 2000..5999 added while it
  // runs, so the table shrinks and grows between steps.
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int steps = 0;
  int next_add = 2000;
  int next_del = 1000;
  do {
    cursor = h.scan(cursor, [&](const std::string& f, const std::string&) { seen.insert(f); });
    for (int k = 0; k < 40 && next_del < 2000; ++k) {
      h.erase(field(next_del++));
    }
    for (int k = 0; k < 40 && next_add < 6000 && steps > 30; ++k) {
      h.set(field(next_add++), "v", kLimits);
    }
    ++steps;
  } while (cursor != 0 && steps < 100000);
  CHECK(cursor == 0);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(seen.count(field(i)) == 1);
  }
}

TEST_CASE("random_pair reaches every field in both encodings", "[hash]") {
  std::mt19937_64 rng(42);
  for (int n : {5, 300}) {
    Hash h;
    for (int i = 0; i < n; ++i) {
      h.set(field(i), "v" + std::to_string(i), kLimits);
    }
    std::set<std::string> seen;
    for (int k = 0; k < n * 60; ++k) {
      auto [f, v] = h.random_pair(rng);
      CHECK(*v == "v" + std::string(f.substr(1)));
      seen.insert(std::string(f));
    }
    CHECK(seen.size() == static_cast<size_t>(n));
  }
}

TEST_CASE("clone copies contents and encoding and is independent", "[hash]") {
  for (int n : {3, 200}) {
    Hash h;
    for (int i = 0; i < n; ++i) {
      h.set(field(i), std::to_string(i), kLimits);
    }
    auto c = h.clone();
    CHECK(c->listpack() == h.listpack());
    CHECK(c->size() == h.size());
    if (h.listpack()) {
      CHECK(fields_in_order(*c) == fields_in_order(h));
    }
    c->set("f0", "changed", kLimits);
    c->erase("f1");
    CHECK(*h.get("f0") == "0");
    CHECK(h.get("f1") != nullptr);
    CHECK(h.memory_bytes() > 0);
  }
}
