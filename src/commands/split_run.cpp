// Commands over several shards as one part per shard (see split_run.hpp).
#include "hotkv/commands/split_run.hpp"

#include <algorithm>

namespace hotkv {

ShardBatch& SplitRun::batch(size_t shard) {
  if (batches_.size() <= shard) {
    batches_.resize(shard + 1);
  }
  if (batches_[shard].empty() && std::find(used_.begin(), used_.end(), shard) == used_.end()) {
    used_.push_back(shard);
  }
  return batches_[shard];
}

void SplitRun::add_split(const CommandSpec& spec, std::span<const std::string_view> argv,
                         uint32_t db, const TrackingCaller& caller, Engine& engine) {
  // Keys at first, first + step, ... to the end (MSET: key value key value ...).
  const size_t first = static_cast<size_t>(spec.keys.first);
  const size_t step = static_cast<size_t>(spec.keys.step);
  if (split_args_.size() < engine.shard_count()) {
    split_args_.resize(engine.shard_count());
  }
  const size_t lead = engine.shard_of(argv[first]);
  std::vector<size_t>& touched = touched_;
  touched.clear();
  for (size_t k = first; k + step <= argv.size(); k += step) {
    size_t s = engine.shard_of(argv[k]);
    std::vector<std::string_view>& part = split_args_[s];
    if (part.empty()) {
      part.assign(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(first));
      touched.push_back(s);
    }
    part.insert(part.end(), argv.begin() + static_cast<std::ptrdiff_t>(k),
                argv.begin() + static_cast<std::ptrdiff_t>(k + step));
  }
  for (size_t s : touched) {
    ShardBatch& b = batch(s);
    if (s == lead) {
      sources_.push_back(Source{static_cast<uint32_t>(s), static_cast<uint32_t>(b.size())});
    }
    b.add(spec, split_args_[s], db, caller, s == lead);
    split_args_[s].clear();
  }
  for (std::string_view a : argv) {
    arg_bytes_ += a.size();
  }
}

void SplitRun::add_to(size_t shard, const CommandSpec& spec,
                      std::span<const std::string_view> argv, uint32_t db,
                      const TrackingCaller& caller) {
  ShardBatch& b = batch(shard);
  sources_.push_back(Source{static_cast<uint32_t>(shard), static_cast<uint32_t>(b.size())});
  b.add(spec, argv, db, caller);
  for (std::string_view a : argv) {
    arg_bytes_ += a.size();
  }
}

void SplitRun::prepare(Engine& engine) { txn_ = used_.size() > 1 ? engine.next_txn_id() : 0; }

void SplitRun::run_shard(Engine& engine, size_t s, int proto) {
  batches_[s].run_part(engine, engine.shard(s), proto, nullptr, txn_,
                       static_cast<uint32_t>(used_.size()));
}

std::string_view SplitRun::reply(size_t i) const {
  return batches_[sources_[i].shard].reply(sources_[i].index);
}

void SplitRun::clear() {
  for (size_t s : used_) {
    batches_[s].clear();
  }
  used_.clear();
  sources_.clear();
  arg_bytes_ = 0;
  txn_ = 0;
}

}  // namespace hotkv
