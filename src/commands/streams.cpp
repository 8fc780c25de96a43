// Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, the XREAD/XREADGROUP reader,
// and register_streams with every stream command, consumer groups (stream_groups.cpp) and
// XINFO (stream_info.cpp) included. Replies and error texts follow Redis 7.2; every mutation
// logs its effect (op_effects.hpp) with concrete ids.
#include <algorithm>
#include <memory>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/stream_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"

namespace hotkv {

namespace {

// ---------------------------------------------------------------------------------------------
// XADD and XTRIM options.

struct TrimArgs {
  enum Strategy { kNone, kMaxLen, kMinId } strategy = kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId minid;
  int64_t limit = 0;  // entries removed at most; 0: no limit
  bool no_mkstream = false;
  size_t id_pos = 0;  // XADD: index of the id argument (0: none found)
  AddIdSpec id;
};

// Redis's streamParseAddOrTrimArgsOrReply: options up to XADD's id (or to the end for XTRIM).
bool parse_trim_args_or_reply(CommandContext& ctx, bool xadd, TrimArgs& a) {
  bool limit_given = false;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    size_t more = ctx.argc() - 1 - i;
    std::string_view opt = ctx.arg(i);
    bool maxlen = strcasecmp_view(opt, "MAXLEN");
    if (xadd && opt == "*") {
      a.id_pos = i;
      break;
    } else if ((maxlen || strcasecmp_view(opt, "MINID")) && more > 0) {
      if (a.strategy != TrimArgs::kNone) {
        ctx.error(err::kMaxlenAndMinid);
        return false;
      }
      a.approx = false;
      std::string_view next = ctx.arg(i + 1);
      if (more >= 2 && (next == "~" || next == "=")) {
        a.approx = next == "~";
        ++i;
      }
      ++i;
      if (maxlen) {
        if (!ctx.int_arg_or_reply(i, a.maxlen)) {
          return false;
        }
        if (a.maxlen < 0) {
          ctx.error(err::kMaxlenArgNegative);
          return false;
        }
      } else if (!parse_id_or_reply(ctx, ctx.arg(i), 0, true, a.minid)) {
        return false;
      }
      a.strategy = maxlen ? TrimArgs::kMaxLen : TrimArgs::kMinId;
    } else if (strcasecmp_view(opt, "LIMIT") && more > 0) {
      if (!ctx.int_arg_or_reply(++i, a.limit)) {
        return false;
      }
      if (a.limit < 0) {
        ctx.error(err::kLimitArgNegative);
        return false;
      }
      limit_given = true;
    } else if (xadd && strcasecmp_view(opt, "NOMKSTREAM")) {
      a.no_mkstream = true;
    } else if (xadd) {
      if (!parse_add_id(opt, a.id)) {
        ctx.error(err::kStreamBadId);
        return false;
      }
      a.id_pos = i;
      break;
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
  }
  if (a.limit != 0 && a.strategy == TrimArgs::kNone) {
    ctx.error(err::kLimitWithoutStrategy);
    return false;
  }
  if (!xadd && a.strategy == TrimArgs::kNone) {
    ctx.error(err::kXtrimNeedsStrategy);
    return false;
  }
  if (limit_given) {
    if (!a.approx) {
      ctx.error(err::kLimitWithoutTilde);
      return false;
    }
  } else {
    // Redis bounds an approximate trim's work to 100 nodes' worth (stream-node-max-entries)
    // unless told otherwise.
    int64_t node = ctx.engine.config().stream_node_max_entries.load(std::memory_order_relaxed);
    a.limit = a.approx ? std::min(node, INT64_MAX / 100) * 100 : 0;
  }
  return true;
}

size_t apply_trim(Stream& s, const TrimArgs& a) {
  auto limit = static_cast<size_t>(a.limit);
  switch (a.strategy) {
    case TrimArgs::kMaxLen:
      return s.trim_maxlen(static_cast<uint64_t>(a.maxlen), a.approx, limit);
    case TrimArgs::kMinId:
      return s.trim_minid(a.minid, a.approx, limit);
    case TrimArgs::kNone:
      break;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Commands.

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [...]
void cmd_xadd(CommandContext& ctx) {
  TrimArgs a;
  if (!parse_trim_args_or_reply(ctx, true, a)) {
    return;
  }
  size_t field_pos = a.id_pos + 1;
  if (a.id_pos == 0 || ctx.argc() < field_pos + 2 || (ctx.argc() - field_pos) % 2 != 0) {
    ctx.wrong_arity();
    return;
  }
  if (a.id.kind == AddIdSpec::kExplicit && a.id.id.is_zero()) {
    ctx.error(err::kXaddIdZero);
    return;
  }
  std::string_view key = ctx.arg(1);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  if (s == nullptr && a.no_mkstream) {
    ctx.reply.null();
    return;
  }
  if (s != nullptr && s->last_id() == StreamId::max()) {
    ctx.error(err::kStreamExhausted);
    return;
  }
  // A new stream is only stored once the id is known to be acceptable.
  std::unique_ptr<Stream> created;
  if (s == nullptr) {
    created = std::make_unique<Stream>();
    s = created.get();
  }
  StreamId id;
  bool ok = false;
  switch (a.id.kind) {
    case AddIdSpec::kAuto:
      ok = s->next_auto_id(static_cast<uint64_t>(ctx.now_ms), id);
      break;
    case AddIdSpec::kAutoSeq:
      ok = s->next_seq_id(a.id.id.ms, id);
      break;
    case AddIdSpec::kExplicit:
      id = a.id.id;
      ok = id > s->last_id();
      break;
  }
  if (!ok) {
    ctx.error(err::kXaddIdTooSmall);
    return;
  }
  std::span<const std::string_view> fields = ctx.argv.subspan(field_pos);
  s->append(id, fields, EncodingLimits::from(ctx.engine.config()));
  if (created) {
    ctx.db(key).put(key, Value::from_stream(std::move(created)));
  }
  size_t trimmed = apply_trim(*s, a);
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(id);
    for (std::string_view f : fields) {
      args.add(f);
    }
    ctx.log_op(key, OpCode::kStreamAdd, args.views());
    if (trimmed > 0) {
      log_trim(ctx, key, *s);
    }
  }
  ctx.notify(kNotifyStream, "xadd", key);
  if (trimmed > 0) {
    ctx.notify(kNotifyStream, "xtrim", key);
  }
  reply_id(ctx.reply, id);
}

void cmd_xlen(CommandContext& ctx) {
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  ctx.reply.integer(s == nullptr ? 0 : static_cast<int64_t>(s->length()));
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
void range_generic(CommandContext& ctx, bool reverse) {
  StreamId start;
  StreamId end;
  if (!parse_range_start_or_reply(ctx, ctx.arg(reverse ? 3 : 2), start) ||
      !parse_range_end_or_reply(ctx, ctx.arg(reverse ? 2 : 3), end)) {
    return;
  }
  int64_t count = -1;  // -1: no COUNT
  for (size_t i = 4; i < ctx.argc(); ++i) {
    if (strcasecmp_view(ctx.arg(i), "COUNT") && i + 1 < ctx.argc()) {
      if (!ctx.int_arg_or_reply(++i, count)) {
        return;
      }
      count = std::max<int64_t>(count, 0);
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, ctx.arg(1), true, s)) {
    return;
  }
  if (s == nullptr) {
    ctx.reply.array(0);
  } else if (count == 0) {
    ctx.reply.null_array();  // Redis answers COUNT 0 with a null array
  } else {
    reply_range(ctx.reply, *s, start, end, reverse, count < 0 ? 0 : static_cast<size_t>(count));
  }
}

void cmd_xrange(CommandContext& ctx) { range_generic(ctx, false); }
void cmd_xrevrange(CommandContext& ctx) { range_generic(ctx, true); }

// XDEL key id [id ...]: a missing key answers 0 before the ids are even parsed, as in Redis.
void cmd_xdel(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  if (s == nullptr) {
    ctx.reply.integer(0);
    return;
  }
  std::vector<StreamId> ids(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!parse_id_or_reply(ctx, ctx.arg(i), 0, true, ids[i - 2])) {
      return;
    }
  }
  bool logging = ctx.logging(key);
  OpArgs args;
  int64_t deleted = 0;
  for (StreamId id : ids) {
    if (s->erase(id)) {
      ++deleted;
      if (logging) {
        args.add(id);
      }
    }
  }
  if (deleted > 0) {
    if (logging) {
      ctx.log_op(key, OpCode::kStreamDelete, args.views());
    }
    ctx.notify(kNotifyStream, "xdel", key);
  }
  ctx.reply.integer(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void cmd_xtrim(CommandContext& ctx) {
  TrimArgs a;
  if (!parse_trim_args_or_reply(ctx, false, a)) {
    return;
  }
  std::string_view key = ctx.arg(1);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  size_t trimmed = s == nullptr ? 0 : apply_trim(*s, a);
  if (trimmed > 0) {
    log_trim(ctx, key, *s);
    ctx.notify(kNotifyStream, "xtrim", key);
  }
  ctx.reply.integer(static_cast<int64_t>(trimmed));
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void cmd_xsetid(CommandContext& ctx) {
  StreamId id;
  if (!parse_id_or_reply(ctx, ctx.arg(2), 0, true, id)) {
    return;
  }
  int64_t entries_added = -1;
  StreamId max_deleted;
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    bool more = i + 1 < ctx.argc();
    if (strcasecmp_view(ctx.arg(i), "ENTRIESADDED") && more) {
      if (!ctx.int_arg_or_reply(i + 1, entries_added)) {
        return;
      }
      if (entries_added < 0) {
        ctx.error(err::kEntriesAddedPositive);
        return;
      }
    } else if (strcasecmp_view(ctx.arg(i), "MAXDELETEDID") && more) {
      if (!parse_id_or_reply(ctx, ctx.arg(i + 1), 0, true, max_deleted)) {
        return;
      }
      if (id < max_deleted) {
        ctx.error(
            err::kXsetidBelowGivenMaxDeleted);
        return;
      }
    } else {
      ctx.error(err::kSyntax);
      return;
    }
  }
  std::string_view key = ctx.arg(1);
  Stream* s = nullptr;
  if (!stream_lookup_or_reply(ctx, key, false, s)) {
    return;
  }
  if (s == nullptr) {
    ctx.error(err::kNoSuchKey);
    return;
  }
  if (id < s->max_deleted_id()) {
    ctx.error(err::kXsetidBelowMaxDeleted);
    return;
  }
  if (s->length() > 0) {
    if (id < *s->last_entry_id()) {
      ctx.error(err::kXsetidBelowTop);
      return;
    }
    if (entries_added != -1 && s->length() > static_cast<uint64_t>(entries_added)) {
      ctx.error(
          err::kXsetidEntriesAdded);
      return;
    }
  }
  s->set_last_id(id);
  if (entries_added != -1) {
    s->set_entries_added(static_cast<uint64_t>(entries_added));
  }
  if (!max_deleted.is_zero()) {
    s->set_max_deleted_id(max_deleted);
  }
  if (ctx.logging(key)) {
    OpArgs args;
    args.add(s->last_id())
        .add_int(static_cast<int64_t>(s->entries_added()))
        .add(s->max_deleted_id());
    ctx.log_op(key, OpCode::kStreamSetMeta, args.views());
  }
  ctx.notify(kNotifyStream, "xsetid", key);
  ctx.reply.ok();
}

void cmd_xread(CommandContext& ctx) { xread_generic(ctx, false); }

// XREAD/XREADGROUP keys: after STREAMS, the first half of the remaining arguments. Options are
// skipped as the parser skips them, so a group or consumer named "STREAMS" is not mistaken.
void xread_keys(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  for (size_t i = 1; i < argv.size(); ++i) {
    size_t more = argv.size() - 1 - i;
    std::string_view a = argv[i];
    if ((strcasecmp_view(a, "BLOCK") || strcasecmp_view(a, "COUNT")) && more > 0) {
      ++i;
    } else if (strcasecmp_view(a, "GROUP") && more >= 2) {
      i += 2;
    } else if (strcasecmp_view(a, "STREAMS") && more > 0) {
      for (size_t k = 0; k < more / 2; ++k) {
        out.push_back(i + 1 + k);
      }
      return;
    }
  }
}

// XGROUP and XINFO subcommands name their key third (XGROUP HELP and XINFO HELP have none).
void subcommand_key(std::span<const std::string_view> argv, std::vector<size_t>& out) {
  if (argv.size() >= 3) {
    out.push_back(2);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// XREAD and XREADGROUP.

namespace {

struct ReadTarget {
  std::string_view key;
  Stream* stream = nullptr;
  ConsumerGroup* group = nullptr;
  StreamId after;       // serve ids greater than this
  bool fresh = false;   // XREADGROUP ">": entries never delivered to the group
  bool dollar = false;  // XREAD "$": resolved to the stream's last id
};

struct ReadOptions {
  int64_t timeout_ms = -1;  // -1: no BLOCK
  size_t count = 0;         // 0: no limit
  bool noack = false;
  bool has_group = false;
  std::string_view group;
  std::string_view consumer;
  size_t streams_at = 0;  // index of the first key
  size_t nstreams = 0;
};

bool parse_timeout_or_reply(CommandContext& ctx, std::string_view arg, int64_t& out) {
  auto v = parse_int64(arg);
  if (!v) {
    ctx.error(err::kTimeoutNotInteger);
    return false;
  }
  if (*v < 0) {
    ctx.error(err::kTimeoutNegative);
    return false;
  }
  if (*v > 0 && *v > INT64_MAX - ctx.now_ms) {
    ctx.error(err::kTimeoutRange);
    return false;
  }
  out = *v;
  return true;
}

bool parse_read_options_or_reply(CommandContext& ctx, bool group, ReadOptions& o) {
  for (size_t i = 1; i < ctx.argc(); ++i) {
    size_t more = ctx.argc() - 1 - i;
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "BLOCK") && more > 0) {
      if (!parse_timeout_or_reply(ctx, ctx.arg(++i), o.timeout_ms)) {
        return false;
      }
    } else if (strcasecmp_view(a, "COUNT") && more > 0) {
      int64_t count = 0;
      if (!ctx.int_arg_or_reply(++i, count)) {
        return false;
      }
      o.count = static_cast<size_t>(std::max<int64_t>(count, 0));
    } else if (strcasecmp_view(a, "STREAMS") && more > 0) {
      if (more % 2 != 0) {
        ctx.error(err::xread_unbalanced(group));
        return false;
      }
      o.streams_at = i + 1;
      o.nstreams = more / 2;
      break;
    } else if (strcasecmp_view(a, "GROUP") && more >= 2) {
      if (!group) {
        ctx.error(
            err::kXreadGroupOption);
        return false;
      }
      o.has_group = true;
      o.group = ctx.arg(i + 1);
      o.consumer = ctx.arg(i + 2);
      i += 2;
    } else if (strcasecmp_view(a, "NOACK")) {
      if (!group) {
        ctx.error(
            err::kXreadNoackOption);
        return false;
      }
      o.noack = true;
    } else {
      ctx.error(err::kSyntax);
      return false;
    }
  }
  if (o.streams_at == 0) {
    ctx.error(err::kSyntax);
    return false;
  }
  if (group && !o.has_group) {
    ctx.error(err::kXreadgroupMissingGroup);
    return false;
  }
  return true;
}

// The stream at `key` for a woken re-run, or nullptr when the key is gone or now holds
// another type: for a blocked reader both mean the stream it waited on no longer exists.
Stream* woken_stream(CommandContext& ctx, std::string_view key) {
  Value* v = ctx.db(key).find(key, ctx.now_ms);
  return v != nullptr && v->type() == ValueType::kStream ? v->stream() : nullptr;
}

// A re-run of a blocked XREADGROUP: Redis 7 answers clients whose key went away or changed
// type (SET, a transaction's DEL + SADD) or whose group was destroyed.
bool woken_group_checks_or_reply(CommandContext& ctx, const ReadOptions& o) {
  for (size_t k = 0; k < o.nstreams; ++k) {
    Stream* s = woken_stream(ctx, ctx.arg(o.streams_at + k));
    if (s == nullptr) {
      ctx.error(err::kStreamKeyDeleted);
      return false;
    }
    if (s->find_group(o.group) == nullptr) {
      ctx.error(err::kBlockedGroupDeleted);
      return false;
    }
  }
  return true;
}

bool resolve_targets_or_reply(CommandContext& ctx, bool group, const ReadOptions& o,
                              std::vector<ReadTarget>& targets) {
  targets.resize(o.nstreams);
  for (size_t k = 0; k < o.nstreams; ++k) {
    ReadTarget& t = targets[k];
    t.key = ctx.arg(o.streams_at + k);
    std::string_view id = ctx.arg(o.streams_at + o.nstreams + k);
    if (ctx.woken && !group) {
      // A blocked XREAD whose key now holds another type keeps waiting, as on Redis: only a
      // stream there can serve it.
      t.stream = woken_stream(ctx, t.key);
    } else if (!stream_lookup_or_reply(ctx, t.key, true, t.stream)) {
      return false;
    }
    if (group) {
      t.group = t.stream == nullptr ? nullptr : t.stream->find_group(o.group);
      if (t.group == nullptr) {
        ctx.error(err::nogroup_key_or_group(t.key, o.group) + " in XREADGROUP with GROUP option");
        return false;
      }
    }
    if (id == "$") {
      if (group) {
        ctx.error(err::kXreadgroupDollar);
        return false;
      }
      t.after = t.stream == nullptr ? StreamId::min() : t.stream->last_id();
      t.dollar = true;
    } else if (id == ">") {
      if (!group) {
        ctx.error(err::kXreadGreaterThan);
        return false;
      }
      t.fresh = true;
    } else if (!parse_id_or_reply(ctx, id, 0, true, t.after)) {
      return false;
    }
  }
  return true;
}

}  // namespace

void xread_generic(CommandContext& ctx, bool group) {
  ReadOptions o;
  if (!parse_read_options_or_reply(ctx, group, o)) {
    return;
  }
  if (ctx.woken && group && !woken_group_checks_or_reply(ctx, o)) {
    return;
  }
  std::vector<ReadTarget> targets;
  if (!resolve_targets_or_reply(ctx, group, o, targets)) {
    return;
  }
  DeferredReply out(ctx.reply);
  size_t served = 0;
  for (const ReadTarget& t : targets) {
    if (t.stream == nullptr) {
      continue;
    }
    if (group) {
      // Redis cannot tell an explicit max id from ">", and serves it as ">".
      std::optional<StreamId> history;
      if (!t.fresh && t.after != StreamId::max()) {
        history = t.after;
      }
      served += serve_group_stream(ctx, t.key, *t.stream, *t.group, o.group, o.consumer, history,
                                   o.count, o.noack, out.writer())
                    ? 1
                    : 0;
      continue;
    }
    std::optional<StreamId> last = t.stream->last_entry_id();
    if (!last || *last <= t.after) {
      continue;
    }
    StreamId start = t.after;
    start.increment();  // cannot overflow: start <= last
    reply_stream_key(out.writer(), t.key);
    reply_range(out.writer(), *t.stream, start, StreamId::max(), false, o.count);
    ++served;
  }
  if (served > 0) {
    if (ctx.reply.proto() == 2) {
      out.finish_array(served);
    } else {
      out.finish_map(served);
    }
    return;
  }
  if (ctx.woken) {
    return;  // nothing yet: the client stays blocked
  }
  if (o.timeout_ms < 0 || !ctx.can_block()) {
    // No BLOCK, or not allowed to block (MULTI, scripts): answer as a timeout would.
    ctx.reply.null_array();
    return;
  }
  // Re-run with "$" pinned to the id it meant now, or the client would never see new entries.
  std::vector<std::string> rerun(ctx.argv.begin(), ctx.argv.end());
  for (size_t k = 0; k < targets.size(); ++k) {
    if (targets[k].dollar) {
      rerun[o.streams_at + o.nstreams + k] = targets[k].after.to_string();
    }
  }
  ctx.block(o.timeout_ms, std::move(rerun));
}

void register_streams(Table& t) {
  // clang-format off
  t.add({"XADD",       -5, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_xadd, "stream", "XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]", "Appends an entry to a stream (created unless NOMKSTREAM) and optionally trims it."});
  t.add({"XLEN",        2, kReadOnly | kFast, keys(1, 1, 1), cmd_xlen, "stream", "XLEN key", "Returns the number of entries in a stream."});
  t.add({"XRANGE",     -4, kReadOnly, keys(1, 1, 1), cmd_xrange, "stream", "XRANGE key start end [COUNT count]", "Returns the entries of a stream whose ids fall within a range."});
  t.add({"XREVRANGE",  -4, kReadOnly, keys(1, 1, 1), cmd_xrevrange, "stream", "XREVRANGE key end start [COUNT count]", "Returns the entries of a stream within an id range, newest first."});
  t.add({"XDEL",       -3, kWrite | kFast, keys(1, 1, 1), cmd_xdel, "stream", "XDEL key id [id ...]", "Deletes entries by id; returns how many existed."});
  t.add({"XTRIM",      -4, kWrite, keys(1, 1, 1), cmd_xtrim, "stream", "XTRIM key (MAXLEN|MINID [=|~] threshold [LIMIT count])", "Removes the oldest entries of a stream down to a length or a minimum id."});
  t.add({"XREAD",      -4, kReadOnly | kBlocking, key_finder(0, 0, 0, xread_keys), cmd_xread, "stream", "XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", "Reads entries newer than the given ids from one or more streams, optionally waiting for some to arrive."});
  t.add({"XSETID",     -3, kWrite | kDenyOom | kFast, keys(1, 1, 1), cmd_xsetid, "stream", "XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]", "Sets a stream's last id and its added-entries and max-deleted-id counters."});
  t.add({"XGROUP",     -2, kWrite | kDenyOom, key_finder(2, 2, 1, subcommand_key), cmd_xgroup, "stream", "XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP key group [arguments]", "Manages consumer groups: create, set the last id, destroy, create or delete consumers.", {"create", "setid", "destroy", "createconsumer", "delconsumer", "help"}});
  t.add({"XREADGROUP", -7, kWrite | kBlocking, key_finder(0, 0, 0, xread_keys), cmd_xreadgroup, "stream", "XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]", "Reads entries for a consumer of a group: new ones (>) or its own pending history; may wait."});
  t.add({"XACK",       -4, kWrite | kFast, keys(1, 1, 1), cmd_xack, "stream", "XACK key group id [id ...]", "Acknowledges pending entries of a consumer group; returns how many were pending."});
  t.add({"XPENDING",   -3, kReadOnly, keys(1, 1, 1), cmd_xpending, "stream", "XPENDING key group [[IDLE min-idle-time] start end count [consumer]]", "Inspects a consumer group's pending entries: a summary, or a list filtered by id, idle time and consumer."});
  t.add({"XCLAIM",     -6, kWrite | kFast, keys(1, 1, 1), cmd_xclaim, "stream", "XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]", "Transfers the given pending entries of a group to a consumer."});
  t.add({"XAUTOCLAIM", -6, kWrite | kFast, keys(1, 1, 1), cmd_xautoclaim, "stream", "XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]", "Transfers idle pending entries of a group to a consumer, scanning from a cursor."});
  t.add({"XINFO",      -2, kReadOnly, key_finder(2, 2, 1, subcommand_key), cmd_xinfo, "stream", "XINFO STREAM|GROUPS|CONSUMERS|HELP key [arguments]", "Returns information about a stream, its consumer groups or the consumers of a group.", {"stream", "groups", "consumers", "help"}});
  // clang-format on
}

}  // namespace hotkv
