// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH. Queueing and EXEC itself live in the
// connection (net/connection_multi.cpp), because EXEC may have to hop to the shards of the
// queued commands' keys; the handlers here are what runs when no transaction is open, plus
// the session bookkeeping that needs none of that.
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/commands/transactions.hpp"

namespace hotkv {

void clear_transaction(ClientSession& session) {
  session.multi = MultiState{};
  session.watch.reset();
  if (session.info) {
    session.info->multi.store(-1, std::memory_order_relaxed);
  }
}

bool runs_inside_multi(const CommandSpec& spec) {
  // Redis executes these at once even inside MULTI; everything else is queued.
  return (spec.flags & kRunsInMulti) != 0;
}

namespace {

void cmd_multi(CommandContext& ctx) {
  if (ctx.session->multi.active) {
    ctx.error(err::kMultiNested);
    return;
  }
  ctx.session->multi.active = true;
  ctx.session->info->multi.store(0, std::memory_order_relaxed);
  ctx.reply.ok();
}

// Reached only outside MULTI (inside, the connection runs the transaction instead).
void cmd_exec(CommandContext& ctx) { ctx.error(err::kExecWithoutMulti); }

void cmd_discard(CommandContext& ctx) {
  if (!ctx.session->multi.active) {
    ctx.error(err::kDiscardWithoutMulti);
    return;
  }
  clear_transaction(*ctx.session);
  ctx.reply.ok();
}

void cmd_watch(CommandContext& ctx) {
  ClientSession& session = *ctx.session;
  if (session.multi.active) {
    ctx.error(err::kWatchInMulti);
    return;
  }
  if (!session.watch) {
    session.watch = std::make_shared<WatchFlag>();
  }
  // Registering from this thread is safe (the registry has its own lock), and it is complete
  // before the reply leaves, so every change made after WATCH returns is seen.
  for (size_t i = 1; i < ctx.argc(); ++i) {
    ctx.engine.shard(ctx.engine.shard_of(ctx.arg(i)))
        .watches()
        .add(session.db, ctx.arg(i), session.watch);
  }
  ctx.reply.ok();
}

void cmd_unwatch(CommandContext& ctx) {
  ctx.session->watch.reset();
  ctx.reply.ok();
}

}  // namespace

void register_transactions(Table& t) {
  constexpr uint32_t kTxn = kConnection | kNoScript | kLoading | kStale;
  // clang-format off
  t.add({"MULTI",   1, kTxn | kFast | kAllowBusy | kRunsInMulti, no_keys(), cmd_multi, "transactions", "MULTI", "Starts a transaction."});
  t.add({"EXEC",    1, kTxn | kRunsInMulti | kExec, no_keys(), cmd_exec, "transactions", "EXEC", "Executes all commands in a transaction."});
  t.add({"DISCARD", 1, kTxn | kFast | kAllowBusy | kRunsInMulti, no_keys(), cmd_discard, "transactions", "DISCARD", "Discards a transaction."});
  t.add({"WATCH",  -2, kTxn | kFast | kRunsInMulti, keys(1, -1, 1), cmd_watch, "transactions", "WATCH key [key ...]", "Monitors changes to keys to determine the execution of a transaction."});
  t.add({"UNWATCH", 1, kTxn | kFast, no_keys(), cmd_unwatch, "transactions", "UNWATCH", "Forgets about watched keys of a transaction."});
  // clang-format on
}

}  // namespace hotkv
