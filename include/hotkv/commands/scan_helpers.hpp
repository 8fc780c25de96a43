// The argument parsing HSCAN, SSCAN and ZSCAN share: Redis's cursor rules and the
// MATCH/COUNT (and, for HSCAN, NOVALUES) options.
#pragma once

#include <cstdint>
#include <string_view>

namespace hotkv {

struct CommandContext;

// A SCAN-family cursor as Redis reads it (strtoul): any unsigned 64-bit decimal, where a
// leading '-' wraps around and "" is 0; leading spaces, trailing bytes and overflow are
// answered with "ERR invalid cursor".
bool parse_scan_cursor_or_reply(CommandContext& ctx, std::string_view arg, uint64_t& out);

struct ScanOptions {
  std::string_view pattern;
  bool has_pattern = false;  // a MATCH other than "*"
  int64_t count = 10;
  bool novalues = false;
};

// Parses [MATCH pattern] [COUNT count] (and NOVALUES if allowed) from argv[first...]; replies
// Redis's errors (syntax error, COUNT not a positive integer) and returns false on a bad one.
bool parse_scan_options_or_reply(CommandContext& ctx, size_t first, bool allow_novalues,
                                 ScanOptions& out);

// The reply for a missing key: cursor "0" and no elements.
void reply_empty_scan(CommandContext& ctx);

}  // namespace hotkv
