// The log record format: every effect round-trips, a record cut at any byte is a torn tail
// (never a corrupt middle, never a wrong record), with or without zeros written ahead of it,
// zeros at a record boundary end the log, and damage followed by more data is caught.
#include <catch2/catch.hpp>

#include "hotkv/persist/shard_log.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/util/crc32c.hpp"

using hotkv::DecodeStatus;
using hotkv::Effect;
using hotkv::EffectKind;
using hotkv::Record;
using hotkv::RecordDecoder;

namespace {

Effect put_str(std::string key, std::string value, int64_t at = -1) {
  Effect e;
  e.kind = EffectKind::kPut;
  e.key = std::move(key);
  e.str = std::move(value);
  e.at_ms = at;
  return e;
}

Effect put_int(std::string key, int64_t v, int64_t at = -1) {
  Effect e;
  e.kind = EffectKind::kPut;
  e.key = std::move(key);
  e.is_int = true;
  e.integer = v;
  e.at_ms = at;
  return e;
}

Effect simple(EffectKind kind, std::string key, int64_t at = -1) {
  Effect e;
  e.kind = kind;
  e.key = std::move(key);
  e.at_ms = at;
  return e;
}

Effect op(std::string key, uint16_t code, std::vector<std::string> args) {
  Effect e;
  e.kind = EffectKind::kOp;
  e.key = std::move(key);
  e.op = code;
  e.args = std::move(args);
  return e;
}

std::vector<Record> sample_records() {
  Record a;
  a.effects = {put_str("k", "v"), put_str(std::string("bin\0\r\n", 6), std::string(300, 'x'), 1234)};
  Record b;
  b.effects = {put_int("n", -9223372036854775807LL - 1), put_int("m", 42, 99)};
  Record c;
  c.txn_id = 77;
  c.parts = 3;
  c.effects = {simple(EffectKind::kDel, "gone"), simple(EffectKind::kExpire, "t", 5000),
               simple(EffectKind::kExpire, "p", -1), simple(EffectKind::kFlush, "")};
  Record d;
  d.effects = {op("s", 2, {"1700000000000-0", "order", "7781"}), op("s", 1, {}),
               op("s", 11, {"g", std::string("c\0\n", 3), "5", "1-1", "2"})};
  // Effects of several databases in one record (MOVE, COPY ... DB, FLUSHALL, SWAPDB).
  Record e;
  Effect in3 = put_str("k", "three");
  in3.db = 3;
  Effect back = simple(EffectKind::kDel, "k");
  Effect flush15 = simple(EffectKind::kFlush, "");
  flush15.db = 15;
  Effect swap;
  swap.kind = EffectKind::kSwapDb;
  swap.db = 2;
  swap.db2 = 9;
  e.effects = {in3, back, flush15, swap, put_int("n", 1)};
  return {a, b, c, d, e};
}

bool same(const Effect& x, const Effect& y) {
  if (x.kind == EffectKind::kOp) {
    return y.kind == EffectKind::kOp && x.key == y.key && x.op == y.op && x.args == y.args;
  }
  if (x.kind == EffectKind::kSwapDb) {
    return y.kind == x.kind && x.db == y.db && x.db2 == y.db2;
  }
  return x.kind == y.kind && x.key == y.key && x.db == y.db && x.is_int == y.is_int &&
         (x.is_int ? x.integer == y.integer : x.str == y.str) &&
         (x.kind == EffectKind::kDel || x.kind == EffectKind::kFlush || x.at_ms == y.at_ms);
}

// The first two sample records, encoded: the good prefix the tail tests damage after.
std::string first_two_records() {
  std::string log;
  auto records = sample_records();
  hotkv::encode_record(records[0], log);
  hotkv::encode_record(records[1], log);
  return log;
}

void decode_first_two(RecordDecoder& dec) {
  Record r;
  REQUIRE(dec.next(r) == DecodeStatus::kOk);
  REQUIRE(dec.next(r) == DecodeStatus::kOk);
}

}  // namespace

TEST_CASE("crc32c matches the published check value", "[persist]") {
  CHECK(hotkv::crc32c("123456789") == 0xE3069283u);
  CHECK(hotkv::crc32c("") == 0u);
  CHECK(hotkv::crc32c("6789", hotkv::crc32c("12345")) == 0xE3069283u);
}

