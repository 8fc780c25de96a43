// The log record format: every effect round-trips, a record cut at any byte is a torn tail
// (never a corrupt middle, never a wrong record), with or without zeros written ahead of it,
// zeros at a record boundary end the log, and damage followed by more data is caught. Records
// carry a sequence number and each effect its database and slot; records of the format before
// (version 1, bytes taken from a log that format wrote) still decode.
#include <catch2/catch.hpp>

#include "hotkv/persist/shard_log.hpp"
#include "hotkv/persist/record.hpp"
#include "hotkv/util/crc16.hpp"
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
  b.seq = 2;
  Record c;
  c.seq = 0xFEDCBA9876543210ULL;
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
  // The instruction the CPU may offer and the tables agree, at every length and alignment.
  std::string data;
  for (int i = 0; i < 300; ++i) {
    data.push_back(static_cast<char>(i * 131 + 7));
  }
  for (size_t from = 0; from < 9; ++from) {
    for (size_t len = 0; from + len <= data.size(); len += 7) {
      std::string_view piece(data.data() + from, len);
      CHECK(hotkv::crc32c(piece, 99) == hotkv::crc32c_tables(piece, 99));
    }
  }
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
    CHECK(got.seq == want.seq);
    CHECK(got.version == hotkv::kRecordV2);
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

namespace {

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Frames a body as the log does: u32 length | u32 crc32c | body.
std::string frame(const std::string& body) {
  std::string out;
  put<uint32_t>(out, static_cast<uint32_t>(body.size()));
  put<uint32_t>(out, hotkv::crc32c(body));
  return out + body;
}

std::string unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A version 2 body with one del effect, its fields given.
std::string v2_del_body(uint8_t version, uint16_t db, uint16_t slot, const std::string& key) {
  std::string body;
  put<uint64_t>(body, 0);
  put<uint32_t>(body, 0);
  put<uint8_t>(body, version);
  put<uint32_t>(body, 1);
  put<uint32_t>(body, 1);
  put<uint64_t>(body, 5);
  put<uint8_t>(body, static_cast<uint8_t>(EffectKind::kDel));
  put<uint16_t>(body, db);
  put<uint16_t>(body, slot);
  put<uint32_t>(body, static_cast<uint32_t>(key.size()));
  return body + key;
}

}  // namespace

TEST_CASE("records carry their sequence number and each effect its database and slot",
          "[persist]") {
  std::string log;
  hotkv::RecordEncoder enc(log);
  enc.open();
  enc.add_put_int("{user:1}:n", 5, -1);
  enc.select(7);
  enc.add_del("other");
  enc.add_flush();
  enc.add_swapdb(2, 3);
  enc.add_expire("again", 99);
  enc.close(0, 1, 41);
  RecordDecoder dec(log);
  Record r;
  REQUIRE(dec.next(r) == DecodeStatus::kOk);
  CHECK(r.version == hotkv::kRecordV2);
  CHECK(r.seq == 41);
  REQUIRE(r.effects.size() == 5);
  CHECK(r.effects[0].db == 0);
  CHECK(r.effects[0].slot == hotkv::key_hash_slot("user:1"));
  CHECK(r.effects[1].db == 7);
  CHECK(r.effects[1].slot == hotkv::key_hash_slot("other"));
  CHECK(r.effects[2].db == 7);
  CHECK(r.effects[2].slot == hotkv::kNoSlot);
  CHECK(r.effects[3].kind == EffectKind::kSwapDb);
  CHECK(r.effects[3].db == 2);
  CHECK(r.effects[3].db2 == 3);
  // swapdb names its own databases; the effects after it stay in the selected one.
  CHECK(r.effects[4].db == 7);
  CHECK(r.effects[4].at_ms == 99);
}

