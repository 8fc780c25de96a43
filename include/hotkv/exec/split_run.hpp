// Commands over several shards run as one part per shard, without parking any thread
// (shard/part_queue.hpp): pipelined MSETs whose keys span shards, and a transaction whose
// commands each keep to one shard. Every shard runs its part on its own thread in the global
// order of such operations, so nobody observes half of one; the log gets one record per part,
// all with one id, so a crash keeps every part or none and replicas receive the whole in one
// MULTI/EXEC. While the shards log to files, replies that may reveal a part wait until every
// part of its operation is written (shard/split_seals.hpp).
//
// What a transaction over k shards costs: one schedule step (a lock held while k parts are
// appended) shared with the other runs of its thread's loop turn, at most k - 1 wake-ups
// posted to the other threads (one per thread however many parts wait there), and one
// message back to the client's thread when the last part is done, also shared.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hotkv/commands/table.hpp"
#include "hotkv/exec/shard_batch.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

class SplitRun {
 public:
  // Whether a call whose keys span shards can run as one call per shard: a kSplitsByKey
  // command whose arguments are whole groups (a key and the arguments up to the next); any
  // other call (MSET with a key missing its value) runs whole, and its handler answers it.
  static bool splits(const CommandSpec& spec, std::span<const std::string_view> argv,
                     Engine& engine) {
    if ((spec.flags & kSplitsByKey) == 0 || spec.keys.first <= 0 || spec.keys.step <= 0 ||
        !events_allow_split(engine)) {
      return false;
    }
    const auto first = static_cast<size_t>(spec.keys.first);
    return argv.size() > first && (argv.size() - first) % static_cast<size_t>(spec.keys.step) == 0;
  }

  // Parts on different shards raise their keyspace events as they run, not in the call's key
  // order: with notify-keyspace-events on, calls over several shards keep run_atomic, whose
  // events follow the keys (and the transaction's commands) as Redis's do.
  static bool events_allow_split(Engine& engine) {
    return engine.config().notify_keyspace_events.load(std::memory_order_relaxed) == 0;
  }

  // Adds a kSplitsByKey call: each key, with the arguments up to the next key, goes to its
  // shard's part; the part of the first key's shard counts the call. The parts' replies make
  // the call's: alike (MSET: the first key's part answers), added up (kSplitSums: DEL,
  // EXISTS) or gathered back into key order (kSplitGathers: MGET).
  // `key_shards`: each key's shard, in order (Route::key_shards), computed once by the route;
  // one per key group. REQUIRES: splits(spec, argv, engine).
  void add_split(const CommandSpec& spec, std::span<const std::string_view> argv,
                 std::span<const size_t> key_shards, uint32_t db, const TrackingCaller& caller,
                 Engine& engine);
  // Adds a call whose keys all live on `shard` (a transaction's command).
  void add_to(size_t shard, const CommandSpec& spec, std::span<const std::string_view> argv,
              uint32_t db, const TrackingCaller& caller);
  size_t size() const { return sources_.size(); }
  bool empty() const { return sources_.empty(); }
  size_t arg_bytes() const { return arg_bytes_; }

  // The shards the run has a part on, and running that part: the shard's commands in order,
  // its log record closed as one part of the run (ShardBatch::run_part). prepare() first,
  // once, on the client's thread; run_shard on shard `s`'s thread (or a coordinator while it
  // is parked). The net layer schedules the parts (Engine::schedule_parts), several runs of
  // one loop turn together (ShardCourier::send_split).
  const std::vector<size_t>& shards() const { return used_; }
  void prepare(Engine& engine);
  void run_shard(Engine& engine, size_t s, int proto);
  // Appends the reply of call i, once done.
  void append_reply(size_t i, std::string& out) const;
  void clear();

 private:
  ShardBatch& batch(size_t shard);
  // Where call i's reply comes from: parts_[first, first + count) (one for a whole call),
  // the first one the lead; for a gathered reply, keys_[first_key...] names each key's
  // shard in the call's order.
  struct Part {
    uint32_t shard;
    uint32_t index;  // in that shard's batch
  };
  struct Source {
    uint32_t first;
    uint32_t count;
    uint32_t first_key;
    uint32_t key_count;  // gathered: how many keys
    uint32_t flags;  // the command's (kSplitSums, kSplitGathers)
  };
  std::vector<Part> parts_;
  std::vector<uint32_t> keys_;
  std::vector<ShardBatch> batches_;  // indexed by shard, sized on first use
  std::vector<size_t> used_;         // shards with a part, in the order first used
  std::vector<Source> sources_;
  size_t arg_bytes_ = 0;
  std::vector<std::vector<std::string_view>> split_args_;  // per shard, while splitting
  std::vector<size_t> touched_;                            // add_split's shards
  uint64_t txn_ = 0;
  bool writes_ = false;  // a call may write: the parts form one logged operation
};

}  // namespace hotkv
