// Unit tests for the bitmap helpers: counting and searching against a bit-at-a-time reference
// on random data and every range, field reads and writes at unaligned offsets, BITFIELD's
// overflow rules (WRAP, SAT, FAIL) at the edges of each width, and BITOP's padding.
#include "hotkv/types/bitmap.hpp"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace bm = hotkv::bitmap;

namespace {

bool ref_bit(const std::string& s, uint64_t i) {
  return ((static_cast<uint8_t>(s[i / 8]) >> (7 - i % 8)) & 1) != 0;
}

std::string random_bytes(std::mt19937& rng, size_t n, int bias) {
  std::string s(n, '\0');
  for (auto& c : s) {
    // bias 0: random bytes; 1: mostly 0x00; 2: mostly 0xFF (long runs for the word skips).
    uint32_t r = rng();
    if (bias == 1 && r % 8 != 0) {
      c = 0;
    } else if (bias == 2 && r % 8 != 0) {
      c = static_cast<char>(0xFF);
    } else {
      c = static_cast<char>(r & 0xFF);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("bit 0 is the most significant bit of the first byte", "[bitmap]") {
  std::string s = "\x80\x01";
  REQUIRE(bm::get_bit(s, 0));
  REQUIRE_FALSE(bm::get_bit(s, 1));
  REQUIRE(bm::get_bit(s, 15));
  REQUIRE_FALSE(bm::get_bit(s, 16));  // past the end reads 0
  REQUIRE_FALSE(bm::get_bit(s, 1000000));
}

TEST_CASE("popcount and count_range agree with counting bit by bit", "[bitmap]") {
  std::mt19937 rng(7);
  for (int bias = 0; bias < 3; ++bias) {
    for (size_t n : {1, 2, 7, 8, 9, 17, 40}) {
      std::string s = random_bytes(rng, n, bias);
      uint64_t total = 0;
      for (uint64_t i = 0; i < 8 * n; ++i) {
        total += ref_bit(s, i) ? 1 : 0;
      }
      REQUIRE(bm::popcount(s) == total);
      REQUIRE(bm::popcount_portable(s) == total);
      for (uint64_t first = 0; first < 8 * n; first += 3) {
        uint64_t expected = 0;
        for (uint64_t last = first; last < 8 * n; ++last) {
          expected += ref_bit(s, last) ? 1 : 0;
          REQUIRE(bm::count_range(s, first, last) == expected);
        }
      }
    }
  }
  REQUIRE(bm::popcount("") == 0);
}

TEST_CASE("find_bit finds the first matching bit in every range", "[bitmap]") {
  std::mt19937 rng(11);
  for (int bias = 0; bias < 3; ++bias) {
    for (size_t n : {1, 3, 8, 16, 33}) {
      std::string s = random_bytes(rng, n, bias);
      for (int bit = 0; bit < 2; ++bit) {
        for (uint64_t first = 0; first < 8 * n; first += 5) {
          for (uint64_t last = first; last < 8 * n; last += 3) {
            int64_t expected = -1;
            for (uint64_t i = first; i <= last; ++i) {
              if (ref_bit(s, i) == (bit == 1)) {
                expected = static_cast<int64_t>(i);
                break;
              }
            }
            REQUIRE(bm::find_bit(s, bit == 1, first, last) == expected);
          }
        }
      }
    }
  }
}

TEST_CASE("find_bit skips long runs of the other value", "[bitmap]") {
  std::string zeros(100, '\0');
  zeros[77] = 0x10;
  REQUIRE(bm::find_bit(zeros, true, 0, 799) == 77 * 8 + 3);
  REQUIRE(bm::find_bit(zeros, true, 0, 77 * 8 + 2) == -1);
  std::string ones(100, static_cast<char>(0xFF));
  REQUIRE(bm::find_bit(ones, false, 0, 799) == -1);
  ones[98] = static_cast<char>(0xFE);
  REQUIRE(bm::find_bit(ones, false, 9, 799) == 98 * 8 + 7);
}

TEST_CASE("fields read and write at unaligned offsets", "[bitmap]") {
  std::string s(16, '\0');
  std::span<char> bytes(s.data(), s.size());
  SECTION("an unsigned field round-trips and leaves its neighbours alone") {
    bm::set_field(bytes, 0, 8, 0xFF);
    bm::set_field(bytes, 13, 5, 0x15);
    REQUIRE(bm::get_unsigned(s, 13, 5) == 0x15);
    REQUIRE(bm::get_unsigned(s, 0, 8) == 0xFF);
    REQUIRE(bm::get_unsigned(s, 8, 5) == 0);
    REQUIRE(bm::get_unsigned(s, 18, 6) == 0);
  }
  SECTION("signed fields sign-extend from their top bit") {
    bm::set_field(bytes, 3, 4, 0xF);  // -1 as i4
    REQUIRE(bm::get_signed(s, 3, 4) == -1);
    REQUIRE(bm::get_unsigned(s, 3, 4) == 15);
    bm::set_field(bytes, 20, 64, static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
    REQUIRE(bm::get_signed(s, 20, 64) == std::numeric_limits<int64_t>::min());
  }
  SECTION("reads past the end are zero-padded") {
    s = "\xFF";
    REQUIRE(bm::get_unsigned(s, 4, 8) == 0xF0);
    REQUIRE(bm::get_signed(s, 100, 16) == 0);
  }
  SECTION("field 0 reads the first byte as written") {
    s = "A";
    REQUIRE(bm::get_unsigned(s, 0, 8) == 'A');
  }
}

TEST_CASE("unsigned fields overflow by WRAP, SAT and FAIL", "[bitmap]") {
  using O = bm::Overflow;
  REQUIRE(bm::add_unsigned(250, 5, 8, O::kFail) == 255u);
  REQUIRE(bm::add_unsigned(250, 10, 8, O::kWrap) == 4u);
  REQUIRE(bm::add_unsigned(250, 10, 8, O::kSat) == 255u);
  REQUIRE_FALSE(bm::add_unsigned(250, 10, 8, O::kFail).has_value());
  REQUIRE(bm::add_unsigned(3, -5, 8, O::kWrap) == 254u);
  REQUIRE(bm::add_unsigned(3, -5, 8, O::kSat) == 0u);
  REQUIRE_FALSE(bm::add_unsigned(3, -5, 8, O::kFail).has_value());
  // BITFIELD SET u8 with -1: the value is above the range, so SAT gives the maximum.
  REQUIRE(bm::add_unsigned(static_cast<uint64_t>(-1), 0, 8, O::kSat) == 255u);
  REQUIRE(bm::add_unsigned(static_cast<uint64_t>(-1), 0, 8, O::kWrap) == 255u);
  REQUIRE(bm::add_unsigned(0, std::numeric_limits<int64_t>::max(), 63, O::kFail) ==
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  REQUIRE(bm::add_unsigned(1, std::numeric_limits<int64_t>::max(), 63, O::kWrap) == 0u);
  REQUIRE(bm::add_unsigned(1, 1, 1, O::kWrap) == 0u);
}

TEST_CASE("signed fields overflow by WRAP, SAT and FAIL", "[bitmap]") {
  using O = bm::Overflow;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  REQUIRE(bm::add_signed(120, 7, 8, O::kFail) == 127);
  REQUIRE(bm::add_signed(120, 10, 8, O::kWrap) == -126);
  REQUIRE(bm::add_signed(120, 10, 8, O::kSat) == 127);
  REQUIRE_FALSE(bm::add_signed(120, 10, 8, O::kFail).has_value());
  REQUIRE(bm::add_signed(-120, -10, 8, O::kWrap) == 126);
  REQUIRE(bm::add_signed(-120, -10, 8, O::kSat) == -128);
  REQUIRE(bm::add_signed(kMax, 1, 64, O::kWrap) == kMin);
  REQUIRE(bm::add_signed(kMax, 1, 64, O::kSat) == kMax);
  REQUIRE(bm::add_signed(kMin, -1, 64, O::kSat) == kMin);
  REQUIRE_FALSE(bm::add_signed(kMin, -1, 64, O::kFail).has_value());
  REQUIRE(bm::add_signed(kMin, kMax, 64, O::kFail) == -1);
  // SET of an out-of-range value (incr 0) wraps to the low bits.
  REQUIRE(bm::add_signed(255, 0, 8, O::kWrap) == -1);
  REQUIRE(bm::add_signed(1, 0, 1, O::kWrap) == -1);
  REQUIRE(bm::add_signed(-1, 0, 1, O::kFail) == -1);
}

TEST_CASE("bit_op pads shorter sources with zero bytes", "[bitmap]") {
  using Op = bm::BitOp;
  std::vector<std::string_view> two = {std::string_view("\xFF\x0F", 2), std::string_view("\x0F")};
  REQUIRE(bm::bit_op(Op::kAnd, two) == std::string("\x0F\x00", 2));
  REQUIRE(bm::bit_op(Op::kOr, two) == std::string("\xFF\x0F", 2));
  REQUIRE(bm::bit_op(Op::kXor, two) == std::string("\xF0\x0F", 2));
  std::vector<std::string_view> one = {std::string_view("\x0F\xFF", 2)};
  REQUIRE(bm::bit_op(Op::kNot, one) == std::string("\xF0\x00", 2));
  std::vector<std::string_view> empty = {std::string_view(), std::string_view()};
  REQUIRE(bm::bit_op(Op::kOr, empty).empty());
  std::vector<std::string_view> missing_first = {std::string_view(), std::string_view("ab")};
  REQUIRE(bm::bit_op(Op::kOr, missing_first) == "ab");
  REQUIRE(bm::bit_op(Op::kAnd, missing_first) == std::string("\0\0", 2));
}
