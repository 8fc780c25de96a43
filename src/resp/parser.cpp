// The RESP request parser: a resumable state machine over multibulk and inline requests. The
// checks, their order and their error texts follow Redis's processMultibulkBuffer and
// processInlineBuffer (networking.c) and sdssplitargs (sds.c), so clients see the same replies
// for malformed input as they would from Redis.
#include "hotkv/resp/parser.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace hotkv {

namespace {

// Redis's PROTO_INLINE_MAX_SIZE also caps the `*<n>` and `$<len>` lines: a longer one without
// its '\r' is an error rather than a reason to keep buffering.
constexpr size_t kMaxCountLine = 64 * 1024;

// Redis's LONG_STR_SIZE: string2ll refuses anything this long or longer.
constexpr size_t kMaxIntegerChars = 21;

// After a huge command, drop the span table instead of keeping megabytes per connection.
constexpr size_t kMaxKeptSpans = 64 * 1024;

// The most span slots reserved up front from a claimed count, as Redis does for argv.
constexpr int64_t kMaxReservedSpans = 1024;

// Redis's string2ll: an optional '-', then digits with no leading zero (except "0" itself), no
// spaces or '+', and no overflow. Anything else makes the length line invalid.
bool parse_int64(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() >= kMaxIntegerChars) {
    return false;
  }
  if (s.size() == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) {
      return false;
    }
  }
  if (s[i] < '1' || s[i] > '9') {
    return false;
  }
  uint64_t v = static_cast<uint64_t>(s[i] - '0');
  for (++i; i < s.size(); ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') {
      return false;
    }
    const auto digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return false;
    }
    v = v * 10 + digit;
  }
  constexpr auto kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (v > kMaxPositive + 1) {
      return false;
    }
    // Two's complement negation in unsigned arithmetic, so INT64_MIN does not overflow.
    out = static_cast<int64_t>(~v + 1);
  } else {
    if (v > kMaxPositive) {
      return false;
    }
    out = static_cast<int64_t>(v);
  }
  return true;
}

// The common case of a length line: `type` then 1 to 18 digits without a leading zero, then
// '\r' and one more byte, all present at cmd[at]. Reads it in one pass and sets `value` and
// `next` (the offset after the line). Returns false for anything else, which then goes through
// the general path; for any line accepted here that path would give the same result.
bool parse_short_length_line(std::string_view cmd, size_t at, char type, int64_t& value,
                             size_t& next) {
  constexpr size_t kMaxFastDigits = 18;  // Cannot overflow int64_t.
  if (at >= cmd.size() || cmd[at] != type) {
    return false;
  }
  const size_t first = at + 1;
  const size_t limit = std::min(cmd.size(), first + kMaxFastDigits);
  size_t i = first;
  int64_t v = 0;
  while (i < limit && cmd[i] >= '0' && cmd[i] <= '9') {
    v = v * 10 + (cmd[i] - '0');
    ++i;
  }
  const size_t digits = i - first;
  if (digits == 0 || (digits > 1 && cmd[first] == '0')) {
    return false;
  }
  if (i + 1 >= cmd.size() || cmd[i] != '\r') {
    return false;
  }
  value = v;
  next = i + 2;
  return true;
}

// Finds `c` in cmd[from, limit), clamping `limit` to the bytes present. Returns npos if absent.
size_t find_byte(std::string_view cmd, char c, size_t from, size_t limit) {
  limit = std::min(limit, cmd.size());
  if (from >= limit) {
    return std::string_view::npos;
  }
  const void* hit = std::memchr(cmd.data() + from, c, limit - from);
  if (hit == nullptr) {
    return std::string_view::npos;
  }
  return static_cast<size_t>(static_cast<const char*>(hit) - cmd.data());
}

// isspace() in the C locale, which is what sdssplitargs uses to skip blanks and to accept the
// byte after a closing quote.
bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return c - 'A' + 10;
}

}  // namespace

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::set_limits(const ParserLimits& l) { limits_ = l; }

const std::string& RequestParser::error() const { return error_; }

void RequestParser::reset() {
  start_next_command();
  error_.clear();
}

void RequestParser::start_next_command() {
  state_ = State::kIdle;
  pos_ = 0;
  scan_ = 0;
  args_left_ = 0;
  bulk_len_ = 0;
  if (spans_.capacity() > kMaxKeptSpans) {
    std::vector<Span>().swap(spans_);
  } else {
    spans_.clear();
  }
  inline_count_ = 0;
}

RequestParser::Step RequestParser::fail(std::string text) {
  error_ = std::move(text);
  state_ = State::kFailed;
  return Step::kError;
}

