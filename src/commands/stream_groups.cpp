// Consumer groups: XGROUP, XREADGROUP's per-stream delivery, XACK, XPENDING, XCLAIM and
// XAUTOCLAIM, with Redis 7.2's replies and error texts. Every change to a group, a consumer or
// the pending entries list (PEL) is logged as a concrete effect: PEL entries with their
// absolute delivery times and counts, consumers with their seen/active times, groups with
// their last delivered id and entries-read counter.
#include <algorithm>
#include <limits>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/commands/errors_values.hpp"
#include "hotkv/commands/stream_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {
namespace {

// Creates the consumer if missing (with Redis's keyspace event) and marks it seen now.
Consumer& touch_consumer(CommandContext& ctx, std::string_view key, ConsumerGroup& g,
                         std::string_view name) {
  bool created = false;
  Consumer& c = g.get_or_create_consumer(name, ctx.now_ms, &created);
  c.seen_time_ms = ctx.now_ms;
  if (created) {
    ctx.notify(kNotifyStream, "xgroup-createconsumer", key);
  }
  return c;
}

void log_consumer(CommandContext& ctx, std::string_view key, std::string_view group,
                  const Consumer& c) {
  OpArgs args;
  args.add(group).add(c.name).add_int(c.seen_time_ms).add_int(c.active_time_ms);
  ctx.log_op(key, OpCode::kConsumerTouch, args.views());
}

void log_group_id(CommandContext& ctx, std::string_view key, std::string_view group,
                  const ConsumerGroup& g) {
  OpArgs args;
  args.add(group).add(g.last_delivered_id).add_int(g.entries_read);
  ctx.log_op(key, OpCode::kGroupSetId, args.views());
}

// Collects the PEL changes of one command: kPelSet [group, consumer, time, id, count, ...]
// for entries (re)assigned, kPelAck [group, id, ...] for entries dropped. Builds nothing when
// the key's shard does not log.
class PelLog {
 public:
  PelLog(CommandContext& ctx, std::string_view key, std::string_view group,
         std::string_view consumer, int64_t delivery_ms)
      : enabled_(ctx.logging(key)) {
    if (enabled_) {
      set_.add(group).add(consumer).add_int(delivery_ms);
      ack_.add(group);
    }
  }
  void set(StreamId id, uint64_t count) {
    if (enabled_) {
      set_.add(id).add_int(static_cast<int64_t>(count));
    }
  }
  void drop(StreamId id) {
    if (enabled_) {
      ack_.add(id);
    }
  }
  void write(CommandContext& ctx, std::string_view key) {
    if (!enabled_) {
      return;
    }
    if (ack_.size() > 1) {
      ctx.log_op(key, OpCode::kPelAck, ack_.views());
    }
    if (set_.size() > 3) {
      ctx.log_op(key, OpCode::kPelSet, set_.views());
    }
  }

 private:
  bool enabled_;
  OpArgs set_;
  OpArgs ack_;
};

// Looks up key and group for XCLAIM/XAUTOCLAIM/XPENDING, replying WRONGTYPE or NOGROUP.
bool group_or_reply(CommandContext& ctx, Stream*& s, ConsumerGroup*& g) {
  if (!stream_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return false;
  }
  g = s == nullptr ? nullptr : s->find_group(ctx.arg(2));
  if (g == nullptr) {
    ctx.error(err::nogroup_key_or_group(ctx.arg(1), ctx.arg(2)));
    return false;
  }
  return true;
}

// Redis's rule for a read moving the group past `id`: keep counting while no tombstone lies
// ahead, otherwise re-derive the counter from the stream (possibly unknown).
void advance_group(const Stream& s, ConsumerGroup& g, StreamId id) {
  if (g.entries_read != ConsumerGroup::kEntriesReadUnknown &&
      !stream_has_tombstones_from(s, g.last_delivered_id)) {
    ++g.entries_read;
  } else if (s.entries_added() > 0) {
    g.entries_read = s.estimate_entries_read(id);
  }
  g.last_delivered_id = id;
}

}  // namespace

