// Per-connection state that commands may read or change (protocol version, auth, name, reply
// mode, MULTI, WATCH, subscriptions). A ClientSession belongs to its connection's thread; the
// ClientInfo it points to (shard/client_registry.hpp) is shared with the registry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hotkv/commands/acl_user.hpp"
#include "hotkv/shard/client_registry.hpp"
#include "hotkv/shard/replica_snapshot.hpp"
#include "hotkv/shard/replication.hpp"
#include "hotkv/shard/pubsub.hpp"
#include "hotkv/shard/watch.hpp"

namespace hotkv {

enum class ReplyMode { kOn, kOff, kSkip };

struct CommandSpec;

// MULTI ... EXEC: the commands queued so far, with their arguments copied.
struct QueuedCommand {
  const CommandSpec* spec = nullptr;
  std::vector<std::string> args;
};

struct MultiState {
  bool active = false;
  bool aborted = false;  // a queued command was rejected: EXEC answers EXECABORT
  std::vector<QueuedCommand> queue;
};

// What a replica said about itself with REPLCONF during its handshake, and whether this
// connection has become a replica's link (after SYNC/PSYNC).
// What SYNC/PSYNC decided, carried out by the connection once the reply is written: the
// snapshot being made (full sync) and the stream from `offset` on.
struct ReplicaSyncPlan {
  bool full = false;
  bool legacy_sync = false;  // SYNC: the payload follows with no +FULLRESYNC line
  uint64_t offset = 0;
  ReplicaSnapshot snapshot;
  std::shared_ptr<ReplicaChannel> channel;
};

struct ReplicaHandshake {
  int64_t listening_port = 0;
  std::string announced_ip;
  bool capa_eof = false;
  bool capa_psync2 = false;
  bool rdb_only = false;
  bool attached = false;
  std::shared_ptr<ReplicaSyncPlan> sync;
};

// WAIT that could not be answered at once: the connection waits for the acknowledgements.
struct WaitRequest {
  uint64_t offset = 0;
  size_t replicas = 0;
  int64_t timeout_ms = 0;  // 0: no timeout
};

struct ClientSession {
  std::shared_ptr<ClientInfo> info;
  // Pub/sub: this connection as the hub knows it, and what it is subscribed to.
  std::shared_ptr<PubSubClient> pubsub;
  std::set<std::string, std::less<>> channels;
  std::set<std::string, std::less<>> patterns;
  size_t subscriptions() const { return channels.size() + patterns.size(); }
  int resp = 2;
  uint32_t db = 0;  // SELECT's database; also published in info->db for CLIENT LIST
  bool authenticated = false;
  // The ACL user this connection runs as: its name, and the snapshot of its rules taken at
  // store epoch acl_epoch (commands/acl_session.hpp refreshes it when the epoch moves).
  std::string user_name = "default";
  std::shared_ptr<const AclUser> user;
  uint64_t acl_epoch = 0;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool skip_this_reply = false;  // CLIENT REPLY SKIP applies to the next command only
  // Pub/sub pushes are never silenced (Redis sends subscribe confirmations and messages even
  // under CLIENT REPLY OFF/SKIP). While the connection runs a command whose reply it will
  // drop, the confirmations and messages produced meanwhile wait here instead of in the
  // reply, and the connection sends them once it has dropped the rest.
  bool replies_silenced = false;
  std::string pushes_while_silenced;
  bool close_after_reply = false;
  // MONITOR was called: the connection registers with the engine's monitors once the reply
  // is out of the handler's hands (net/connection.cpp), and stays registered until it closes.
  bool monitoring = false;
  MultiState multi;
  // Set by WATCH; dirty once a watched key changed. Dropped by EXEC, DISCARD, UNWATCH, RESET.
  std::shared_ptr<WatchFlag> watch;
  // CLIENT CACHING YES (OPTIN) or NO (OPTOUT): applies to the next command (a whole MULTI
  // block), then clears. The rest of the tracking state is in info (shared with other threads).
  bool tracking_caching = false;
  ReplicaHandshake replica;
  // This connection is a replica's link to its master: its writes pass a read-only replica.
  bool master_link = false;
  // EXEC is running this client's queued commands (WAIT answers at once there, as in Redis).
  bool running_exec = false;
  std::optional<WaitRequest> pending_wait;
};

}  // namespace hotkv
