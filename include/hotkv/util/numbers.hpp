// Number parsing and formatting with Redis's exact rules. Redis is strict about what counts
// as an integer ("01", "+1", " 1" are not) and prints doubles in two styles: %.17g for
// replies and a human-friendly fixed form for INCRBYFLOAT results. Every command that reads
// or writes numbers goes through here so the edge cases live in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hotkv {

// Parses a canonical signed 64-bit integer: optional '-', no '+', no leading zeros, no
// spaces, no overflow. Thread-safe. Returns nullopt on anything else.
std::optional<int64_t> parse_int64(std::string_view s);

// Parses a long double as Redis's string2ld does: no spaces, no NaN, finite or +/-inf as
// written ("inf", "-inf", "+inf"). Returns nullopt on anything else.
std::optional<long double> parse_long_double(std::string_view s);

// Parses a double for arguments such as scores and INCRBYFLOAT increments (string2d rules).
std::optional<double> parse_double(std::string_view s);

// Formats the result of INCRBYFLOAT: fixed notation, 17 significant digits, trailing zeros
// (and a trailing dot) removed, as Redis's ld2string in humanfriendly mode.
std::string format_long_double_human(long double v);

// Appends the decimal text of v to out without allocating a temporary.
void append_int64(std::string& out, int64_t v);

// True if the string is exactly the canonical text of an int64 (so it may be stored as one).
inline bool is_canonical_int64(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 20) {
    return false;
  }
  auto v = parse_int64(s);
  if (!v) {
    return false;
  }
  out = *v;
  return true;
}

}  // namespace hotkv
