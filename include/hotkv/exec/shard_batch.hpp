// One shard's part of a client's pipeline: the commands whose keys all live on that shard, in
// the order the client sent them, with their arguments copied back to back into one buffer,
// and (once run) their replies. A batch travels to the owning shard's thread by move and comes
// back the same way, so in steady state a pipeline crossing threads allocates nothing per
// command: the buffers keep their capacity from one window to the next.
//
// No asio here: the connection decides when a batch travels (net/connection.cpp); this file
// only fills, runs and reads batches.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/commands/client_session.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

struct CommandSpec;

class ShardBatch {
 public:
  // Appends a command (its arguments are copied) to run in database `db` as `caller`'s (for
  // client-side caching). REQUIRES: the batch has not been run since the last clear().
  // `counted`: false for a split command's parts after its first (split_run.hpp), so that
  // the command counts once in its statistics.
  void add(const CommandSpec& spec, std::span<const std::string_view> argv, uint32_t db,
           const TrackingCaller& caller = {}, bool counted = true);
  size_t size() const { return commands_.size(); }
  bool empty() const { return commands_.empty(); }
  // Bytes of arguments held (for the connection's bound on a window).
  size_t arg_bytes() const { return args_.size(); }

  // Runs every command in order on `shard`, which must be the calling thread's own shard and
  // own every key of the batch, replying in protocol `proto`. `session` is the client's
  // session when the batch runs on the client's own thread, else null (as for any command
  // executed on another shard). With `multi_shard` the commands run inside run_atomic, their
  // keys on any parked shard (`shard` is then the coordinator's own). The log records are
  // left for the caller to write: the courier writes them once for a whole message.
  void run(Engine& engine, Shard& shard, int proto, ClientSession* session,
           bool multi_shard = false);

  // Runs the batch as this shard's part of split operation `txn` (split_run.hpp): in order,
  // its effects in one log record closed as one of `parts`, written even when empty (parts 0:
  // a run that only reads, whose commands keep their own records). Owner thread of `shard`.
  void run_part(Engine& engine, Shard& shard, int proto, ClientSession* session, uint64_t txn,
                uint32_t parts);

  // After run(): true if it stopped before its end, at a script that must run again with
  // every shard (dispatch.hpp, take_rerun_request); replies exist for the commands before it.
  bool stopped() const { return reply_ends_.size() < commands_.size(); }
  // Copies the commands `from` did not run (from its stopping point on) into this batch.
  void add_unrun_of(const ShardBatch& from);
  // Appends `other`'s replies after this batch's, which then has one reply per command again.
  void append_replies_of(const ShardBatch& other);

  // Instead of run(): every command answers `error` (a shard the batch needs is held by a
  // busy script, so the batch cannot run); after a run that stopped, every command it did not
  // run does.
  void refuse(const std::string& error);

  // The reply of command i. REQUIRES: run() or refuse() was called, and i < the number of
  // commands that ran.
  std::string_view reply(size_t i) const;

  // Forgets the commands and replies, keeping the buffers (released when unusually large).
  void clear();

 private:
  struct Command {
    const CommandSpec* spec;
    uint32_t first_arg;
    uint32_t argc;
    uint32_t db;
    TrackingCaller caller;
    bool counted;
  };
  // Command c's arguments as views into args_.
  void views_of(const Command& c, std::vector<std::string_view>& views) const;
  std::string args_;
  std::vector<uint32_t> arg_ends_;
  std::vector<Command> commands_;
  std::string replies_;
  std::vector<size_t> reply_ends_;  // replies may pass 4 GiB (large values)
};

}  // namespace hotkv
