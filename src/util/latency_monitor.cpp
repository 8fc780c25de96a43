// The latency monitor's samples and its two reports, GRAPH and DOCTOR (latency_monitor.hpp).
#include "hotkv/util/latency_monitor.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace hotkv {

std::vector<LatencyMonitor::Sample> LatencyMonitor::Series::in_order() const {
  std::vector<Sample> out;
  for (size_t i = 0; i < kSamples; ++i) {
    const Sample& s = samples[(next + i) % kSamples];
    if (s.time_s != 0) {
      out.push_back(s);
    }
  }
  return out;
}

void LatencyMonitor::add(std::string_view event, int64_t now_s, uint64_t latency_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(event);
  if (it == events_.end()) {
    it = events_.emplace(std::string(event), Series{}).first;
  }
  Series& ts = it->second;
  ts.max_ms = std::max(ts.max_ms, latency_ms);
  Sample& prev = ts.samples[(ts.next + kSamples - 1) % kSamples];
  if (prev.time_s == now_s) {
    prev.latency_ms = std::max(prev.latency_ms, latency_ms);
    return;
  }
  ts.samples[ts.next] = Sample{now_s, latency_ms};
  ts.next = (ts.next + 1) % kSamples;
}

std::vector<LatencyMonitor::Latest> LatencyMonitor::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Latest> out;
  for (const auto& [name, ts] : events_) {
    out.push_back(Latest{name, ts.samples[(ts.next + kSamples - 1) % kSamples], ts.max_ms});
  }
  return out;
}

std::vector<LatencyMonitor::Sample> LatencyMonitor::history(std::string_view event) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(event);
  return it == events_.end() ? std::vector<Sample>{} : it->second.in_order();
}

size_t LatencyMonitor::reset(std::span<const std::string_view> events) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (events.empty()) {
    size_t n = events_.size();
    events_.clear();
    return n;
  }
  size_t n = 0;
  for (std::string_view e : events) {
    auto it = events_.find(e);
    if (it != events_.end()) {
      events_.erase(it);
      ++n;
    }
  }
  return n;
}

namespace {

// How long ago, in the fewest characters: "12s", "5m", "3h", "2d".
std::string age_label(int64_t seconds) {
  seconds = std::max<int64_t>(seconds, 0);
  if (seconds < 60) {
    return fmt::format("{}s", seconds);
  }
  if (seconds < 3600) {
    return fmt::format("{}m", seconds / 60);
  }
  if (seconds < 86400) {
    return fmt::format("{}h", seconds / 3600);
  }
  return fmt::format("{}d", seconds / 86400);
}

}  // namespace

std::optional<std::string> LatencyMonitor::graph(std::string_view event, int64_t now_s) const {
  std::vector<Sample> samples;
  uint64_t max_ever = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = events_.find(event);
    if (it == events_.end()) {
      return std::nullopt;
    }
    samples = it->second.in_order();
    max_ever = it->second.max_ms;
  }
  // One column per sample, the latest 80 (a terminal's width), oldest on the left.
  constexpr size_t kColumns = 80;
  constexpr int kRows = 4;
  if (samples.size() > kColumns) {
    samples.erase(samples.begin(), samples.end() - kColumns);
  }
  uint64_t high = 0;
  uint64_t low = UINT64_MAX;
  for (const Sample& s : samples) {
    high = std::max(high, s.latency_ms);
    low = std::min(low, s.latency_ms);
  }
  std::string out = fmt::format("{} - high {} ms, low {} ms (all time high {} ms)\n", event, high,
                                low, max_ever);
  out += std::string(kColumns, '-') + "\n";
  // Column heights from 1 (the lowest sample) to kRows (the highest).
  std::vector<int> height;
  for (const Sample& s : samples) {
    int h = high == low ? kRows
                        : 1 + static_cast<int>((s.latency_ms - low) * (kRows - 1) / (high - low));
    height.push_back(h);
  }
  for (int row = kRows; row >= 1; --row) {
    std::string line;
    for (int h : height) {
      line += h > row ? '|' : (h == row ? '#' : ' ');
    }
    out += line + "\n";
  }
  // Below each column, how long ago it was, written downwards.
  std::vector<std::string> labels;
  size_t longest = 0;
  for (const Sample& s : samples) {
    labels.push_back(age_label(now_s - s.time_s));
    longest = std::max(longest, labels.back().size());
  }
  out += "\n";
  for (size_t i = 0; i < longest; ++i) {
    std::string line;
    for (const std::string& l : labels) {
      line += i < l.size() ? l[i] : ' ';
    }
    out += line + "\n";
  }
  return out;
}

namespace {

std::string_view advice_for(std::string_view event) {
  if (event == "command") {
    return "Commands over large values (KEYS, SMEMBERS or HGETALL of big keys, DEL of a big key, "
           "a long script) run in one piece on their shard's thread and hold back that thread's "
           "other clients. Prefer the SCAN family and smaller values.";
  }
  if (event == "fast-command") {
    return "Commands that take constant time took long: the host is probably overloaded, "
           "swapping, or the process was descheduled.";
  }
  if (event == "expire-cycle") {
    return "Expiring keys took long at once: many keys reached their deadline together, or big "
           "values expired (each is freed in one piece). Spread the deadlines, or keep values "
           "smaller.";
  }
  return "No specific advice for this event.";
}

}  // namespace

std::string LatencyMonitor::doctor(int64_t now_s) const {
  std::map<std::string, std::vector<Sample>, std::less<>> all;
  std::map<std::string, uint64_t, std::less<>> worst;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, ts] : events_) {
      all[name] = ts.in_order();
      worst[name] = ts.max_ms;
    }
  }
  int64_t threshold = threshold_ms_.load(std::memory_order_relaxed);
  if (all.empty()) {
    if (threshold <= 0) {
      return "The latency monitor is off (latency-monitor-threshold is 0), so no event was "
             "recorded. Enable it with CONFIG SET latency-monitor-threshold <milliseconds>.\n";
    }
    return fmt::format(
        "No event took {} ms or more (latency-monitor-threshold) since the monitor was "
        "started or last reset.\n",
        threshold);
  }
  std::string out = fmt::format(
      "Latency report: events that took at least {} ms (latency-monitor-threshold).\n\n",
      threshold);
  size_t n = 0;
  for (const auto& [name, samples] : all) {
    uint64_t sum = 0;
    for (const Sample& s : samples) {
      sum += s.latency_ms;
    }
    double avg = static_cast<double>(sum) / static_cast<double>(samples.size());
    double deviation = 0;
    for (const Sample& s : samples) {
      deviation += std::abs(static_cast<double>(s.latency_ms) - avg);
    }
    deviation /= static_cast<double>(samples.size());
    int64_t span = samples.back().time_s - samples.front().time_s;
    std::string period =
        samples.size() > 1
            ? fmt::format("one every {:.1f} s", static_cast<double>(span) /
                                                    static_cast<double>(samples.size() - 1))
            : std::string("a single one");
    out += fmt::format(
        "{}. {}: {} spike(s), {}, the latest {} ago: average {:.0f} ms, mean deviation {:.0f} "
        "ms, worst ever {} ms.\n   {}\n\n",
        ++n, name, samples.size(), period, age_label(now_s - samples.back().time_s), avg,
        deviation, worst[name], advice_for(name));
  }
  return out;
}

}  // namespace hotkv
