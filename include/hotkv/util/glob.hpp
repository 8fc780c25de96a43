// Redis-style glob matching for KEYS, SCAN MATCH, CONFIG GET and CLIENT KILL patterns:
// `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes, optionally case-insensitive.
#pragma once

#include <string_view>

namespace hotkv {

// Thread-safe and allocation-free. Deeply nested stars are bounded by an iterative matcher, so
// a hostile pattern cannot blow the stack.
bool glob_match(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace hotkv
