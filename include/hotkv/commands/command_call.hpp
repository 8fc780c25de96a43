// Running one command's handler: the context it gets, the statistics it leaves (calls, time,
// failures, slow log, latency events, error replies) and the per-thread switches scripts and
// transactions set around it (a frozen clock, uncounted parts, a request to run again with
// every shard). Which shard runs it and with what held is decided above this layer
// (exec/plan.hpp); here the handler simply runs where it is called.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/resp/writer.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/util/latency_histogram.hpp"

namespace hotkv {

// Whether replication forbids a write now: a read-only replica's error (unless the write comes
// from its master's link) or a master's -NOREPLICAS while too few replicas acknowledge in time
// (min-replicas-to-write). nullptr when the write may go ahead. Any thread.
const char* replication_write_refusal(Engine& engine, bool from_master_link);

// While a script runs past busy-reply-threshold, what can end it and what touches nothing but
// the connection gets through (Redis's allow-busy commands).
bool allowed_while_script_busy(const CommandSpec& spec, std::span<const std::string_view> argv);

// While one lives on this thread (and `on`), execute_command leaves the command out of its
// statistics: a split command's parts after its first (split_run.hpp) count nothing.
struct UncountedCall {
  explicit UncountedCall(bool on);
  ~UncountedCall();
  bool outer;
};

// Runs the handler on `shard` (or, with multi_shard, with all involved shards parked) and
// records statistics. `db` is the client's selected database: the command's keys are in it.
// `block` (optional) lets a blocking command ask to wait instead of replying; `woken` marks a
// re-run of a blocked command (see CommandContext).
// `open_logs` (optional, for EXEC and scripts): leave this command's log records open so that
// several commands form one record per shard, and add the ids of the shards whose records
// hold effects; the caller closes them with close_records().
void execute_command(const CommandSpec& spec, std::span<const std::string_view> argv,
                     Engine& engine, Shard& shard, bool multi_shard, ClientSession* session,
                     uint32_t db, ReplyWriter& reply, CommandContext::BlockRequest* block = nullptr,
                     bool woken = false, std::vector<size_t>* open_logs = nullptr);

// The per-command statistics execute_command keeps (calls, time, failures, the latency
// histogram and latency-monitor events), for a command answered without its handler
// (inventory_soldout.hpp) or a blocked one answered by a timeout. Counted in the slot of
// argv's subcommand when the command has subcommands (Table::stat_slot). `error`: the error
// reply it got (its text, with or without '-'), empty when it succeeded. Runs on shard's
// thread (or a coordinator while it is parked).
void count_command(const CommandSpec& spec, std::span<const std::string_view> argv, Engine& engine,
                   Shard& shard, int64_t usec, std::string_view error, bool count_error = true);

// Called by a script whose error reply repeats an error already counted (a redis.call that
// failed or was refused): execute_command then counts the script's failed call but not its
// error reply again, as Redis does. This thread's next execute_command takes it.
void mark_error_reply_counted();

// Called by a script that kept to its KEYS so far and then reached a shard it does not hold
// (or a command that needs every shard): its run was undone and wrote no reply, and the
// command must run again with every shard held (docs/scripting.md). execute_command leaves
// such a call uncounted; whoever called it takes the request with take_rerun_request() and
// runs the command again with every shard -- the only outcome it may have there is a reply.
void request_rerun_with_every_shard();
bool take_rerun_request();

// INFO errorstats and total_error_replies: one error reply with this text (with or without
// the leading '-'), counted under its code. Every error a client is sent is counted once:
// execute_command counts a handler's, and the connection counts those it writes itself
// (refused commands, EXECABORT, protocol errors). Any thread.
void count_error_reply(Engine& engine, std::string_view error);

// A command refused before its handler ran because of the server's state (-OOM): its
// rejected_calls and the error reply. Runs on `shard`'s thread.
void count_rejected_call(const CommandSpec& spec, std::span<const std::string_view> argv,
                         Engine& engine, Shard& shard, std::string_view error);

// One statistics slot summed over the shards (INFO commandstats, LATENCY HISTOGRAM). Any
// thread; relaxed reads, so a call finishing meanwhile may be missing.
struct CommandTotals {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t failed = 0;
  uint64_t rejected = 0;
  LatencySum latency;
};
CommandTotals command_totals(Engine& engine, size_t slot);
// The name a slot is reported under: "get", or "client|id" for a subcommand.
std::string stat_slot_name(const CommandSpec& spec, size_t sub_index);

// While alive, commands executed on this thread see `now_ms` as the time (a script's commands
// all see the moment it started, as in Redis, so an expiry cannot land half-way through it)
// and are not timed one by one (the script as a whole is).
class FrozenClock {
 public:
  explicit FrozenClock(int64_t now_ms);
  ~FrozenClock();
  FrozenClock(const FrozenClock&) = delete;
  FrozenClock& operator=(const FrozenClock&) = delete;

 private:
  int64_t saved_;
};

// Closes the records of `shards` as one operation: a single record, or one part per shard
// carrying a shared id, so replay applies all of them or none.
void close_records(Engine& engine, const std::vector<size_t>& shards);

}  // namespace hotkv
