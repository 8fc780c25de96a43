// HyperLogLog registers in Redis's layout: the hash and register choice, dense packing,
// sparse rewrites and their promotion to dense, round trips between the encodings, corrupt
// values, and the estimator against values redis-server 7.0 gives for the same elements.
#include "hotkv/types/hyperloglog.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace hll = hotkv::hll;

namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// A fresh value holding `elements`, with Redis's default sparse limit.
std::string hll_of(const std::vector<std::string>& elements,
                   size_t max_bytes = hll::kDefaultSparseMaxBytes) {
  std::string v = hll::make_empty();
  for (const auto& e : elements) {
    REQUIRE(hll::add(v, e, max_bytes) != hll::Update::kCorrupt);
  }
  return v;
}

std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) {
    out.push_back(prefix + std::to_string(i));
  }
  return out;
}

uint64_t count_of(const std::string& v) {
  hll::Histogram h;
  REQUIRE(hll::histogram(v, h));
  return hll::estimate(h);
}

hll::Registers registers(const std::string& v) {
  hll::Registers r;
  REQUIRE(hll::registers_of(v, r));
  return r;
}

}  // namespace

TEST_CASE("elements land in the register and run length redis-server picks", "[hyperloglog]") {
  // From PFADD of one element then PFDEBUG GETREG on redis-server 7.0.15.
  struct Case {
    const char* element;
    uint32_t index;
    uint8_t count;
  };
  for (const Case& c :
       {Case{"a", 12711, 2}, Case{"b", 15780, 1}, Case{"c", 8436, 1}, Case{"", 5938, 2},
        Case{"hello world", 9399, 4}, Case{"0123456789abcdef!", 13940, 1}}) {
    INFO(c.element);
    hll::Pattern p = hll::pattern_of(c.element);
    CHECK(p.index == c.index);
    CHECK(p.count == c.count);
  }
}

TEST_CASE("dense registers keep their 6-bit values without touching their neighbours",
          "[hyperloglog]") {
  std::vector<uint8_t> bytes(hll::kDenseSize - hll::kHeaderSize, 0);
  std::mt19937 rng(7);
  std::vector<uint8_t> expect(hll::kRegisters);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < hll::kRegisters; ++i) {
      expect[i] = static_cast<uint8_t>(rng() & 63);
      hll::dense_set(bytes.data(), i, expect[i]);
    }
    for (size_t i = 0; i < hll::kRegisters; ++i) {
      REQUIRE(hll::dense_get(bytes.data(), i) == expect[i]);
    }
  }
  // Register 1 spans bytes 0 and 1 (LSB first): 63 there sets the top two bits of byte 0 and
  // the low four of byte 1.
  std::fill(bytes.begin(), bytes.end(), 0);
  hll::dense_set(bytes.data(), 1, 63);
  CHECK(bytes[0] == 0xc0);
  CHECK(bytes[1] == 0x0f);
  CHECK(hll::dense_get(bytes.data(), 0) == 0);
  CHECK(hll::dense_get(bytes.data(), 2) == 0);
  // The last register sits in the top six bits of the last byte.
  hll::dense_set(bytes.data(), hll::kRegisters - 1, 5);
  CHECK(bytes.back() == (5 << 2));
}

TEST_CASE("a new HLL is sparse, empty, and has a valid cached cardinality of 0", "[hyperloglog]") {
  std::string v = hll::make_empty();
  CHECK(v == unhex("48594c4c010000000000000000000000"
                   "7fff"));
  CHECK(hll::looks_valid(v));
  CHECK(hll::encoding_of(v) == hll::Encoding::kSparse);
  CHECK(hll::cache_valid(v));
  CHECK(hll::cached_cardinality(v) == 0);
  CHECK(count_of(v) == 0);
  CHECK(hll::decode_sparse(v) == "Z:16384");
}

