// The slow log behind SLOWLOG GET / LEN / RESET: commands that took at least
// slowlog-log-slower-than microseconds (negative: none; 0: every command), the newest
// slowlog-max-len of them, server-wide.
//
// Each thread records into its own ring, so recording never contends with another thread;
// one atomic counter hands out ids, so the rings merged on read (SLOWLOG GET, rare) give the
// server-wide order. Each ring holds at most slowlog-max-len entries, and a read keeps the
// newest slowlog-max-len of all of them. Below the threshold (the common case) a command costs
// one relaxed load and a comparison; the timing itself is the one the per-command statistics
// already take.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

class SlowLog {
 public:
  // Redis's limits on what an entry keeps of a command's arguments.
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 128;

  struct Entry {
    uint64_t id = 0;
    int64_t time_s = 0;  // unix seconds when it was logged
    int64_t usec = 0;    // how long the command ran
    std::vector<std::string> args;
    std::string addr;  // client "ip:port"
    std::string name;  // client name (CLIENT SETNAME)
  };

  // `slower_than_us` and `max_len` are read at each call (the configuration's settings).
  SlowLog(const std::atomic<int64_t>& slower_than_us, const std::atomic<int64_t>& max_len,
          size_t rings);

  // Any thread: whether a command that ran `usec` microseconds is to be logged.
  bool wanted(int64_t usec) const {
    int64_t t = slower_than_us_.load(std::memory_order_relaxed);
    return t >= 0 && usec >= t;
  }
  // Thread of ring `ring`: logs a command (its arguments trimmed as Redis trims them).
  void add(size_t ring, std::span<const std::string> args, int64_t usec, int64_t time_s,
           std::string addr, std::string name);
  // Any thread: the newest `count` entries, newest first (count < 0: all of them).
  std::vector<Entry> get(int64_t count) const;
  // Any thread: how many entries a full GET would return.
  size_t len() const;
  // Any thread: forgets every entry (ids keep counting up, as on Redis).
  void reset();

  // At most kMaxArgs arguments, the last of them standing for the rest ("... (N more
  // arguments)"), each at most kMaxArgBytes long ("... (N more bytes)").
  static std::vector<std::string> trim(std::span<const std::string> args);

 private:
  struct alignas(64) Ring {
    mutable std::mutex mutex;
    std::deque<Entry> entries;  // oldest first
  };
  size_t max_len() const;

  const std::atomic<int64_t>& slower_than_us_;
  const std::atomic<int64_t>& max_len_;
  std::unique_ptr<Ring[]> rings_;
  size_t ring_count_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace hotkv
