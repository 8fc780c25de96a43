// The slow log (see slow_log.hpp).
#include "hotkv/util/slow_log.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace hotkv {

SlowLog::SlowLog(const std::atomic<int64_t>& slower_than_us, const std::atomic<int64_t>& max_len,
                 size_t rings)
    : slower_than_us_(slower_than_us),
      max_len_(max_len),
      rings_(std::make_unique<Ring[]>(rings == 0 ? 1 : rings)),
      ring_count_(rings == 0 ? 1 : rings) {}

size_t SlowLog::max_len() const {
  int64_t m = max_len_.load(std::memory_order_relaxed);
  return m < 0 ? 0 : static_cast<size_t>(m);
}

std::vector<std::string> SlowLog::trim(std::span<const std::string> args) {
  size_t kept = std::min(args.size(), kMaxArgs);
  std::vector<std::string> out;
  out.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    if (kept != args.size() && i == kept - 1) {
      out.push_back(fmt::format("... ({} more arguments)", args.size() - kept + 1));
    } else if (args[i].size() > kMaxArgBytes) {
      out.push_back(fmt::format("{}... ({} more bytes)",
                                std::string_view(args[i]).substr(0, kMaxArgBytes),
                                args[i].size() - kMaxArgBytes));
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

void SlowLog::add(size_t ring, std::span<const std::string> args, int64_t usec, int64_t time_s,
                  std::string addr, std::string name) {
  Entry e;
  e.time_s = time_s;
  e.usec = usec;
  e.args = trim(args);
  e.addr = std::move(addr);
  e.name = std::move(name);
  Ring& r = rings_[ring % ring_count_];
  size_t cap = max_len();
  std::lock_guard lock(r.mutex);
  // The id is taken under the ring's lock so each ring stays sorted by id.
  e.id = next_id_.fetch_add(1, std::memory_order_relaxed);
  r.entries.push_back(std::move(e));
  while (r.entries.size() > cap) {
    r.entries.pop_front();
  }
}

std::vector<SlowLog::Entry> SlowLog::get(int64_t count) const {
  size_t cap = max_len();
  size_t want = count < 0 ? cap : std::min(cap, static_cast<size_t>(count));
  std::vector<Entry> all;
  for (size_t i = 0; i < ring_count_; ++i) {
    std::lock_guard lock(rings_[i].mutex);
    // Only a ring's newest `want` entries can be among the newest `want` overall.
    const auto& q = rings_[i].entries;
    size_t from = q.size() > want ? q.size() - want : 0;
    all.insert(all.end(), q.begin() + static_cast<std::ptrdiff_t>(from), q.end());
  }
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.id > b.id; });
  if (all.size() > want) {
    all.resize(want);
  }
  return all;
}

size_t SlowLog::len() const {
  size_t total = 0;
  for (size_t i = 0; i < ring_count_; ++i) {
    std::lock_guard lock(rings_[i].mutex);
    total += rings_[i].entries.size();
  }
  return std::min(total, max_len());
}

void SlowLog::reset() {
  for (size_t i = 0; i < ring_count_; ++i) {
    std::lock_guard lock(rings_[i].mutex);
    rings_[i].entries.clear();
  }
}

}  // namespace hotkv
