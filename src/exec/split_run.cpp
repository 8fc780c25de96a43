// Commands over several shards as one part per shard (see split_run.hpp).
#include "hotkv/exec/split_run.hpp"

#include <algorithm>
#include <string>

#include "hotkv/util/numbers.hpp"

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
                         std::span<const size_t> key_shards, uint32_t db,
                         const TrackingCaller& caller, Engine& engine) {
  // Keys at first, first + step, ... to the end (MSET: key value key value ...).
  const size_t first = static_cast<size_t>(spec.keys.first);
  const size_t step = static_cast<size_t>(spec.keys.step);
  if (split_args_.size() < engine.shard_count()) {
    split_args_.resize(engine.shard_count());
  }
  const size_t lead = key_shards[0];
  std::vector<size_t>& touched = touched_;
  touched.clear();
  touched.push_back(lead);  // the lead's part comes first among the call's parts
  Source src{static_cast<uint32_t>(parts_.size()), 0, static_cast<uint32_t>(keys_.size()), 0,
             spec.flags};
  size_t key = 0;
  for (size_t k = first; k + step <= argv.size(); k += step, ++key) {
    const size_t s = key_shards[key];
    std::vector<std::string_view>& part = split_args_[s];
    if (part.empty()) {
      part.assign(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(first));
      if (s != lead) {
        touched.push_back(s);
      }
    }
    part.insert(part.end(), argv.begin() + static_cast<std::ptrdiff_t>(k),
                argv.begin() + static_cast<std::ptrdiff_t>(k + step));
    if ((spec.flags & kSplitGathers) != 0) {
      keys_.push_back(static_cast<uint32_t>(s));
    }
  }
  for (size_t s : touched) {
    ShardBatch& b = batch(s);
    parts_.push_back(Part{static_cast<uint32_t>(s), static_cast<uint32_t>(b.size())});
    b.add(spec, split_args_[s], db, caller, s == lead);
    split_args_[s].clear();
  }
  src.count = static_cast<uint32_t>(touched.size());
  src.key_count = static_cast<uint32_t>(keys_.size()) - src.first_key;
  sources_.push_back(src);
  writes_ = writes_ || (spec.flags & kWrite) != 0;
  for (std::string_view a : argv) {
    arg_bytes_ += a.size();
  }
}

void SplitRun::add_to(size_t shard, const CommandSpec& spec,
                      std::span<const std::string_view> argv, uint32_t db,
                      const TrackingCaller& caller) {
  ShardBatch& b = batch(shard);
  sources_.push_back(Source{static_cast<uint32_t>(parts_.size()), 1, 0, 0, 0});
  parts_.push_back(Part{static_cast<uint32_t>(shard), static_cast<uint32_t>(b.size())});
  b.add(spec, argv, db, caller);
  writes_ = writes_ || (spec.flags & kWrite) != 0;
  for (std::string_view a : argv) {
    arg_bytes_ += a.size();
  }
}

void SplitRun::prepare(Engine& engine) {
  txn_ = writes_ && used_.size() > 1 ? engine.next_txn_id() : 0;
}

void SplitRun::run_shard(Engine& engine, size_t s, int proto) {
  // A run that only reads logs nothing of its own (a read's lazy expiry is a record of its
  // own, as for any read): no record per part.
  batches_[s].run_part(engine, engine.shard(s), proto, nullptr, txn_,
                       writes_ ? static_cast<uint32_t>(used_.size()) : 0);
}

namespace {

// The length of the one RESP value at the start of `r`: the element replies MGET's parts
// carry (a bulk string, a null, an error). 0 if it is none of those or incomplete.
size_t element_length(std::string_view r) {
  size_t eol = r.find("\r\n");
  if (eol == std::string_view::npos) {
    return 0;
  }
  if (r[0] == '$') {
    long long n = 0;
    for (size_t i = 1; i < eol; ++i) {
      if (r[i] == '-') {
        return eol + 2;  // $-1
      }
      n = n * 10 + (r[i] - '0');
    }
    return eol + 2 + static_cast<size_t>(n) + 2;
  }
  return eol + 2;  // _ (RESP3 null), -error, +simple, :integer
}

// The elements of an array reply ("*n\r\n" then n elements).
bool array_elements(std::string_view r, std::vector<std::string_view>& out) {
  size_t eol = r.find("\r\n");
  if (r.empty() || r[0] != '*' || eol == std::string_view::npos) {
    return false;
  }
  size_t pos = eol + 2;
  while (pos < r.size()) {
    size_t len = element_length(r.substr(pos));
    if (len == 0) {
      return false;
    }
    out.push_back(r.substr(pos, len));
    pos += len;
  }
  return true;
}

}  // namespace

void SplitRun::append_reply(size_t i, std::string& out) const {
  const Source& src = sources_[i];
  auto part_reply = [this](const Part& p) { return batches_[p.shard].reply(p.index); };
  const Part* parts = parts_.data() + src.first;
  // An error from any part is the call's reply (the handler refused what it was given).
  for (uint32_t k = 0; k < src.count; ++k) {
    std::string_view r = part_reply(parts[k]);
    if (!r.empty() && (r[0] == '-' || r[0] == '!')) {
      out += r;
      return;
    }
  }
  if ((src.flags & kSplitSums) != 0) {
    int64_t total = 0;
    for (uint32_t k = 0; k < src.count; ++k) {
      std::string_view r = part_reply(parts[k]);  // ":<n>\r\n"
      total += parse_int64(r.substr(1, r.size() - 3)).value_or(0);
    }
    out += ':';
    out += std::to_string(total);
    out += "\r\n";
    return;
  }
  if ((src.flags & kSplitGathers) != 0) {
    // Each part's elements in its keys' order; the call's order takes them back in turn.
    thread_local std::vector<std::vector<std::string_view>> elements;
    thread_local std::vector<size_t> taken;
    if (elements.size() < batches_.size()) {
      elements.resize(batches_.size());
    }
    taken.assign(batches_.size(), 0);
    for (uint32_t k = 0; k < src.count; ++k) {
      elements[parts[k].shard].clear();
      array_elements(part_reply(parts[k]), elements[parts[k].shard]);
    }
    const size_t n = src.key_count;
    out += '*';
    out += std::to_string(n);
    out += "\r\n";
    for (size_t j = src.first_key; j < src.first_key + n; ++j) {
      const uint32_t s = keys_[j];
      if (taken[s] < elements[s].size()) {
        out += elements[s][taken[s]++];
      }
    }
    return;
  }
  out += part_reply(parts[0]);
}

void SplitRun::clear() {
  for (size_t s : used_) {
    batches_[s].clear();
  }
  used_.clear();
  sources_.clear();
  parts_.clear();
  keys_.clear();
  arg_bytes_ = 0;
  txn_ = 0;
  writes_ = false;
}

}  // namespace hotkv
