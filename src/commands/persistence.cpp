// Persistence commands: BGREWRITEAOF (compact the log in the background), SAVE (make every
// acknowledged write durable now, then compact), BGSAVE (compact) and LASTSAVE. They run with
// every shard parked (kAllShards), which is what a rewrite needs to take its snapshot.
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/persistence.hpp"

namespace hotkv {
namespace {

// The log if persistence is on; otherwise replies the error and returns nullptr.
Persistence* persistence_or_reply(CommandContext& ctx) {
  Persistence* p = ctx.engine.persistence();
  if (p == nullptr || !p->enabled()) {
    ctx.error(err::kAppendOnlyDisabled);
    return nullptr;
  }
  return p;
}

// Starts a rewrite and replies `started` (true), or replies why it could not start.
bool start_rewrite_and_reply(CommandContext& ctx, Persistence& p, const char* started) {
  std::string err = p.start_rewrite();
  if (!err.empty()) {
    ctx.error(err);
    return false;
  }
  ctx.reply.simple(started);
  return true;
}

void cmd_bgrewriteaof(CommandContext& ctx) {
  if (Persistence* p = persistence_or_reply(ctx)) {
    start_rewrite_and_reply(ctx, *p, "Background append only file rewriting started");
  }
}

void cmd_save(CommandContext& ctx) {
  Persistence* p = persistence_or_reply(ctx);
  if (p == nullptr) {
    return;
  }
  // Every write is already in the log; SAVE makes it durable before replying, and compacts.
  p->sync_all_parked();
  if (!p->rewrite_in_progress()) {
    p->start_rewrite();
  }
  ctx.engine.mark_key_changes_saved();  // every change is durable now
  ctx.reply.ok();
}

void cmd_bgsave(CommandContext& ctx) {
  Persistence* p = persistence_or_reply(ctx);
  if (p == nullptr) {
    return;
  }
  if (p->rewrite_in_progress()) {
    ctx.error(err::kBackgroundSaveRunning);
    return;
  }
  if (start_rewrite_and_reply(ctx, *p, "Background saving started")) {
    ctx.engine.mark_key_changes_saved();  // the snapshot holds every change made so far
  }
}

void cmd_lastsave(CommandContext& ctx) {
  Persistence* p = ctx.engine.persistence();
  if (p != nullptr && !p->enabled()) {
    p = nullptr;
  }
  ctx.reply.integer(p != nullptr ? p->last_save_unix() : ctx.engine.start_unix_ms() / 1000);
}

}  // namespace

void register_persistence(Table& t) {
  constexpr uint32_t kSnapshot = kAdmin | kNoScript | kAllShards;
  // clang-format off
  t.add({"BGREWRITEAOF", 1, kSnapshot, no_keys(), cmd_bgrewriteaof, "server", "BGREWRITEAOF", "Compacts the append-only log in the background: a base snapshot plus a fresh tail."});
  t.add({"SAVE",         1, kSnapshot | kNoMulti, no_keys(), cmd_save, "server", "SAVE", "Makes every acknowledged write durable now, then compacts the log in the background."});
  t.add({"BGSAVE",      -1, kSnapshot, no_keys(), cmd_bgsave, "server", "BGSAVE [SCHEDULE]", "Compacts the append-only log in the background."});
  t.add({"LASTSAVE",     1, kLoading | kStale | kFast, no_keys(), cmd_lastsave, "server", "LASTSAVE", "Returns the Unix time of the last successful compaction (or of start-up)."});
  // clang-format on
}

}  // namespace hotkv
