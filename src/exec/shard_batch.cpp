// A pipeline's part for one shard (see shard_batch.hpp).
#include "hotkv/exec/shard_batch.hpp"

#include <deque>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/command_call.hpp"
#include "hotkv/resp/writer.hpp"

namespace hotkv {
namespace {

// Buffers past this are released by clear(), so one huge pipeline does not pin its memory on
// a connection that goes back to single commands.
constexpr size_t kKeepBytes = 256 * 1024;
constexpr size_t kKeepCommands = 4096;

template <class T>
void clear_keeping_small(T& buf, size_t keep) {
  if (buf.capacity() > keep) {
    T().swap(buf);
  } else {
    buf.clear();
  }
}

}  // namespace

void ShardBatch::views_of(const Command& c, std::vector<std::string_view>& views) const {
  views.clear();
  uint32_t begin = c.first_arg == 0 ? 0 : arg_ends_[c.first_arg - 1];
  for (uint32_t i = 0; i < c.argc; ++i) {
    uint32_t end = arg_ends_[c.first_arg + i];
    views.emplace_back(args_.data() + begin, end - begin);
    begin = end;
  }
}

void ShardBatch::add(const CommandSpec& spec, std::span<const std::string_view> argv, uint32_t db,
                     const TrackingCaller& caller, bool counted) {
  commands_.push_back(Command{&spec, static_cast<uint32_t>(arg_ends_.size()),
                              static_cast<uint32_t>(argv.size()), db, caller, counted});
  for (std::string_view a : argv) {
    args_.append(a);
    arg_ends_.push_back(static_cast<uint32_t>(args_.size()));
  }
}

void ShardBatch::run(Engine& engine, Shard& shard, int proto, ClientSession* session,
                     bool multi_shard) {
  // Views into args_, rebuilt per command: one vector per thread and nesting level, so no
  // allocation per batch. Levels, because a batch can run inside another: a script past
  // busy-reply-threshold lets its thread serve other handlers (Shard::serve_while_busy),
  // another connection's batch among them, and the outer command still reads its own views
  // when it returns (the slow log, command statistics). A deque keeps each level in place.
  thread_local std::deque<std::vector<std::string_view>> levels;
  thread_local size_t depth = 0;
  if (levels.size() <= depth) {
    levels.emplace_back();
  }
  std::vector<std::string_view>& views = levels[depth];
  struct Nesting {
    size_t& depth;
    explicit Nesting(size_t& d) : depth(d) { ++depth; }
    ~Nesting() { --depth; }
  } nesting(depth);
  ReplyWriter w(replies_, proto);
  for (const Command& c : commands_) {
    views_of(c, views);
    ScopedTrackingCaller as(c.caller);
    execute_command(*c.spec, views, engine, shard, multi_shard, session, c.db, w);
    if (take_rerun_request()) {
      // A script went beyond the shards held here: it and everything after it run again
      // with every shard, in order (the connection does that).
      break;
    }
    reply_ends_.push_back(replies_.size());
    if (!multi_shard) {
      serve_blocked_now(engine, shard);  // before the batch's next command, as Redis does
    }
  }
}

void ShardBatch::run_part(Engine& engine, Shard& shard, int proto, ClientSession* session,
                          uint64_t txn, uint32_t parts) {
  // A part never nests in another (Engine::drain_parts runs one drain at a time per thread):
  // one vector of views per thread is enough.
  thread_local std::vector<std::string_view> views;
  ReplyWriter w(replies_, proto);
  // parts == 0: a run that only reads; each command keeps its own record (a lazy expiry).
  std::vector<size_t> logged;
  std::vector<size_t>* open_logs = parts > 0 ? &logged : nullptr;
  for (const Command& c : commands_) {
    views_of(c, views);
    ScopedTrackingCaller as(c.caller);
    UncountedCall uncounted(!c.counted);
    execute_command(*c.spec, views, engine, shard, false, session, c.db, w, nullptr, false,
                    open_logs);
    reply_ends_.push_back(replies_.size());
  }
  if (parts > 0) {
    shard.log().end_part(txn, parts);
  }
}

void ShardBatch::add_unrun_of(const ShardBatch& from) {
  thread_local std::vector<std::string_view> views;
  for (size_t i = from.reply_ends_.size(); i < from.commands_.size(); ++i) {
    const Command& c = from.commands_[i];
    from.views_of(c, views);
    add(*c.spec, views, c.db, c.caller, c.counted);
  }
}

void ShardBatch::append_replies_of(const ShardBatch& other) {
  size_t base = replies_.size();
  replies_ += other.replies_;
  for (size_t end : other.reply_ends_) {
    reply_ends_.push_back(base + end);
  }
}

void ShardBatch::refuse(const std::string& error) {
  ReplyWriter w(replies_, 2);  // an error reply reads the same in RESP2 and RESP3
  for (size_t i = reply_ends_.size(); i < commands_.size(); ++i) {
    w.error(error);
    reply_ends_.push_back(replies_.size());
  }
}

std::string_view ShardBatch::reply(size_t i) const {
  size_t begin = i == 0 ? 0 : reply_ends_[i - 1];
  return std::string_view(replies_).substr(begin, reply_ends_[i] - begin);
}

void ShardBatch::clear() {
  clear_keeping_small(args_, kKeepBytes);
  clear_keeping_small(replies_, kKeepBytes);
  clear_keeping_small(arg_ends_, kKeepCommands);
  clear_keeping_small(commands_, kKeepCommands);
  clear_keeping_small(reply_ends_, kKeepCommands);
}

}  // namespace hotkv
