// Glob matching (see glob.hpp). The matcher is iterative with single-star backtracking:
// when a later '*' appears, earlier stars never need revisiting, which keeps the worst case
// at O(pattern * text) instead of exponential.
#include "hotkv/util/glob.hpp"

#include <cctype>
#include <cstddef>

namespace hotkv {
namespace {

char fold(char c, bool nocase) {
  return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

// Matches one character against the class starting at pattern[p] == '['. Sets p past the
// class. Returns whether c is matched.
bool match_class(std::string_view pattern, size_t& p, char c, bool nocase) {
  ++p;  // skip '['
  bool negate = false;
  if (p < pattern.size() && pattern[p] == '^') {
    negate = true;
    ++p;
  }
  bool matched = false;
  while (p < pattern.size() && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
      ++p;
      if (fold(pattern[p], nocase) == fold(c, nocase)) {
        matched = true;
      }
      ++p;
    } else if (p + 2 < pattern.size() && pattern[p + 1] == '-' && pattern[p + 2] != ']') {
      char lo = fold(pattern[p], nocase);
      char hi = fold(pattern[p + 2], nocase);
      if (lo > hi) {
        char t = lo;
        lo = hi;
        hi = t;
      }
      char fc = fold(c, nocase);
      if (fc >= lo && fc <= hi) {
        matched = true;
      }
      p += 3;
    } else {
      if (fold(pattern[p], nocase) == fold(c, nocase)) {
        matched = true;
      }
      ++p;
    }
  }
  if (p < pattern.size()) {
    ++p;  // skip ']'
  }
  return negate ? !matched : matched;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool nocase) {
  size_t p = 0;
  size_t t = 0;
  size_t star_p = std::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        while (p < pattern.size() && pattern[p] == '*') {
          ++p;
        }
        if (p == pattern.size()) {
          return true;
        }
        star_p = p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        size_t np = p;
        if (match_class(pattern, np, text[t], nocase)) {
          p = np;
          ++t;
          continue;
        }
      } else {
        size_t np = p;
        if (pc == '\\' && p + 1 < pattern.size()) {
          ++np;
        }
        if (fold(pattern[np], nocase) == fold(text[t], nocase)) {
          p = np + 1;
          ++t;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

}  // namespace hotkv