bool serve_group_stream(CommandContext& ctx, std::string_view key, Stream& s, ConsumerGroup& g,
                        std::string_view group, std::string_view consumer,
                        std::optional<StreamId> history_after, size_t count, bool noack,
                        ReplyWriter& out) {
  Consumer& c = touch_consumer(ctx, key, g, consumer);
  PelLog pel(ctx, key, group, consumer, ctx.now_ms);
  bool served = false;
  bool moved = false;
  if (history_after) {
    // History: this consumer's own pending entries after the id; deleted ones as [id, nil].
    served = true;
    StreamId start = *history_after;
    start.increment();  // the caller never passes max()
    reply_stream_key(out, key);
    DeferredReply entries(out);
    std::vector<std::string_view> scratch;
    size_t n = 0;
    for (auto it = c.pending.lower_bound(start); it != c.pending.end() && (count == 0 || n < count);
         ++it, ++n) {
      if (reply_entry_or_nil(entries.writer(), s, it->first, scratch)) {
        PendingEntry& pe = *it->second;
        pe.delivery_time_ms = ctx.now_ms;
        ++pe.delivery_count;
        pel.set(it->first, pe.delivery_count);
      }
    }
    entries.finish_array(n);
  } else if (s.length() > 0 && *s.last_entry_id() > g.last_delivered_id) {
    served = true;
    StreamId start = g.last_delivered_id;
    start.increment();
    reply_stream_key(out, key);
    DeferredReply entries(out);
    size_t n = s.range(start, StreamId::max(), false, count,
                       [&](StreamId id, std::span<const std::string_view> fields) {
                         if (id > g.last_delivered_id) {
                           advance_group(s, g, id);
                           moved = true;
                         }
                         reply_entry(entries.writer(), id, fields);
                         if (!noack) {
                           // An id still pending elsewhere (after XGROUP SETID) moves here.
                           g.set_pending(id, c, ctx.now_ms, 1);
                           c.active_time_ms = ctx.now_ms;
                           pel.set(id, 1);
                         }
                         return true;
                       });
    entries.finish_array(n);
  }
  if (ctx.logging(key)) {
    log_consumer(ctx, key, group, c);
    pel.write(ctx, key);
    if (moved) {
      log_group_id(ctx, key, group, g);
    }
  }
  return served;
}

void cmd_xreadgroup(CommandContext& ctx) { xread_generic(ctx, true); }

namespace {

constexpr std::pair<const char*, int> kXgroupSubs[] = {
    {"CREATE", -5},        {"SETID", -5},      {"DESTROY", 4},
    {"CREATECONSUMER", 5}, {"DELCONSUMER", 5}, {"HELP", 2},
};
enum XgroupSub : size_t { kCreate, kSetId, kDestroy, kCreateConsumer, kDelConsumer, kHelp };

constexpr const char* kXgroupHelp[] = {
    "CREATE <key> <groupname> <id|$> [MKSTREAM] [ENTRIESREAD <n>]",
    "    Create a consumer group starting after <id> ($: the stream's last id). MKSTREAM",
    "    creates an empty stream if the key is missing.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD <n>]",
    "    Set the group's last delivered id and entries-read counter.",
    "DESTROY <key> <groupname>",
    "    Remove the consumer group.",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a consumer in the group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove a consumer and its pending entries.",
};

}  // namespace

// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP, checked in Redis's order:
// options, the key, the group, then the subcommand's own argument count.
void cmd_xgroup(CommandContext& ctx) {
  std::optional<size_t> sub = subcommand_or_reply(ctx, kXgroupSubs);
  if (!sub) {
    return;
  }
  if (*sub == kHelp) {
    reply_help(ctx, kXgroupHelp);
    return;
  }
  bool mkstream = false;
  int64_t entries_read = ConsumerGroup::kEntriesReadUnknown;
  for (size_t i = 5; i < ctx.argc();) {
    if (*sub == kCreate && strcasecmp_view(ctx.arg(i), "MKSTREAM")) {
      mkstream = true;
      ++i;
    } else if ((*sub == kCreate || *sub == kSetId) && strcasecmp_view(ctx.arg(i), "ENTRIESREAD") &&
               i + 1 < ctx.argc()) {
      if (!ctx.int_arg_or_reply(i + 1, entries_read)) {
        return;
      }
      if (entries_read < 0 && entries_read != ConsumerGroup::kEntriesReadUnknown) {
        ctx.error(err::kEntriesReadRange);
        return;
      }
      i += 2;
    } else {
      reply_subcommand_syntax_error(ctx);
      return;
    }
  }
  std::string_view key = ctx.arg(2);
  std::string_view group = ctx.arg(3);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  ConsumerGroup* g = nullptr;
  if (!mkstream) {
    if (s == nullptr) {
      ctx.error(err::kXgroupNeedsKey);
      return;
    }
    g = s->find_group(group);
    if (g == nullptr && *sub != kCreate && *sub != kDestroy) {
      ctx.error(err::nogroup_for_key(group, key));
      return;
    }
  }
  OpArgs args;
  switch (*sub) {
    case kCreate: {
      if (ctx.argc() > 8) {
        reply_subcommand_syntax_error(ctx);
        return;
      }
      StreamId id;
      if (ctx.arg(4) == "$") {
        id = s == nullptr ? StreamId::min() : s->last_id();
      } else if (!parse_id_or_reply(ctx, ctx.arg(4), 0, true, id)) {
        return;
      }
      if (s != nullptr && s->find_group(group) != nullptr) {
        ctx.error(err::kBusyGroup);
        return;
      }
      if (s == nullptr) {
        s = ctx.db(key).put(key, Value::from_stream(std::make_unique<Stream>())).stream();
        ctx.log_op(key, OpCode::kStreamCreate, {});
      }
      s->create_group(group, id, entries_read);
      args.add(group).add(id).add_int(entries_read);
      ctx.log_op(key, OpCode::kGroupCreate, args.views());
      ctx.notify(kNotifyStream, "xgroup-create", key);
      ctx.reply.ok();
      return;
    }
    case kSetId: {
      if (ctx.argc() != 5 && ctx.argc() != 7) {
        reply_subcommand_syntax_error(ctx);
        return;
      }
      StreamId id;
      if (ctx.arg(4) == "$") {
        id = s->last_id();
      } else if (!parse_id_or_reply(ctx, ctx.arg(4), 0, false, id)) {
        return;
      }
      g->last_delivered_id = id;
      g->entries_read = entries_read;
      log_group_id(ctx, key, group, *g);
      ctx.notify(kNotifyStream, "xgroup-setid", key);
      ctx.reply.ok();
      return;
    }
    case kDestroy:
      if (g == nullptr) {
        ctx.reply.integer(0);
        return;
      }
      s->destroy_group(group);
      ctx.log_op(key, OpCode::kGroupDestroy, args.add(group).views());
      ctx.notify(kNotifyStream, "xgroup-destroy", key);
      ctx.reply.integer(1);
      return;
    case kCreateConsumer: {
      if (g->find_consumer(ctx.arg(4)) != nullptr) {
        ctx.reply.integer(0);
        return;
      }
      Consumer& c = g->get_or_create_consumer(ctx.arg(4), ctx.now_ms);
      log_consumer(ctx, key, group, c);
      ctx.notify(kNotifyStream, "xgroup-createconsumer", key);
      ctx.reply.integer(1);
      return;
    }
    case kDelConsumer: {
      int64_t pending = g->delete_consumer(ctx.arg(4));
      if (pending < 0) {
        ctx.reply.integer(0);
        return;
      }
      ctx.log_op(key, OpCode::kConsumerDelete, args.add(group).add(ctx.arg(4)).views());
      ctx.notify(kNotifyStream, "xgroup-delconsumer", key);
      ctx.reply.integer(pending);
      return;
    }
    default:
      reply_subcommand_syntax_error(ctx);
      return;
  }
}

