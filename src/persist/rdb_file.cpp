#include "hotkv/persist/rdb_file.hpp"

#include <cerrno>
#include <cstdio>

#include "hotkv/util/crc64.hpp"
#include "hotkv/util/file_io.hpp"

namespace hotkv {
namespace {

constexpr std::string_view kMagic = "REDIS";
// Buffered bytes are written out past this size: a few system calls per megabyte, and the
// memory a snapshot needs stays this plus one value's encoding.
constexpr size_t kFlushAt = 64 * 1024;
// The EOF opcode is followed by 8 bytes of checksum (files of version 5 and later).
constexpr size_t kChecksumBytes = 8;
constexpr uint16_t kFirstVersionWithChecksum = 5;

uint64_t little_endian(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) {
    v = (v << 8) | static_cast<unsigned char>(b[i]);
  }
  return v;
}

}  // namespace

void RdbFileWriter::put(std::string_view bytes) {
  crc_ = crc64(crc_, bytes);
  buf_.append(bytes);
  if (buf_.size() >= kFlushAt) {
    flush();
  }
}

void RdbFileWriter::put_byte(uint8_t b) {
  char c = static_cast<char>(b);
  put(std::string_view(&c, 1));
}

void RdbFileWriter::flush() {
  if (error_ == 0 && !buf_.empty()) {
    size_t done = 0;
    if (!write_fully(fd_, buf_, done)) {
      error_ = errno != 0 ? errno : EIO;
    }
    written_ += done;
  }
  buf_.clear();
}

void RdbFileWriter::begin() {
  char version[8];
  std::snprintf(version, sizeof version, "%04u", static_cast<unsigned>(kRdbVersion));
  put(kMagic);
  put(version);
}

void RdbFileWriter::aux(std::string_view key, std::string_view value) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kRdbOpcodeAux));
  rdb_append_string(scratch_, key);
  rdb_append_string(scratch_, value);
  put(scratch_);
}

void RdbFileWriter::aux(std::string_view key, int64_t value) { aux(key, std::to_string(value)); }

void RdbFileWriter::select_db(uint32_t db, uint64_t keys, uint64_t expires) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kRdbOpcodeSelectDb));
  rdb_append_length(scratch_, db);
  scratch_.push_back(static_cast<char>(kRdbOpcodeResizeDb));
  rdb_append_length(scratch_, keys);
  rdb_append_length(scratch_, expires);
  put(scratch_);
}

void RdbFileWriter::key(std::string_view key, std::string_view object, int64_t expire_at_ms) {
  scratch_.clear();
  if (expire_at_ms >= 0) {
    scratch_.push_back(static_cast<char>(kRdbOpcodeExpireTimeMs));
    rdb_append_millis(scratch_, expire_at_ms);
  }
  // The type byte goes before the key, the body after it.
  scratch_.push_back(object.empty() ? '\0' : object[0]);
  rdb_append_string(scratch_, key);
  put(scratch_);
  if (object.size() > 1) {
    put(object.substr(1));
  }
}

void RdbFileWriter::function(std::string_view code) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kRdbOpcodeFunction));
  rdb_append_string(scratch_, code);
  put(scratch_);
}

bool RdbFileWriter::finish() {
  put_byte(kRdbOpcodeEof);
  // The checksum covers every byte before it, the EOF opcode included, and is not itself
  // part of the running sum.
  const uint64_t crc = crc_;
  std::string footer;
  rdb_append_millis(footer, static_cast<int64_t>(crc));  // 8 bytes, little endian
  buf_.append(footer);
  flush();
  return error_ == 0;
}

std::string RdbFileResult::message() const {
  const char* what = "";
  switch (error) {
    case RdbFileError::kNone:
      return "ok";
    case RdbFileError::kMagic:
      what = "Wrong signature trying to load DB from file";
      break;
    case RdbFileError::kVersion:
      what = "Can't handle RDB format version";
      break;
    case RdbFileError::kChecksum:
      what = "Wrong RDB checksum";
      break;
    case RdbFileError::kTruncated:
      what = "Short read or unexpected end of RDB file";
      break;
    case RdbFileError::kBadOpcode:
      what = "Unknown RDB opcode";
      break;
    case RdbFileError::kBadObject:
      what = "Bad RDB object";
      break;
    case RdbFileError::kRefused:
      what = "RDB entry refused";
      break;
    case RdbFileError::kTrailing:
      what = "Bytes after the RDB checksum";
      break;
  }
  return std::string(what) + " (version " + std::to_string(version) + ", offset " +
         std::to_string(offset) + ")";
}

