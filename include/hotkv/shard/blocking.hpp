// Clients blocked on keys (XREAD/XREADGROUP BLOCK): each shard keeps, per key it owns, the
// clients waiting for that key in arrival order. A write to such a key marks it ready; the
// shard then re-runs the waiting commands in order, on its own thread, right after the
// command that wrote (see commands/blocking.hpp), so whoever blocked first is served first.
//
// A client whose keys all live on one shard ("served in place") is registered, woken, timed
// out and cancelled on that shard's thread only. A client blocked on keys of several shards is
// registered on each and woken by the first ready key with a retry: its connection re-runs
// the command through the normal cross-shard path. The atomic state makes every wake, timeout
// and cancellation complete a client exactly once.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <asio/steady_timer.hpp>

#include "hotkv/shard/tracking.hpp"

namespace hotkv {

struct CommandSpec;

enum class WakeKind {
  kReply,      // the re-run produced a reply (in `reply`)
  kRetry,      // several-shard client: a key it waits on changed, run the command again
  kTimeout,    // the BLOCK timeout passed, or CLIENT UNBLOCK ... TIMEOUT
  kError,      // CLIENT UNBLOCK ... ERROR
  kCancelled,  // the client disconnected or the server is shutting down
};

struct WakeResult {
  WakeKind kind = WakeKind::kCancelled;
  std::string reply;
  // The taint of the shard that made the reply (split_seals.hpp), taken in by the thread
  // that answers the client.
  uint64_t taint = 0;
};

struct BlockedClient {
  const CommandSpec* spec = nullptr;
  std::vector<std::string> argv;  // the command to re-run (ids resolved)
  std::vector<std::string> keys;  // the keys it waits on
  uint32_t db = 0;                // their database (the client's SELECT when it blocked)
  int proto = 2;
  TrackingCaller caller;          // for client-side caching: its reads, NOLOOP
  bool in_place = true;           // all keys on `shard`; else the several-shard retry mode
  size_t shard = 0;
  // Posts the result to the client's own thread. Called at most once (see finish()).
  std::function<void(WakeResult)> on_wake;
  std::unique_ptr<asio::steady_timer> timer;

  // True for the one caller that completes the client; every later attempt gets false.
  bool finish(WakeResult result) {
    if (!claim()) {
      return false;
    }
    deliver(std::move(result));
    return true;
  }
  // finish() in two steps, for a shard that must own the client before it serves it (a pop
  // that took an element must reach the client): claim() is true for the one caller that
  // completes it, which then calls deliver() exactly once.
  bool claim() {
    bool expected = false;
    return done.compare_exchange_strong(expected, true);
  }
  void deliver(WakeResult result) {
    if (timer) {
      timer->cancel();
    }
    on_wake(std::move(result));
  }
  bool finished() const { return done.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> done{false};
};

// One shard's waiters. Owner thread only (or a coordinator while the owner is parked).
class BlockingRegistry {
 public:
  bool empty() const { return waiting_keys_ == 0; }
  void add(const std::shared_ptr<BlockedClient>& c);
  // Drops finished clients from the key's list; removes the key when nobody waits on it.
  void prune(uint32_t db, std::string_view key);
  void remove(const BlockedClient& c);

  // A write touched `key` of database `db`: if anyone waits on it, remember it as ready.
  // Returns true if the key became ready (the caller schedules serving).
  bool signal(uint32_t db, std::string_view key);
  // Every waited-on key of `db` is ready (FLUSHDB, SWAPDB).
  bool signal_db(uint32_t db);
  // Every waited-on key is ready (FLUSHALL).
  bool signal_all();
  struct ReadyKey {
    uint32_t db;
    std::string key;
  };
  // Takes the ready keys (serving may make new ones ready; they go to the next round).
  std::vector<ReadyKey> take_ready();
  // The waiters on key in arrival order, or nullptr.
  std::deque<std::shared_ptr<BlockedClient>>* waiters(uint32_t db, std::string_view key);
  // Every client still registered (shutdown).
  std::vector<std::shared_ptr<BlockedClient>> all() const;
  size_t blocked_count() const;

  bool serve_posted = false;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using KeyMap = std::unordered_map<std::string, std::deque<std::shared_ptr<BlockedClient>>, Hash,
                                    std::equal_to<>>;
  KeyMap* map_of(uint32_t db) { return db < by_db_.size() ? &by_db_[db] : nullptr; }
  void erase_key(KeyMap& keys, KeyMap::iterator it);
  std::vector<KeyMap> by_db_;  // by database index, grown on first use
  size_t waiting_keys_ = 0;
  std::vector<ReadyKey> ready_;
};

}  // namespace hotkv
