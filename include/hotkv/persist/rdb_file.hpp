// A whole RDB file, the snapshot format of Redis 7.0 (version 10): the "REDIS0010" magic, AUX
// fields, then per database a SELECTDB and a RESIZEDB hint, each key as an optional
// EXPIRETIME_MS, the object's type byte, the key and the object's body; function libraries
// (opcode 245); the EOF opcode and the CRC-64 of every byte before the checksum.
//
// This layer knows the file's framing only: object bodies come in as bytes already encoded
// (shard/value_dump's dump_object) and go out through an RdbReader positioned at the body, so
// no value type is known here. The format itself is described in docs/rdb.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hotkv/persist/rdb_format.hpp"

namespace hotkv {

// File-level opcodes (Redis 7.0's numbering); object types are below 245.
inline constexpr uint8_t kRdbOpcodeModuleAux = 247;
inline constexpr uint8_t kRdbOpcodeIdle = 248;
inline constexpr uint8_t kRdbOpcodeFreq = 249;
inline constexpr uint8_t kRdbOpcodeAux = 250;
inline constexpr uint8_t kRdbOpcodeResizeDb = 251;
inline constexpr uint8_t kRdbOpcodeExpireTimeMs = 252;
inline constexpr uint8_t kRdbOpcodeExpireTime = 253;  // seconds, written before Redis 3.0
inline constexpr uint8_t kRdbOpcodeSelectDb = 254;
inline constexpr uint8_t kRdbOpcodeEof = 255;

// Streams an RDB file into a file descriptor (a file, a pipe, a replica's socket): bytes are
// buffered up to a small bound and written as they come, the checksum is kept as they go, so
// the file is never held whole in memory. Does not own the descriptor. Only plain system calls:
// usable in a forked child. Calls are made in file order: begin, aux*, (select_db, key*)*,
// function*, finish.
class RdbFileWriter {
 public:
  explicit RdbFileWriter(int fd) : fd_(fd) {}
  RdbFileWriter(const RdbFileWriter&) = delete;
  RdbFileWriter& operator=(const RdbFileWriter&) = delete;

  // The magic and version.
  void begin();
  void aux(std::string_view key, std::string_view value);
  void aux(std::string_view key, int64_t value);
  // Starts database `db`; `keys` and `expires` are the sizes a loader may pre-allocate for
  // (a hint: keys that expire while the file is written are left out after it).
  void select_db(uint32_t db, uint64_t keys, uint64_t expires);
  // One key: `object` is the type byte followed by the body (dump_object's output);
  // `expire_at_ms` is an absolute unix time in ms, or negative for none.
  void key(std::string_view key, std::string_view object, int64_t expire_at_ms);
  // One function library's code (FUNCTION DUMP's encoding of it).
  void function(std::string_view code);
  // The EOF opcode and the checksum; writes out what is buffered. False if any write failed
  // (error() is its errno).
  bool finish();

  bool ok() const { return error_ == 0; }
  int error() const { return error_; }
  // Bytes handed to the descriptor so far (the whole file once finish() succeeded).
  uint64_t bytes_written() const { return written_; }

 private:
  void put(std::string_view bytes);
  void put_byte(uint8_t b);
  void flush();

  int fd_;
  std::string buf_;
  std::string scratch_;
  uint64_t crc_ = 0;
  uint64_t written_ = 0;
  int error_ = 0;
};

// What read_rdb_file hands to its caller, in file order. Each returns false to stop the read
// (the read then fails with kRefused).
class RdbFileHandler {
 public:
  virtual ~RdbFileHandler() = default;
  virtual bool aux(std::string_view /*key*/, std::string_view /*value*/) { return true; }
  virtual bool select_db(uint64_t /*db*/) { return true; }
  virtual bool resize_db(uint64_t /*keys*/, uint64_t /*expires*/) { return true; }
  // One key of object type `type` (expire_at_ms negative: none). The object's body follows in
  // `body`, which the handler must read exactly (shard/value_dump's read_object_body).
  virtual bool key(std::string_view key, uint8_t type, int64_t expire_at_ms,
                   RdbReader& body) = 0;
  virtual bool function(std::string_view /*code*/) { return true; }
};

enum class RdbFileError {
  kNone,
  kMagic,       // not an RDB file
  kVersion,     // a version newer than kRdbVersion (or 0)
  kChecksum,    // the CRC-64 footer does not match
  kTruncated,   // the data ends before the EOF opcode and checksum
  kBadOpcode,   // an opcode this reader does not know (module data, pre-release functions)
  kBadObject,   // a key whose body the handler could not decode (or refused)
  kRefused,     // the handler stopped the read at another entry
  kTrailing,    // bytes after the checksum
};

struct RdbFileResult {
  RdbFileError error = RdbFileError::kNone;
  size_t offset = 0;     // where the problem was found
  uint16_t version = 0;  // the file's RDB version, once read
  // A sentence for the log: what was wrong, where.
  std::string message() const;
};

// Walks a whole RDB file (a version 1 to kRdbVersion file, as redis-server writes it) into
// `handler`. The checksum is verified before anything is handed out (a zero checksum means
// the writer had checksums off, as Redis's rdbchecksum no, and is accepted), so a corrupt
// file is refused before any key is loaded. IDLE and FREQ opcodes are read and skipped.
RdbFileResult read_rdb_file(std::string_view data, RdbFileHandler& handler);

}  // namespace hotkv
