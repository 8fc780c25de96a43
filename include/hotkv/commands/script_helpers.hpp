// What EVAL-style and FCALL-style commands share: `<name> <script|function> numkeys key...
// arg...`.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace hotkv {

struct CommandContext;
struct CommandSpec;
class Engine;

// Key finder: the keys follow numkeys (argv[2]).
void numkeys_keys(std::span<const std::string_view> argv, std::vector<size_t>& out);

// Parses numkeys with Redis's errors (not an integer, negative, more than the arguments).
bool parse_numkeys_or_reply(CommandContext& ctx, size_t& out);

// For EVAL/EVALSHA/FCALL and their _RO forms with several threads: true unless every run of
// the script so far touched only its declared KEYS (KeyMode::kDeclared), so the dispatcher
// runs it with every shard parked. A script's first run is one of those: it shows whether the
// script reaches beyond its KEYS. Called by the routing thread; cheap for a known script (a
// per-thread cache, no lock).
bool script_needs_every_shard(const CommandSpec& spec, std::span<const std::string_view> argv,
                              Engine& engine);

}  // namespace hotkv
