// Error replies by code (see error_stats.hpp).
#include "hotkv/shard/error_stats.hpp"

#include <algorithm>

namespace hotkv {

std::string_view ErrorStats::code_of(std::string_view error) {
  if (!error.empty() && error.front() == '-') {
    error.remove_prefix(1);
  }
  size_t space = error.substr(0, kMaxCodeLength + 1).find(' ');
  if (space == std::string_view::npos || space == 0) {
    return "ERR";
  }
  return error.substr(0, space);
}

void ErrorStats::count(std::string_view error) {
  std::string_view code = code_of(error);
  auto matches = [code](const Code& c) {
    return std::string_view(c.name.data(), c.length) == code;
  };
  size_t n = published_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (matches(codes_[i])) {
      codes_[i].count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::lock_guard<std::mutex> lock(publish_mutex_);
  n = published_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    if (matches(codes_[i])) {
      codes_[i].count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  if (n == kMaxCodes) {
    return;
  }
  Code& c = codes_[n];
  std::copy(code.begin(), code.end(), c.name.begin());
  c.length = static_cast<uint8_t>(code.size());
  c.count.store(1, std::memory_order_relaxed);
  published_.store(n + 1, std::memory_order_release);
}

std::vector<std::pair<std::string, uint64_t>> ErrorStats::snapshot() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  size_t n = published_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    uint64_t count = codes_[i].count.load(std::memory_order_relaxed);
    if (count > 0) {
      out.emplace_back(std::string(codes_[i].name.data(), codes_[i].length), count);
    }
  }
  std::sort(out.begin(), out.end());  // Redis lists them in code order
  return out;
}

void ErrorStats::reset() {
  size_t n = published_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    codes_[i].count.store(0, std::memory_order_relaxed);
  }
}

}  // namespace hotkv
