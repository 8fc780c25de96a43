// Unit tests for Dict, the shard keyspace table: basic map behaviour at 100k keys, the SCAN
// cursor guarantee while the table grows and shrinks between calls, random_entry coverage,
// clear and move.
#include "hotkv/types/dict.hpp"

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <catch2/catch.hpp>

using hotkv::Dict;

namespace {

std::string key_of(int i) { return "key:" + std::to_string(i); }

// Runs one full SCAN, calling `between` after each step so the test can mutate the table the
// way other commands would between two SCAN calls. Returns how often each key was seen.
template <class D, class Between>
std::unordered_map<std::string, int> scan_all(D& dict, Between&& between) {
  std::unordered_map<std::string, int> seen;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    cursor = dict.scan(cursor, [&](std::string_view key, auto&) { ++seen[std::string(key)]; });
    between(steps++);
    // A scan takes about as many steps as the largest table seen; bound the loop anyway.
    REQUIRE(steps < 1'000'000);
  } while (cursor != 0);
  return seen;
}

}  // namespace

TEST_CASE("Dict inserts, finds, overwrites and erases 100k keys", "[dict]") {
  Dict<int> dict;
  constexpr int kCount = 100'000;
  for (int i = 0; i < kCount; ++i) {
    auto [value, inserted] = dict.try_emplace(key_of(i));
    REQUIRE(inserted);
    *value = i;
  }
  REQUIRE(dict.size() == kCount);
  REQUIRE_FALSE(dict.empty());
  REQUIRE(dict.bucket_count() >= kCount);

  for (int i = 0; i < kCount; ++i) {
    const int* value = dict.find(key_of(i));
    REQUIRE(value != nullptr);
    REQUIRE(*value == i);
  }
  REQUIRE(dict.find("key:-1") == nullptr);
  REQUIRE(dict.find("") == nullptr);

  SECTION("try_emplace on an existing key keeps the value") {
    auto [value, inserted] = dict.try_emplace("key:7");
    REQUIRE_FALSE(inserted);
    REQUIRE(*value == 7);
    REQUIRE(dict.size() == kCount);
  }
  SECTION("insert_or_assign overwrites without growing") {
    for (int i = 0; i < kCount; i += 2) {
      REQUIRE(dict.insert_or_assign(key_of(i), -i) == -i);
    }
    REQUIRE(dict.size() == kCount);
    for (int i = 0; i < kCount; ++i) {
      REQUIRE(*dict.find(key_of(i)) == (i % 2 == 0 ? -i : i));
    }
  }
  SECTION("erase removes exactly the erased keys and shrinks the table") {
    for (int i = 0; i < kCount; ++i) {
      if (i % 100 != 0) {
        REQUIRE(dict.erase(key_of(i)));
      }
    }
    REQUIRE_FALSE(dict.erase("key:1"));
    REQUIRE(dict.size() == kCount / 100);
    REQUIRE(dict.bucket_count() < kCount / 8);
    for (int i = 0; i < kCount; ++i) {
      const int* value = dict.find(key_of(i));
      if (i % 100 == 0) {
        REQUIRE(value != nullptr);
        REQUIRE(*value == i);
      } else {
        REQUIRE(value == nullptr);
      }
    }
    for (int i = 0; i < kCount; i += 100) {
      REQUIRE(dict.erase(key_of(i)));
    }
    REQUIRE(dict.empty());
    REQUIRE(dict.bucket_count() == 4);
  }
}

TEST_CASE("Dict looks keys up by string_view, including binary keys", "[dict]") {
  Dict<std::string> dict;
  const std::string binary("a\0b", 3);
  dict.insert_or_assign(binary, "bin");
  dict.insert_or_assign("a", "plain");
  REQUIRE(dict.size() == 2);
  REQUIRE(*dict.find(std::string_view(binary)) == "bin");
  REQUIRE(*dict.find("a") == "plain");
  auto* entry = dict.find_entry(binary);
  REQUIRE(entry != nullptr);
  REQUIRE(entry->key() == binary);
  REQUIRE(entry->value == "bin");
  const auto& const_dict = dict;
  REQUIRE(*const_dict.find("a") == "plain");
  REQUIRE(const_dict.find_entry("missing") == nullptr);
}