// XACK key group id [id ...]: a missing key or group acknowledges nothing (before the ids are
// even parsed, as in Redis); otherwise all ids are parsed before any is acknowledged.
void cmd_xack(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, true, s)) {
    return;
  }
  ConsumerGroup* g = s == nullptr ? nullptr : s->find_group(ctx.arg(2));
  if (g == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<StreamId> ids(ctx.argc() - 3);
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (!parse_id_or_reply(ctx, ctx.arg(i), 0, true, ids[i - 3])) {
      return;
    }
  }
  PelLog pel(ctx, key, ctx.arg(2), {}, 0);
  int64_t acked = 0;
  for (StreamId id : ids) {
    if (g->ack(id)) {
      pel.drop(id);
      ++acked;
    }
  }
  pel.write(ctx, key);
  ctx.reply.integer(acked);
}

namespace {

void reply_pending_summary(CommandContext& ctx, const ConsumerGroup& g) {
  ctx.reply.array(4);
  ctx.reply.integer(static_cast<int64_t>(g.pel.size()));
  if (g.pel.empty()) {
    ctx.reply.null();
    ctx.reply.null();
    ctx.reply.null_array();
    return;
  }
  reply_id(ctx.reply, g.pel.begin()->first);
  reply_id(ctx.reply, g.pel.rbegin()->first);
  size_t with_pending = std::count_if(g.consumers.begin(), g.consumers.end(),
                                      [](const auto& kv) { return !kv.second.pending.empty(); });
  ctx.reply.array(with_pending);
  for (const auto& [name, c] : g.consumers) {
    if (!c.pending.empty()) {
      ctx.reply.array(2);
      ctx.reply.bulk(name);
      ctx.reply.bulk_int(static_cast<int64_t>(c.pending.size()));
    }
  }
}

const PendingEntry& pending_of(const PendingEntry& e) { return e; }
const PendingEntry& pending_of(const PendingEntry* e) { return *e; }

// The extended form over the group PEL or one consumer's share of it.
template <class Pel>
void reply_pending_range(CommandContext& ctx, const Pel& pel, StreamId start, StreamId end,
                         int64_t count, int64_t min_idle) {
  DeferredReply out(ctx.reply);
  size_t n = 0;
  for (auto it = pel.lower_bound(start); count > 0 && it != pel.end() && it->first <= end; ++it) {
    const PendingEntry& e = pending_of(it->second);
    int64_t idle = ctx.now_ms - e.delivery_time_ms;
    if (min_idle > 0 && idle < min_idle) {
      continue;
    }
    ++n;
    --count;
    ReplyWriter& w = out.writer();
    w.array(4);
    reply_id(w, it->first);
    w.bulk(e.consumer->name);
    w.integer(std::max<int64_t>(idle, 0));
    w.integer(static_cast<int64_t>(e.delivery_count));
  }
  out.finish_array(n);
}

}  // namespace

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void cmd_xpending(CommandContext& ctx) {
  bool summary = ctx.argc() == 3;
  if (!summary && (ctx.argc() < 6 || ctx.argc() > 9)) {
    ctx.error(err::kSyntax);
    return;
  }
  int64_t min_idle = 0;
  int64_t count = 0;
  StreamId start;
  StreamId end;
  std::optional<std::string_view> consumer;
  if (!summary) {
    size_t at = 3;
    if (strcasecmp_view(ctx.arg(3), "IDLE")) {
      if (!ctx.int_arg_or_reply(4, min_idle)) {
        return;
      }
      if (ctx.argc() < 8) {
        ctx.error(err::kSyntax);
        return;
      }
      at += 2;
    }
    if (!ctx.int_arg_or_reply(at + 2, count)) {
      return;
    }
    count = std::max<int64_t>(count, 0);
    if (!parse_range_start_or_reply(ctx, ctx.arg(at), start) ||
        !parse_range_end_or_reply(ctx, ctx.arg(at + 1), end)) {
      return;
    }
    if (at + 3 < ctx.argc()) {
      consumer = ctx.arg(at + 3);
    }
  }
  Stream* s = nullptr;
  ConsumerGroup* g = nullptr;
  if (!group_or_reply(ctx, s, g)) {
    return;
  }
  if (summary) {
    reply_pending_summary(ctx, *g);
  } else if (!consumer) {
    reply_pending_range(ctx, g->pel, start, end, count, min_idle);
  } else if (Consumer* c = g->find_consumer(*consumer)) {
    reply_pending_range(ctx, c->pending, start, end, count, min_idle);
  } else {
    ctx.reply.array(0);
  }
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n]
//        [FORCE] [JUSTID] [LASTID id]
void cmd_xclaim(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  std::string_view group = ctx.arg(2);
  Stream* s = nullptr;
  ConsumerGroup* g = nullptr;
  if (!group_or_reply(ctx, s, g)) {
    return;
  }
  auto min_idle = parse_int64(ctx.arg(4));
  if (!min_idle) {
    ctx.error(err::kXclaimMinIdle);
    return;
  }
  // The ids run until the first argument that is not one; the options follow.
  std::vector<StreamId> ids;
  size_t j = 5;
  for (StreamId id; j < ctx.argc() && parse_stream_id(ctx.arg(j), 0, false, id); ++j) {
    ids.push_back(id);
  }
  int64_t delivery_ms = -1;  // -1: neither IDLE nor TIME
  int64_t retry_count = -1;  // -1: no RETRYCOUNT
  bool force = false;
  bool justid = false;
  StreamId last_id;
  for (; j < ctx.argc(); ++j) {
    std::string_view opt = ctx.arg(j);
    bool more = j + 1 < ctx.argc();
    if (strcasecmp_view(opt, "FORCE")) {
      force = true;
    } else if (strcasecmp_view(opt, "JUSTID")) {
      justid = true;
    } else if ((strcasecmp_view(opt, "IDLE") || strcasecmp_view(opt, "TIME")) && more) {
      bool idle = strcasecmp_view(opt, "IDLE");
      auto v = parse_int64(ctx.arg(++j));
      if (!v) {
        ctx.error(idle ? err::kXclaimIdle
                       : err::kXclaimTime);
        return;
      }
      // A bogus result (overflow included) is replaced by "now" below, as Redis does.
      if (!idle) {
        delivery_ms = *v;
      } else if (__builtin_sub_overflow(ctx.now_ms, *v, &delivery_ms)) {
        delivery_ms = ctx.now_ms;
      }
    } else if (strcasecmp_view(opt, "RETRYCOUNT") && more) {
      auto v = parse_int64(ctx.arg(++j));
      if (!v) {
        ctx.error(err::kXclaimRetryCount);
        return;
      }
      retry_count = *v;
    } else if (strcasecmp_view(opt, "LASTID") && more) {
      if (!parse_id_or_reply(ctx, ctx.arg(++j), 0, true, last_id)) {
        return;
      }
    } else {
      ctx.error(err::xclaim_option(opt));
      return;
    }
  }
  bool moved = last_id > g->last_delivered_id;
  if (moved) {
    g->last_delivered_id = last_id;
  }
  if (delivery_ms < 0 || delivery_ms > ctx.now_ms) {
    delivery_ms = ctx.now_ms;  // also what no IDLE/TIME means: idle from now
  }
  // As in Redis, the consumer is looked up (created, marked seen) only once an entry is
  // claimed: a claim that takes nothing leaves the group as it was.
  Consumer* c = nullptr;
  PelLog pel(ctx, key, group, ctx.arg(3), delivery_ms);
  DeferredReply out(ctx.reply);
  size_t claimed = 0;
  std::vector<std::string_view> fields;
  for (StreamId id : ids) {
    auto it = g->pel.find(id);
    PendingEntry* pe = it == g->pel.end() ? nullptr : &it->second;
    fields.clear();
    if (!s->get(id, fields)) {
      // The entry is gone: its pending record goes too.
      if (pe != nullptr) {
        g->ack(id);
        pel.drop(id);
      }
      continue;
    }
    uint64_t base = 1;  // a FORCE-created record starts as delivered once
    if (pe == nullptr) {
      if (!force) {
        continue;
      }
    } else {
      if (*min_idle > 0 && ctx.now_ms - pe->delivery_time_ms < *min_idle) {
        continue;
      }
      base = pe->delivery_count;
    }
    uint64_t deliveries =
        retry_count >= 0 ? static_cast<uint64_t>(retry_count) : (justid ? base : base + 1);
    if (c == nullptr) {
      c = &touch_consumer(ctx, key, *g, ctx.arg(3));
    }
    g->set_pending(id, *c, delivery_ms, deliveries);
    c->active_time_ms = ctx.now_ms;
    pel.set(id, deliveries);
    if (justid) {
      reply_id(out.writer(), id);
    } else {
      reply_entry(out.writer(), id, fields);
    }
    ++claimed;
  }
  if (ctx.logging(key)) {
    if (c != nullptr) {
      log_consumer(ctx, key, group, *c);
    }
    pel.write(ctx, key);
    if (moved) {
      log_group_id(ctx, key, group, *g);
    }
  }
  out.finish_array(claimed);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]: scans the PEL from
