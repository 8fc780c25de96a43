// The building blocks of Redis's RDB serialization that HotKV reads and writes: lengths,
// strings (plain, integer-encoded and LZF-compressed, as redis-server writes them) and the
// footer of a DUMP-style payload (RDB version, then CRC-64). Shared by FUNCTION DUMP/RESTORE
// and, as they arrive, DUMP/RESTORE of keys and RDB snapshots.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv {

// The RDB version HotKV writes, and the newest it reads: Redis 7.0's.
inline constexpr uint16_t kRdbVersion = 10;
// Opcode that introduces one function library (its code as an RDB string) in FUNCTION DUMP
// payloads and RDB files (Redis 7.0's RDB_OPCODE_FUNCTION2).
inline constexpr uint8_t kRdbOpcodeFunction = 245;

void rdb_append_length(std::string& out, uint64_t length);
// Plain encoding: the length, then the bytes (every RDB reader accepts it).
void rdb_append_string(std::string& out, std::string_view s);

// A double as 8 bytes, little endian (the scores of RDB_TYPE_ZSET_2).
void rdb_append_binary_double(std::string& out, double d);
// A unix time in ms as 8 bytes, little endian, signed (stream PEL and consumer times).
void rdb_append_millis(std::string& out, int64_t ms);
// Bytes as they are, with no length before them (a stream PEL's 16-byte ids).
void rdb_append_raw(std::string& out, std::string_view bytes);

// Appends the payload footer: kRdbVersion (2 bytes, little endian), then the CRC-64 of
// everything before it, the version included (8 bytes, little endian).
void rdb_seal_payload(std::string& payload);
// Checks a sealed payload: long enough, a version this server reads, the checksum right. On
// success `body` is what precedes the footer.
bool rdb_open_payload(std::string_view payload, std::string_view& body);

// Reads RDB items from a byte string; every read answers false when the input is short or
// malformed (and the reader is then of no further use).
class RdbReader {
 public:
  explicit RdbReader(std::string_view data) : data_(data) {}
  bool at_end() const { return pos_ >= data_.size(); }
  // Bytes read so far (an error's place in a file).
  size_t offset() const { return pos_; }
  bool read_byte(uint8_t& out);
  bool read_length(uint64_t& out);
  // A string in any of the encodings redis-server writes (plain, int8/16/32, LZF).
  bool read_string(std::string& out);
  // An 8-byte little-endian double (RDB_TYPE_ZSET_2's scores).
  bool read_binary_double(double& out);
  // A double as text after a one-byte length, with 253/254/255 for NaN/+inf/-inf
  // (RDB_TYPE_ZSET's scores, written by Redis before 2.8).
  bool read_text_double(double& out);
  // rdb_append_millis's 8 bytes.
  bool read_millis(int64_t& out);
  // Exactly n bytes with no length before them; `out` points into the input.
  bool read_raw(size_t n, std::string_view& out) { return take(n, out); }

 private:
  // A length, or (`encoded` set) the special-encoding number of a string.
  bool read_length_or_encoding(uint64_t& out, bool& encoded);
  bool take(size_t n, std::string_view& out);
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace hotkv
