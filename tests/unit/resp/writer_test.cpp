// Tests for ReplyWriter and format_double: the exact bytes of every reply type in RESP2 and RESP3,
// and the double texts Redis 7 sends, checked against printf("%.17g") for ordinary values.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "hotkv/resp/writer.hpp"

namespace {

using hotkv::format_double;
using hotkv::ReplyWriter;

// Runs `write` on a fresh writer for `proto` and returns the bytes it appended.
template <typename Fn>
std::string encode(int proto, Fn write) {
  std::string out;
  ReplyWriter w(out, proto);
  write(w);
  return out;
}

}  // namespace

TEST_CASE("Replies that are the same in RESP2 and RESP3 encode identically", "[resp]") {
  const int proto = GENERATE(2, 3);
  INFO("RESP" << proto);
  SECTION("simple strings and OK") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.simple("PONG"); }) == "+PONG\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.ok(); }) == "+OK\r\n");
  }
  SECTION("errors, with CR and LF flattened to spaces") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.error("ERR unknown command"); }) ==
            "-ERR unknown command\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.error("ERR a\r\nb\nc"); }) == "-ERR a  b c\r\n");
  }
  SECTION("integers across the whole range") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.integer(0); }) == ":0\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.integer(-42); }) == ":-42\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::min()); }) ==
            ":-9223372036854775808\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.integer(std::numeric_limits<int64_t>::max()); }) ==
            ":9223372036854775807\r\n");
  }
  SECTION("bulk strings, including empty and binary ones") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.bulk("value"); }) == "$5\r\nvalue\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.bulk(""); }) == "$0\r\n\r\n");
    const std::string binary("a\r\n\0b", 5);
    REQUIRE(encode(proto, [&](ReplyWriter& w) { w.bulk(binary); }) == "$5\r\n" + binary + "\r\n");
  }
  SECTION("integers sent as bulk strings") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.bulk_int(123); }) == "$3\r\n123\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.bulk_int(-1); }) == "$2\r\n-1\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) {
              w.bulk_int(std::numeric_limits<int64_t>::min());
            }) == "$20\r\n-9223372036854775808\r\n");
  }
  SECTION("arrays") {
    REQUIRE(encode(proto, [](ReplyWriter& w) { w.array(0); }) == "*0\r\n");
    REQUIRE(encode(proto, [](ReplyWriter& w) {
              w.array(2);
              w.bulk("a");
              w.integer(1);
            }) == "*2\r\n$1\r\na\r\n:1\r\n");
  }
}

TEST_CASE("RESP3-only types fall back to what Redis sends RESP2 clients", "[resp]") {
  struct Expect {
    const char* name;
    void (*write)(ReplyWriter&);
    const char* resp2;
    const char* resp3;
  };
  const Expect cases[] = {
      {"null", [](ReplyWriter& w) { w.null(); }, "$-1\r\n", "_\r\n"},
      {"null array", [](ReplyWriter& w) { w.null_array(); }, "*-1\r\n", "_\r\n"},
      {"map", [](ReplyWriter& w) { w.map(2); }, "*4\r\n", "%2\r\n"},
      {"empty map", [](ReplyWriter& w) { w.map(0); }, "*0\r\n", "%0\r\n"},
      {"set", [](ReplyWriter& w) { w.set(3); }, "*3\r\n", "~3\r\n"},
      {"push", [](ReplyWriter& w) { w.push(3); }, "*3\r\n", ">3\r\n"},
      {"double", [](ReplyWriter& w) { w.dbl(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n"},
      {"integral double", [](ReplyWriter& w) { w.dbl(10); }, "$2\r\n10\r\n", ",10\r\n"},
      {"infinity", [](ReplyWriter& w) { w.dbl(HUGE_VAL); }, "$3\r\ninf\r\n", ",inf\r\n"},
      {"negative infinity", [](ReplyWriter& w) { w.dbl(-HUGE_VAL); }, "$4\r\n-inf\r\n",
       ",-inf\r\n"},
      {"true", [](ReplyWriter& w) { w.boolean(true); }, ":1\r\n", "#t\r\n"},
      {"false", [](ReplyWriter& w) { w.boolean(false); }, ":0\r\n", "#f\r\n"},
      {"verbatim", [](ReplyWriter& w) { w.verbatim("hi"); }, "$2\r\nhi\r\n", "=6\r\ntxt:hi\r\n"},
      {"verbatim markdown", [](ReplyWriter& w) { w.verbatim("# x\r\n", "mkd"); },
       "$5\r\n# x\r\n\r\n", "=9\r\nmkd:# x\r\n\r\n"},
  };
  for (const Expect& e : cases) {
    INFO(e.name);
    REQUIRE(encode(2, e.write) == e.resp2);
    REQUIRE(encode(3, e.write) == e.resp3);
  }
}

TEST_CASE("The writer appends to the caller's buffer and reports its protocol", "[resp]") {
  std::string out = "+EARLIER\r\n";
  ReplyWriter w(out, 3);
  REQUIRE(w.proto() == 3);
  REQUIRE(&w.buffer() == &out);
  w.ok();
  REQUIRE(out == "+EARLIER\r\n+OK\r\n");
  std::string other;
  REQUIRE(ReplyWriter(other, 2).proto() == 2);
}

TEST_CASE("Doubles are formatted as Redis 7 formats them", "[resp]") {
  SECTION("values with a known Redis text") {
    REQUIRE(format_double(1.5) == "1.5");
    REQUIRE(format_double(10) == "10");
    REQUIRE(format_double(-2.5) == "-2.5");
    REQUIRE(format_double(0.0) == "0");
    REQUIRE(format_double(-0.0) == "-0");
    REQUIRE(format_double(0.1) == "0.10000000000000001");
    REQUIRE(format_double(1e300) == "1.0000000000000001e+300");
    REQUIRE(format_double(1e17) == "1e+17");
    REQUIRE(format_double(HUGE_VAL) == "inf");
    REQUIRE(format_double(-HUGE_VAL) == "-inf");
    REQUIRE(format_double(std::nan("")) == "nan");
    REQUIRE(format_double(-std::nan("")) == "nan");
  }
  SECTION("ordinary values match printf %.17g") {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<uint64_t> bits;
    char expected[64];
    int checked = 0;
    while (checked < 2000) {
      const uint64_t raw = bits(rng);
      double v = 0;
      static_assert(sizeof(v) == sizeof(raw));
      std::memcpy(&v, &raw, sizeof(v));
      if (!std::isfinite(v) || v == 0) {
        continue;
      }
      std::snprintf(expected, sizeof(expected), "%.17g", v);
      INFO("bits " << raw);
      REQUIRE(format_double(v) == expected);
      ++checked;
    }
  }
  SECTION("the RESP3 double reply carries the same text") {
    REQUIRE(encode(3, [](ReplyWriter& w) { w.dbl(0.1); }) == ",0.10000000000000001\r\n");
    REQUIRE(encode(2, [](ReplyWriter& w) { w.dbl(0.1); }) == "$19\r\n0.10000000000000001\r\n");
    REQUIRE(encode(3, [](ReplyWriter& w) { w.dbl(std::nan("")); }) == ",nan\r\n");
  }
}