TEST_CASE("Dict keeps entry addresses stable across resizes", "[dict]") {
  Dict<int> dict;
  int* first = dict.try_emplace("first").first;
  *first = 42;
  auto* entry = dict.find_entry("first");
  for (int i = 0; i < 50'000; ++i) {
    dict.try_emplace(key_of(i));
  }
  for (int i = 0; i < 50'000; ++i) {
    dict.erase(key_of(i));
  }
  REQUIRE(dict.find("first") == first);
  REQUIRE(dict.find_entry("first") == entry);
  REQUIRE(*first == 42);
}

TEST_CASE("Dict holds move-only values", "[dict]") {
  Dict<std::unique_ptr<int>> dict;
  dict.insert_or_assign("a", std::make_unique<int>(1));
  dict.insert_or_assign("a", std::make_unique<int>(2));
  auto [value, inserted] = dict.try_emplace("b");
  REQUIRE(inserted);
  REQUIRE(*value == nullptr);
  REQUIRE(**dict.find("a") == 2);
  REQUIRE(dict.size() == 2);
}

TEST_CASE("Dict scan of an empty dict finishes at once", "[dict][scan]") {
  Dict<int> dict;
  int visits = 0;
  REQUIRE(dict.scan(0, [&](const std::string&, int&) { ++visits; }) == 0);
  REQUIRE(dict.scan(12345, [&](const std::string&, int&) { ++visits; }) == 0);
  dict.insert_or_assign("x", 1);
  dict.erase("x");
  REQUIRE(dict.scan(0, [&](const std::string&, int&) { ++visits; }) == 0);
  REQUIRE(visits == 0);
}

TEST_CASE("Dict scan of a stable dict visits every key exactly once", "[dict][scan]") {
  for (int count : {1, 3, 4, 5, 100, 4097}) {
    Dict<int> dict;
    for (int i = 0; i < count; ++i) {
      dict.insert_or_assign(key_of(i), i);
    }
    auto seen = scan_all(dict, [](int) {});
    REQUIRE(seen.size() == static_cast<size_t>(count));
    for (const auto& [key, times] : seen) {
      REQUIRE(times == 1);
    }
  }
}

TEST_CASE("Dict scan lets the callback modify values", "[dict][scan]") {
  Dict<int> dict;
  for (int i = 0; i < 1000; ++i) {
    dict.insert_or_assign(key_of(i), i);
  }
  uint64_t cursor = 0;
  do {
    cursor = dict.scan(cursor, [](const std::string&, int& v) { v += 1; });
  } while (cursor != 0);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(*dict.find(key_of(i)) == i + 1);
  }
}

// At both loads: the keyspace's table (Dict<Value, 2>) holds two keys per bucket.
TEMPLATE_TEST_CASE("Dict scan never misses a key present for the whole scan", "[dict][scan]",
                   (Dict<int, 1>), (Dict<int, 2>)) {
  constexpr int kStable = 2000;
  TestType dict;
  for (int i = 0; i < kStable; ++i) {
    dict.insert_or_assign(key_of(i), i);
  }

  SECTION("while the table grows between calls") {
    // Growth is capped: a table that keeps doubling faster than the cursor moves would keep
    // adding buckets ahead of it (as in Redis), and the test wants a finite scan.
    constexpr int kGrowth = 100'000;
    int next = kStable;
    const size_t buckets_before = dict.bucket_count();
    auto seen = scan_all(dict, [&](int) {
      for (int j = 0; j < 200 && next < kStable + kGrowth; ++j) {
        dict.insert_or_assign(key_of(next++), 0);
      }
    });
    REQUIRE(dict.bucket_count() >= buckets_before * 8);
    for (int i = 0; i < kStable; ++i) {
      REQUIRE(seen.count(key_of(i)) == 1);
    }
  }

  SECTION("while the table shrinks between calls") {
    // Pad with keys that get erased during the scan, so the table shrinks several times.
    constexpr int kPad = 200'000;
    for (int i = 0; i < kPad; ++i) {
      dict.insert_or_assign("pad:" + std::to_string(i), i);
    }
    const size_t buckets_before = dict.bucket_count();
    int erased = 0;
    auto seen = scan_all(dict, [&](int) {
      for (int j = 0; j < 5000 && erased < kPad; ++j) {
        REQUIRE(dict.erase("pad:" + std::to_string(erased++)));
      }
    });
    REQUIRE(dict.bucket_count() * 8 <= buckets_before);
    for (int i = 0; i < kStable; ++i) {
      REQUIRE(seen.count(key_of(i)) == 1);
    }
  }

  SECTION("while the table grows and shrinks at random between calls") {
    std::mt19937 rng(7);
    std::vector<std::string> transient;
    int next = 0;
    auto seen = scan_all(dict, [&](int step) {
      if (step >= 500) {
        return;  // stop churning so the scan can finish
      }
      if (rng() % 2 == 0) {
        const int burst = static_cast<int>(rng() % 5000);
        for (int j = 0; j < burst; ++j) {
          transient.push_back("t:" + std::to_string(next++));
          dict.insert_or_assign(transient.back(), 0);
        }
      } else {
        for (const auto& key : transient) {
          dict.erase(key);
        }
        transient.clear();
      }
    });
    for (int i = 0; i < kStable; ++i) {
      REQUIRE(seen.count(key_of(i)) == 1);
    }
  }
}