ParseStatus RequestParser::parse(std::string_view data, size_t& consumed,
                                 std::vector<std::string_view>& args) {
  consumed = 0;
  args.clear();
  // Bytes of empty commands skipped during this call; the current command starts here.
  size_t base = 0;
  for (;;) {
    const std::string_view cmd = data.substr(base);
    Step step = Step::kNeedMore;
    switch (state_) {
      case State::kFailed: {
        return ParseStatus::kError;
      }
      case State::kIdle: {
        if (cmd.empty()) {
          consumed = base;
          return ParseStatus::kNeedMore;
        }
        // Like Redis, the first byte alone picks the request type.
        state_ = cmd[0] == '*' ? State::kMultibulkCount : State::kInline;
        continue;
      }
      case State::kMultibulkCount: {
        // kDone here only means the count line is read; the arguments follow.
        step = parse_multibulk_count(cmd);
        if (step == Step::kDone) {
          step = parse_bulks(cmd);
        }
        break;
      }
      case State::kBulkLen:
      case State::kBulkData: {
        step = parse_bulks(cmd);
        break;
      }
      case State::kInline: {
        step = parse_inline(cmd);
        break;
      }
    }

    switch (step) {
      case Step::kNeedMore: {
        consumed = base;
        return ParseStatus::kNeedMore;
      }
      case Step::kSkipped: {
        base += pos_;
        start_next_command();
        continue;
      }
      case Step::kError: {
        return ParseStatus::kError;
      }
      case Step::kDone: {
        if (state_ == State::kInline) {
          args.reserve(inline_count_);
          for (size_t i = 0; i < inline_count_; ++i) {
            args.emplace_back(inline_args_[i]);
          }
        } else {
          args.reserve(spans_.size());
          for (const Span& s : spans_) {
            args.emplace_back(cmd.data() + s.offset, s.length);
          }
        }
        consumed = base + pos_;
        // The inline slots keep their contents until the next call, which the views rely on.
        start_next_command();
        return ParseStatus::kComplete;
      }
    }
  }
}

RequestParser::Step RequestParser::parse_multibulk_count(std::string_view cmd) {
  int64_t count = 0;
  size_t next = 0;
  if (!parse_short_length_line(cmd, 0, '*', count, next)) {
    // Redis finds the line by its '\r' and only requires one more byte to be present; the byte
    // after '\r' is skipped unchecked.
    const size_t cr = find_byte(cmd, '\r', scan_, kMaxCountLine + 1);
    if (cr == std::string_view::npos) {
      scan_ = std::min(cmd.size(), kMaxCountLine + 1);
      if (cmd.size() > kMaxCountLine) {
        return fail("Protocol error: too big mbulk count string");
      }
      return Step::kNeedMore;
    }
    if (cr + 2 > cmd.size()) {
      scan_ = cr;
      return Step::kNeedMore;
    }
    if (!parse_int64(cmd.substr(1, cr - 1), count)) {
      return fail("Protocol error: invalid multibulk length");
    }
    next = cr + 2;
  }
  if (count > limits_.max_multibulk_len) {
    return fail("Protocol error: invalid multibulk length");
  }
  pos_ = next;
  scan_ = pos_;
  if (count <= 0) {
    // Redis treats `*0` and negative counts as an empty command and drops it silently.
    return Step::kSkipped;
  }
  args_left_ = count;
  spans_.reserve(static_cast<size_t>(std::min(count, kMaxReservedSpans)));
  state_ = State::kBulkLen;
  return Step::kDone;
}

RequestParser::Step RequestParser::parse_bulks(std::string_view cmd) {
  while (args_left_ > 0) {
    if (state_ == State::kBulkLen) {
      int64_t fast_len = 0;
      size_t next = 0;
      if (parse_short_length_line(cmd, pos_, '$', fast_len, next) &&
          fast_len <= limits_.max_bulk_len) {
        bulk_len_ = fast_len;
        pos_ = next;
        state_ = State::kBulkData;
      }
    }
    if (state_ == State::kBulkLen) {
      const size_t cr = find_byte(cmd, '\r', scan_, pos_ + kMaxCountLine + 1);
      if (cr == std::string_view::npos) {
        scan_ = std::min(cmd.size(), pos_ + kMaxCountLine + 1);
        if (cmd.size() - pos_ > kMaxCountLine) {
          return fail("Protocol error: too big bulk count string");
        }
        return Step::kNeedMore;
      }
      if (cr + 2 > cmd.size()) {
        scan_ = cr;
        return Step::kNeedMore;
      }
      // Redis checks the type byte only once the whole line is there.
      if (cmd[pos_] != '$') {
        // Redis's error replies turn '\r' and '\n' into spaces; doing it here keeps the text
        // safe to log and to send however the caller writes it.
        std::string text = "Protocol error: expected '$', got ' '";
        if (cmd[pos_] != '\r' && cmd[pos_] != '\n') {
          text[text.size() - 2] = cmd[pos_];
        }
        return fail(std::move(text));
      }
      int64_t len = 0;
      if (!parse_int64(cmd.substr(pos_ + 1, cr - pos_ - 1), len) || len < 0 ||
          len > limits_.max_bulk_len) {
        return fail("Protocol error: invalid bulk length");
      }
      bulk_len_ = len;
      pos_ = cr + 2;
      state_ = State::kBulkData;
    }
    // The payload plus its trailing two bytes must all be present. Like Redis, those two bytes
    // are skipped without checking that they are "\r\n".
    const auto len = static_cast<size_t>(bulk_len_);
    if (cmd.size() - pos_ < len + 2) {
      return Step::kNeedMore;
    }
    spans_.push_back(Span{pos_, len});
    pos_ += len + 2;
    scan_ = pos_;
    --args_left_;
    state_ = State::kBulkLen;
  }
  return Step::kDone;
}

