// The registry that lets CLIENT LIST/KILL see every connection on every thread, and what it
// knows of each: a ClientInfo is shared by the connection's session and the registry and only
// holds atomics or fields guarded by the registry's mutex. The server owns one registry; it
// sits beside the shards because INFO, CLIENT and the connections of every thread reach it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/btree_map.h>

#include "hotkv/shard/tracking_message.hpp"

namespace hotkv {

// What any thread may ask of a client's connection, wherever it is served at the moment: the
// connection layer implements it (ConnectionOwner) and posts each request to the owning thread.
class ClientControl {
 public:
  virtual ~ClientControl() = default;
  // Closes the connection (CLIENT KILL, client eviction, ACL DELUSER...).
  virtual void kill() = 0;
  // Ends a blocking command (CLIENT UNBLOCK; error: reply -UNBLOCKED instead of the timeout
  // reply). Meaningful while ClientInfo::blocked is set.
  virtual void unblock(bool error) = 0;
  // Delivers an invalidation (or a tracking-redir-broken notice), encoded by the owning thread
  // in the client's protocol.
  virtual void push(std::shared_ptr<const TrackingMessage> m) = 0;
};

// An idle client's whole cost is mostly this and its hibernated connection (see
// net/connection_hibernate.cpp): what few clients set lives apart.
struct ClientInfo {
  uint64_t id = 0;
  std::string addr;
  std::string laddr;
  int fd = -1;
  std::atomic<size_t> shard{0};  // the thread serving it (changes when it migrates)
  int64_t created_ms = 0;
  std::atomic<int64_t> last_interaction_ms{0};
  std::atomic<int> resp{2};
  std::atomic<uint32_t> db{0};            // the selected database (SELECT), for CLIENT LIST
  std::atomic<int64_t> last_command{-1};  // command table id
  std::atomic<uint64_t> query_buffer{0};
  std::atomic<uint64_t> output_buffer{0};
  // Set once by the connection; null for a client without one (tests).
  std::shared_ptr<ClientControl> control;
  std::atomic<bool> blocked{false};
  // Set once client eviction has asked this client to close (it is not counted or asked again).
  std::atomic<bool> evicted{false};
  // MONITOR (CLIENT LIST flag O), CLIENT NO-TOUCH (flag T), and the commands queued by an
  // open MULTI (flag x, multi=; -1 outside MULTI). Written by the client's own thread.
  std::atomic<bool> monitor{false};
  std::atomic<bool> no_touch{false};
  std::atomic<int32_t> multi{-1};
  // What the connection is to replication: a replica's link to this master (CLIENT LIST
  // flag S, TYPE replica) or this replica's link to its master (flag M, TYPE master).
  enum Link : uint8_t { kNoLink = 0, kReplicaLink = 1, kMasterLink = 2 };
  std::atomic<uint8_t> link{kNoLink};
  // Channels and patterns subscribed to (CLIENT LIST sub= psub=, CLIENT KILL TYPE pubsub).
  std::atomic<uint32_t> channels{0};
  std::atomic<uint32_t> patterns{0};
  bool subscribed() const {
    return channels.load(std::memory_order_relaxed) + patterns.load(std::memory_order_relaxed) > 0;
  }
  // Client-side caching (CLIENT TRACKING): TrackingFlag bits and the REDIRECT client (0:
  // none). Written by the client's own thread, read by any thread that invalidates keys.
  std::atomic<uint32_t> tracking{0};
  std::atomic<uint64_t> tracking_redirect{0};
  // Guarded by ClientRegistry's mutex. Made when the first of them is set: most clients never
  // name themselves nor log in as another user.
  struct Labels {
    std::string name;
    std::string lib_name;
    std::string lib_ver;
    std::string user = "default";  // the ACL user it authenticated as (CLIENT LIST user=)
  };
  std::unique_ptr<Labels> labels;
  bool no_evict = false;
};

class ClientRegistry {
 public:
  uint64_t next_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  void add(std::shared_ptr<ClientInfo> info);
  void remove(uint64_t id);
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  std::vector<std::shared_ptr<ClientInfo>> snapshot() const;
  // The client with this id, or null when it is gone (any thread).
  std::shared_ptr<ClientInfo> find(uint64_t id) const;
  void set_name(ClientInfo& info, std::string name);
  std::string name(const ClientInfo& info) const;
  void set_no_evict(ClientInfo& info, bool on);
  void set_user(ClientInfo& info, std::string user);
  std::string user(const ClientInfo& info) const;
  void set_lib(ClientInfo& info, const std::string* lib_name, const std::string* lib_ver);
  // CLIENT LIST line for one client, as Redis formats it.
  std::string describe(const ClientInfo& info, int64_t now_ms, std::string_view cmd_name) const;

  // Client eviction (maxmemory-clients; client_eviction.cpp). What one client is counted as
  // holding: its query and output buffers plus a connection's fixed part.
  static uint64_t memory_of(const ClientInfo& info);
  // While all clients together hold more than limit bytes, disconnects the evictable clients
  // holding the most; returns how many. One pass per 10 ms at most, whoever asks, unless
  // `urgent`: the asking client holds more than the whole limit by itself (a reply being
  // written drains while the pass waits its turn, and would leave with the client).
  size_t evict_over(uint64_t limit, int64_t now_ms, bool urgent = false);
  uint64_t evicted_clients() const { return evicted_.load(std::memory_order_relaxed); }
  void reset_evicted_clients() { evicted_.store(0, std::memory_order_relaxed); }

 private:
  mutable std::mutex mutex_;
  // By id, so CLIENT LIST shows clients in the order they connected; a B-tree keeps about
  // ten entries per node instead of a node per client.
  absl::btree_map<uint64_t, std::shared_ptr<ClientInfo>> clients_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<int64_t> last_eviction_pass_ms_{0};
};

}  // namespace hotkv
