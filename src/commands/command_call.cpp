// Running one command's handler and counting it (see command_call.hpp).
#include "hotkv/commands/command_call.hpp"

#include <algorithm>
#include <utility>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/client_tracking.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/commands/redaction.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {

bool allowed_while_script_busy(const CommandSpec& spec, std::span<const std::string_view> argv) {
  if ((spec.flags & kAllowBusy) != 0) {
    return true;
  }
  return argv.size() == 2 &&
         std::any_of(spec.allow_busy_subcommands.begin(), spec.allow_busy_subcommands.end(),
                     [&](const std::string& sub) { return equals_ignore_case(argv[1], sub); });
}

// A read-only replica takes writes only from its master's link; a master with
// min-replicas-to-write takes them only while enough replicas acknowledge in time.
const char* replication_write_refusal(Engine& engine, bool from_master_link) {
  Replication& repl = engine.replication();
  if (repl.is_replica()) {
    bool read_only = engine.config().replica_read_only.load(std::memory_order_relaxed);
    return read_only && !from_master_link ? err::kReadOnlyReplica : nullptr;
  }
  int64_t needed = engine.config().min_replicas_to_write.load(std::memory_order_relaxed);
  int64_t max_lag = engine.config().min_replicas_max_lag.load(std::memory_order_relaxed);
  if (needed > 0 && max_lag > 0 &&
      repl.good_replicas(engine.now_ms(), max_lag) < static_cast<size_t>(needed)) {
    return err::kNoReplicas;
  }
  return nullptr;
}

namespace {
thread_local int64_t frozen_now_ms = -1;
thread_local bool error_reply_counted = false;

// Client-side caching of script reads: Redis remembers the script's declared keys (not the
// keys its commands name) once one of its commands is read-only, and never the keys of the
// EVAL itself, read-only or not.
struct RunningScript {
  const CommandSpec* spec;
  std::span<const std::string_view> argv;
  Shard* shard;
  bool multi_shard;
};
thread_local const RunningScript* running_script = nullptr;

bool is_script_call(const CommandSpec& spec) { return (spec.flags & kRunsScript) != 0; }

// A read-only command of a tracking client: its keys (or its script's) are remembered where
// they live, so their next change tells the client.
void remember_read_keys(const CommandSpec& spec, std::span<const std::string_view> argv,
                        Engine& engine, Shard& shard, bool multi_shard, uint64_t client) {
  thread_local std::vector<size_t> keys;
  keys.clear();
  Table::key_indexes(spec, argv, keys);
  for (size_t i : keys) {
    Shard& owner = multi_shard ? engine.shard(engine.shard_of(argv[i])) : shard;
    engine.tracking().remember(owner, argv[i], client);
  }
}

void track_reads(const CommandSpec& spec, std::span<const std::string_view> argv, Engine& engine,
                 Shard& shard, bool multi_shard) {
  const TrackingCaller& caller = current_tracking_caller();
  if (!caller.track_reads || (spec.flags & kReadOnly) == 0) {
    return;
  }
  if (running_script != nullptr) {
    const RunningScript& s = *running_script;
    remember_read_keys(*s.spec, s.argv, engine, *s.shard, s.multi_shard, caller.client);
  } else if (!is_script_call(spec)) {
    remember_read_keys(spec, argv, engine, shard, multi_shard, caller.client);
  }
}

}  // namespace

void mark_error_reply_counted() { error_reply_counted = true; }

namespace {
thread_local bool rerun_requested = false;
}  // namespace

void request_rerun_with_every_shard() { rerun_requested = true; }
bool take_rerun_request() { return std::exchange(rerun_requested, false); }

FrozenClock::FrozenClock(int64_t now_ms) : saved_(frozen_now_ms) { frozen_now_ms = now_ms; }
FrozenClock::~FrozenClock() { frozen_now_ms = saved_; }

