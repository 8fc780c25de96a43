// Unit tests for the RDB building blocks: lengths and strings round-trip at every width,
// the integer and LZF encodings redis-server writes are read, and a sealed payload refuses a
// changed byte or a newer version.
#include "hotkv/persist/rdb_format.hpp"

#include <string>

#include <catch2/catch.hpp>

using hotkv::RdbReader;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("RDB lengths and strings round-trip", "[rdb]") {
  std::string out;
  for (uint64_t n : {0ULL, 63ULL, 64ULL, 16383ULL, 16384ULL, 4294967295ULL, 4294967296ULL}) {
    hotkv::rdb_append_length(out, n);
  }
  std::string big(70000, 'x');
  hotkv::rdb_append_string(out, "");
  hotkv::rdb_append_string(out, "stock:sku-1");
  hotkv::rdb_append_string(out, big);
  RdbReader r(out);
  for (uint64_t n : {0ULL, 63ULL, 64ULL, 16383ULL, 16384ULL, 4294967295ULL, 4294967296ULL}) {
    uint64_t got = 1;
    REQUIRE(r.read_length(got));
    CHECK(got == n);
  }
  std::string s;
  REQUIRE(r.read_string(s));
  CHECK(s.empty());
  REQUIRE(r.read_string(s));
  CHECK(s == "stock:sku-1");
  REQUIRE(r.read_string(s));
  CHECK(s == big);
  CHECK(r.at_end());
  CHECK_FALSE(r.read_string(s));
}

TEST_CASE("RDB strings in redis-server's integer and LZF encodings are read", "[rdb]") {
  // int8 -5, int16 1000, int32 -100000 (little endian, as Redis writes them).
  // (The reader keeps a view: the bytes must outlive it.)
  std::string int_bytes = from_hex(
      "c0fb"
      "c1e803"
      "c26079feff");
  RdbReader ints(int_bytes);
  std::string s;
  REQUIRE(ints.read_string(s));
  CHECK(s == "-5");
  REQUIRE(ints.read_string(s));
  CHECK(s == "1000");
  REQUIRE(ints.read_string(s));
  CHECK(s == "-100000");
  // A truncated LZF string and an unknown encoding are refused, not read past the end.
  std::string cut_bytes = from_hex("c3401040");
  RdbReader cut(cut_bytes);
  CHECK_FALSE(cut.read_string(s));
  std::string unknown_bytes = from_hex("c4");
  RdbReader unknown(unknown_bytes);
  CHECK_FALSE(unknown.read_string(s));
}

TEST_CASE("A FUNCTION DUMP payload from redis-server 7.0 opens and reads", "[rdb]") {
  // redis-server 7.0.15's FUNCTION DUMP of libraries `a` (short: plain) and `sale` (longer
  // than 20 bytes: LZF-compressed).
  std::string payload = from_hex(
      "f5404223216c7561206e616d653d610a72656469732e72656769737465725f66756e6374696f6e28276627"
      "2c2066756e6374696f6e28292072657475726e203120656e6429f5c34068406f1f23216c7561206e616d65"
      "3d73616c650a72656469732e72656769737465725f6612756e6374696f6e282772657365727665272c20e0"
      "0013116b6579732c2061726773292072657475726e2006403e0963616c6c282744454352202e4025085b31"
      "5d2920656e64290a00fda57c2da633881e");
  std::string_view body;
  REQUIRE(hotkv::rdb_open_payload(payload, body));
  RdbReader r(body);
  uint8_t op = 0;
  std::string code;
  REQUIRE(r.read_byte(op));
  CHECK(op == hotkv::kRdbOpcodeFunction);
  REQUIRE(r.read_string(code));
  CHECK(code == "#!lua name=a\nredis.register_function('f', function() return 1 end)");
  REQUIRE(r.read_byte(op));
  REQUIRE(r.read_string(code));
  CHECK(code ==
        "#!lua name=sale\nredis.register_function('reserve', function(keys, args) return "
        "redis.call('DECR', keys[1]) end)");
  CHECK(r.at_end());
}

TEST_CASE("A sealed payload refuses a changed byte and a newer version", "[rdb]") {
  std::string payload;
  hotkv::rdb_append_string(payload, "hello");
  hotkv::rdb_seal_payload(payload);
  std::string_view body;
  REQUIRE(hotkv::rdb_open_payload(payload, body));
  CHECK(body.size() == 6);
  std::string changed = payload;
  changed[2] ^= 1;
  CHECK_FALSE(hotkv::rdb_open_payload(changed, body));
  std::string newer;
  hotkv::rdb_append_string(newer, "hello");
  newer.push_back(static_cast<char>(hotkv::kRdbVersion + 1));
  newer.push_back(0);
  newer.append(8, '\0');
  CHECK_FALSE(hotkv::rdb_open_payload(newer, body));
  CHECK_FALSE(hotkv::rdb_open_payload("bad_payload", body));
  CHECK_FALSE(hotkv::rdb_open_payload("short", body));
}
