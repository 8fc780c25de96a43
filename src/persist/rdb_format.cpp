#include "hotkv/persist/rdb_format.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <liblzf/lzf.h>

#include "hotkv/util/crc64.hpp"

namespace hotkv {
namespace {

// The two top bits of a length's first byte say how it is stored.
constexpr uint8_t k6Bit = 0;
constexpr uint8_t k14Bit = 1;
constexpr uint8_t k32Bit = 0x80;
constexpr uint8_t k64Bit = 0x81;
constexpr uint8_t kEncoded = 3;
// Special encodings of a string (the low six bits when the top two are kEncoded).
constexpr uint64_t kInt8 = 0;
constexpr uint64_t kInt16 = 1;
constexpr uint64_t kInt32 = 2;
constexpr uint64_t kLzf = 3;
// A decompressed string larger than this is refused rather than allocated (Redis's own bulk
// limit is 512 MB).
constexpr uint64_t kMaxStringBytes = 512ULL << 20;

void append_big_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

uint64_t read_little_endian(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = s.size(); i-- > 0;) {
    v = (v << 8) | static_cast<unsigned char>(s[i]);
  }
  return v;
}

}  // namespace

void rdb_append_length(std::string& out, uint64_t length) {
  if (length < (1u << 6)) {
    out.push_back(static_cast<char>(length));
  } else if (length < (1u << 14)) {
    out.push_back(static_cast<char>((k14Bit << 6) | (length >> 8)));
    out.push_back(static_cast<char>(length & 0xff));
  } else if (length <= UINT32_MAX) {
    out.push_back(static_cast<char>(k32Bit));
    append_big_endian(out, length, 4);
  } else {
    out.push_back(static_cast<char>(k64Bit));
    append_big_endian(out, length, 8);
  }
}

void rdb_append_string(std::string& out, std::string_view s) {
  rdb_append_length(out, s.size());
  out.append(s);
}

void rdb_append_binary_double(std::string& out, double d) {
  auto bits = std::bit_cast<uint64_t>(d);
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

void rdb_append_millis(std::string& out, int64_t ms) {
  const auto bits = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

void rdb_append_raw(std::string& out, std::string_view bytes) { out.append(bytes); }

void rdb_seal_payload(std::string& payload) {
  payload.push_back(static_cast<char>(kRdbVersion & 0xff));
  payload.push_back(static_cast<char>(kRdbVersion >> 8));
  uint64_t crc = crc64(0, payload);
  for (int i = 0; i < 8; ++i) {
    payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  }
}

bool rdb_open_payload(std::string_view payload, std::string_view& body) {
  if (payload.size() < 10) {
    return false;
  }
  size_t footer = payload.size() - 10;
  uint64_t version = read_little_endian(payload.substr(footer, 2));
  uint64_t crc = read_little_endian(payload.substr(footer + 2, 8));
  if (version > kRdbVersion || crc64(0, payload.substr(0, footer + 2)) != crc) {
    return false;
  }
  body = payload.substr(0, footer);
  return true;
}

bool RdbReader::take(size_t n, std::string_view& out) {
  if (n > data_.size() - pos_) {
    pos_ = data_.size();
    return false;
  }
  out = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool RdbReader::read_byte(uint8_t& out) {
  std::string_view b;
  if (!take(1, b)) {
    return false;
  }
  out = static_cast<uint8_t>(b[0]);
  return true;
}

bool RdbReader::read_length_or_encoding(uint64_t& out, bool& encoded) {
  encoded = false;
  uint8_t first = 0;
  if (!read_byte(first)) {
    return false;
  }
  uint8_t kind = first >> 6;
  if (kind == k6Bit) {
    out = first & 0x3f;
    return true;
  }
  if (kind == k14Bit) {
    uint8_t next = 0;
    if (!read_byte(next)) {
      return false;
    }
    out = (static_cast<uint64_t>(first & 0x3f) << 8) | next;
    return true;
  }
  if (kind == kEncoded) {
    encoded = true;
    out = first & 0x3f;
    return true;
  }
  // 32- and 64-bit lengths follow their marker byte in big endian.
  std::string_view b;
  if ((first != k32Bit && first != k64Bit) || !take(first == k32Bit ? 4 : 8, b)) {
    return false;
  }
  out = 0;
  for (char c : b) {
    out = (out << 8) | static_cast<unsigned char>(c);
  }
  return true;
}

bool RdbReader::read_length(uint64_t& out) {
  bool encoded = false;
  return read_length_or_encoding(out, encoded) && !encoded;
}

bool RdbReader::read_string(std::string& out) {
  uint64_t n = 0;
  bool encoded = false;
  if (!read_length_or_encoding(n, encoded)) {
    return false;
  }
  std::string_view b;
  if (!encoded) {
    if (!take(n, b)) {
      return false;
    }
    out.assign(b);
    return true;
  }
  if (n == kInt8 || n == kInt16 || n == kInt32) {
    size_t bytes = n == kInt8 ? 1 : n == kInt16 ? 2 : 4;
    if (!take(bytes, b)) {
      return false;
    }
    // Little endian, two's complement: sign-extend from the top bit of the last byte.
    uint64_t raw = read_little_endian(b);
    int64_t v = static_cast<int64_t>(raw << (64 - 8 * bytes)) >> (64 - 8 * bytes);
    out = std::to_string(v);
    return true;
  }
  if (n != kLzf) {
    return false;
  }
  uint64_t compressed = 0;
  uint64_t plain = 0;
  if (!read_length(compressed) || !read_length(plain) || plain > kMaxStringBytes ||
      !take(compressed, b)) {
    return false;
  }
  out.resize(plain);
  if (plain == 0) {
    return compressed == 0;
  }
  unsigned got = lzf_decompress(b.data(), static_cast<unsigned>(b.size()), out.data(),
                                static_cast<unsigned>(plain));
  return got == plain;
}

bool RdbReader::read_binary_double(double& out) {
  std::string_view b;
  if (!take(8, b)) {
    return false;
  }
  out = std::bit_cast<double>(read_little_endian(b));
  return true;
}

bool RdbReader::read_millis(int64_t& out) {
  std::string_view b;
  if (!take(8, b)) {
    return false;
  }
  out = static_cast<int64_t>(read_little_endian(b));
  return true;
}

bool RdbReader::read_text_double(double& out) {
  uint8_t len = 0;
  if (!read_byte(len)) {
    return false;
  }
  switch (len) {
    case 253:
      out = std::numeric_limits<double>::quiet_NaN();
      return true;
    case 254:
      out = std::numeric_limits<double>::infinity();
      return true;
    case 255:
      out = -std::numeric_limits<double>::infinity();
      return true;
    default:
      break;
  }
  std::string_view b;
  if (!take(len, b)) {
    return false;
  }
  std::string text(b);
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && !text.empty();
}

}  // namespace hotkv
