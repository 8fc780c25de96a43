// The append-only log's record format: each record is the set of effects one command (or one
// shard's part of a cross-shard operation) made, framed with a length and a CRC-32C so a torn
// tail and a corrupted middle can be told apart. Effects are final states with absolute
// deadlines, never commands to re-run, so replay is deterministic. docs/aof-format.md is the
// byte-level description.
//
// Version 2 records (written since) carry a per-shard sequence number in their header and the
// database and hash slot of every effect, so a reader (replay, a replica, a slot migration) can
// place an effect without hashing its key or tracking SELECTs. Version 1 records (no sequence,
// a `select` effect to change database) still decode, into the same Record.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

enum class EffectKind : uint8_t {
  kPut = 1,     // key now holds this value (and this deadline, or none)
  kDel = 2,     // key no longer exists
  kExpire = 3,  // key's deadline is now at_ms (-1: no deadline)
  kFlush = 4,   // every key of this shard is gone
  // An operation on an aggregate value (a stream entry added, a consumer group's pending
  // entry moved...) with concrete arguments: ids, absolute times, counts. The op code names
  // the operation; shard/op_effects.hpp applies it. Aggregates are never logged whole per
  // write.
  kOp = 5,
  // Version 1 only: the effects after it in the same record are in database `db` (a record
  // starts in 0). Consumed by the decoder: decoded effects carry their database in Effect::db.
  kSelect = 6,
  kSwapDb = 7,  // databases `db` and `db2` of this shard traded places (SWAPDB)
};

// The slot of an effect that names no key (flush, swapdb): it concerns the whole shard.
inline constexpr uint16_t kNoSlot = 0xFFFF;

// Record format versions; version 1 is told apart by its header (see docs/aof-format.md).
inline constexpr uint8_t kRecordV1 = 1;
inline constexpr uint8_t kRecordV2 = 2;

struct Effect {
  EffectKind kind = EffectKind::kPut;
  std::string key;
  bool is_int = false;
  int64_t integer = 0;
  std::string str;
  int64_t at_ms = -1;
  uint16_t op = 0;                // kOp only
  std::vector<std::string> args;  // kOp only
  uint32_t db = 0;                // the database the effect applies to (SELECT's index)
  uint32_t db2 = 0;               // kSwapDb only: the other database
  uint16_t slot = kNoSlot;        // the key's hash slot (kNoSlot for flush and swapdb)
};

struct Record {
  uint64_t txn_id = 0;  // 0: a single-shard record; else shared by every part of one operation
  uint32_t parts = 1;   // how many shard logs hold a part of this operation
  // The writing shard's sequence number: 1, 2, 3... per shard log, continuing across restarts
  // and file switches (a base snapshot's records carry the last number it includes). 0 for
  // version 1 records, which had none.
  uint64_t seq = 0;
  uint8_t version = kRecordV2;
  std::vector<Effect> effects;
};

inline constexpr size_t kRecordFrame = 8;  // u32 length + u32 crc
// Version 1 body header: u64 txn | u32 parts (>= 1) | u32 count.
inline constexpr size_t kRecordBodyHeaderV1 = 16;
// Version 2 body header: u64 txn | u32 0 | u8 version | u32 parts | u32 count | u64 seq. The
// zero stands where version 1 has `parts`, which is never 0 there.
inline constexpr size_t kRecordBodyHeader = 29;

// Appends version 2 records to a byte buffer without per-effect allocation. Usage: open(), any
// number of add_*(), then close() (or abandon() if nothing was added). Each effect is stamped
// with the database last select()ed and its key's hash slot.
class RecordEncoder {
 public:
  explicit RecordEncoder(std::string& out) : out_(out) {}
  void open();
  void add_put_string(std::string_view key, std::string_view value, int64_t at_ms);
  void add_put_int(std::string_view key, int64_t value, int64_t at_ms);
  void add_del(std::string_view key);
  void add_expire(std::string_view key, int64_t at_ms);
  void add_flush();
  void add_op(std::string_view key, uint16_t op, std::span<const std::string_view> args);
  // The same effect written piece by piece, so a typed effect streams its fields into the
  // buffer with no list of arguments in between: begin_op returns where the argument count
  // goes, then add_op_arg per argument, then end_op with that place and the count.
  size_t begin_op(std::string_view key, uint16_t op);
  void add_op_arg(std::string_view arg);
  void end_op(size_t count_at, uint32_t args);
  // The next effects apply to database `db` (a record opens in database 0). REQUIRES db <
  // 65536 (the databases setting is at most 1024).
  void select(uint32_t db) { db_ = static_cast<uint16_t>(db); }
  void add_swapdb(uint32_t a, uint32_t b);
  uint32_t count() const { return count_; }
  bool is_open() const { return open_; }
  // Patches the frame and header; the record is then complete in the buffer. `seq` is the
  // writing shard's sequence number for it (ShardLog assigns them).
  void close(uint64_t txn_id, uint32_t parts, uint64_t seq);
  // Drops an open record that received no effect.
  void abandon();
  // Where the open record starts in the buffer, and the buffer lost `removed` bytes in front
  // of it (they were written out).
  size_t start() const { return start_; }
  void rebase(size_t removed) { start_ -= removed; }

 private:
  void add_key(EffectKind kind, std::string_view key, uint16_t slot);
  std::string& out_;
  size_t start_ = 0;
  uint32_t count_ = 0;
  uint16_t db_ = 0;
  bool open_ = false;
};

enum class DecodeStatus {
  kOk,       // a record was decoded
  kEnd,      // clean end of data (possibly followed by zero padding)
  kTorn,     // the data ends inside a record: a write cut short by a crash
  kCorrupt,  // a complete record is damaged (bad checksum or malformed body)
};

// Decodes records one by one from a byte span.
class RecordDecoder {
 public:
  explicit RecordDecoder(std::string_view data) : data_(data) {}
  DecodeStatus next(Record& out);
  // Offset of the next record to decode (on kTorn/kCorrupt: of the damaged record; on kEnd:
  // the log's end, where any zero padding starts).
  size_t offset() const { return pos_; }
  // On kEnd: bytes of zeros after the last record (see ShardLog::kPreallocChunk).
  size_t padding() const { return padding_; }
  const std::string& error() const { return error_; }

 private:
  bool decode_body(std::string_view body, Record& out);
  bool decode_effects(std::string_view body, size_t pos, uint32_t count, Record& out);
  // True if a whole, valid record starts anywhere at or after `from` (damage classification
  // only, so the scan's cost does not matter for a healthy log).
  bool whole_record_after(size_t from);
  std::string_view data_;
  size_t pos_ = 0;
  size_t padding_ = 0;
  std::string error_;
};

// Appends one whole version 2 record (used by tests): every effect in its Effect::db, stamped
// with its key's slot (r.version and Effect::slot are ignored).
void encode_record(const Record& r, std::string& out);

}  // namespace hotkv