void close_records(Engine& engine, const std::vector<size_t>& shards) {
  if (shards.empty()) {
    return;
  }
  auto parts = static_cast<uint32_t>(shards.size());
  uint64_t txn = parts > 1 ? engine.next_txn_id() : 0;
  for (size_t i : shards) {
    engine.shard(i).log().end_record(txn, parts);
  }
}

namespace {
thread_local bool uncounted_call = false;
}  // namespace

UncountedCall::UncountedCall(bool on) : outer(uncounted_call) { uncounted_call = outer || on; }
UncountedCall::~UncountedCall() { uncounted_call = outer; }

void execute_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                     Engine& engine, Shard& shard, bool multi_shard, ClientSession* session,
                     uint32_t db, ReplyWriter& reply, CommandContext::BlockRequest* block,
                     bool woken, std::vector<size_t>* open_logs) {
  if (!multi_shard && open_logs == nullptr && running_script == nullptr &&
      shard.parts().pending()) {
    // A command that starts on its own (not inside a transaction, a script or an atomic run)
    // comes after the split operations scheduled before it (part_queue.hpp).
    engine.drain_parts(shard.id(), false);
  }
  if (shard.serving_while_busy() && !allowed_while_script_busy(spec, argv)) {
    // Reached while a busy script lets other handlers of its thread run (a batch from another
    // thread sent before the script turned busy, a woken blocked client): the script's
    // half-done changes are not for anyone else to see or add to.
    reply.error(engine.scripts().busy_error());
    count_command(spec, argv, engine, shard, 0, engine.scripts().busy_error());
    return;
  }
  const bool frozen = frozen_now_ms >= 0;
  // A split command's parts after its first count nothing, so they are not timed either.
  const bool timed = !frozen && !uncounted_call;
  int64_t start = timed ? mono_us() : 0;
  CommandContext ctx{.argv = argv,
                     .reply = reply,
                     .engine = engine,
                     .shard = shard,
                     .multi_shard = multi_shard,
                     .session = session,
                     .spec = spec,
                     .now_ms = frozen ? frozen_now_ms : engine.now_ms(),
                     .db_index = db,
                     .from_script = frozen,
                     .scratch = {},
                     .block_request = block,
                     .woken = woken,
                     .logged_shards = {}};
  size_t before = reply.buffer().size();
  const RunningScript* outer_script = running_script;
  RunningScript script{&spec, argv, &shard, multi_shard};
  if (is_script_call(spec)) {
    running_script = &script;
  }
  error_reply_counted = false;
  spec.handler(ctx);
  running_script = outer_script;
  track_reads(spec, argv, engine, shard, multi_shard);
  // Close this command's log record(s): one record on a single shard, or one part per shard
  // that received effects, all carrying one id so replay applies them all or none.
  if (shard.serving_while_busy()) {
    // SCRIPT KILL and the like, run from inside the busy script's thread: they change no data,
    // and the record still open is the script's, which only the script may close.
  } else if (open_logs != nullptr) {
    if (!multi_shard) {
      if (shard.log().record_open()) {
        ctx.logged_shards.push_back(shard.id());
      }
    }
    for (size_t i : ctx.logged_shards) {
      if (std::find(open_logs->begin(), open_logs->end(), i) == open_logs->end()) {
        open_logs->push_back(i);
      }
    }
  } else if (!multi_shard) {
    shard.log().end_record(0, 1);
  } else {
    close_records(engine, ctx.logged_shards);
  }
  int64_t elapsed = timed ? mono_us() - start : 0;
  // A reply that starts with '-' is an error reply: count it like Redis's failed_calls.
  const std::string& buf = reply.buffer();
  bool failed = buf.size() > before && buf[before] == '-';
  // A blocking command counts once, when it is answered, as on Redis: not when it blocks,
  // nor when a woken re-run still finds nothing (the client waits on).
  bool blocked = block != nullptr && block->requested;
  bool still_waiting = woken && buf.size() == before;
  const bool counted = std::exchange(error_reply_counted, false);
  if (rerun_requested) {
    // Undone: the call is counted when it runs again with every shard.
    return;
  }
  if (!blocked && !still_waiting && !uncounted_call) {
    count_command(spec, argv, engine, shard, elapsed,
                  failed ? std::string_view(buf).substr(before) : std::string_view(), !counted);
  }
  // Keys a command changed woke their blocked readers through notify(); a whole-keyspace
  // write (FLUSHALL, SWAPDB) wakes every blocked reader of the keyspaces it replaced.
  if ((spec.flags & kWrite) != 0 && (spec.flags & kBlocking) == 0 && !failed) {
    if ((spec.flags & kAllShards) != 0) {
      signal_every_waited_key(engine, shard, multi_shard);
    }
    forget_soldout_beacons(spec, argv, engine, shard, multi_shard);
  }
}

