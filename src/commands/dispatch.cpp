// Command checks, routing and execution (see dispatch.hpp).
#include "hotkv/commands/dispatch.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include "hotkv/commands/acl_session.hpp"
#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/inventory_soldout.hpp"
#include "hotkv/commands/pubsub_session.hpp"
#include "hotkv/commands/redaction.hpp"
#include "hotkv/commands/script_helpers.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/scripting/script_store.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

bool is_subcommand(const CommandSpec& spec, std::string_view name) {
  for (const std::string& sub : spec.subcommands) {
    if (ascii_lower(name) == sub) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool CommandContext::int_arg_or_reply(size_t i, int64_t& out) {
  auto v = parse_int64(argv[i]);
  if (!v) {
    reply.error(err::kNotInteger);
    return false;
  }
  out = *v;
  return true;
}

namespace {

void note_logged(CommandContext& ctx, size_t shard) {
  if (std::find(ctx.logged_shards.begin(), ctx.logged_shards.end(), shard) ==
      ctx.logged_shards.end()) {
    ctx.logged_shards.push_back(shard);
  }
}

// The log of the key's shard, its open record switched to the command's database.
ShardLog& log_for(CommandContext& ctx, std::string_view key) {
  ShardLog* log = &ctx.shard.log();
  if (ctx.multi_shard) {
    size_t owner = ctx.engine.shard_of(key);
    log = &ctx.engine.shard(owner).log();
    if (log->enabled()) {
      note_logged(ctx, owner);
    }
  }
  if (log->enabled()) {
    log->record().select(ctx.db_index);
  }
  return *log;
}

}  // namespace

void CommandContext::log_put(std::string_view key) {
  ShardLog& log = log_for(*this, key);
  if (!log.enabled()) {
    return;
  }
  encode_replacement(log.record(), key, db(key).find(key, now_ms), scratch);
}

void CommandContext::notify(uint32_t type_flag, std::string_view event, std::string_view key) {
  engine.notify_keyspace_event(db_index, type_flag, event, key);
  Shard& owner = multi_shard ? engine.shard(engine.shard_of(key)) : shard;
  owner.count_key_change();
  signal_key_written(engine, owner, db_index, key);
}

bool CommandContext::logging(std::string_view key) {
  return multi_shard ? engine.shard(engine.shard_of(key)).log().enabled() : shard.log().enabled();
}

void CommandContext::log_op(std::string_view key, OpCode op,
                            std::span<const std::string_view> args) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_op(key, static_cast<uint16_t>(op), args);
  }
}

void CommandContext::log_del(std::string_view key) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_del(key);
  }
}

void CommandContext::log_expire(std::string_view key, int64_t at_ms) {
  ShardLog& log = log_for(*this, key);
  if (log.enabled()) {
    log.record().add_expire(key, at_ms);
  }
}

void CommandContext::log_flush(Shard& s, uint32_t db) {
  if (s.log().enabled()) {
    if (multi_shard) {
      note_logged(*this, s.id());
    }
    s.log().record().select(db);
    s.log().record().add_flush();
  }
}

void CommandContext::log_swapdb(Shard& s, uint32_t a, uint32_t b) {
  if (s.log().enabled()) {
    if (multi_shard) {
      note_logged(*this, s.id());
    }
    s.log().record().add_swapdb(a, b);
  }
}

void CommandContext::store_or_delete(std::string_view dst, Value value, bool empty, int64_t size,
                                     uint32_t type_flag, std::string_view event) {
  Keyspace& ks = db(dst);
  if (empty) {
    if (ks.find(dst, now_ms) != nullptr && ks.erase(dst)) {
      log_del(dst);
      notify(kNotifyGeneric, "del", dst);
    }
    reply.integer(0);
    return;
  }
  ks.put(dst, std::move(value));
  log_put(dst);
  notify(type_flag, event, dst);
  reply.integer(size);
}

void CommandContext::wrong_arity() {
  reply.error(err::wrong_arity(argv[0]));
}

namespace {

// While a script runs past busy-reply-threshold, what can end it, and what touches nothing
// but the connection, gets through (Redis's allow-busy commands).
bool allowed_while_script_busy(const CommandSpec& spec, std::span<const std::string_view> argv) {
  if ((spec.flags & kAllowBusy) != 0) {
    return true;
  }
  return argv.size() == 2 &&
         std::any_of(spec.allow_busy_subcommands.begin(), spec.allow_busy_subcommands.end(),
                     [&](const std::string& sub) { return equals_ignore_case(argv[1], sub); });
}

// Whether a command would need a shard a busy script holds. Keyed commands whose keys all
// live on other shards are served as usual; commands without keys (PING, INFO, ...), those
// that need every shard, and everything inside MULTI (a transaction's shards are only known
// at EXEC) are refused as Redis refuses them.
bool needs_busy_shard(const CommandSpec& spec, std::span<const std::string_view> argv,
                      const ClientSession& session, Engine& engine) {
  if (session.multi.active || needs_every_shard(spec, argv) || engine.shard_count() == 1) {
    return true;
  }
  thread_local std::vector<size_t> shards;
  thread_local std::vector<size_t> scratch;
  shards.clear();
  add_key_shards(spec, argv, engine, shards, scratch);
  if (shards.empty()) {
    return true;
  }
  return std::any_of(shards.begin(), shards.end(),
                     [&engine](size_t s) { return engine.shard(s).script_busy(); });
}

}  // namespace

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

