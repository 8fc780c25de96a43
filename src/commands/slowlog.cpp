// SLOWLOG GET [count] | LEN | RESET | HELP, with Redis 7.0's replies. The entries live in the
// engine (util/slow_log.hpp, one ring per shard merged here in id order); the dispatcher logs
// a command when it counts it (count_command) and it ran at least slowlog-log-slower-than µs.
#include <string>
#include <string_view>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/subcommands.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// GET without a count answers the newest ten, as Redis does.
constexpr int64_t kDefaultGetCount = 10;

void slowlog_get(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.error(err::subcommand_syntax("SLOWLOG", ctx.arg(1)));
    return;
  }
  int64_t count = kDefaultGetCount;
  if (ctx.argc() == 3) {
    auto v = parse_int64(ctx.arg(2));
    if (!v || *v < -1) {
      ctx.error(err::kSlowlogCount);
      return;
    }
    count = *v;
  }
  auto entries = ctx.engine.slowlog().get(count);
  ctx.reply.array(entries.size());
  for (const auto& e : entries) {
    ctx.reply.array(6);
    ctx.reply.integer(static_cast<int64_t>(e.id));
    ctx.reply.integer(e.time_s);
    ctx.reply.integer(e.usec);
    ctx.reply.array(e.args.size());
    for (const std::string& a : e.args) {
      ctx.reply.bulk(a);
    }
    ctx.reply.bulk(e.addr);
    ctx.reply.bulk(e.name);
  }
}

void slowlog_help(CommandContext& ctx) {
  // clang-format off
  static const char* kHelp[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return the newest <count> entries of the slow log (default 10, -1 for all).",
      "    Each entry holds: id, unix time, duration in microseconds, the command's",
      "    arguments, the client's address and the client's name.",
      "LEN",
      "    Return how many entries the slow log holds.",
      "RESET",
      "    Empty the slow log.",
      "HELP",
      "    Print this help."};
  // clang-format on
  ctx.reply.array(std::size(kHelp));
  for (const char* line : kHelp) {
    ctx.reply.simple(line);
  }
}

// Each subcommand with its arity (Redis 7 checks subcommands like commands of their own).
constexpr Subcommand kSlowlogSubcommands[] = {
    {"GET", -2, slowlog_get},
    {"LEN", 2,
     [](CommandContext& ctx) {
       ctx.reply.integer(static_cast<int64_t>(ctx.engine.slowlog().len()));
     }},
    {"RESET", 2,
     [](CommandContext& ctx) {
       ctx.engine.slowlog().reset();
       ctx.reply.ok();
     }},
    {"HELP", 2, slowlog_help},
};

void cmd_slowlog(CommandContext& ctx) { run_subcommand(ctx, kSlowlogSubcommands, "SLOWLOG"); }

}  // namespace

void register_slowlog(Table& t) {
  // clang-format off
  t.add({"SLOWLOG", -2, kAdmin | kLoading | kStale, no_keys(), cmd_slowlog, "server", "SLOWLOG GET|LEN|RESET|HELP [arguments]", "Reads or empties the slow log (slowlog-log-slower-than, slowlog-max-len).", {"get", "len", "reset", "help"}});
  // clang-format on
}

}  // namespace hotkv