// start, examining at most 10 * count records; deleted entries leave the PEL and are listed.
void cmd_xautoclaim(CommandContext& ctx) {
  constexpr int64_t kAttemptsFactor = 10;
  std::string_view key = ctx.arg(1);
  std::string_view group = ctx.arg(2);
  auto min_idle = parse_int64(ctx.arg(4));
  if (!min_idle) {
    ctx.error(err::kXautoclaimMinIdle);
    return;
  }
  StreamId start;
  if (!parse_range_start_or_reply(ctx, ctx.arg(5), start)) {
    return;
  }
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < ctx.argc(); ++j) {
    if (strcasecmp_view(ctx.arg(j), "COUNT") && j + 1 < ctx.argc()) {
      auto v = parse_int64(ctx.arg(++j));
      // Redis caps COUNT so that count * 10 attempts and count ids fit in memory arithmetic.
      constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max() / 16;
      if (!v || *v < 1 || *v > kMaxCount) {
        ctx.error(err::kCountMustBePositive);
        return;
      }
      count = *v;
    } else if (strcasecmp_view(ctx.arg(j), "JUSTID")) {
      justid = true;
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  Stream* s = nullptr;
  ConsumerGroup* g = nullptr;
  if (!group_or_reply(ctx, s, g)) {
    return;
  }
  Consumer* c = nullptr;  // looked up at the first claim, as in XCLAIM
  PelLog pel(ctx, key, group, ctx.arg(3), ctx.now_ms);
  DeferredReply out(ctx.reply);
  size_t claimed = 0;
  std::vector<StreamId> deleted;
  std::vector<std::string_view> fields;
  int64_t attempts = count * kAttemptsFactor;
  auto it = g->pel.lower_bound(start);
  while (attempts > 0 && count > 0 && it != g->pel.end()) {
    --attempts;
    StreamId id = it->first;
    PendingEntry& pe = it->second;
    auto next = std::next(it);
    fields.clear();
    if (!s->get(id, fields)) {
      g->ack(id);
      pel.drop(id);
      deleted.push_back(id);
      --count;  // deleted ids count against the reply size too
      it = next;
      continue;
    }
    if (*min_idle > 0 && ctx.now_ms - pe.delivery_time_ms < *min_idle) {
      it = next;
      continue;
    }
    uint64_t deliveries = justid ? pe.delivery_count : pe.delivery_count + 1;
    if (c == nullptr) {
      c = &touch_consumer(ctx, key, *g, ctx.arg(3));
    }
    g->set_pending(id, *c, ctx.now_ms, deliveries);
    c->active_time_ms = ctx.now_ms;
    pel.set(id, deliveries);
    if (justid) {
      reply_id(out.writer(), id);
    } else {
      reply_entry(out.writer(), id, fields);
    }
    ++claimed;
    --count;
    it = next;
  }
  if (ctx.logging(key)) {
    if (c != nullptr) {
      log_consumer(ctx, key, group, *c);
    }
    pel.write(ctx, key);
  }
  ctx.reply.array(3);
  reply_id(ctx.reply, it == g->pel.end() ? StreamId::min() : it->first);
  out.finish_array(claimed);
  ctx.reply.array(deleted.size());
  for (StreamId id : deleted) {
    reply_id(ctx.reply, id);
  }
}

}  // namespace hotkv