CommandTotals command_totals(Engine& engine, size_t slot) {
  CommandTotals t;
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    CommandStat& st = engine.shard(i).command_stat(slot);
    t.calls += st.calls.load(std::memory_order_relaxed);
    t.usec += st.usec.load(std::memory_order_relaxed);
    t.failed += st.failed.load(std::memory_order_relaxed);
    t.rejected += st.rejected.load(std::memory_order_relaxed);
    t.latency.add(st.latency);
  }
  return t;
}

std::string stat_slot_name(const CommandSpec& spec, size_t sub_index) {
  return ascii_lower(spec.name) + "|" + spec.subcommands[sub_index];
}

namespace {

// A command over slowlog-log-slower-than: its client is looked up by id (only for such a
// command, so the common path carries nothing more). A script's commands are the script's
// own client's in Redis, which has no address ("?:0") and no name.
void log_slow_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                      Engine& engine, Shard& shard, int64_t usec) {
  // EXEC is not logged itself: the commands it ran are, each on its own (as on Redis).
  if ((spec.flags & kExec) != 0) {
    return;
  }
  std::string addr = "?:0";
  std::string name;
  if (frozen_now_ms < 0) {
    addr.clear();
    uint64_t client = current_tracking_caller().client;
    if (auto info = client != 0 ? engine.clients().find(client) : nullptr) {
      addr = info->addr;
      name = engine.clients().name(*info);
    }
  }
  engine.slowlog().add(shard.id(), redacted_args(argv), usec, unix_ms_coarse() / 1000,
                       std::move(addr), std::move(name));
}

}  // namespace

void count_command(const CommandSpec& spec, std::span<const std::string_view> argv, Engine& engine,
                   Shard& shard, int64_t usec, std::string_view error, bool count_error) {
  bool failed = !error.empty();
  if (engine.slowlog().wanted(usec)) {
    log_slow_command(spec, argv, engine, shard, usec);
  }
  CommandStat& stat = shard.command_stat(engine.table().stat_slot(spec, argv));
  KeyspaceStats::bump(stat.calls);
  KeyspaceStats::bump(stat.usec, static_cast<uint64_t>(usec));
  if (engine.config().latency_tracking.load(std::memory_order_relaxed)) {
    stat.latency.record(static_cast<uint64_t>(usec));
  }
  auto ms = static_cast<uint64_t>(usec / 1000);
  if (engine.latency().wanted(ms)) {
    // Redis's two events: commands flagged fast are expected to take constant time, so their
    // spikes say something else (an overloaded host) than a slow command does.
    engine.latency().add((spec.flags & kFast) != 0 ? "fast-command" : "command",
                         engine.now_ms() / 1000, ms);
  }
  KeyspaceStats::bump(shard.commands_processed());
  if (failed) {
    KeyspaceStats::bump(stat.failed);
    if (count_error) {
      count_error_reply(engine, error);
    }
  }
}

void count_rejected_call(const CommandSpec& spec, std::span<const std::string_view> argv,
                         Engine& engine, Shard& shard, std::string_view error) {
  KeyspaceStats::bump(shard.command_stat(engine.table().stat_slot(spec, argv)).rejected);
  count_error_reply(engine, error);
}

void count_error_reply(Engine& engine, std::string_view error) {
  engine.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
  engine.errors().count(error);
}

}  // namespace hotkv
