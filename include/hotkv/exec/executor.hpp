// A connection's executor: runs its planned commands (exec/plan.hpp) in request order, the
// ones that can wait for their replies together. Keyed commands for other shards are squashed
// into one batch per shard (the pipeline window), consecutive commands over several shards
// into one atomic run or one split run, and EXEC's queue into whichever of those its plan
// says. The thread's ShardCourier carries the batches and runs of every connection of the
// thread, one message per shard and one rendezvous per loop turn. No socket here: the
// connection reads and writes, and the replica link and EXEC use the same executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <asio/awaitable.hpp>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/exec/plan.hpp"
#include "hotkv/exec/shard_batch.hpp"
#include "hotkv/exec/shard_courier.hpp"
#include "hotkv/exec/split_run.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/tracking.hpp"

namespace hotkv {

class Executor {
 public:
  // For a connection on shard `home`, whose thread's courier is `courier`.
  Executor(Engine& engine, size_t home, ShardCourier& courier, ClientSession& session);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Nothing of this connection's waits in the window or in a run.
  bool idle() const { return window_.empty() && !cross_shard_pending(); }
  bool window_empty() const { return window_.empty(); }
  // A split or atomic run is collecting commands.
  bool cross_shard_pending() const { return !atomic_run_.empty() || !split_run_.empty(); }
  // The window or a run reached its bound: flush before taking more, so a huge pipeline is
  // squashed in bounded pieces.
  bool full() const;

  // Offers a planned command whose reply may wait for the commands after it: a keyed command
  // for another shard (or any keyed command once the window holds one) joins the window, a
  // command over several shards the atomic or split run. kFlushFirst: it may not join what is
  // pending (flush, then offer it again; after a flush it is never refused). kRunNow: it must
  // run alone, after what is pending. A blocking command or one whose reply is silenced is
  // never offered. Not a coroutine: a command that joins costs no frame.
  enum class Take { kTaken, kFlushFirst, kRunNow };
  Take take(const Plan& plan, std::span<const std::string_view> argv,
            const TrackingCaller& caller);

  // The pieces take() is made of, for the replica link, which keeps every command over
  // several shards alone. window_takes: false if the window must be flushed before `spec`
  // joins it for `shard`: a window that holds a script keeps to one shard, because a script
  // that has to run again with every shard (take_rerun_request) must not find the commands
  // after it already run elsewhere.
  bool window_takes(size_t shard, const CommandSpec& spec) const;
  void add_to_window(size_t shard, const CommandSpec& spec, std::span<const std::string_view> argv,
                     uint32_t db, const TrackingCaller& caller);
  void add_to_atomic_run(const CommandSpec& spec, std::span<const std::string_view> argv,
                         uint32_t db, const TrackingCaller& caller,
                         const std::vector<size_t>& shards);

  // Runs everything pending, the split run, then the atomic run, then the window (each
  // shard's batch in one message, the own shard's meanwhile), and appends the replies to
  // `out` in request order.
  asio::awaitable<void> flush(std::string& out);

  // EXEC of the session's open transaction: runs the queued commands where their plan says
  // (transaction_run.cpp) and returns the reply.
  asio::awaitable<std::string> exec_transaction(const TrackingCaller& caller);

  // Runs `work` on this thread with `shards` (sorted, unique) parked, in one run_atomic with
  // the cross-shard work of every other connection of this thread in the same loop turn.
  // `refuse` runs instead of `work` if a busy script holds one of the shards.
  asio::awaitable<void> run_atomic_batched(std::vector<size_t> shards, std::function<void()> work,
                                           std::function<void()> refuse);

  // A pipeline window (a client's or the master's stream) is sent once it holds this many
  // commands or argument bytes.
  static constexpr size_t kWindowCommands = 1024;
  static constexpr size_t kWindowBytes = 1024 * 1024;

 private:
  asio::awaitable<void> flush_window(std::string& out);
  asio::awaitable<void> flush_atomic_run(std::string& out);
  asio::awaitable<void> flush_split_run(std::string& out);
  // Starts `run` and resumes once its last part is done.
  asio::awaitable<void> run_split(SplitRun& run);
  // Runs `batch` on this thread with `shards` parked (run_atomic_batched); every command
  // answers -BUSY instead if a busy script holds one of them.
  asio::awaitable<void> run_batch_parked(ShardBatch& batch, std::vector<size_t> shards);
  // A batch that stopped at a script that must run again with every shard: the commands it
  // did not run run now, in order, in one run with every shard parked, and their replies
  // complete the batch's.
  asio::awaitable<void> finish_stopped_batch(ShardBatch& stopped);
  // EXEC's commands as a split run, one part per shard; the reply goes to exec_replies_.
  // `refusals`: the ACL error in place of each refused command (else empty).
  asio::awaitable<void> exec_split(const MultiState& txn, const std::vector<std::string>& refusals,
                                   const std::vector<size_t>& command_shard,
                                   const TrackingCaller& caller);

  Engine& engine_;
  size_t home_;
  ShardCourier& courier_;
  ClientSession& session_;
  std::vector<ShardBatch> batches_;  // indexed by shard, sized on first use
  std::vector<uint16_t> window_;     // the shard of each windowed command, in request order
  size_t window_remote_ = 0;         // windowed commands for other shards
  size_t window_bytes_ = 0;
  bool window_script_ = false;    // the window holds a script call
  bool window_one_shard_ = true;  // every windowed command is for window_.front()'s shard
  ShardBatch atomic_run_;
  std::vector<size_t> atomic_shards_;  // sorted, unique
  SplitRun split_run_;
  SplitRun exec_split_;  // exec_split's run, kept for its buffers
  std::string exec_replies_;
  ShardBatch rerun_;  // finish_stopped_batch's commands
};

}  // namespace hotkv
