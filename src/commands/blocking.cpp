// Serving blocked clients (see blocking.hpp). Redis re-runs the commands of clients blocked on
// a key after each command that signalled it; so do we, but a posted task runs the re-runs so
// a handler never re-enters the dispatcher while it is still executing.
#include "hotkv/commands/blocking.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <asio/post.hpp>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

void schedule_serving(Engine& engine, Shard& owner) {
  BlockingRegistry& reg = owner.blocking();
  if (reg.serve_posted) {
    return;
  }
  reg.serve_posted = true;
  Engine* e = &engine;
  Shard* s = &owner;
  asio::post(owner.io(), [e, s] {
    if (s->serving_while_busy()) {
      // A busy script holds the shard: the blocked clients stay blocked until it is over.
      s->defer_until_idle([e, s] { serve_blocked(*e, *s); });
      return;
    }
    serve_blocked(*e, *s);
  });
}

}  // namespace

void signal_every_waited_key(Engine& engine, Shard& shard, bool multi_shard) {
  if (!engine.any_blocked()) {
    return;
  }
  // With multi_shard every shard is parked; else there is one shard.
  size_t n = multi_shard ? engine.shard_count() : 1;
  for (size_t i = 0; i < n; ++i) {
    Shard& s = multi_shard ? engine.shard(i) : shard;
    if (s.blocking().signal_all()) {
      schedule_serving(engine, s);
    }
  }
}

void signal_key_written(Engine& engine, Shard& owner, uint32_t db, std::string_view key) {
  if (!engine.any_blocked()) {
    return;
  }
  if (!owner.blocking().empty() && owner.blocking().signal(db, key)) {
    schedule_serving(engine, owner);
  }
}

bool complete_blocked(Shard& shard, BlockedClient& c, WakeResult result) {
  result.taint = DurabilityBarrier::taint(shard);
  if (c.finished()) {
    return false;
  }
  shard.blocking().remove(c);
  return c.finish(std::move(result));  // which also cancels its timer
}

namespace {

// Re-runs a blocked command woken by a write to `key` on its owner `shard`. Returns its reply,
// or an empty string when it still finds nothing (it would block again). The reply leaves
// this thread only once its log records are written.
std::string rerun_blocked(Engine& engine, Shard& shard, BlockedClient& c, std::string_view key) {
  std::string out;
  ReplyWriter w(out, c.proto);
  CommandContext::BlockRequest again;
  again.ready_key = key;
  std::vector<std::string_view> views(c.argv.begin(), c.argv.end());
  ScopedTrackingCaller as(c.caller);
  execute_command(*c.spec, views, engine, shard, false, nullptr, c.db, w, &again, true);
  if (again.requested || out.empty()) {
    return {};
  }
  DurabilityBarrier::pass(shard);
  return out;
}

// Serves the clients waiting on `key` of `db`, in arrival order, after a write made it ready.
// Walks the registry's own list: serving a client removes it from there (complete_blocked),
// every other outcome leaves it in place, so the walk moves on only past clients that stay.
// Nothing else changes the list meanwhile: a re-run that would block again registers nothing,
// and new clients block from their connections' handlers, not from here.
void serve_ready_key(Engine& engine, Shard& shard, uint32_t db, const std::string& key) {
  BlockingRegistry& reg = shard.blocking();
  const KeyTable& dict = shard.keyspace(db).dict();
  // Only a re-run changes the keyspace here (it pops, or a BLMOVE pushes), so the key is looked
  // up again only after one: a push to a queue with 50 waiting workers serves the first and
  // then passes the other 49 without a lookup each.
  bool key_present = dict.find(key) != nullptr;
  size_t at = 0;
  auto* list = reg.waiters(db, key);
  while (list != nullptr && at < list->size()) {
    BlockedClient& waiting = *(*list)[at];
    const bool serves_key = (waiting.spec->flags & kServesReadyKey) != 0;
    if (waiting.finished() || (serves_key && !key_present)) {
      // Finished: prune() drops it. A pop whose key is gone (an emptied list or sorted set)
      // keeps its place without a re-run, as Redis stops serving a key once it is empty.
      ++at;
      continue;
    }
    std::shared_ptr<BlockedClient> c = (*list)[at];  // alive until served, whatever the list does
    ++at;
    if (!c->in_place && !serves_key) {
      c->finish(WakeResult{WakeKind::kRetry, {}});
      continue;
    }
    if (!c->in_place) {
      // Waiting on keys of several shards, but its re-run touches only the key that became
      // ready, which lives here: serve it here, in its turn, once it is ours to serve.
      if (!c->claim()) {
        continue;  // another shard serves it, or it timed out
      }
      std::string out = rerun_blocked(engine, shard, *c, key);
      key_present = dict.find(key) != nullptr;
      list = reg.waiters(db, key);
      c->deliver(out.empty() ? WakeResult{WakeKind::kRetry, {}}
                             : WakeResult{WakeKind::kReply, std::move(out),
                                          DurabilityBarrier::taint(shard)});
      continue;
    }
    std::string out = rerun_blocked(engine, shard, *c, key);
    key_present = dict.find(key) != nullptr;
    if (!out.empty()) {
      complete_blocked(shard, *c, WakeResult{WakeKind::kReply, std::move(out)});
      --at;  // it left the list: the next client moved into its place
    }  // else still nothing for it: it keeps its place in the queue
    // The served client's removal may have emptied the list, and with it the registry's entry.
    list = reg.waiters(db, key);
  }
}

}  // namespace