// At load 1.0 about 0.4% of the buckets hold five or more entries (Poisson), so 4096 keys
// almost surely put some key past the fourth place of its chain; the hash seed changes per
// process, so which keys that are changes from run to run. 40 draws per key leave any one key
// unseen with probability about e^-40 when the pick is uniform.
TEMPLATE_TEST_CASE("Dict random_entry reaches keys deep in long chains", "[dict]", (Dict<int, 1>),
                   (Dict<int, 2>)) {
  TestType dict;
  std::mt19937_64 rng(7);
  constexpr int kCount = 4096;
  for (int i = 0; i < kCount; ++i) {
    dict.insert_or_assign(key_of(i), i);
  }
  REQUIRE(dict.bucket_count() == static_cast<size_t>(kCount) / TestType::kMaxLoad);
  std::unordered_map<std::string, int> seen;
  for (int draw = 0; draw < kCount * 40; ++draw) {
    ++seen[std::string(dict.random_entry(rng)->key())];
  }
  REQUIRE(seen.size() == static_cast<size_t>(kCount));
  // Uniform: no key is drawn anywhere near twice its share (40 expected, sd about 6.3).
  for (const auto& [key, n] : seen) {
    CHECK(n < 100);
  }
}

TEST_CASE("Dict random_entry eventually returns every key", "[dict]") {
  Dict<int> dict;
  std::mt19937_64 rng(99);
  REQUIRE(dict.random_entry(rng) == nullptr);

  constexpr int kCount = 20;
  for (int i = 0; i < kCount; ++i) {
    dict.insert_or_assign(key_of(i), i);
  }
  std::set<std::string> seen;
  for (int draw = 0; draw < 100'000 && seen.size() < kCount; ++draw) {
    auto* entry = dict.random_entry(rng);
    REQUIRE(entry != nullptr);
    REQUIRE(*dict.find(entry->key()) == entry->value);
    seen.insert(std::string(entry->key()));
  }
  REQUIRE(seen.size() == kCount);

  SECTION("a sparse table after mass erase still yields its keys") {
    for (int i = 0; i < 100'000; ++i) {
      dict.insert_or_assign("pad:" + std::to_string(i), 0);
    }
    for (int i = 0; i < 100'000; ++i) {
      dict.erase("pad:" + std::to_string(i));
    }
    for (int draw = 0; draw < 1000; ++draw) {
      auto* entry = dict.random_entry(rng);
      REQUIRE(entry != nullptr);
      REQUIRE(entry->key().rfind("key:", 0) == 0);
    }
  }
}