TEST_CASE("records written by the format before sequence numbers still decode", "[persist]") {
  SECTION("bytes of a real version 1 log: a put of an integer, then an inventory op") {
    std::string log = unhex(
        "2800000046a56ba90000000000000000010000000100000001020000006e3101290000000000"
        "0000ffffffffffffffff"
        "3e000000fcf4376800000000000000000100000001000000050500000069746"
        "56d314000060000000200000031300100000030010000003001000000300100"
        "00003000000000");
    RecordDecoder dec(log);
    Record r;
    REQUIRE(dec.next(r) == DecodeStatus::kOk);
    CHECK(r.version == hotkv::kRecordV1);
    CHECK(r.seq == 0);
    CHECK(r.parts == 1);
    REQUIRE(r.effects.size() == 1);
    CHECK(same(r.effects[0], put_int("n1", 41)));
    CHECK(r.effects[0].slot == hotkv::key_hash_slot("n1"));
    REQUIRE(dec.next(r) == DecodeStatus::kOk);
    REQUIRE(r.effects.size() == 1);
    CHECK(same(r.effects[0], op("item1", 64, {"10", "0", "0", "0", "0", ""})));
    CHECK(dec.next(r) == DecodeStatus::kEnd);
  }
  SECTION("a version 1 select moves the rest of the record to another database") {
    std::string body;
    put<uint64_t>(body, 9);  // txn
    put<uint32_t>(body, 2);  // parts
    put<uint32_t>(body, 3);  // effects, the select counted
    put<uint8_t>(body, static_cast<uint8_t>(EffectKind::kDel));
    put<uint32_t>(body, 1);
    body += "a";
    put<uint8_t>(body, static_cast<uint8_t>(EffectKind::kSelect));
    put<uint32_t>(body, 0);
    put<uint32_t>(body, 4);
    put<uint8_t>(body, static_cast<uint8_t>(EffectKind::kDel));
    put<uint32_t>(body, 1);
    body += "b";
    std::string log = frame(body);
    // Old and new records may share a file (a log appended to after an upgrade).
    Record next;
    next.seq = 1;
    next.effects = {put_str("k", "v")};
    hotkv::encode_record(next, log);
    RecordDecoder dec(log);
    Record r;
    REQUIRE(dec.next(r) == DecodeStatus::kOk);
    CHECK(r.version == hotkv::kRecordV1);
    CHECK(r.txn_id == 9);
    CHECK(r.parts == 2);
    REQUIRE(r.effects.size() == 2);
    CHECK(r.effects[0].db == 0);
    CHECK(r.effects[1].db == 4);
    CHECK(r.effects[1].key == "b");
    REQUIRE(dec.next(r) == DecodeStatus::kOk);
    CHECK(r.version == hotkv::kRecordV2);
    CHECK(r.seq == 1);
    CHECK(dec.next(r) == DecodeStatus::kEnd);
  }
}

TEST_CASE("a version 2 record with inconsistent fields is refused, not guessed at", "[persist]") {
  const std::string key = "k";
  const uint16_t slot = hotkv::key_hash_slot(key);
  Record r;
  auto status = [&](const std::string& body) {
    std::string log = frame(body) + frame(v2_del_body(2, 0, slot, key));
    RecordDecoder dec(log);
    return dec.next(r);
  };
  CHECK(status(v2_del_body(2, 0, slot, key)) == DecodeStatus::kOk);
  CHECK(r.seq == 5);
  SECTION("a slot that is not the key's") {
    CHECK(status(v2_del_body(2, 0, static_cast<uint16_t>(slot ^ 1), key)) ==
          DecodeStatus::kCorrupt);
  }
  SECTION("an unknown version") {
    CHECK(status(v2_del_body(3, 0, slot, key)) == DecodeStatus::kCorrupt);
    CHECK(status(v2_del_body(0, 0, slot, key)) == DecodeStatus::kCorrupt);
  }
  SECTION("a select effect, which only version 1 has") {
    std::string body = v2_del_body(2, 0, slot, key);
    body[17] = 2;  // two effects
    put<uint8_t>(body, static_cast<uint8_t>(EffectKind::kSelect));
    put<uint16_t>(body, 0);
    put<uint16_t>(body, hotkv::kNoSlot);
    put<uint32_t>(body, 0);
    put<uint32_t>(body, 3);
    CHECK(status(body) == DecodeStatus::kCorrupt);
  }
  SECTION("zero parts") {
    std::string body = v2_del_body(2, 0, slot, key);
    body[13] = 0;
    CHECK(status(body) == DecodeStatus::kCorrupt);
  }
}