TEST_CASE("every effect kind round-trips through the record format", "[persist]") {
  std::string log;
  auto records = sample_records();
  for (const auto& r : records) {
    hotkv::encode_record(r, log);
  }
  RecordDecoder dec(log);
  for (const auto& want : records) {
    Record got;
    REQUIRE(dec.next(got) == DecodeStatus::kOk);
    CHECK(got.txn_id == want.txn_id);
    CHECK(got.parts == want.parts);
    REQUIRE(got.effects.size() == want.effects.size());
    for (size_t i = 0; i < want.effects.size(); ++i) {
      CHECK(same(got.effects[i], want.effects[i]));
    }
  }
  Record end;
  CHECK(dec.next(end) == DecodeStatus::kEnd);
}

TEST_CASE("a last record cut at every byte offset is a torn tail", "[persist]") {
  std::string log = first_two_records();
  size_t good = log.size();
  hotkv::encode_record(sample_records()[2], log);
  for (size_t cut = good + 1; cut < log.size(); ++cut) {
    RecordDecoder dec(std::string_view(log).substr(0, cut));
    decode_first_two(dec);
    Record r;
    INFO("cut at " << cut);
    CHECK(dec.next(r) == DecodeStatus::kTorn);
    CHECK(dec.offset() == good);
  }
  SECTION("cut at every byte offset inside zeros written ahead, it is a torn tail too") {
    for (size_t cut = good + 1; cut < log.size(); ++cut) {
      std::string padded = log.substr(0, cut) + std::string(4096, '\0');
      RecordDecoder dec(padded);
      decode_first_two(dec);
      Record r;
      INFO("cut at " << cut);
      if (log.find_first_not_of('\0', cut) == std::string::npos) {
        // Only zeros were cut off (the record ends with an empty key): nothing is missing.
        CHECK(dec.next(r) == DecodeStatus::kOk);
        CHECK(dec.next(r) == DecodeStatus::kEnd);
        CHECK(dec.offset() == log.size());
        continue;
      }
      CHECK(dec.next(r) == DecodeStatus::kTorn);
      CHECK(dec.offset() == good);
    }
  }
}

TEST_CASE("zeros from a record boundary on are the end of the log", "[persist]") {
  std::string log = first_two_records();
  size_t good = log.size();
  std::string padded = log + std::string(hotkv::ShardLog::kPreallocChunk, '\0');
  RecordDecoder dec(padded);
  decode_first_two(dec);
  Record r;
  CHECK(dec.next(r) == DecodeStatus::kEnd);
  CHECK(dec.offset() == good);
  CHECK(dec.padding() == hotkv::ShardLog::kPreallocChunk);

  SECTION("a file of zeros holds no record") {
    std::string zeros(100, '\0');
    RecordDecoder empty(zeros);
    CHECK(empty.next(r) == DecodeStatus::kEnd);
    CHECK(empty.offset() == 0);
    CHECK(empty.padding() == 100);
  }
  SECTION("but records after a run of zeros make the zeros damage in the middle") {
    std::string holed = log + std::string(4096, '\0');
    hotkv::encode_record(sample_records()[2], holed);
    holed += std::string(4096, '\0');
    RecordDecoder holes(holed);
    decode_first_two(holes);
    CHECK(holes.next(r) == DecodeStatus::kCorrupt);
    CHECK(holes.offset() == good);
  }
}

TEST_CASE("a damaged record followed by more data is a corrupt middle", "[persist]") {
  std::string log;
  auto records = sample_records();
  for (const auto& r : records) {
    hotkv::encode_record(r, log);
  }
  std::string first;
  hotkv::encode_record(records[0], first);
  // Flip one byte at every position of the first record, its length and checksum included:
  // a damaged length must not pass for a torn tail and silently drop what follows.
  for (size_t at = 0; at < first.size(); ++at) {
    std::string bad = log;
    bad[at] = static_cast<char>(bad[at] ^ 0x5A);
    RecordDecoder dec(bad);
    Record r;
    INFO("flipped byte " << at);
    CHECK(dec.next(r) == DecodeStatus::kCorrupt);
    CHECK(dec.offset() == 0);
  }
}