TEST_CASE("Dict for_each visits every entry once", "[dict]") {
  Dict<int> dict;
  for (int i = 0; i < 10'000; ++i) {
    dict.insert_or_assign(key_of(i), i);
  }
  std::unordered_set<std::string> seen;
  long long sum = 0;
  dict.for_each([&](const std::string& key, int& value) {
    REQUIRE(seen.insert(key).second);
    sum += value;
  });
  REQUIRE(seen.size() == 10'000);
  REQUIRE(sum == 10'000LL * 9'999 / 2);
}

TEST_CASE("Dict clear empties the table and it stays usable", "[dict]") {
  Dict<std::string> dict;
  for (int i = 0; i < 10'000; ++i) {
    dict.insert_or_assign(key_of(i), std::string(100, 'v'));
  }
  const size_t full_memory = dict.memory_bytes();
  dict.clear();
  REQUIRE(dict.empty());
  REQUIRE(dict.size() == 0);
  REQUIRE(dict.bucket_count() == 0);
  REQUIRE(dict.find("key:1") == nullptr);
  REQUIRE_FALSE(dict.erase("key:1"));
  REQUIRE(dict.memory_bytes() < full_memory);
  int visits = 0;
  dict.for_each([&](const std::string&, std::string&) { ++visits; });
  REQUIRE(visits == 0);

  dict.insert_or_assign("again", "yes");
  REQUIRE(dict.size() == 1);
  REQUIRE(*dict.find("again") == "yes");
}

TEST_CASE("Dict moves leave the source empty and usable", "[dict]") {
  Dict<int> a;
  for (int i = 0; i < 1000; ++i) {
    a.insert_or_assign(key_of(i), i);
  }
  Dict<int> b(std::move(a));
  REQUIRE(b.size() == 1000);
  REQUIRE(*b.find("key:999") == 999);
  REQUIRE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  REQUIRE(a.find("key:1") == nullptr);

  Dict<int> c;
  c.insert_or_assign("old", 1);
  c = std::move(b);
  REQUIRE(c.size() == 1000);
  REQUIRE(c.find("old") == nullptr);
  a.insert_or_assign("reused", 5);
  REQUIRE(*a.find("reused") == 5);
}

TEST_CASE("Dict memory_bytes grows with content", "[dict]") {
  Dict<int> dict;
  const size_t empty_bytes = dict.memory_bytes();
  dict.insert_or_assign("short", 1);
  const size_t one_short = dict.memory_bytes();
  REQUIRE(one_short > empty_bytes);
  dict.insert_or_assign(std::string(1000, 'k'), 2);
  REQUIRE(dict.memory_bytes() >= one_short + 1000);
  dict.erase(std::string(1000, 'k'));
  REQUIRE(dict.memory_bytes() == one_short);
}

TEST_CASE("Dict agrees with a reference map through random inserts, erases and misses",
          "[dict]") {
  // Each bucket's filter of chain hashes must follow every insert, erase and resize: a stale
  // filter would make a present key look absent.
  Dict<int> dict;
  std::unordered_map<std::string, int> ref;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> pick_key(0, 5000);
  std::uniform_int_distribution<int> pick_op(0, 9);
  for (int step = 0; step < 200000; ++step) {
    std::string k = key_of(pick_key(rng));
    int op = pick_op(rng);
    if (op < 4) {
      auto [v, inserted] = dict.try_emplace(k);
      CHECK(inserted == (ref.count(k) == 0));
      *v = step;
      ref[k] = step;
    } else if (op < 7) {
      CHECK(dict.erase(k) == (ref.erase(k) == 1));
    } else {
      const int* v = dict.find(k);
      auto it = ref.find(k);
      REQUIRE((v != nullptr) == (it != ref.end()));
      if (v != nullptr) {
        CHECK(*v == it->second);
      }
    }
  }
  REQUIRE(dict.size() == ref.size());
  for (const auto& [k, v] : ref) {
    const int* got = dict.find(k);
    REQUIRE(got != nullptr);
    CHECK(*got == v);
  }
  // Erase down to nothing: the table shrinks through every size with its filters rebuilt.
  for (const auto& [k, v] : ref) {
    REQUIRE(dict.erase(k));
  }
  CHECK(dict.empty());
  CHECK(dict.find(key_of(1)) == nullptr);
}

TEST_CASE("Dict keeps keys of every length, around the one-byte length's limit", "[dict]") {
  Dict<int> dict;
  for (size_t len : {0, 1, 253, 254, 255, 256, 70000}) {
    dict.insert_or_assign(std::string(len, 'k'), static_cast<int>(len));
  }
  for (size_t len : {0, 1, 253, 254, 255, 256, 70000}) {
    const std::string key(len, 'k');
    auto* e = dict.find_entry(key);
    REQUIRE(e != nullptr);
    REQUIRE(e->key() == key);
    REQUIRE(e->value == static_cast<int>(len));
  }
  REQUIRE(dict.erase(std::string(255, 'k')));
  REQUIRE(dict.find(std::string(255, 'k')) == nullptr);
  REQUIRE(dict.find(std::string(254, 'k')) != nullptr);
}