RdbFileResult read_rdb_file(std::string_view data, RdbFileHandler& handler) {
  RdbFileResult r;
  if (data.size() < 9 || data.substr(0, kMagic.size()) != kMagic) {
    r.error = RdbFileError::kMagic;
    return r;
  }
  unsigned version = 0;
  for (char c : data.substr(5, 4)) {
    if (c < '0' || c > '9') {
      r.error = RdbFileError::kMagic;
      return r;
    }
    version = version * 10 + static_cast<unsigned>(c - '0');
  }
  r.version = static_cast<uint16_t>(version);
  if (version < 1 || version > kRdbVersion) {
    r.error = RdbFileError::kVersion;
    r.offset = 5;
    return r;
  }
  // The footer first: nothing reaches the handler from a file whose checksum is wrong.
  std::string_view body = data;
  if (version >= kFirstVersionWithChecksum) {
    if (data.size() < 9 + 1 + kChecksumBytes) {
      r.error = RdbFileError::kTruncated;
      r.offset = data.size();
      return r;
    }
    size_t footer = data.size() - kChecksumBytes;
    uint64_t expected = little_endian(data.substr(footer));
    if (expected != 0 && crc64(0, data.substr(0, footer)) != expected) {
      // A file cut short fails here too, unless the cut falls where the checksum happens to
      // match, which the walk below still catches.
      r.error = RdbFileError::kChecksum;
      r.offset = footer;
      return r;
    }
    body = data.substr(0, footer);
  }
  RdbReader in(body);
  std::string_view skipped;
  (void)in.read_raw(9, skipped);
  int64_t expire_at_ms = -1;
  std::string key;
  std::string a;
  std::string b;
  auto fail = [&](RdbFileError e) {
    r.error = e;
    r.offset = in.offset();
    return r;
  };
  for (;;) {
    size_t at = in.offset();
    uint8_t op = 0;
    if (!in.read_byte(op)) {
      return fail(RdbFileError::kTruncated);
    }
    uint64_t n = 0;
    uint64_t m = 0;
    switch (op) {
      case kRdbOpcodeEof:
        if (!in.at_end()) {
          r.offset = in.offset();
          r.error = RdbFileError::kTrailing;
          return r;
        }
        return r;
      case kRdbOpcodeAux:
        if (!in.read_string(a) || !in.read_string(b)) {
          return fail(RdbFileError::kTruncated);
        }
        if (!handler.aux(a, b)) {
          return fail(RdbFileError::kRefused);
        }
        continue;
      case kRdbOpcodeSelectDb:
        if (!in.read_length(n)) {
          return fail(RdbFileError::kTruncated);
        }
        if (!handler.select_db(n)) {
          return fail(RdbFileError::kRefused);
        }
        continue;
      case kRdbOpcodeResizeDb:
        if (!in.read_length(n) || !in.read_length(m)) {
          return fail(RdbFileError::kTruncated);
        }
        if (!handler.resize_db(n, m)) {
          return fail(RdbFileError::kRefused);
        }
        continue;
      case kRdbOpcodeExpireTimeMs:
        if (!in.read_millis(expire_at_ms)) {
          return fail(RdbFileError::kTruncated);
        }
        continue;
      case kRdbOpcodeExpireTime: {
        std::string_view s;
        if (!in.read_raw(4, s)) {
          return fail(RdbFileError::kTruncated);
        }
        expire_at_ms = static_cast<int64_t>(static_cast<int32_t>(little_endian(s))) * 1000;
        continue;
      }
      case kRdbOpcodeIdle:  // the key's idle seconds (LRU): HotKV starts clocks afresh
        if (!in.read_length(n)) {
          return fail(RdbFileError::kTruncated);
        }
        continue;
      case kRdbOpcodeFreq: {  // the key's LFU counter: likewise
        uint8_t f = 0;
        if (!in.read_byte(f)) {
          return fail(RdbFileError::kTruncated);
        }
        continue;
      }
      case kRdbOpcodeFunction:
        if (!in.read_string(a)) {
          return fail(RdbFileError::kTruncated);
        }
        if (!handler.function(a)) {
          return fail(RdbFileError::kRefused);
        }
        continue;
      default:
        break;
    }
    if (op >= kRdbOpcodeFunction) {
      // Module aux data and Redis 7.0's pre-release function encoding.
      r.offset = at;
      r.error = RdbFileError::kBadOpcode;
      return r;
    }
    if (!in.read_string(key)) {
      return fail(RdbFileError::kTruncated);
    }
    if (!handler.key(key, op, expire_at_ms, in)) {
      r.offset = at;  // the key's start: the body did not decode (or was refused)
      r.error = RdbFileError::kBadObject;
      return r;
    }
    expire_at_ms = -1;
  }
}

}  // namespace hotkv
