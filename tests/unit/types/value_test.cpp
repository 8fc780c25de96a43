// Unit tests for Value's compact representation: 16 bytes, strings inline up to 8 bytes or in
// one heap block, in-place (raw) strings, deadlines boxed only when present, clone, and the
// access clock's "stamped" flag.
#include "hotkv/types/value.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "hotkv/types/set.hpp"

using namespace hotkv;

TEST_CASE("Value keeps strings in every length and encoding", "[value]") {
  std::string scratch;
  for (size_t len : {0, 1, 7, 8, 9, 44, 45, 1000}) {
    const std::string s(len, 'x');
    Value v = Value::from_string(s);
    REQUIRE(v.type() == ValueType::kString);
    REQUIRE(v.str(scratch) == s);
    REQUIRE(v.str_len() == len);
    REQUIRE(std::string(v.encoding_name()) == (len <= 44 ? "embstr" : "raw"));
  }
  Value n = Value::from_string("12345");
  REQUIRE(n.is_int());
  REQUIRE(n.int_value() == 12345);
  REQUIRE(n.str(scratch) == "12345");
  REQUIRE(std::string(n.encoding_name()) == "int");
  REQUIRE(std::string(Value::from_text("11").encoding_name()) == "embstr");
}

TEST_CASE("mutable_raw converts to a growable raw string", "[value]") {
  std::string scratch;
  Value v = Value::from_int(42);
  v.mutable_raw() += "abc";
  REQUIRE(v.str(scratch) == "42abc");
  REQUIRE(std::string(v.encoding_name()) == "raw");
  v.mutable_raw().append(100, 'z');
  REQUIRE(v.str_len() == 105);
  v.set_text("short");
  REQUIRE(std::string(v.encoding_name()) == "embstr");
  // set_text may be given a view of the value's own bytes.
  Value w = Value::from_text("a longer text than eight bytes");
  w.set_text(w.str(scratch).substr(2, 6));
  REQUIRE(w.str(scratch) == "longer");
}

TEST_CASE("deadlines are boxed and unboxed without losing the payload", "[value]") {
  std::string scratch;
  Value v = Value::from_text("inline");
  REQUIRE_FALSE(v.has_expiry());
  REQUIRE(v.expire_at_ms() == kNoExpiry);
  v.set_expire_raw(1000);
  REQUIRE(v.has_expiry());
  REQUIRE(v.expire_at_ms() == 1000);
  REQUIRE(v.str(scratch) == "inline");
  v.set_expire_raw(2000);
  REQUIRE(v.expire_at_ms() == 2000);
  v.set_string("now a much longer string value");
  REQUIRE(v.expire_at_ms() == 2000);
  REQUIRE(v.str(scratch) == "now a much longer string value");
  v.set_int(-7);
  REQUIRE(v.int_value() == -7);
  v.set_expire_raw(kNoExpiry);
  REQUIRE_FALSE(v.has_expiry());
  REQUIRE(v.int_value() == -7);
}

TEST_CASE("moves, clone and aggregates", "[value]") {
  std::string scratch;
  Value a = Value::from_text("a text longer than inline");
  a.set_expire_raw(5000);
  a.set_access_clock(123);
  Value b = std::move(a);
  REQUIRE(b.str(scratch) == "a text longer than inline");
  REQUIRE(b.expire_at_ms() == 5000);
  REQUIRE(b.access_clock() == 123);
  REQUIRE_FALSE(a.has_expiry());  // NOLINT: moved-from is an empty string
  REQUIRE(a.str(scratch).empty());
  Value c = b.clone();
  REQUIRE(c.str(scratch) == b.str(scratch));
  REQUIRE(c.expire_at_ms() == 5000);
  REQUIRE_FALSE(c.has_access_clock());  // a copy is a new object
  REQUIRE(b.has_access_clock());

  auto set = std::make_unique<Set>();
  Value s = Value::from_set(std::move(set));
  REQUIRE(s.type() == ValueType::kSet);
  REQUIRE(s.set() != nullptr);
  REQUIRE(s.hash() == nullptr);
  s.set_expire_raw(9);
  REQUIRE(s.set() != nullptr);
  Value t = s.clone();
  REQUIRE(t.set() != nullptr);
  REQUIRE(t.set() != s.set());
  REQUIRE(t.expire_at_ms() == 9);
}

TEST_CASE("the access clock keeps 24 bits", "[value]") {
  Value v;
  REQUIRE_FALSE(v.has_access_clock());
  v.set_access_clock(0xfffffff);
  REQUIRE(v.has_access_clock());
  REQUIRE(v.access_clock() == 0xffffff);
  static_assert(sizeof(Value) == 16);
}