RequestParser::Step RequestParser::parse_inline(std::string_view cmd) {
  // Redis errors when more than the limit is buffered without a '\n'. Looking for the '\n' only
  // within the first limit + 1 bytes makes the outcome independent of how the bytes arrive.
  const size_t window = std::max(limits_.max_inline_len, limits_.max_inline_len + 1);
  const size_t nl = find_byte(cmd, '\n', scan_, window);
  if (nl == std::string_view::npos) {
    scan_ = std::min(cmd.size(), window);
    if (cmd.size() > limits_.max_inline_len) {
      return fail("Protocol error: too big inline request");
    }
    return Step::kNeedMore;
  }
  size_t line_len = nl;
  if (line_len > 0 && cmd[line_len - 1] == '\r') {
    --line_len;
  }
  if (!split_inline(cmd.substr(0, line_len))) {
    return fail("Protocol error: unbalanced quotes in request");
  }
  pos_ = nl + 1;
  if (inline_count_ == 0) {
    return Step::kSkipped;
  }
  return Step::kDone;
}

std::string& RequestParser::next_inline_slot() {
  if (inline_count_ == inline_args_.size()) {
    inline_args_.emplace_back();
  }
  std::string& slot = inline_args_[inline_count_++];
  slot.clear();
  return slot;
}

bool RequestParser::split_inline(std::string_view line) {
  // sdssplitargs walks a C string, so an embedded NUL ends the line.
  if (const size_t nul = line.find('\0'); nul != std::string_view::npos) {
    line = line.substr(0, nul);
  }
  inline_count_ = 0;
  const size_t n = line.size();
  // The byte at k, or the terminating NUL past the end, as sdssplitargs would see it.
  const auto at = [&](size_t k) -> char { return k < n ? line[k] : '\0'; };
  size_t i = 0;
  for (;;) {
    while (i < n && is_c_space(line[i])) {
      ++i;
    }
    if (i >= n) {
      return true;
    }
    std::string& arg = next_inline_slot();
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      const char c = at(i);
      if (in_double) {
        if (c == '\\' && at(i + 1) == 'x' && is_hex_digit(at(i + 2)) && is_hex_digit(at(i + 3))) {
          arg.push_back(static_cast<char>(hex_value(at(i + 2)) * 16 + hex_value(at(i + 3))));
          i += 3;
        } else if (c == '\\' && at(i + 1) != '\0') {
          ++i;
          switch (line[i]) {
            case 'n': {
              arg.push_back('\n');
              break;
            }
            case 'r': {
              arg.push_back('\r');
              break;
            }
            case 't': {
              arg.push_back('\t');
              break;
            }
            case 'b': {
              arg.push_back('\b');
              break;
            }
            case 'a': {
              arg.push_back('\a');
              break;
            }
            default: {
              arg.push_back(line[i]);
              break;
            }
          }
        } else if (c == '"') {
          // A closing quote must be followed by a blank or the end of the line.
          if (at(i + 1) != '\0' && !is_c_space(at(i + 1))) {
            return false;
          }
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          arg.push_back(c);
        }
      } else if (in_single) {
        if (c == '\\' && at(i + 1) == '\'') {
          ++i;
          arg.push_back('\'');
        } else if (c == '\'') {
          if (at(i + 1) != '\0' && !is_c_space(at(i + 1))) {
            return false;
          }
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          arg.push_back(c);
        }
      } else {
        // Unquoted, only these end a token; '\v' and '\f' are kept, as in sdssplitargs. A quote
        // may open in the middle of a token and its contents join that token.
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0': {
            done = true;
            break;
          }
          case '"': {
            in_double = true;
            break;
          }
          case '\'': {
            in_single = true;
            break;
          }
          default: {
            arg.push_back(c);
            break;
          }
        }
      }
      if (i < n) {
        ++i;
      }
    }
  }
}

}  // namespace hotkv
