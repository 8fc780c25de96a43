// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP: Redis 7.2's
// field names and order, as maps (RESP3) or flat key/value arrays (RESP2). The stream's
// radix-tree figures are reported from its entry nodes (see Stream::node_count).
#include <algorithm>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/commands/stream_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"

namespace hotkv {
namespace {

constexpr std::pair<const char*, int> kXinfoSubs[] = {
    {"CONSUMERS", 4}, {"GROUPS", 3}, {"STREAM", -3}, {"HELP", 2}};
enum XinfoSub : size_t { kInfoConsumers, kInfoGroups, kInfoStream, kInfoHelp };

constexpr const char* kXinfoHelp[] = {
    "CONSUMERS <key> <groupname>",
    "    Show the consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the consumer groups of the stream.",
    "STREAM <key> [FULL [COUNT <count>]]",
    "    Show information about the stream (FULL: entries, groups, PELs; COUNT: at most",
    "    <count> of each, 10 by default, 0 for all).",
};

// An integer that Redis reports as null when it is unknown (-1).
void reply_known(ReplyWriter& w, int64_t v) {
  if (v < 0) {
    w.null();
  } else {
    w.integer(v);
  }
}

// The fields XINFO STREAM and XINFO STREAM FULL share, in Redis's order.
void reply_stream_header(ReplyWriter& w, const Stream& s) {
  auto nodes = static_cast<int64_t>(s.node_count());
  w.bulk("length");
  w.integer(static_cast<int64_t>(s.length()));
  w.bulk("radix-tree-keys");
  w.integer(nodes);
  // Redis counts the radix tree's inner nodes too; a tree over n keys has about n + 1.
  w.bulk("radix-tree-nodes");
  w.integer(nodes + 1);
  w.bulk("last-generated-id");
  reply_id(w, s.last_id());
  w.bulk("max-deleted-entry-id");
  reply_id(w, s.max_deleted_id());
  w.bulk("entries-added");
  w.integer(static_cast<int64_t>(s.entries_added()));
  w.bulk("recorded-first-entry-id");
  reply_id(w, s.first_entry_id().value_or(StreamId::min()));
}

// First (or last) entry, or a null when the stream is empty.
void reply_edge_entry(ReplyWriter& w, const Stream& s, bool last) {
  size_t n = s.range(StreamId::min(), StreamId::max(), last, 1,
                     [&w](StreamId id, std::span<const std::string_view> fields) {
                       reply_entry(w, id, fields);
                       return false;
                     });
  if (n == 0) {
    w.null();
  }
}

// Up to `count` (0: all) PEL records of a map ordered by id: [id, consumer, time, count] for
// the group PEL, [id, time, count] for a consumer's.
template <class Pel, class Fn>
void reply_pel(ReplyWriter& w, const Pel& pel, size_t count, Fn&& one) {
  size_t n = count == 0 ? pel.size() : std::min(count, pel.size());
  w.array(n);
  auto it = pel.begin();
  for (size_t i = 0; i < n; ++i, ++it) {
    one(it->first, it->second);
  }
}

void reply_full_group(CommandContext& ctx, const Stream& s, const std::string& name,
                      const ConsumerGroup& g, size_t count) {
  ReplyWriter& w = ctx.reply;
  w.map(7);
  w.bulk("name");
  w.bulk(name);
  w.bulk("last-delivered-id");
  reply_id(w, g.last_delivered_id);
  w.bulk("entries-read");
  reply_known(w, g.entries_read);
  w.bulk("lag");
  reply_known(w, s.lag(g));
  w.bulk("pel-count");
  w.integer(static_cast<int64_t>(g.pel.size()));
  w.bulk("pending");
  reply_pel(w, g.pel, count, [&w](StreamId id, const PendingEntry& e) {
    w.array(4);
    reply_id(w, id);
    w.bulk(e.consumer->name);
    w.integer(e.delivery_time_ms);
    w.integer(static_cast<int64_t>(e.delivery_count));
  });
  w.bulk("consumers");
  w.array(g.consumers.size());
  for (const auto& [cname, c] : g.consumers) {
    w.map(5);
    w.bulk("name");
    w.bulk(cname);
    w.bulk("seen-time");
    w.integer(c.seen_time_ms);
    w.bulk("active-time");
    w.integer(c.active_time_ms);
    w.bulk("pel-count");
    w.integer(static_cast<int64_t>(c.pending.size()));
    w.bulk("pending");
    reply_pel(w, c.pending, count, [&w](StreamId id, const PendingEntry* e) {
      w.array(3);
      reply_id(w, id);
      w.integer(e->delivery_time_ms);
      w.integer(static_cast<int64_t>(e->delivery_count));
    });
  }
}

void xinfo_stream(CommandContext& ctx, const Stream& s) {
  size_t optc = ctx.argc() - 3;
  bool full = optc > 0;
  int64_t count = 10;  // FULL's default, so a huge stream does not stall the server
  if (full) {
    if ((optc != 1 && optc != 3) || !strcasecmp_view(ctx.arg(3), "FULL") ||
        (optc == 3 && !strcasecmp_view(ctx.arg(4), "COUNT"))) {
      reply_subcommand_syntax_error(ctx);
      return;
    }
    if (optc == 3) {
      if (!ctx.int_arg_or_reply(5, count)) {
        return;
      }
      if (count < 0) {
        count = 10;
      }
    }
  }
  ReplyWriter& w = ctx.reply;
  w.map(full ? 9 : 10);
  reply_stream_header(w, s);
  if (!full) {
    w.bulk("groups");
    w.integer(static_cast<int64_t>(s.groups().size()));
    w.bulk("first-entry");
    reply_edge_entry(w, s, false);
    w.bulk("last-entry");
    reply_edge_entry(w, s, true);
    return;
  }
  auto n = static_cast<size_t>(count);
  w.bulk("entries");
  reply_range(w, s, StreamId::min(), StreamId::max(), false, n);
  w.bulk("groups");
  w.array(s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    reply_full_group(ctx, s, name, *g, n);
  }
}

void xinfo_groups(CommandContext& ctx, const Stream& s) {
  ReplyWriter& w = ctx.reply;
  w.array(s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    w.map(6);
    w.bulk("name");
    w.bulk(name);
    w.bulk("consumers");
    w.integer(static_cast<int64_t>(g->consumers.size()));
    w.bulk("pending");
    w.integer(static_cast<int64_t>(g->pel.size()));
    w.bulk("last-delivered-id");
    reply_id(w, g->last_delivered_id);
    w.bulk("entries-read");
    reply_known(w, g->entries_read);
    w.bulk("lag");
    reply_known(w, s.lag(*g));
  }
}

void xinfo_consumers(CommandContext& ctx, Stream& s) {
  ConsumerGroup* g = s.find_group(ctx.arg(3));
  if (g == nullptr) {
    ctx.error(err::nogroup_for_key(ctx.arg(3), ctx.arg(2)));
    return;
  }
  ReplyWriter& w = ctx.reply;
  w.array(g->consumers.size());
  for (const auto& [name, c] : g->consumers) {
    w.map(4);
    w.bulk("name");
    w.bulk(name);
    w.bulk("pending");
    w.integer(static_cast<int64_t>(c.pending.size()));
    w.bulk("idle");
    w.integer(std::max<int64_t>(ctx.now_ms - c.seen_time_ms, 0));
    w.bulk("inactive");
    w.integer(c.active_time_ms == -1 ? -1 : ctx.now_ms - c.active_time_ms);
  }
}

}  // namespace

void cmd_xinfo(CommandContext& ctx) {
  std::optional<size_t> sub = subcommand_or_reply(ctx, kXinfoSubs);
  if (!sub) {
    return;
  }
  if (*sub == kInfoHelp) {
    reply_help(ctx, kXinfoHelp);
    return;
  }
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, ctx.arg(2), true, s)) {
    return;
  }
  if (s == nullptr) {
    ctx.error(err::kNoSuchKey);
    return;
  }
  switch (*sub) {
    case kInfoConsumers:
      xinfo_consumers(ctx, *s);
      break;
    case kInfoGroups:
      xinfo_groups(ctx, *s);
      break;
    default:
      xinfo_stream(ctx, *s);
      break;
  }
}

}  // namespace hotkv
