// Record encoding and decoding (see record.hpp and docs/aof-format.md). All integers are
// little-endian.
#include "hotkv/persist/record.hpp"

#include <cstring>

#include "hotkv/util/crc16.hpp"
#include "hotkv/util/crc32c.hpp"

namespace hotkv {
namespace {

template <class T>
void put_le(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

template <class T>
void patch_le(std::string& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
bool get_le(std::string_view in, size_t& pos, T& v) {
  if (in.size() - pos < sizeof(T)) {
    return false;
  }
  std::memcpy(&v, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return true;
}

bool get_bytes(std::string_view in, size_t& pos, std::string& out) {
  uint32_t len = 0;
  if (!get_le(in, pos, len) || in.size() - pos < len) {
    return false;
  }
  out.assign(in.data() + pos, len);
  pos += len;
  return true;
}

}  // namespace

void RecordEncoder::open() {
  start_ = out_.size();
  count_ = 0;
  db_ = 0;
  open_ = true;
  out_.append(kRecordFrame + kRecordBodyHeader, '\0');
}

void RecordEncoder::add_key(EffectKind kind, std::string_view key, uint16_t slot) {
  // One append of the fixed part: kind, db, slot, key length.
  char head[9];
  head[0] = static_cast<char>(kind);
  uint32_t len = static_cast<uint32_t>(key.size());
  std::memcpy(head + 1, &db_, 2);
  std::memcpy(head + 3, &slot, 2);
  std::memcpy(head + 5, &len, 4);
  out_.append(head, sizeof head);
  out_.append(key);
  ++count_;
}

void RecordEncoder::add_put_string(std::string_view key, std::string_view value, int64_t at_ms) {
  add_key(EffectKind::kPut, key, key_hash_slot(key));
  out_.push_back('\0');
  put_le<uint32_t>(out_, static_cast<uint32_t>(value.size()));
  out_.append(value);
  put_le<int64_t>(out_, at_ms);
}

void RecordEncoder::add_put_int(std::string_view key, int64_t value, int64_t at_ms) {
  add_key(EffectKind::kPut, key, key_hash_slot(key));
  out_.push_back('\1');
  put_le<int64_t>(out_, value);
  put_le<int64_t>(out_, at_ms);
}

void RecordEncoder::add_del(std::string_view key) {
  add_key(EffectKind::kDel, key, key_hash_slot(key));
}

void RecordEncoder::add_expire(std::string_view key, int64_t at_ms) {
  add_key(EffectKind::kExpire, key, key_hash_slot(key));
  put_le<int64_t>(out_, at_ms);
}

void RecordEncoder::add_flush() { add_key(EffectKind::kFlush, "", kNoSlot); }

void RecordEncoder::add_swapdb(uint32_t a, uint32_t b) {
  // The effect's own database is `a` too, so a reader filtering by database sees it.
  uint16_t db = db_;
  select(a);
  add_key(EffectKind::kSwapDb, "", kNoSlot);
  db_ = db;
  put_le<uint32_t>(out_, a);
  put_le<uint32_t>(out_, b);
}

void RecordEncoder::add_op(std::string_view key, uint16_t op,
                           std::span<const std::string_view> args) {
  size_t at = begin_op(key, op);
  for (std::string_view a : args) {
    add_op_arg(a);
  }
  end_op(at, static_cast<uint32_t>(args.size()));
}

size_t RecordEncoder::begin_op(std::string_view key, uint16_t op) {
  add_key(EffectKind::kOp, key, key_hash_slot(key));
  put_le<uint16_t>(out_, op);
  size_t at = out_.size();
  put_le<uint32_t>(out_, 0);
  return at;
}

void RecordEncoder::add_op_arg(std::string_view arg) {
  put_le<uint32_t>(out_, static_cast<uint32_t>(arg.size()));
  out_.append(arg);
}

void RecordEncoder::end_op(size_t count_at, uint32_t args) {
  patch_le<uint32_t>(out_, count_at, args);
}

void RecordEncoder::close(uint64_t txn_id, uint32_t parts, uint64_t seq) {
  size_t body_start = start_ + kRecordFrame;
  patch_le<uint64_t>(out_, body_start, txn_id);
  patch_le<uint32_t>(out_, body_start + 8, 0);  // the version 2 marker (see record.hpp)
  out_[body_start + 12] = static_cast<char>(kRecordV2);
  patch_le<uint32_t>(out_, body_start + 13, parts);
  patch_le<uint32_t>(out_, body_start + 17, count_);
  patch_le<uint64_t>(out_, body_start + 21, seq);
  size_t body_len = out_.size() - body_start;
  uint32_t crc = crc32c(std::string_view(out_.data() + body_start, body_len));
  patch_le<uint32_t>(out_, start_, static_cast<uint32_t>(body_len));
  patch_le<uint32_t>(out_, start_ + 4, crc);
  open_ = false;
}

void RecordEncoder::abandon() {
  out_.resize(start_);
  open_ = false;
}

void encode_record(const Record& r, std::string& out) {
  RecordEncoder enc(out);
  enc.open();
  for (const Effect& e : r.effects) {
    enc.select(e.db);
    switch (e.kind) {
      case EffectKind::kPut:
        if (e.is_int) {
          enc.add_put_int(e.key, e.integer, e.at_ms);
        } else {
          enc.add_put_string(e.key, e.str, e.at_ms);
        }
        break;
      case EffectKind::kDel:
        enc.add_del(e.key);
        break;
      case EffectKind::kExpire:
        enc.add_expire(e.key, e.at_ms);
        break;
      case EffectKind::kFlush:
        enc.add_flush();
        break;
      case EffectKind::kOp: {
        std::vector<std::string_view> views(e.args.begin(), e.args.end());
        enc.add_op(e.key, e.op, views);
        break;
      }
      case EffectKind::kSwapDb:
        enc.add_swapdb(e.db, e.db2);
        break;
      case EffectKind::kSelect:  // never decoded: effects carry their database
        break;
    }
  }
  enc.close(r.txn_id, r.parts, r.seq);
}

namespace {

// The fixed part of a body, of either version.
struct BodyHeader {
  uint8_t version = 0;
  uint64_t txn_id = 0;
  uint32_t parts = 0;
  uint32_t count = 0;
  uint64_t seq = 0;
  size_t size = 0;  // where the effects start
};

bool read_header(std::string_view body, BodyHeader& h) {
  size_t pos = 0;
  if (!get_le(body, pos, h.txn_id) || !get_le(body, pos, h.parts)) {
    return false;
  }
  if (h.parts != 0) {  // version 1: `parts` is never 0 there
    h.version = kRecordV1;
    h.seq = 0;
    if (!get_le(body, pos, h.count)) {
      return false;
    }
    h.size = pos;
    return true;
  }
  if (!get_le(body, pos, h.version) || h.version != kRecordV2 || !get_le(body, pos, h.parts) ||
      !get_le(body, pos, h.count) || !get_le(body, pos, h.seq) || h.parts == 0) {
    return false;
  }
  h.size = pos;
  return true;
}

}  // namespace

bool RecordDecoder::decode_body(std::string_view body, Record& out) {
  BodyHeader h;
  if (!read_header(body, h)) {
    return false;
  }
  out.txn_id = h.txn_id;
  out.parts = h.parts;
  out.seq = h.seq;
  out.version = h.version;
  return decode_effects(body, h.size, h.count, out);
}

bool RecordDecoder::decode_effects(std::string_view body, size_t pos, uint32_t count,
                                   Record& out) {
  const bool v1 = out.version == kRecordV1;
  out.effects.clear();
  // Each effect takes at least 5 bytes, so a hostile count cannot make us reserve much.
  if (count > body.size() / 5) {
    return false;
  }
  out.effects.reserve(count);
  uint32_t db = 0;  // version 1: the database the last select effect named
  for (uint32_t i = 0; i < count; ++i) {
    if (pos >= body.size()) {
      return false;
    }
    Effect e;
    e.kind = static_cast<EffectKind>(body[pos++]);
    e.db = db;
    uint16_t slot = kNoSlot;
    if (!v1) {
      uint16_t db16 = 0;
      if (!get_le(body, pos, db16) || !get_le(body, pos, slot)) {
        return false;
      }
      e.db = db16;
    }
    if (!get_bytes(body, pos, e.key)) {
      return false;
    }
    switch (e.kind) {
      case EffectKind::kPut: {
        if (pos >= body.size()) {
          return false;
        }
        char enc = body[pos++];
        if (enc == '\1') {
          e.is_int = true;
          if (!get_le(body, pos, e.integer)) {
            return false;
          }
        } else if (enc == '\0') {
          if (!get_bytes(body, pos, e.str)) {
            return false;
          }
        } else {
          return false;
        }
        if (!get_le(body, pos, e.at_ms)) {
          return false;
        }
        break;
      }
      case EffectKind::kDel:
      case EffectKind::kFlush:
        break;
      case EffectKind::kExpire:
        if (!get_le(body, pos, e.at_ms)) {
          return false;
        }
        break;
      case EffectKind::kOp: {
        uint32_t argc = 0;
        if (!get_le(body, pos, e.op) || !get_le(body, pos, argc) ||
            argc > (body.size() - pos) / 4) {  // each argument takes at least 4 bytes
          return false;
        }
        e.args.resize(argc);
        for (auto& a : e.args) {
          if (!get_bytes(body, pos, a)) {
            return false;
          }
        }
        break;
      }
      case EffectKind::kSelect:
        if (!v1 || !get_le(body, pos, db)) {
          return false;  // version 2 names the database in every effect instead
        }
        continue;
      case EffectKind::kSwapDb:
        if (!get_le(body, pos, e.db) || !get_le(body, pos, e.db2)) {
          return false;
        }
        break;
      default:
        return false;
    }
    // The slot: carried by version 2 (and checked, since replay routes by it), computed for
    // version 1. Flush and swapdb concern the whole shard.
    uint16_t expect =
        e.kind == EffectKind::kFlush || e.kind == EffectKind::kSwapDb ? kNoSlot
                                                                       : key_hash_slot(e.key);
    if (!v1 && slot != expect) {
      return false;
    }
    e.slot = expect;
    out.effects.push_back(std::move(e));
  }
  return pos == body.size();
}

bool RecordDecoder::whole_record_after(size_t from) {
  Record scratch;
  for (size_t at = from; at + kRecordFrame + kRecordBodyHeaderV1 <= data_.size(); ++at) {
    uint32_t len = 0;
    uint32_t crc = 0;
    std::memcpy(&len, data_.data() + at, 4);
    if (len < kRecordBodyHeaderV1 || len > data_.size() - at - kRecordFrame) {
      continue;
    }
    // Cheap checks of the body header first, so the checksum runs on few candidates.
    std::string_view body(data_.data() + at + kRecordFrame, len);
    BodyHeader h;
    if (!read_header(body, h) || h.count == 0 || h.count > len / 5) {
      continue;
    }
    std::memcpy(&crc, data_.data() + at + 4, 4);
    if (crc32c(body) == crc && decode_body(body, scratch)) {
      return true;
    }
  }
  return false;
}

DecodeStatus RecordDecoder::next(Record& out) {
  if (pos_ == data_.size()) {
    return DecodeStatus::kEnd;
  }
  // Only checked once something is wrong, so decoding stays linear.
  auto zero_from = [&](size_t from) {
    for (size_t i = from; i < data_.size(); ++i) {
      if (data_[i] != '\0') {
        return false;
      }
    }
    return true;
  };
  size_t remaining = data_.size() - pos_;
  if (data_[pos_] == '\0' && zero_from(pos_)) {
    // Zeros from a record boundary on: the space a log written with appendfsync always
    // keeps ahead of its records (or a file extended but never written). The log ends here.
    padding_ = remaining;
    return DecodeStatus::kEnd;
  }
  if (remaining < kRecordFrame) {
    error_ = "truncated record header";
    return DecodeStatus::kTorn;
  }
  uint32_t len = 0;
  uint32_t crc = 0;
  std::memcpy(&len, data_.data() + pos_, 4);
  std::memcpy(&crc, data_.data() + pos_ + 4, 4);
  if (len > remaining - kRecordFrame) {
    // The last write cut short, or a damaged length in the middle: only the second has
    // whole records after it.
    if (whole_record_after(pos_ + 1)) {
      error_ = "record length points past the end of the file";
      return DecodeStatus::kCorrupt;
    }
    error_ = "record extends past the end of the file";
    return DecodeStatus::kTorn;
  }
  std::string_view body(data_.data() + pos_ + kRecordFrame, len);
  if (len < kRecordBodyHeaderV1 || crc32c(body) != crc) {
    error_ = len < kRecordBodyHeaderV1 ? "record too short" : "checksum mismatch";
    // Torn if nothing but zeros follows it: the last write cut short, before the end of the
    // file or of the zeros written ahead of it.
    return zero_from(pos_ + kRecordFrame + len) ? DecodeStatus::kTorn : DecodeStatus::kCorrupt;
  }
  if (!decode_body(body, out)) {
    error_ = "malformed record body";
    return DecodeStatus::kCorrupt;
  }
  pos_ += kRecordFrame + len;
  return DecodeStatus::kOk;
}

}  // namespace hotkv
