// Listpack and intset readers: payloads captured from redis-server 7.0 DUMPs, every entry
// encoding built by hand, and malformed input (truncated, wrong lengths, bad encodings)
// refused without reading past the end.
#include "hotkv/persist/packed_containers.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/hex.hpp"

using hotkv::intset_members;
using hotkv::listpack_entries;

using hotkv::test::unhex;

namespace {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

// The back-length of an entry: its size in 7-bit groups, read from the end.
void put_backlen(std::string& out, uint64_t n) {
  std::vector<uint8_t> groups;
  do {
    groups.push_back(n & 0x7f);
    n >>= 7;
  } while (n != 0);
  // Stored most significant group first; every byte but the last read (the first stored)
  // carries the continuation bit.
  for (size_t i = groups.size(); i-- > 0;) {
    uint8_t b = groups[i];
    if (i != groups.size() - 1) {
      b |= 0x80;
    }
    out.push_back(static_cast<char>(b));
  }
}

// A listpack of raw entries (encoding + data each), with header and terminator.
std::string make_listpack(const std::vector<std::string>& entries, int count = -1) {
  std::string body;
  for (const auto& e : entries) {
    body += e;
    put_backlen(body, e.size());
  }
  std::string out;
  put_le(out, 6 + body.size() + 1, 4);
  put_le(out, count < 0 ? entries.size() : static_cast<uint64_t>(count), 2);
  out += body;
  out.push_back(static_cast<char>(0xFF));
  return out;
}

std::string int_entry(uint8_t tag, int64_t v, int bytes) {
  std::string e(1, static_cast<char>(tag));
  put_le(e, static_cast<uint64_t>(v), bytes);
  return e;
}

}  // namespace

TEST_CASE("listpacks from redis-server's DUMPs read back their entries", "[persist]") {
  // HSET h a 1 b hello (the listpack inside a HASH_LISTPACK payload).
  std::vector<std::string> out;
  REQUIRE(listpack_entries(unhex("16000000040081610201018162028568656c6c6f06ff"), out));
  CHECK(out == std::vector<std::string>{"a", "1", "b", "hello"});
  // RPUSH l x 7 -200 (one packed quicklist node): -200 is a 13-bit integer.
  out.clear();
  REQUIRE(listpack_entries(unhex("0f00000003008178020701df3802ff"), out));
  CHECK(out == std::vector<std::string>{"x", "7", "-200"});
}

TEST_CASE("listpack entries of every encoding", "[persist]") {
  std::string s63(63, 'a');
  std::string s4000(4000, 'b');
  std::string s70000(70000, 'c');
  std::string e12 = std::string(1, static_cast<char>(0xE0 | (4000 >> 8))) +
                    static_cast<char>(4000 & 0xff) + s4000;
  std::string e32(1, static_cast<char>(0xF0));
  put_le(e32, s70000.size(), 4);
  e32 += s70000;
  std::vector<std::string> raw = {
      std::string(1, static_cast<char>(127)),                                 // 7-bit uint
      std::string(1, static_cast<char>(0x80 | 63)) + s63,                     // 6-bit string
      std::string(1, static_cast<char>(0xC0 | 0x10)) + static_cast<char>(0),  // 13-bit: -4096
      e12,
      e32,
      int_entry(0xF1, -32768, 2),
      int_entry(0xF2, -8388608, 3),
      int_entry(0xF3, 2147483647, 4),
      int_entry(0xF4, INT64_MIN, 8),
  };
  std::vector<std::string> out;
  REQUIRE(listpack_entries(make_listpack(raw), out));
  CHECK(out == std::vector<std::string>{"127", s63, "-4096", s4000, s70000, "-32768", "-8388608",
                                        "2147483647", "-9223372036854775808"});
  // 65535 in the count field means "count unknown".
  out.clear();
  CHECK(listpack_entries(make_listpack(raw, 65535), out));
}

