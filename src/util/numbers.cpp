// Number parsing and formatting with Redis's exact rules (see numbers.hpp for why).
#include "hotkv/util/numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hotkv {

std::optional<int64_t> parse_int64(std::string_view s) {
  if (s.empty() || s.size() > 20) {
    return std::nullopt;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) {
      return std::nullopt;
    }
  }
  // "0" is the only integer allowed to start with a zero; "-0" is rejected like Redis does.
  if (s[i] == '0') {
    if (s.size() == 1) {
      return 0;
    }
    return std::nullopt;
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) {
      return std::nullopt;
    }
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) {
      return std::nullopt;
    }
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

std::optional<long double> parse_long_double(std::string_view s) {
  if (s.empty() || s.size() >= 5120) {
    return std::nullopt;
  }
  if (std::isspace(static_cast<unsigned char>(s.front())) ||
      std::isspace(static_cast<unsigned char>(s.back()))) {
    return std::nullopt;
  }
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) {
    return std::nullopt;
  }
  if (errno == ERANGE && !std::isinf(v)) {
    // Underflow to a tiny value is accepted by Redis; overflow produced inf above.
    errno = 0;
  }
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  if (s.empty() || s.size() >= 5120) {
    return std::nullopt;
  }
  if (std::isspace(static_cast<unsigned char>(s.front())) ||
      std::isspace(static_cast<unsigned char>(s.back()))) {
    return std::nullopt;
  }
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) {
    return std::nullopt;
  }
  if (errno == ERANGE && !std::isinf(v) && v != 0) {
    errno = 0;
  }
  return v;
}

std::string format_long_double_human(long double v) {
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  char buf[5200];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) {
    return "0";
  }
  if (std::memchr(buf, '.', static_cast<size_t>(len)) != nullptr) {
    while (len > 0 && buf[len - 1] == '0') {
      --len;
    }
    if (len > 0 && buf[len - 1] == '.') {
      --len;
    }
  }
  std::string out(buf, static_cast<size_t>(len));
  if (out == "-0") {
    out = "0";
  }
  return out;
}

void append_int64(std::string& out, int64_t v) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  out.append(buf, ptr);
}

}  // namespace hotkv
