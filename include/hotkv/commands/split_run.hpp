// Commands over several shards run as one part per shard, without parking any thread
// (shard/part_queue.hpp): pipelined MSETs whose keys span shards, and a transaction whose
// commands each keep to one shard. Every shard runs its part on its own thread in the global
// order of such operations, so nobody observes half of one; the log gets one record per part,
// all with one id, so a crash keeps every part or none and replicas receive the whole in one
// MULTI/EXEC.
//
// What a transaction over k shards costs: one schedule step (a lock held while k parts are
// appended), k - 1 wake-ups posted to the other threads (one per thread however many parts
// wait there), and one message back to the client's thread when the last part is done.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "hotkv/commands/shard_batch.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

class SplitRun {
 public:
  // Whether a call whose keys span shards can run as one call per shard: a kSplitsByKey
  // command whose arguments are whole groups (a key and the arguments up to the next); any
  // other call (MSET with a key missing its value) runs whole, and its handler answers it.
  static bool splits(const CommandSpec& spec, std::span<const std::string_view> argv) {
    if ((spec.flags & kSplitsByKey) == 0 || spec.keys.first <= 0 || spec.keys.step <= 0) {
      return false;
    }
    const auto first = static_cast<size_t>(spec.keys.first);
    return argv.size() > first && (argv.size() - first) % static_cast<size_t>(spec.keys.step) == 0;
  }

  // Adds a kSplitsByKey call: each key, with the arguments up to the next key, goes to its
  // shard's part; the part of the first key's shard answers for the call and counts it.
  void add_split(const CommandSpec& spec, std::span<const std::string_view> argv, uint32_t db,
                 const TrackingCaller& caller, Engine& engine);
  // Adds a call whose keys all live on `shard` (a transaction's command).
  void add_to(size_t shard, const CommandSpec& spec, std::span<const std::string_view> argv,
              uint32_t db, const TrackingCaller& caller);
  size_t size() const { return sources_.size(); }
  bool empty() const { return sources_.empty(); }
  size_t arg_bytes() const { return arg_bytes_; }

  // Schedules the parts (Engine::schedule_parts) from shard `home`'s thread; `done` runs on
  // the thread of whichever part finishes last, once every part ran and passed its shard's
  // durability barrier. The run must outlive `done`.
  void start(Engine& engine, size_t home, int proto, std::function<void()> done);
  // The reply of call i, once done.
  std::string_view reply(size_t i) const;
  void clear();

 private:
  ShardBatch& batch(size_t shard);
  struct Source {
    uint32_t shard;
    uint32_t index;
  };
  std::vector<ShardBatch> batches_;  // indexed by shard, sized on first use
  std::vector<size_t> used_;         // shards with a part, in the order first used
  std::vector<Source> sources_;
  size_t arg_bytes_ = 0;
  std::vector<std::vector<std::string_view>> split_args_;  // per shard, while splitting
  struct State {
    std::atomic<size_t> remaining{0};
    std::function<void()> done;
  };
  std::shared_ptr<State> state_;
};

}  // namespace hotkv
