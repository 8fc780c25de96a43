// MONITOR's clients and the feed that reaches them: every command a client or a script runs
// is shown to each monitoring connection as one line, `+<unix s>.<µs> [<db> <addr>] "arg" ...`
// (addr "lua" for a script's commands), as Redis prints it.
//
// Commands run on every thread, monitors live on any thread: a command's line is formatted
// once on the thread that ran it and handed to each monitor's `deliver`, which posts it to
// that connection's thread. With no monitor attached (the normal case) a command costs one
// relaxed load of the monitor count (active()).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

class Monitors {
 public:
  using Deliver = std::function<void(std::shared_ptr<const std::string> line)>;

  // Any thread: true while at least one client monitors.
  bool active() const { return count_.load(std::memory_order_relaxed) > 0; }
  // A monitoring client (id) and how its lines reach it; `deliver` is called from any thread.
  void add(uint64_t id, Deliver deliver);
  void remove(uint64_t id);
  // Any thread: shows a command to every monitor. `args` are shown as given (the caller has
  // redacted what must not be shown).
  void feed(uint32_t db, std::string_view addr, std::span<const std::string> args);

  // The line itself, "+<time> [<db> <addr>] ..." with CRLF; arguments quoted and escaped as
  // Redis quotes them (\" \\ \n \r \t \a \b, other bytes outside 0x20..0x7e as \xhh).
  static std::string format(int64_t unix_us, uint32_t db, std::string_view addr,
                            std::span<const std::string> args);

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<uint64_t, Deliver>> sinks_;
  std::atomic<size_t> count_{0};
};

}  // namespace hotkv
