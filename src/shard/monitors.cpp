// MONITOR's feed (see monitors.hpp).
#include "hotkv/shard/monitors.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hotkv/util/clock.hpp"

namespace hotkv {

void Monitors::add(uint64_t id, Deliver deliver) {
  std::lock_guard lock(mutex_);
  sinks_.emplace_back(id, std::move(deliver));
  count_.store(sinks_.size(), std::memory_order_relaxed);
}

void Monitors::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  std::erase_if(sinks_, [id](const auto& s) { return s.first == id; });
  count_.store(sinks_.size(), std::memory_order_relaxed);
}

std::string Monitors::format(int64_t unix_us, uint32_t db, std::string_view addr,
                             std::span<const std::string> args) {
  std::string out =
      fmt::format("+{}.{:06} [{} {}]", unix_us / 1000000, unix_us % 1000000, db, addr);
  for (const std::string& a : args) {
    out += " \"";
    for (unsigned char c : a) {
      switch (c) {
        case '\\':
          out += "\\\\";
          break;
        case '"':
          out += "\\\"";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        default:
          if (c >= 0x20 && c <= 0x7e) {
            out.push_back(static_cast<char>(c));
          } else {
            out += fmt::format("\\x{:02x}", c);
          }
      }
    }
    out += '"';
  }
  out += "\r\n";
  return out;
}

void Monitors::feed(uint32_t db, std::string_view addr, std::span<const std::string> args) {
  if (!active()) {
    return;
  }
  auto line = std::make_shared<const std::string>(format(unix_us(), db, addr, args));
  std::lock_guard lock(mutex_);
  for (const auto& s : sinks_) {
    s.second(line);
  }
}

}  // namespace hotkv
