// Helpers shared by the stream family (see stream_helpers.hpp): lookups, id parsing, entry
// replies, deferred-length replies and the container-command (XGROUP, XINFO) plumbing.
#include "hotkv/commands/stream_helpers.hpp"
#include "hotkv/util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_streams.hpp"
#include "hotkv/commands/string_helpers.hpp"

namespace hotkv {

bool stream_lookup_or_reply(CommandContext& ctx, std::string_view key, bool read, Stream*& out) {
  Keyspace& db = ctx.db(key);
  Value* v = read ? db.find_read(key, ctx.now_ms) : db.find(key, ctx.now_ms);
  if (v != nullptr && v->type() != ValueType::kStream) {
    ctx.error(err::kWrongType);
    return false;
  }
  out = v == nullptr ? nullptr : v->stream();
  return true;
}

bool parse_id_or_reply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                       StreamId& out) {
  if (!parse_stream_id(arg, missing_seq, !strict, out)) {
    ctx.error(err::kStreamBadId);
    return false;
  }
  return true;
}

namespace {

// Parses a range bound; `exclusive` tells whether it had the "(" prefix.
bool parse_bound_or_reply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq,
                          StreamId& out, bool& exclusive) {
  exclusive = arg.size() > 1 && arg[0] == '(';
  return parse_id_or_reply(ctx, exclusive ? arg.substr(1) : arg, missing_seq, exclusive, out);
}

}  // namespace

bool parse_range_start_or_reply(CommandContext& ctx, std::string_view arg, StreamId& out) {
  bool exclusive = false;
  if (!parse_bound_or_reply(ctx, arg, 0, out, exclusive)) {
    return false;
  }
  if (exclusive && !out.increment()) {
    ctx.error(err::kStreamBadStart);
    return false;
  }
  return true;
}

bool parse_range_end_or_reply(CommandContext& ctx, std::string_view arg, StreamId& out) {
  bool exclusive = false;
  if (!parse_bound_or_reply(ctx, arg, UINT64_MAX, out, exclusive)) {
    return false;
  }
  if (exclusive && !out.decrement()) {
    ctx.error(err::kStreamBadEnd);
    return false;
  }
  return true;
}

void reply_id(ReplyWriter& w, StreamId id) {
  std::string text;
  id.append_to(text);
  w.bulk(text);
}

void reply_entry(ReplyWriter& w, StreamId id, std::span<const std::string_view> fields) {
  w.array(2);
  reply_id(w, id);
  w.array(fields.size());
  for (std::string_view f : fields) {
    w.bulk(f);
  }
}

bool reply_entry_or_nil(ReplyWriter& w, const Stream& s, StreamId id,
                        std::vector<std::string_view>& scratch) {
  scratch.clear();
  if (s.get(id, scratch)) {
    reply_entry(w, id, scratch);
    return true;
  }
  w.array(2);
  reply_id(w, id);
  w.null_array();
  return false;
}

size_t reply_range(ReplyWriter& w, const Stream& s, StreamId start, StreamId end, bool reverse,
                   size_t count) {
  DeferredReply out(w);
  size_t n = s.range(start, end, reverse, count,
                     [&out](StreamId id, std::span<const std::string_view> fields) {
                       reply_entry(out.writer(), id, fields);
                       return true;
                     });
  out.finish_array(n);
  return n;
}

void reply_stream_key(ReplyWriter& w, std::string_view key) {
  if (w.proto() == 2) {
    w.array(2);
  }
  w.bulk(key);
}

void DeferredReply::finish_array(size_t n) {
  out_.array(n);
  out_.buffer().append(buf_);
}

void DeferredReply::finish_map(size_t n) {
  out_.map(n);
  out_.buffer().append(buf_);
}

bool stream_has_tombstones_from(const Stream& s, StreamId start) {
  // As Stream's own lag accounting (Redis after 7.2): any XDEL-ed id at or after start counts.
  return s.length() > 0 && !s.max_deleted_id().is_zero() && start <= s.max_deleted_id();
}

void reply_subcommand_syntax_error(CommandContext& ctx) {
  ctx.error(err::subcommand_syntax(ctx.arg(0), ctx.arg(1)));
}

std::optional<size_t> subcommand_or_reply(CommandContext& ctx,
                                          std::span<const std::pair<const char*, int>> subs) {
  std::string_view sub = ctx.arg(1);
  for (size_t i = 0; i < subs.size(); ++i) {
    if (!strcasecmp_view(sub, subs[i].first)) {
      continue;
    }
    int arity = subs[i].second;
    auto argc = static_cast<int>(ctx.argc());
    if ((arity > 0 && argc != arity) || (arity < 0 && argc < -arity)) {
      ctx.error(err::subcommand_arity(ctx.arg(0), sub));
      return std::nullopt;
    }
    return i;
  }
  ctx.error(err::unknown_subcommand(ctx.arg(0), sub));
  return std::nullopt;
}

void reply_help(CommandContext& ctx, std::span<const char* const> lines) {
  ctx.reply.array(lines.size() + 3);
  ctx.reply.simple(ascii_upper(ctx.arg(0)) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (const char* line : lines) {
    ctx.reply.simple(line);
  }
  ctx.reply.simple("HELP");
  ctx.reply.simple("    Print this help.");
}

// Logs a trim's effect: every entry before the first remaining one is gone.
void log_trim(CommandContext& ctx, std::string_view key, const Stream& s) {
  if (!ctx.logging(key)) {
    return;
  }
  OpArgs args;
  std::optional<StreamId> first = s.first_entry_id();
  StreamId before = first ? *first : s.last_id();
  if (first || before.increment()) {
    ctx.log_op(key, OpCode::kStreamTrimBefore, args.add(before).views());
    return;
  }
  // Emptied, and the last id is the largest possible one: only an entry with that very id can
  // survive "trim before max", so delete it and restore the counters the delete touched.
  ctx.log_op(key, OpCode::kStreamTrimBefore, args.add(before).views());
  args.clear();
  ctx.log_op(key, OpCode::kStreamDelete, args.add(before).views());
  args.clear();
  args.add(s.last_id()).add_int(static_cast<int64_t>(s.entries_added())).add(s.max_deleted_id());
  ctx.log_op(key, OpCode::kStreamSetMeta, args.views());
}

}  // namespace hotkv
