// Unit tests for crc16: the published CRC-16/XMODEM check value plus a bitwise reference
// implementation compared on many inputs, so the table cannot drift from the definition.
#include "hotkv/util/crc16.hpp"

#include <cstdint>
#include <random>
#include <string>

#include <catch2/catch.hpp>

namespace {

// The textbook bit-at-a-time definition, deliberately independent of the table.
uint16_t crc16_bitwise(std::string_view data) {
  uint16_t crc = 0;
  for (char c : data) {
    crc ^= static_cast<uint16_t>(static_cast<uint8_t>(c) << 8);
    for (int bit = 0; bit < 8; ++bit) {
      if ((crc & 0x8000) != 0) {
        crc = static_cast<uint16_t>((crc << 1) ^ 0x1021);
      } else {
        crc = static_cast<uint16_t>(crc << 1);
      }
    }
  }
  return crc;
}

}  // namespace

TEST_CASE("crc16 matches the published CRC-16/XMODEM check value", "[crc16]") {
  REQUIRE(hotkv::crc16("123456789") == 0x31C3);
}

TEST_CASE("crc16 of empty input is zero", "[crc16]") { REQUIRE(hotkv::crc16("") == 0); }

TEST_CASE("crc16 agrees with the bitwise definition on random inputs", "[crc16]") {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> len_dist(0, 64);
  std::uniform_int_distribution<int> byte_dist(0, 255);
  for (int i = 0; i < 2000; ++i) {
    std::string s(static_cast<size_t>(len_dist(rng)), '\0');
    for (auto& c : s) {
      c = static_cast<char>(byte_dist(rng));
    }
    REQUIRE(hotkv::crc16(s) == crc16_bitwise(s));
  }
}

TEST_CASE("crc16 handles bytes with the high bit set and embedded NULs", "[crc16]") {
  const std::string s("\xff\x00\x80\x7f", 4);
  REQUIRE(hotkv::crc16(s) == crc16_bitwise(s));
}
