// DUMP payloads: every type HotKV dumps restores to an equal value, payloads captured from
// redis-server 7.0 restore to what redis-server held, encoding limits apply on restore, and
// corrupt payloads are refused with the right error.
#include "hotkv/shard/value_dump.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "hotkv/persist/rdb_format.hpp"
#include "hotkv/types/encoding_limits.hpp"
#include "hotkv/types/hash.hpp"
#include "hotkv/types/list.hpp"
#include "hotkv/types/set.hpp"
#include "hotkv/types/zset.hpp"
#include "hotkv/util/config.hpp"

#include "support/hex.hpp"

using namespace hotkv;

using hotkv::test::unhex;

namespace {

Value restore_ok(const std::string& payload, const Config& c) {
  RestoreError why = RestoreError::kNone;
  auto v = restore_value(payload, c, why);
  REQUIRE(v.has_value());
  CHECK(why == RestoreError::kNone);
  return std::move(*v);
}

std::vector<std::string> list_items(const Value& v) {
  std::vector<std::string> out;
  v.list()->for_each(0, [&](size_t, std::string_view e) {
    out.emplace_back(e);
    return true;
  });
  return out;
}

}  // namespace

TEST_CASE("every dumpable type restores to an equal value", "[dump]") {
  Config c;
  EncodingLimits limits;
  std::string scratch;

  Value s = restore_ok(*dump_value(Value::from_string("hello\0world")), c);
  CHECK(s.str(scratch) == "hello");
  CHECK(restore_ok(*dump_value(Value::from_int(-42)), c).str(scratch) == "-42");

  auto l = std::make_unique<List>();
  for (int i = 0; i < 1000; ++i) {
    l->push_back(std::to_string(i) + std::string(i % 70, 'x'));
  }
  Value lv = Value::from_list(std::move(l));
  CHECK(list_items(restore_ok(*dump_value(lv), c)) == list_items(lv));

  auto st = std::make_unique<Set>();
  st->add("1", limits);
  st->add("x", limits);
  Value sv = restore_ok(*dump_value(Value::from_set(std::move(st))), c);
  CHECK(sv.set()->size() == 2);
  CHECK(sv.set()->contains("x"));

  auto h = std::make_unique<Hash>();
  h->set("f", "v", limits);
  h->set("g", std::string(100, 'y'), limits);
  Value hv = restore_ok(*dump_value(Value::from_hash(std::move(h))), c);
  CHECK(*hv.hash()->get("g") == std::string(100, 'y'));

  auto z = std::make_unique<ZSet>();
  z->set("a", 1.5);
  z->set("b", -1e300);
  z->set("inf", std::numeric_limits<double>::infinity());
  Value zv = restore_ok(*dump_value(Value::from_zset(std::move(z))), c);
  CHECK(zv.zset()->score("a") == 1.5);
  CHECK(zv.zset()->score("b") == -1e300);
  CHECK(zv.zset()->score("inf") == std::numeric_limits<double>::infinity());
}

TEST_CASE("redis-server 7.0's DUMP payloads restore", "[dump]") {
  Config c;
  std::string scratch;
  // HSET h a 1 b hello -> HASH_LISTPACK
  Value h =
      restore_ok(unhex("101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d"), c);
  REQUIRE(h.type() == ValueType::kHash);
  CHECK(*h.hash()->get("a") == "1");
  CHECK(*h.hash()->get("b") == "hello");
  // SADD s 1 2 -3 -> SET_INTSET
  Value s = restore_ok(unhex("0b0e0200000003000000fdff010002000a00d1b78ed9bc07c27f"), c);
  REQUIRE(s.type() == ValueType::kSet);
  CHECK(s.set()->size() == 3);
  CHECK(s.set()->contains("-3"));
  // ZADD z 1.5 a 2 b -> ZSET_LISTPACK
  Value z =
      restore_ok(unhex("111414000000040081610283312e35048162020201ff0a00fa02b425af188763"), c);
  REQUIRE(z.type() == ValueType::kZSet);
  CHECK(z.zset()->score("a") == 1.5);
  CHECK(z.zset()->score("b") == 2.0);
  // RPUSH l x 7 -200 -> LIST_QUICKLIST_2, one packed node
  Value l = restore_ok(unhex("1201020f0f00000003008178020701df3802ff0a00ac05f3b19a080f8d"), c);
  CHECK(list_items(l) == std::vector<std::string>{"x", "7", "-200"});
}

TEST_CASE("restored values follow the configured encoding limits", "[dump]") {
  Config c;
  c.hash_max_listpack_entries.store(2);
  Value h =
      restore_ok(unhex("101616000000040081610201018162028568656c6c6f06ff0a00e8c5fe99ee07955d"), c);
  CHECK(h.hash()->listpack());
  EncodingLimits limits;
  auto big = std::make_unique<Hash>();
  for (int i = 0; i < 3; ++i) {
    big->set("f" + std::to_string(i), "v", limits);
  }
  Value bv = restore_ok(*dump_value(Value::from_hash(std::move(big))), c);
  CHECK_FALSE(bv.hash()->listpack());
}

TEST_CASE("corrupt payloads are refused", "[dump]") {
  Config c;
  RestoreError why = RestoreError::kNone;
  std::string good = *dump_value(Value::from_string("bar"));
  CHECK(restore_value("...", c, why) == std::nullopt);
  CHECK(why == RestoreError::kChecksum);
  std::string flipped = good;
  flipped[2] ^= 1;
  CHECK_FALSE(restore_value(flipped, c, why).has_value());
  CHECK(why == RestoreError::kChecksum);
  // Right checksum, wrong contents: an unknown type, an empty list, a stream cut short, a short
  // string, trailing bytes.
  for (std::string body :
       {std::string("\x08", 1), std::string("\x01\x00", 2), std::string("\x13\x00", 2),
        std::string("\x00\x05"
                    "ab",
                    4),
        std::string("\x00\x01"
                    "ab",
                    4)}) {
    rdb_seal_payload(body);
    CHECK_FALSE(restore_value(body, c, why).has_value());
    CHECK(why == RestoreError::kBadFormat);
  }
  // A repeated member or field is corrupt, as on Redis.
  std::string dup_set("\x02\x02\x01x\x01x", 6);
  rdb_seal_payload(dup_set);
  CHECK_FALSE(restore_value(dup_set, c, why).has_value());
  // A newer RDB version than this server reads.
  std::string newer = "\x00\x01x";
  newer += std::string("\x0b\x00", 2);
  CHECK_FALSE(restore_value(newer + std::string(8, '\0'), c, why).has_value());
  CHECK(why == RestoreError::kChecksum);
}