void serve_blocked(Engine& engine, Shard& shard) {
  BlockingRegistry& reg = shard.blocking();
  reg.serve_posted = false;
  for (const BlockingRegistry::ReadyKey& ready : reg.take_ready()) {
    serve_ready_key(engine, shard, ready.db, ready.key);
    reg.prune(ready.db, ready.key);
  }
}

void serve_blocked_now(Engine& engine, Shard& shard) {
  if (shard.blocking().serve_posted && !shard.serving_while_busy()) {
    serve_blocked(engine, shard);  // the posted task then finds nothing ready
  }
}

bool parse_block_timeout_or_reply(CommandContext& ctx, std::string_view arg, int64_t& ms) {
  std::optional<double> seconds = parse_double(arg);
  if (!seconds || std::isnan(*seconds)) {
    ctx.error(err::kTimeoutNotFloat);
    return false;
  }
  // Whole milliseconds, rounded up so a tiny positive timeout still waits a little. As on
  // Redis, a value beyond 64 bits of milliseconds (1e20, inf) counts as negative: Redis casts
  // it, and the cast wraps.
  double millis = std::ceil(*seconds * 1000.0);
  if (millis < 0 || millis >= 9.2233720368547758e18) {
    ctx.error(err::kTimeoutNegative);
    return false;
  }
  auto value = static_cast<int64_t>(millis);
  if (value > INT64_MAX - ctx.now_ms) {
    ctx.error(err::kTimeoutRange);
    return false;
  }
  ms = value;
  return true;
}

bool parse_numkeys_or_reply(CommandContext& ctx, size_t at, int64_t& numkeys) {
  auto n = parse_int64(ctx.arg(at));
  if (!n || *n <= 0) {
    ctx.error(err::kNumkeysPositive);
    return false;
  }
  // More keys than arguments leaves no LEFT|RIGHT (MIN|MAX): Redis calls that a syntax error.
  if (static_cast<uint64_t>(*n) >= ctx.argc() - at - 1) {
    ctx.error(err::kSyntax);
    return false;
  }
  numkeys = *n;
  return true;
}

void block_or_timeout(CommandContext& ctx, int64_t timeout_ms, bool null_bulk_when_denied) {
  if (ctx.woken) {
    return;
  }
  if (!ctx.can_block()) {
    // Redis answers BLMOVE/BRPOPLPUSH with a null bulk here, the pops with a null array.
    if (null_bulk_when_denied) {
      ctx.reply.null();
    } else {
      ctx.reply.null_array();
    }
    return;
  }
  ctx.block(timeout_ms, std::vector<std::string>(ctx.argv.begin(), ctx.argv.end()));
}

bool parse_mpop_count_or_reply(CommandContext& ctx, size_t from, int64_t& count) {
  count = 1;
  bool counted = false;
  for (size_t i = from; i < ctx.argc(); i += 2) {
    if (!strcasecmp_view(ctx.arg(i), "COUNT") || counted || i + 1 >= ctx.argc()) {
      ctx.error(err::kSyntax);
      return false;
    }
    auto n = parse_int64(ctx.arg(i + 1));
    if (!n || *n <= 0) {
      ctx.error(err::kCountGreaterThanZero);
      return false;
    }
    count = *n;
    counted = true;
  }
  return true;
}

void numkeys_at1_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  numkeys_keys(argv, 1, out);
}

void numkeys_at2_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  numkeys_keys(argv, 2, out);
}

void numkeys_keys(std::span<const std::string_view> argv, size_t at, std::vector<size_t>& out) {
  if (argv.size() <= at) {
    return;
  }
  auto n = parse_int64(argv[at]);
  if (!n || *n < 1 || static_cast<uint64_t>(*n) > argv.size() - at - 1) {
    return;
  }
  for (size_t i = 0; i < static_cast<size_t>(*n); ++i) {
    out.push_back(at + 1 + i);
  }
}

std::string timeout_reply(int proto) {
  std::string out;
  ReplyWriter(out, proto).null_array();
  return out;
}

}  // namespace hotkv
