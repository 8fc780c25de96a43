// RequestParser turns the bytes a client sends into command argument lists. It speaks both
// request forms Redis accepts: RESP multibulk (`*<n>\r\n$<len>\r\n<bytes>\r\n...`) and inline
// lines split with Redis's sdssplitargs rules. It is incremental: a request that arrives in
// pieces is resumed where the last call stopped, so the cost of a request is linear in its
// size however it is split. The parser never owns the connection buffer; it keeps offsets into
// it, because the connection may move that buffer between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

// Mirrors the Redis limits of the same names. A claimed length is only ever checked against
// these, never used to size an allocation.
struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;        // proto-max-bulk-len
  int64_t max_multibulk_len = 1024LL * 1024 * 1024;  // Redis's hard limit
  size_t max_inline_len = 64 * 1024;                 // inline request limit
};

enum class ParseStatus { kComplete, kNeedMore, kError };

// One parser per connection, used only by the thread that owns that connection.
class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {});

  // Takes effect from the next check onwards, also for a request already half parsed (this is
  // what CONFIG SET proto-max-bulk-len does in Redis).
  void set_limits(const ParserLimits& l);

  // REQUIRES: `data` begins at the first byte of the current, not yet consumed command. Between
  // calls that returned kNeedMore the caller only appends bytes: the prefix is unchanged, but
  // the buffer may have moved (the parser keeps offsets, never pointers).
  //
  // kComplete: `args` holds views of the command's arguments and `consumed` is the number of
  //   bytes to drop from the front of the buffer. The views point into `data` (multibulk) or
  //   into storage owned by the parser (inline, which may need unescaping); either way they
  //   stay valid until the caller drops the bytes or calls parse() again, whichever is first.
  //   `consumed` also covers any empty commands skipped before this one.
  // kNeedMore: the next command is not complete yet. `consumed` is normally 0; it is > 0 when
  //   empty commands (blank inline lines, `*0`, `*-1`) were skipped, which Redis ignores
  //   silently. The caller drops those bytes, then calls again (at once if bytes remain, else
  //   after the next read). Partial progress is kept relative to the remaining bytes.
  // kError: a protocol error; error() holds the Redis text (without the "ERR " prefix) and
  //   `consumed` is 0. The parser stays failed until reset(); the connection should send the
  //   error and close, as Redis does.
  ParseStatus parse(std::string_view data, size_t& consumed, std::vector<std::string_view>& args);

  // The text of the last kError, e.g. "Protocol error: invalid bulk length"; empty otherwise.
  const std::string& error() const;

  // Forgets any partial command and any error. Keeps the buffers it has grown, so a reset
  // parser still parses without allocating.
  void reset();

 private:
  // What the parser waits for next. Positions are offsets from the start of the current command.
  enum class State : uint8_t { kIdle, kMultibulkCount, kBulkLen, kBulkData, kInline, kFailed };

  // The outcome of one step of the state machine, before it is mapped to ParseStatus.
  enum class Step : uint8_t { kNeedMore, kDone, kSkipped, kError };

  // Where one multibulk argument lies within the current command.
  struct Span {
    size_t offset;
    size_t length;
  };

  Step parse_multibulk_count(std::string_view cmd);
  Step parse_bulks(std::string_view cmd);
  Step parse_inline(std::string_view cmd);
  bool split_inline(std::string_view line);
  std::string& next_inline_slot();
  Step fail(std::string text);
  void start_next_command();

  ParserLimits limits_;
  State state_ = State::kIdle;
  // First byte of the current command not yet turned into an argument (or line).
  size_t pos_ = 0;
  // Where the search for the current line's terminator resumes, so that a line arriving byte
  // by byte is scanned once.
  size_t scan_ = 0;
  // Multibulk: arguments still to read, and the length of the bulk being read.
  int64_t args_left_ = 0;
  int64_t bulk_len_ = 0;
  std::vector<Span> spans_;
  // Inline arguments, unescaped. Slots are reused across commands to avoid allocating; only the
  // first inline_count_ belong to the current command.
  std::vector<std::string> inline_args_;
  size_t inline_count_ = 0;
  std::string error_;
};

}  // namespace hotkv
