// Inventory hold commands: INV.COMMIT, INV.RELEASE, INV.EXTEND, INV.HOLD and INV.HOLDS.
// Commit and release are idempotent and race-safe: the first of commit, release and expiry to
// reach a hold wins; repeating the winning call answers 0 ("already done", nothing moves) and
// the losing one gets the winner's name as an error (-COMMITTED, -RELEASED, -EXPIRED). A hold
// whose deadline has passed is expired at that instant even if the timing wheel has not
// processed it yet: a command that finds it so performs (and logs) the expiry first.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/inventory_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// The hold named by argv[2] of the item at argv[1], as it stands now: a due hold is expired
// first. Replies the error and returns nullptr if the item or the hold does not exist.
const Hold* current_hold_or_reply(CommandContext& ctx, Inventory*& inv) {
  std::string_view key = ctx.arg(1);
  std::string_view id = ctx.arg(2);
  if (!existing_inventory_or_reply(ctx, key, inv)) {
    return nullptr;
  }
  const Hold* h = inv->find(id, ctx.now_ms);
  if (h == nullptr) {
    ctx.error(no_hold_error(key, id));
    return nullptr;
  }
  expire_if_due(ctx, key, *inv, id);
  return h;
}

// INV.COMMIT / INV.RELEASE key hold_id
void settle_generic(CommandContext& ctx, HoldState to) {
  Inventory* inv = nullptr;
  const Hold* h = current_hold_or_reply(ctx, inv);
  if (h == nullptr) {
    return;
  }
  if (h->state == HoldState::kHeld) {
    settle_hold(ctx, ctx.arg(1), *inv, ctx.arg(2), to);
    ctx.reply.integer(1);
  } else if (h->state == to) {
    ctx.reply.integer(0);  // a retry of the call that won: it already happened
  } else {
    ctx.error(settled_error(ctx.arg(2), h->state));
  }
}

}  // namespace

void cmd_inv_commit(CommandContext& ctx) { settle_generic(ctx, HoldState::kCommitted); }
void cmd_inv_release(CommandContext& ctx) { settle_generic(ctx, HoldState::kReleased); }

// INV.EXTEND key hold_id ttl_ms: the deadline becomes now + ttl_ms (it may shorten it), capped
// at the hold's creation + MAXHOLD. Replies the milliseconds left.
void cmd_inv_extend(CommandContext& ctx) {
  int64_t ttl = 0;
  if (!ttl_arg_or_reply(ctx, 3, ttl)) {
    return;
  }
  Inventory* inv = nullptr;
  const Hold* h = current_hold_or_reply(ctx, inv);
  if (h == nullptr) {
    return;
  }
  if (h->state != HoldState::kHeld) {
    ctx.error(settled_error(ctx.arg(2), h->state));
    return;
  }
  int64_t at = inv->extended_deadline(*h, ctx.now_ms, ttl);
  extend_hold(ctx, ctx.arg(1), *inv, ctx.arg(2), at);
  ctx.reply.integer(at - ctx.now_ms);
}

// INV.HOLD key hold_id: the hold as a map, or null. Read-only: a due hold shows as expired
// (settled at its deadline) without being processed here.
void cmd_inv_hold(CommandContext& ctx) {
  Inventory* inv = nullptr;
  if (!inventory_lookup_or_reply(ctx, ctx.arg(1), true, inv)) {
    return;
  }
  const Hold* h = inv == nullptr ? nullptr : inv->find(ctx.arg(2), ctx.now_ms);
  if (h == nullptr) {
    ctx.reply.null();
    return;
  }
  HoldState state = effective_state(*h, ctx.now_ms);
  bool live = state == HoldState::kHeld;
  ReplyWriter& w = ctx.reply;
  w.map(7);
  w.bulk("state");
  w.bulk(hold_state_name(state));
  w.bulk("qty");
  w.integer(h->qty);
  w.bulk("owner");
  if (h->owner.empty()) {
    w.null();
  } else {
    w.bulk(h->owner);
  }
  w.bulk("created_at");
  w.integer(h->created_at_ms);
  w.bulk("expires_at");
  w.integer(h->expires_at_ms);
  w.bulk("ttl_ms");
  w.integer(live ? h->expires_at_ms - ctx.now_ms : -1);
  w.bulk("settled_at");
  w.integer(live ? -1 : (h->state == HoldState::kHeld ? h->expires_at_ms : h->settled_at_ms));
}

// INV.HOLDS key [cursor] [COUNT n]: [next_cursor, [hold_id ...]] over the live holds, with
// SCAN's guarantee (a hold live for the whole walk is returned at least once).
void cmd_inv_holds(CommandContext& ctx) {
  size_t i = 2;
  uint64_t cursor = 0;
  if (i < ctx.argc() && !strcasecmp_view(ctx.arg(i), "COUNT")) {
    std::string text(ctx.arg(i));
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-') {
      ctx.error(err::kInvalidCursor);
      return;
    }
    cursor = v;
    ++i;
  }
  int64_t count = 10;
  for (; i < ctx.argc(); ++i) {
    if (strcasecmp_view(ctx.arg(i), "COUNT") && i + 1 < ctx.argc()) {
      if (!ctx.int_arg_or_reply(++i, count)) {
        return;
      }
      if (count < 1) {
        ctx.error(err::kSyntax);
        return;
      }
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  Inventory* inv = nullptr;
  if (!inventory_lookup_or_reply(ctx, ctx.arg(1), true, inv)) {
    return;
  }
  std::vector<std::string> found;
  uint64_t next = 0;
  if (inv != nullptr) {
    // Bound the buckets visited per call, so a table of mostly settled records cannot stall
    // the shard.
    int64_t budget = count * 10;
    next = cursor;
    do {
      next = inv->scan(next, [&](std::string_view id, const Hold& h) {
        if (h.state == HoldState::kHeld && !Inventory::due(h, ctx.now_ms)) {
          found.emplace_back(id);
        }
      });
      --budget;
    } while (next != 0 && static_cast<int64_t>(found.size()) < count && budget > 0);
  }
  ctx.reply.array(2);
  ctx.reply.bulk(std::to_string(next));
  ctx.reply.array(found.size());
  for (const auto& id : found) {
    ctx.reply.bulk(id);
  }
}

}  // namespace hotkv
