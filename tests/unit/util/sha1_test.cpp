// SHA-1 against the FIPS 180 examples and Redis's script ids (redis-cli SCRIPT LOAD).
#include "hotkv/util/sha1.hpp"

#include <string>

#include <catch2/catch.hpp>

using hotkv::sha1_hex;

TEST_CASE("SHA-1 matches the standard test vectors", "[sha1]") {
  CHECK(sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(sha1_hex(std::string(1000000, 'a')) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST_CASE("SHA-1 handles every padding boundary", "[sha1]") {
  // 55 bytes fits one padded block, 56 needs two; 64 is exactly one block before padding.
  CHECK(sha1_hex(std::string(55, 'x')).size() == 40);
  CHECK(sha1_hex(std::string(56, 'x')) != sha1_hex(std::string(55, 'x')));
  CHECK(sha1_hex("The quick brown fox jumps over the lazy dog") ==
        "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST_CASE("Script ids are Redis's", "[sha1]") {
  // redis-cli SCRIPT LOAD "return 1"
  CHECK(sha1_hex("return 1") == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}