TEST_CASE("sparse adds produce the bytes redis-server holds", "[hyperloglog]") {
  // GET after PFADD h a b c on redis-server 7.0.15.
  std::string v = hll_of({"a", "b", "c"});
  CHECK(v == unhex("48594c4c01000000000000000000008060f38050b1844bfb80425a"));
  CHECK(hll::decode_sparse(v) == "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  CHECK_FALSE(hll::cache_valid(v));
  CHECK(hll::add(v, "a", hll::kDefaultSparseMaxBytes) == hll::Update::kUnchanged);
  CHECK(count_of(v) == 3);
}

TEST_CASE("sparse runs split and neighbouring values merge", "[hyperloglog]") {
  std::string v = hll::make_empty();
  CHECK(hll::set_register(v, 1000, 2, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,1 Z:15383");
  CHECK(hll::set_register(v, 1001, 2, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,2 Z:15382");
  CHECK(hll::set_register(v, 1003, 2, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,2 z:1 v:2,1 Z:15380");
  // Filling the hole joins the three runs into one VAL of four registers.
  CHECK(hll::set_register(v, 1002, 2, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,4 Z:15380");
  // Raising one register of a VAL run splits it.
  CHECK(hll::set_register(v, 1001, 5, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,1 v:5,1 v:2,2 Z:15380");
  CHECK(hll::set_register(v, 1001, 4, 3000) == hll::Update::kUnchanged);
  // A short gap is a ZERO, a long one an XZERO.
  CHECK(hll::set_register(v, 1030, 1, 3000) == hll::Update::kChanged);
  CHECK(hll::decode_sparse(v) == "Z:1000 v:2,1 v:5,1 v:2,2 z:26 v:1,1 Z:15353");
  auto regs = registers(v);
  CHECK(regs[999] == 0);
  CHECK(regs[1000] == 2);
  CHECK(regs[1001] == 5);
  CHECK(regs[1003] == 2);
  CHECK(regs[1004] == 0);
  CHECK(regs[1030] == 1);
}

TEST_CASE("a sparse HLL turns dense for a register above 32 or past hll-sparse-max-bytes",
          "[hyperloglog]") {
  SECTION("a large register") {
    std::string v = hll_of({"a", "b"});
    auto before = registers(v);
    CHECK(hll::set_register(v, 77, 33, 3000) == hll::Update::kChanged);
    CHECK(hll::encoding_of(v) == hll::Encoding::kDense);
    CHECK(v.size() == hll::kDenseSize);
    before[77] = 33;
    CHECK(registers(v) == before);
  }
  SECTION("the size limit, header included") {
    std::string v = hll::make_empty();
    size_t i = 0;
    while (hll::encoding_of(v) == hll::Encoding::kSparse) {
      REQUIRE(v.size() <= 100);
      REQUIRE(hll::set_register(v, i, 1 + (i / 2) % 3, 100) == hll::Update::kChanged);
      i += 2;
    }
    CHECK(v.size() == hll::kDenseSize);
    auto regs = registers(v);
    for (size_t j = 0; j < i; ++j) {
      INFO(j);
      CHECK(regs[j] == (j % 2 == 0 ? 1 + (j / 2) % 3 : 0));
    }
  }
  SECTION("1000 elements stay sparse, 100000 are dense, counts as redis-server") {
    std::string small = hll_of(numbered("ele:", 0, 1000));
    CHECK(hll::encoding_of(small) == hll::Encoding::kSparse);
    CHECK(small.size() == 1896);
    CHECK(count_of(small) == 1002);
    std::string big = hll_of(numbered("ele:", 0, 100000));
    CHECK(hll::encoding_of(big) == hll::Encoding::kDense);
    CHECK(count_of(big) == 99778);
  }
}

TEST_CASE("sparse and dense values of the same elements hold the same registers and counts",
          "[hyperloglog]") {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> elements =
        numbered("r" + std::to_string(round) + ":", 0, static_cast<int>(rng() % 1500));
    std::string sparse = hll_of(elements);
    std::string dense = hll::make_empty();
    REQUIRE(hll::to_dense(dense));
    for (const auto& e : elements) {
      hll::add(dense, e, hll::kDefaultSparseMaxBytes);
    }
    CHECK(registers(sparse) == registers(dense));
    CHECK(count_of(sparse) == count_of(dense));
    std::string converted = sparse;
    REQUIRE(hll::to_dense(converted));
    CHECK(registers(converted) == registers(dense));
    // Conversion keeps the header's cached cardinality bytes.
    CHECK(converted.substr(5, 11) == sparse.substr(5, 11));
  }
}

TEST_CASE("merging takes the register-wise maximum", "[hyperloglog]") {
  std::string a = hll_of(numbered("x", 0, 3000));
  std::string b = hll_of(numbered("x", 2000, 5000));
  std::string all = hll_of(numbered("x", 0, 5000));
  hll::Registers max{};
  REQUIRE(hll::merge_into(a, max));
  REQUIRE(hll::merge_into(b, max));
  CHECK(max == registers(all));
  CHECK(hll::estimate(hll::histogram(max)) == count_of(all));
}

TEST_CASE("the cached cardinality is little endian with a stale bit in its last byte",
          "[hyperloglog]") {
  std::string v = hll::make_empty();
  hll::set_cached_cardinality(v, 0x0102030405060708ULL & 0x7fffffffffffffffULL);
  CHECK(hll::cache_valid(v));
  CHECK(static_cast<uint8_t>(v[8]) == 0x08);
  CHECK(static_cast<uint8_t>(v[15]) == 0x01);
  CHECK(hll::cached_cardinality(v) == 0x0102030405060708ULL);
  hll::invalidate_cache(v);
  CHECK_FALSE(hll::cache_valid(v));
  CHECK(static_cast<uint8_t>(v[15]) == 0x81);
}

TEST_CASE("shape checks and corrupt sparse values", "[hyperloglog]") {
  std::string v = hll_of({"a", "b", "c"});
  CHECK(hll::looks_valid(v));
  CHECK_FALSE(hll::looks_valid("HYLL"));
  std::string bad_magic = v;
  bad_magic[0] = '0';
  CHECK_FALSE(hll::looks_valid(bad_magic));
  std::string bad_encoding = v;
  bad_encoding[4] = 'x';
  CHECK_FALSE(hll::looks_valid(bad_encoding));
  std::string short_dense = v;
  short_dense[4] = 0;
  CHECK_FALSE(hll::looks_valid(short_dense));

  hll::Histogram h;
  hll::Registers r{};
  SECTION("bytes after the last register") {
    std::string tail = v + "hello";
    CHECK(hll::looks_valid(tail));
    CHECK_FALSE(hll::histogram(tail, h));
    CHECK_FALSE(hll::merge_into(tail, r));
    std::string copy = tail;
    CHECK_FALSE(hll::to_dense(copy));
    CHECK(copy == tail);
  }
  SECTION("too few registers") {
    std::string cut = v.substr(0, v.size() - 2);
    CHECK_FALSE(hll::histogram(cut, h));
    // A register past what the opcodes cover cannot be set.
    CHECK(hll::set_register(cut, 16383, 1, 3000) == hll::Update::kCorrupt);
  }
  SECTION("an XZERO cut off by the end") {
    std::string cut = v.substr(0, v.size() - 1);
    CHECK_FALSE(hll::histogram(cut, h));
    CHECK(hll::set_register(cut, 16383, 1, 3000) == hll::Update::kCorrupt);
    CHECK(hll::decode_sparse(cut) == "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:513");
  }
  SECTION("random corruption never reads out of bounds") {
    std::mt19937 rng(1);
    for (int i = 0; i < 2000; ++i) {
      std::string c = hll_of(numbered("f", 0, static_cast<int>(rng() % 2000)));
      for (int k = 0; k < 3; ++k) {
        c[rng() % c.size()] = static_cast<char>(rng());
      }
      if (!hll::looks_valid(c)) {
        continue;
      }
      (void)hll::histogram(c, h);
      (void)hll::merge_into(c, r);
      (void)hll::add(c, "zz" + std::to_string(i), 3000);
      (void)hll::decode_sparse(c);
    }
    SUCCEED();
  }
}

TEST_CASE("the estimate is 0 when empty and within 2% at 100k elements", "[hyperloglog]") {
  hll::Histogram empty{};
  empty[0] = static_cast<int>(hll::kRegisters);
  CHECK(hll::estimate(empty) == 0);
  for (int seed = 0; seed < 3; ++seed) {
    std::string v = hll::make_empty();
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
      hll::add(v, "s" + std::to_string(seed) + "-" + std::to_string(i), 3000);
    }
    double err = std::abs(static_cast<double>(count_of(v)) - n) / n;
    INFO("seed " << seed << " error " << err);
    CHECK(err < 0.02);
  }
  // Every register at the run length 51 (hash bits exhausted) is the largest finite count.
  hll::Histogram full{};
  full[51] = static_cast<int>(hll::kRegisters);
  CHECK(hll::estimate(full) > 0);
}

TEST_CASE("the self test passes", "[hyperloglog]") {
  CHECK(hll::self_test(hll::kDefaultSparseMaxBytes, 12345) == "");
}
