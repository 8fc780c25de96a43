// The subcommand dispatcher (see subcommands.hpp).
#include "hotkv/commands/subcommands.hpp"

#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {

void run_subcommand(CommandContext& ctx, std::span<const Subcommand> table,
                    std::string_view command) {
  std::string_view sub = ctx.arg(1);
  for (const Subcommand& s : table) {
    if (!strcasecmp_view(sub, s.name)) {
      continue;
    }
    auto argc = static_cast<int>(ctx.argc());
    if (s.arity >= 0 ? argc != s.arity : argc < -s.arity) {
      ctx.error(err::subcommand_arity(ascii_lower(command), sub));
      return;
    }
    s.run(ctx);
    return;
  }
  ctx.error(err::unknown_subcommand(command, sub));
}

}  // namespace hotkv
