// Client-side caching (CLIENT TRACKING): the server-wide half. Shards keep their tracked keys
// (shard/tracking_table.hpp) and the keys changed under BCAST prefixes; this object knows the
// tracking clients' prefixes, turns "key changed" into messages and delivers them to the
// clients' threads (docs/client-caching.md).
//
// Every change of a key reaches key_changed() through Engine::notify_keyspace_event, the path
// WATCH uses, so writes of every type, expiry, MOVE, scripts and transactions invalidate
// alike. It runs on the key's shard (or with it parked) and must know whose command made the
// change, for NOLOOP and so the client's own invalidations follow its reply: the command's
// connection says so through a TrackingCaller, set for the duration of each command.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/shard/client_registry.hpp"
#include "hotkv/shard/tracking_table.hpp"
#include "hotkv/util/status.hpp"

namespace hotkv {

class Engine;
class Shard;
struct AclUser;

// Whose command is running on this thread, as far as tracking cares.
struct TrackingCaller {
  uint64_t client = 0;       // 0: no client (active expiry, loading)
  bool track_reads = false;  // tracking on, not BCAST, and OPTIN/OPTOUT allow this command
  // CLIENT NO-TOUCH: the command leaves the access clocks of the keys it reads alone.
  bool no_touch = false;
  // The caller's ACL user when its rules restrict anything (null: everything is allowed), so
  // the commands a script runs are checked for it wherever the script runs.
  std::shared_ptr<const AclUser> acl_user;
};

// The caller of the command running on this thread (any thread).
const TrackingCaller& current_tracking_caller();

// While alive, commands run on this thread are `caller`'s.
class ScopedTrackingCaller {
 public:
  explicit ScopedTrackingCaller(const TrackingCaller& caller);
  ~ScopedTrackingCaller();
  ScopedTrackingCaller(const ScopedTrackingCaller&) = delete;
  ScopedTrackingCaller& operator=(const ScopedTrackingCaller&) = delete;

 private:
  TrackingCaller saved_;
};

// A shard's part: its tracked keys and the BCAST keys changed since its last broadcast. Owner
// thread (or a coordinator while the shard is parked).
struct ShardTracking {
  TrackingTable table;
  struct ChangedKey {
    std::string key;
    uint64_t writer;  // for NOLOOP (0 for expiry)
    uint64_t cause;
  };
  // By prefix: one message per prefix and client for all the keys of one turn of the loop,
  // as Redis broadcasts once per event-loop iteration.
  std::map<std::string, std::vector<ChangedKey>, std::less<>> bcast_changed;
  bool bcast_flush_posted = false;
};

class Tracking {
 public:
  explicit Tracking(Engine& engine);

  // CLIENT TRACKING ON on `c`'s own thread, after the options were checked: `options` are
  // TrackingFlag bits (kTrackingOn set), `redirect` the target (0: none), `prefixes` the BCAST
  // prefixes to add ("" when BCAST names none). Replaces the previous options, keeps the
  // prefixes already registered, as Redis does.
  void enable(ClientInfo& c, uint32_t options, uint64_t redirect,
              const std::vector<std::string>& prefixes);
  // CLIENT TRACKING OFF, RESET or the connection's end (`c`'s thread). Keys it read stay in
  // the tables (Redis does not clean up per client either); they are skipped when changed.
  void disable(ClientInfo& c);
  // The prefixes registered for `c` (CLIENT TRACKINGINFO).
  std::vector<std::string> prefixes_of(uint64_t client) const;
  // Ok, or kConflict when one of `prefixes` overlaps another or one `client` has; the message
  // is Redis's reason, which the commands layer sends after "ERR ".
  Status check_prefixes(uint64_t client, const std::vector<std::string>& prefixes) const;

  // A read-only command of `caller` read `key`, owned by `owner` (its thread, or parked).
  void remember(Shard& owner, std::string_view key, uint64_t caller);
  // `key` of `owner` changed (the owner's thread, or with it parked). `expired`: by expiry or
  // eviction, which no client caused as far as NOLOOP is concerned.
  void key_changed(Shard& owner, std::string_view key, bool expired) {
    if (!owner_tracks(owner) && bcast_prefixes_.load(std::memory_order_relaxed) == 0) {
      return;
    }
    key_changed_slow(owner, key, expired);
  }
  // FLUSHALL/FLUSHDB, with every shard held: every tracking client gets a null invalidation
  // and all tables are emptied (Redis 7.0 drops its whole table for either).
  void flushed(const std::vector<Shard*>& held);
  // SWAPDB on `owner`: every tracked key for which existed(key) holds is invalidated.
  template <class F>
  void invalidate_existing(Shard& owner, F&& existed) {
    if (!owner_tracks(owner)) {
      return;
    }
    std::vector<std::pair<std::string, std::vector<uint64_t>>> taken;
    table_of(owner).take_if(existed, [&](std::string_view key, const std::vector<uint64_t>& ids) {
      taken.emplace_back(std::string(key), ids);
    });
    for (auto& [key, ids] : taken) {
      notify_clients(key, ids, 0);
    }
  }
  // Applies tracking-table-max-keys now (after CONFIG SET lowered it): every shard over it
  // forgets keys, telling their clients, until the total fits. Any thread.
  void enforce_limit();

  // INFO: clients with tracking on, tracked keys and (key, client) pairs, BCAST prefixes.
  int64_t clients() const { return clients_.load(std::memory_order_relaxed); }
  size_t total_keys() const;
  size_t total_items() const;
  size_t total_prefixes() const { return bcast_prefixes_.load(std::memory_order_relaxed); }

 private:
  bool owner_tracks(Shard& owner) const;
  static TrackingTable& table_of(Shard& owner);
  void key_changed_slow(Shard& owner, std::string_view key, bool expired);
  // Sends `key`'s invalidation to each of `ids` still tracking in default mode (NOLOOP: not
  // to `writer`); `cause`, the client whose command changed it (the one running now unless
  // given: a held invalidation remembers it).
  void notify_clients(const std::string& key, const std::vector<uint64_t>& ids, uint64_t writer) {
    notify_clients(key, ids, writer, current_tracking_caller().client);
  }
  void notify_clients(const std::string& key, const std::vector<uint64_t>& ids, uint64_t writer,
                      uint64_t cause);
  // Delivers m for tracking client c: to c, or to its REDIRECT target (a tracking-redir-broken
  // notice to c when that is gone).
  void send(ClientInfo& c, TrackingMessage m);
  void broadcast(Shard& owner);
  // Owner thread of `s`: forgets keys of s while the total is over the limit.
  void evict_over_limit(Shard& s);
  int64_t max_keys() const;

  Engine& engine_;
  std::atomic<int64_t> clients_{0};
  // BCAST: prefix -> clients, and each client's prefixes. Changes only with CLIENT TRACKING.
  mutable std::shared_mutex prefixes_mu_;
  std::map<std::string, std::vector<uint64_t>, std::less<>> prefix_clients_;
  std::map<uint64_t, std::vector<std::string>> client_prefixes_;
  std::atomic<size_t> bcast_prefixes_{0};
  // Evictions for the table-size limit, from every shard: one at a time, so together they
  // stop exactly at the limit.
  std::mutex evict_mu_;
  std::atomic<bool> enforce_posted_{false};
};

}  // namespace hotkv
