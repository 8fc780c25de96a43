// Unit tests for crc64 (Jones): the check value Redis's own crc64 test uses, and continuing a
// CRC over pieces equals the CRC of the whole.
#include "hotkv/util/crc64.hpp"

#include <string>

#include <catch2/catch.hpp>

TEST_CASE("crc64 is Redis's Jones variant", "[crc64]") {
  CHECK(hotkv::crc64(0, "123456789") == 0xe9c6d914c4b8d9caULL);
  CHECK(hotkv::crc64(0, "") == 0);
  std::string text = "the stock you have is sold exactly once";
  CHECK(hotkv::crc64(hotkv::crc64(0, text.substr(0, 11)), text.substr(11)) ==
        hotkv::crc64(0, text));
}
