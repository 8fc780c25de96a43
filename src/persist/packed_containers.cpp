#include "hotkv/persist/packed_containers.hpp"

#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

uint64_t little_endian(const unsigned char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = bytes; i-- > 0;) {
    v = (v << 8) | p[i];
  }
  return v;
}

int64_t sign_extend(uint64_t v, int bits) {
  return static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

// Bytes the back-length of an entry of `entry_bytes` (encoding and data) takes: 7 bits of
// the length per byte, with the bounds listpack.c uses (each one byte short of a full power
// of two: an entry of exactly 16383 bytes takes 3).
size_t backlen_size(uint64_t entry_bytes) {
  if (entry_bytes <= 127) {
    return 1;
  }
  if (entry_bytes < 16383) {
    return 2;
  }
  if (entry_bytes < 2097151) {
    return 3;
  }
  if (entry_bytes < 268435455) {
    return 4;
  }
  return 5;
}

void append_little_endian(std::string& out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

// Listpack header: total bytes (4) and element count (2), both little endian.
constexpr size_t kHeaderBytes = 6;
constexpr uint8_t kEnd = 0xFF;
constexpr uint16_t kCountUnknown = 65535;

}  // namespace

bool listpack_entries(std::string_view lp, std::vector<std::string>& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data());
  const size_t size = lp.size();
  if (size < kHeaderBytes + 1 || little_endian(p, 4) != size) {
    return false;
  }
  const auto declared = static_cast<uint16_t>(little_endian(p + 4, 2));
  size_t pos = kHeaderBytes;
  size_t count = 0;
  while (true) {
    if (pos >= size) {
      return false;
    }
    const uint8_t b = p[pos];
    if (b == kEnd) {
      break;
    }
    const size_t left = size - pos;
    size_t header = 1;  // encoding bytes before the data
    uint64_t data = 0;  // string bytes, or integer bytes
    bool is_string = false;
    int64_t value = 0;
    if ((b & 0x80) == 0) {  // 0xxxxxxx: 7-bit unsigned integer
      value = b & 0x7F;
    } else if ((b & 0xC0) == 0x80) {  // 10xxxxxx: string of up to 63 bytes
      is_string = true;
      data = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {  // 110xxxxx yyyyyyyy: 13-bit signed integer
      if (left < 2) {
        return false;
      }
      header = 2;
      value = sign_extend((static_cast<uint64_t>(b & 0x1F) << 8) | p[pos + 1], 13);
    } else if ((b & 0xF0) == 0xE0) {  // 1110xxxx yyyyyyyy: string of up to 4095 bytes
      if (left < 2) {
        return false;
      }
      header = 2;
      is_string = true;
      data = (static_cast<uint64_t>(b & 0x0F) << 8) | p[pos + 1];
    } else if (b == 0xF0) {  // 32-bit string length follows
      if (left < 5) {
        return false;
      }
      header = 5;
      is_string = true;
      data = little_endian(p + pos + 1, 4);
    } else if (b >= 0xF1 && b <= 0xF4) {  // 16-, 24-, 32- or 64-bit signed integer
      static constexpr size_t kWidth[] = {2, 3, 4, 8};
      const size_t w = kWidth[b - 0xF1];
      if (left < 1 + w) {
        return false;
      }
      header = 1 + w;
      value = sign_extend(little_endian(p + pos + 1, w), static_cast<int>(8 * w));
    } else {
      return false;  // 0xF5..0xFE are unused
    }
    const uint64_t entry = header + (is_string ? data : 0);
    if (entry > left || backlen_size(entry) > left - entry) {
      return false;
    }
    if (is_string) {
      out.emplace_back(lp.substr(pos + header, data));
    } else {
      out.push_back(std::to_string(value));
    }
    pos += entry + backlen_size(entry);
    ++count;
  }
  return pos == size - 1 && (declared == kCountUnknown || declared == count);
}

bool intset_members(std::string_view is, std::vector<int64_t>& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(is.data());
  if (is.size() < 8) {
    return false;
  }
  const uint64_t width = little_endian(p, 4);
  const uint64_t length = little_endian(p + 4, 4);
  if ((width != 2 && width != 4 && width != 8) || is.size() - 8 != width * length) {
    return false;
  }
  for (uint64_t i = 0; i < length; ++i) {
    out.push_back(
        sign_extend(little_endian(p + 8 + i * width, width), static_cast<int>(8 * width)));
  }
  return true;
}

ListpackWriter::ListpackWriter() : buf_(kHeaderBytes, '\0') {}

void ListpackWriter::add(std::string_view s) {
  int64_t v = 0;
  if (is_canonical_int64(s, v)) {
    add_integer(v);
    return;
  }
  const size_t start = buf_.size();
  if (s.size() < 64) {
    buf_.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    buf_.push_back(static_cast<char>(0xE0 | (s.size() >> 8)));
    buf_.push_back(static_cast<char>(s.size() & 0xff));
  } else {
    buf_.push_back(static_cast<char>(0xF0));
    append_little_endian(buf_, s.size(), 4);
  }
  buf_.append(s);
  end_entry(start);
}

void ListpackWriter::add_integer(int64_t v) {
  const size_t start = buf_.size();
  const auto u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    buf_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t bits = u & 0x1FFF;
    buf_.push_back(static_cast<char>(0xC0 | (bits >> 8)));
    buf_.push_back(static_cast<char>(bits & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    buf_.push_back(static_cast<char>(0xF1));
    append_little_endian(buf_, u, 2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    buf_.push_back(static_cast<char>(0xF2));
    append_little_endian(buf_, u, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    buf_.push_back(static_cast<char>(0xF3));
    append_little_endian(buf_, u, 4);
  } else {
    buf_.push_back(static_cast<char>(0xF4));
    append_little_endian(buf_, u, 8);
  }
  end_entry(start);
}

void ListpackWriter::end_entry(size_t entry_start) {
  const uint64_t l = buf_.size() - entry_start;
  const size_t n = backlen_size(l);
  // Most significant 7 bits first; every byte but the first has the top bit set, so a reader
  // walking backwards knows where the length ends.
  for (size_t i = n; i-- > 0;) {
    auto chunk = static_cast<uint8_t>((l >> (7 * i)) & 127);
    buf_.push_back(static_cast<char>(i + 1 == n ? chunk : (chunk | 128)));
  }
  ++count_;
}

std::string ListpackWriter::finish() {
  buf_.push_back(static_cast<char>(kEnd));
  std::string header;
  append_little_endian(header, buf_.size(), 4);
  append_little_endian(header, count_ < kCountUnknown ? count_ : kCountUnknown, 2);
  buf_.replace(0, kHeaderBytes, header);
  return std::move(buf_);
}

}  // namespace hotkv
