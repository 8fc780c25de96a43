// MONITOR: the client is shown every command run from then on (shard/monitors.hpp). The
// handler only marks the session; the connection then registers itself with the engine's
// monitors, because only it knows how to reach its own thread (net/connection.cpp).
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/table.hpp"

namespace hotkv {
namespace {

void cmd_monitor(CommandContext& ctx) {
  if (ctx.session->running_exec) {
    // A transaction's client expects one reply per command: it cannot become a monitor.
    ctx.error(err::kMonitorInMulti);
    return;
  }
  if (ctx.session->monitoring) {
    return;  // already monitoring: Redis answers nothing
  }
  ctx.session->monitoring = true;
  ctx.reply.ok();
}

}  // namespace

void register_monitor(Table& t) {
  // clang-format off
  t.add({"MONITOR", 1, kConnection | kAdmin | kNoScript | kLoading | kStale, no_keys(), cmd_monitor, "server", "MONITOR", "Shows every command the server runs, as it runs it."});
  // clang-format on
}

}  // namespace hotkv
