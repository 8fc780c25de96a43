// A small RESP2/RESP3 reply parser for tests that need to look inside nested replies (XINFO
// maps, XPENDING records) instead of comparing whole byte strings. Header-only; test use only.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv::test {

struct Resp {
  char type = 0;            // the RESP type byte: + - : $ * % _ , # ~ > =
  bool null = false;        // $-1, *-1 or _
  std::string str;          // simple, error, bulk, verbatim and double texts
  int64_t num = 0;          // integers and booleans
  std::vector<Resp> items;  // arrays, sets, pushes; maps as key, value, key, value...

  size_t size() const { return items.size(); }
  const Resp& at(size_t i) const { return items.at(i); }
  // The value under a bulk/simple key of a map or of a flat key/value array (XINFO in RESP2).
  const Resp& operator[](std::string_view key) const {
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (items[i].str == key) {
        return items[i + 1];
      }
    }
    throw std::out_of_range("no field " + std::string(key));
  }
};

namespace detail {

inline std::string_view resp_line(std::string_view data, size_t& pos) {
  size_t end = data.find("\r\n", pos);
  if (end == std::string_view::npos) {
    throw std::runtime_error("truncated RESP");
  }
  std::string_view line = data.substr(pos, end - pos);
  pos = end + 2;
  return line;
}

inline Resp parse_resp_at(std::string_view data, size_t& pos) {
  if (pos >= data.size()) {
    throw std::runtime_error("truncated RESP");
  }
  Resp r;
  r.type = data[pos++];
  std::string line(resp_line(data, pos));
  switch (r.type) {
    case '+':
    case '-':
    case ',':
      r.str = line;
      break;
    case ':':
      r.num = std::stoll(line);
      break;
    case '#':
      r.num = line == "t" ? 1 : 0;
      break;
    case '_':
      r.null = true;
      break;
    case '$':
    case '=': {
      int64_t n = std::stoll(line);
      if (n < 0) {
        r.null = true;
        break;
      }
      r.str = std::string(data.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n) + 2;
      break;
    }
    case '*':
    case '~':
    case '>':
    case '%': {
      int64_t n = std::stoll(line);
      if (n < 0) {
        r.null = true;
        break;
      }
      if (r.type == '%') {
        n *= 2;
      }
      for (int64_t i = 0; i < n; ++i) {
        r.items.push_back(parse_resp_at(data, pos));
      }
      break;
    }
    default:
      throw std::runtime_error("unknown RESP type");
  }
  return r;
}

}  // namespace detail

// Parses exactly one reply; throws if the bytes are not one complete reply.
inline Resp parse_resp(std::string_view data) {
  size_t pos = 0;
  Resp r = detail::parse_resp_at(data, pos);
  if (pos != data.size()) {
    throw std::runtime_error("trailing bytes after RESP reply");
  }
  return r;
}

}  // namespace hotkv::test
