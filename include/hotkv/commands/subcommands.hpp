// Containers whose subcommands each have a fixed arity (LATENCY, MEMORY, SLOWLOG, MODULE):
// one table per command and one dispatcher that finds the subcommand (case-insensitively),
// checks its arity and runs it, with Redis's error texts for an unknown subcommand or a wrong
// number of arguments.
#pragma once

#include <span>
#include <string_view>

#include "hotkv/commands/context.hpp"

namespace hotkv {

struct Subcommand {
  const char* name;  // upper case
  int arity;         // counting the command and the subcommand; negative: at least
  void (*run)(CommandContext&);
};

// Runs ctx.arg(1) from `table`. `command` is the container's name in upper case (MEMORY).
void run_subcommand(CommandContext& ctx, std::span<const Subcommand> table,
                    std::string_view command);

}  // namespace hotkv