TEST_CASE("malformed listpacks are refused", "[persist]") {
  std::string good = make_listpack({std::string(1, static_cast<char>(0x83)) + "abc"});
  std::vector<std::string> out;
  REQUIRE(listpack_entries(good, out));
  for (size_t cut = 0; cut < good.size(); ++cut) {
    out.clear();
    std::string shorter = good.substr(0, cut);
    CHECK_FALSE(listpack_entries(shorter, out));  // the header's length no longer matches
  }
  std::string wrong_count = make_listpack({std::string(1, static_cast<char>(5))}, 2);
  CHECK_FALSE(listpack_entries(wrong_count, out));
  std::string unused_tag = make_listpack({std::string(1, static_cast<char>(0xF7))});
  CHECK_FALSE(listpack_entries(unused_tag, out));
  // A string longer than the listpack itself.
  std::string long_string = make_listpack({std::string(1, static_cast<char>(0x80 | 60)) + "ab"});
  CHECK_FALSE(listpack_entries(long_string, out));
  // No terminator.
  std::string no_end = good;
  no_end.back() = 0x01;
  CHECK_FALSE(listpack_entries(no_end, out));
}

TEST_CASE("intsets read back their members", "[persist]") {
  // SADD s 1 2 -3 on redis-server: 16-bit members, ascending.
  std::vector<int64_t> out;
  REQUIRE(intset_members(unhex("0200000003000000fdff01000200"), out));
  CHECK(out == std::vector<int64_t>{-3, 1, 2});
  std::string wide;
  put_le(wide, 8, 4);
  put_le(wide, 1, 4);
  put_le(wide, static_cast<uint64_t>(INT64_MIN), 8);
  out.clear();
  REQUIRE(intset_members(wide, out));
  CHECK(out == std::vector<int64_t>{INT64_MIN});
  CHECK_FALSE(intset_members(unhex("0300000001000000ffffff"), out));  // width 3
  CHECK_FALSE(intset_members(unhex("020000000200000001"), out));      // short
  CHECK_FALSE(intset_members("", out));
}

TEST_CASE("the listpack writer matches redis-server's bytes", "[persist]") {
  hotkv::ListpackWriter a;
  for (const char* e : {"a", "1", "b", "hello"}) {
    a.add(e);
  }
  CHECK(a.finish() == unhex("16000000040081610201018162028568656c6c6f06ff"));
  hotkv::ListpackWriter b;
  b.add("x");
  b.add_integer(7);
  b.add("-200");
  CHECK(b.finish() == unhex("0f00000003008178020701df3802ff"));
}

TEST_CASE("the listpack writer's every encoding reads back", "[persist]") {
  const std::vector<int64_t> ints = {0,
                                     127,
                                     128,
                                     -1,
                                     4095,
                                     -4096,
                                     4096,
                                     -4097,
                                     32767,
                                     -32768,
                                     32768,
                                     8388607,
                                     -8388608,
                                     8388608,
                                     INT32_MAX,
                                     INT32_MIN,
                                     int64_t{INT32_MAX} + 1,
                                     INT64_MAX,
                                     INT64_MIN};
  // Strings around each length-encoding bound, and entries whose back-length needs 2 and 3
  // bytes (16382 and 16383 bytes of entry, where listpack.c's bound falls).
  const std::vector<size_t> lengths = {0, 1, 63, 64, 4095, 4096, 16382 - 5, 16383 - 5, 70000};
  hotkv::ListpackWriter w;
  std::vector<std::string> want;
  for (int64_t v : ints) {
    w.add_integer(v);
    want.push_back(std::to_string(v));
  }
  for (size_t n : lengths) {
    want.push_back(std::string(n, 's'));
    w.add(want.back());
  }
  for (const char* s : {"007", "+1", "-0", "1.5", "9223372036854775808", " 1"}) {
    want.emplace_back(s);  // not canonical integers: kept as strings
    w.add(s);
  }
  CHECK(w.count() == want.size());
  std::vector<std::string> out;
  REQUIRE(listpack_entries(w.finish(), out));
  CHECK(out == want);
}
