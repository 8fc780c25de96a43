// What EVAL-style and FCALL-style commands share: `<name> <script|function> numkeys key...
// arg...`.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace hotkv {

struct CommandContext;

// Key finder: the keys follow numkeys (argv[2]).
void numkeys_keys(std::span<const std::string_view> argv, std::vector<size_t>& out);

// Parses numkeys with Redis's errors (not an integer, negative, more than the arguments).
bool parse_numkeys_or_reply(CommandContext& ctx, size_t& out);

}  // namespace hotkv