const CommandSpec* check_command(const Table& table, std::span<const std::string_view> argv,
                                 ClientSession& session, Engine& engine,
                                 ReplyWriter& reply) {
  const CommandSpec* spec = table.find(argv[0]);
  if (spec == nullptr) {
    reply.error(err::unknown_command(argv));
    return nullptr;
  }
  // Redis 7 looks container subcommands up like commands: an unknown one is refused before
  // anything else, whatever the arguments.
  if (!spec->subcommands.empty() && argv.size() >= 2 && !is_subcommand(*spec, argv[1])) {
    reply.error(err::unknown_subcommand(argv[0], argv[1]));
    return nullptr;
  }
  int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    reply.error(err::wrong_arity(argv[0]));
    return nullptr;
  }
  if (!session.authenticated && (spec->flags & kNoAuth) == 0) {
    reply.error(err::kNoAuth);
    return nullptr;
  }
  if (!acl_allows_or_reply(session, engine, *spec, argv, reply)) {
    return nullptr;
  }
  if (engine.scripts().busy() && !allowed_while_script_busy(*spec, argv) &&
      needs_busy_shard(*spec, argv, session, engine)) {
    reply.error(engine.scripts().busy_error());
    return nullptr;
  }
  if (engine.loading() && (spec->flags & kLoading) == 0) {
    reply.error(err::kLoading);
    return nullptr;
  }
  if (session.resp == 2 && session.subscriptions() > 0 && !allowed_while_subscribed(argv[0])) {
    reply.error(subscribed_context_error(argv[0]));
    return nullptr;
  }
  if ((spec->flags & kWrite) != 0) {
    if (int e = engine.persistence_errno()) {
      reply.error(err::misconf_aof(e));
      return nullptr;
    }
    if (const char* refusal = replication_write_refusal(engine, session.master_link)) {
      reply.error(refusal);
      return nullptr;
    }
  }
  // replica-serve-stale-data no: while the link to the master is not up, only the commands
  // flagged stale (INFO, REPLICAOF, PING, CONFIG...) are served, as on Redis.
  if ((spec->flags & kStale) == 0 && engine.replication().is_replica() &&
      !engine.config().replica_serve_stale_data.load(std::memory_order_relaxed) &&
      engine.replication().link_state() != LinkState::kConnected) {
    reply.error(err::kMasterDown);
    return nullptr;
  }
  return spec;
}

namespace {
void sort_unique(std::vector<size_t>& shards) {
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
}

// Adds the shards of argv[i] for each i in `indexes` to `shards`, sorted and without repeats.
void add_indexed_shards(std::span<const std::string_view> argv, std::span<const size_t> indexes,
                        Engine& engine, std::vector<size_t>& shards) {
  for (size_t idx : indexes) {
    shards.push_back(engine.shard_of(argv[idx]));
  }
  sort_unique(shards);
}
}  // namespace

void route_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                   Engine& engine, size_t home, Route& route) {
  route.kind = RouteKind::kLocal;
  route.shards.clear();
  route.keyed = false;
  route.key_indexes.clear();
  route.key_shards.clear();
  if (needs_every_shard(spec, argv)) {
    if (engine.shard_count() > 1) {
      route.kind = RouteKind::kAtomic;
      route.shards = engine.all_shards();
    }
    return;
  }
  if (engine.shard_count() == 1 || (spec.flags & kConnection) != 0) {
    return;
  }
  if ((spec.flags & kNoScript) != 0 && script_needs_every_shard(spec, argv, engine)) {
    // A script that touched (or may touch) keys it did not declare: it may reach any shard.
    route.kind = RouteKind::kAtomic;
    route.shards = engine.all_shards();
    return;
  }
  Table::key_indexes(spec, argv, route.key_indexes);
  if (route.key_indexes.empty()) {
    return;
  }
  route.keyed = true;
  bool several = false;
  for (size_t idx : route.key_indexes) {
    route.key_shards.push_back(engine.shard_of(argv[idx]));
    several = several || route.key_shards.back() != route.key_shards.front();
  }
  const size_t first = route.key_shards.front();
  if (!several) {
    if (first != home) {
      route.kind = RouteKind::kRemote;
      route.shard = first;
    }
    return;
  }
  route.kind = RouteKind::kAtomic;
  route.shards = route.key_shards;
  sort_unique(route.shards);
}

void add_shards_of(std::span<const std::string_view> keys, Engine& engine,
                   std::vector<size_t>& shards) {
  for (std::string_view key : keys) {
    shards.push_back(engine.shard_of(key));
  }
  sort_unique(shards);
}

void add_key_shards(const CommandSpec& spec, std::span<const std::string_view> argv,
                    Engine& engine, std::vector<size_t>& shards, std::vector<size_t>& scratch) {
  scratch.clear();
  Table::key_indexes(spec, argv, scratch);
  add_indexed_shards(argv, scratch, engine, shards);
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
