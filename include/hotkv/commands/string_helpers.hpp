// Helpers shared by the strings, keys and expire families: type checks that reply WRONGTYPE,
// the EX/PX/EXAT/PXAT/KEEPTTL/PERSIST option parser, and deadline arithmetic with Redis's
// overflow rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hotkv/types/value.hpp"

namespace hotkv {

struct CommandContext;

enum class ExpireUnit { kSecondsRelative, kMillisRelative, kSecondsAbsolute, kMillisAbsolute };

struct ExpireOption {
  enum Kind { kNone, kAt, kKeep, kPersist } kind = kNone;
  int64_t at_ms = kNoExpiry;
};

// Replies WRONGTYPE and returns false if v exists and is not a string.
bool string_or_reply(CommandContext& ctx, Value* v);
// Replies with a string value as a bulk string.
void reply_value(CommandContext& ctx, const Value& v);
// Parses one EX/PX/EXAT/PXAT (and optionally KEEPTTL/PERSIST) option at argv[i], advancing i
// past its argument. Replies the error and returns false on bad input.
bool parse_expire_option(CommandContext& ctx, size_t& i, ExpireOption& opt, bool allow_keepttl,
                         bool allow_persist);
// Converts n in `unit` to an absolute unix-ms deadline; false if n <= 0 or it overflows.
bool expire_deadline(int64_t n, ExpireUnit unit, int64_t now_ms, int64_t& at_ms);
// Case-insensitive comparison with an upper-case literal.
bool strcasecmp_view(std::string_view a, const char* upper);
// Case-insensitive comparison of two arbitrary strings.
bool equals_ignore_case(std::string_view a, std::string_view b);

}  // namespace hotkv
