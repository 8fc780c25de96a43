// The master's side of a replica's sync: SYNC and PSYNC decide between a partial resync from
// the backlog (+CONTINUE) and a full one (+FULLRESYNC and a snapshot of this instant), and
// WAIT counts the replicas that acknowledged the stream up to the caller's writes. The
// connection carries the decision out after the reply (net/connection_replica.cpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/rdb_snapshots.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/shard/replica_snapshot.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

std::shared_ptr<ReplicaChannel> new_channel(CommandContext& ctx) {
  auto ch = std::make_shared<ReplicaChannel>();
  ch->client_id = ctx.session->info->id;
  // client-output-buffer-limit replica's hard limit, at the time the replica attaches: a
  // replica further behind than this is dropped and resyncs (0: never).
  ch->limit = static_cast<size_t>(
      ctx.engine.config().replica_buffer_hard.load(std::memory_order_relaxed));
  return ch;
}

ReplicaPeer peer_of(CommandContext& ctx, std::string_view state) {
  ReplicaPeer p;
  p.client_id = ctx.session->info->id;
  const ReplicaHandshake& hs = ctx.session->replica;
  if (!hs.announced_ip.empty()) {
    p.ip = hs.announced_ip;
  } else {
    // "ip:port" of the client's socket, as CLIENT LIST shows it.
    std::string addr = ctx.session->info->addr;
    p.ip = addr.substr(0, addr.rfind(':'));
  }
  p.listening_port = hs.listening_port;
  p.state = state;
  p.last_ack_ms = ctx.now_ms;
  return p;
}

// Both commands run with every shard parked (kAllShards): nothing is half written while the
// offset is taken and, for a full sync, the child is forked.
void start_sync(CommandContext& ctx, bool psync) {
  ClientSession& session = *ctx.session;
  if (session.replica.attached) {
    return;  // a replica asking again on the same link: Redis ignores it
  }
  Engine& engine = ctx.engine;
  Replication& repl = engine.replication();
  if (repl.is_replica() && repl.link_state() != LinkState::kConnected) {
    ctx.error("NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  auto plan = std::make_shared<ReplicaSyncPlan>();
  plan->channel = new_channel(ctx);
  plan->legacy_sync = !psync;
  if (!repl.backlog_active()) {
    repl.activate_backlog();
  }
  if (!repl.is_replica()) {
    engine.set_replication_feed_on(true);
  }
  // Everything the shards wrote before this instant is in the stream before the offset.
  DurabilityBarrier::pass_all(engine);
  Replication::Ids ids = repl.ids();

  if (psync) {
    std::string_view want = ctx.arg(1);
    std::optional<int64_t> from = parse_int64(ctx.arg(2));
    // The replica names the first byte it lacks (1-based), so it has seen from - 1 bytes.
    if (from && *from >= 1 && want != "?" &&
        repl.can_continue(want, static_cast<uint64_t>(*from - 1))) {
      plan->offset = static_cast<uint64_t>(*from - 1);
      if (!repl.attach_channel(plan->channel, plan->offset)) {
        plan->full = true;  // the backlog moved on meanwhile (cannot happen while parked)
      } else {
        repl.add_replica(peer_of(ctx, "online"));
        session.replica.attached = true;
        session.replica.sync = plan;
        session.info->link.store(ClientInfo::kReplicaLink, std::memory_order_relaxed);
        engine.stats().sync_partial_ok.fetch_add(1, std::memory_order_relaxed);
        if (session.replica.capa_psync2) {
          ctx.reply.simple("CONTINUE " + ids.replid);
        } else {
          ctx.reply.simple("CONTINUE");
        }
        return;
      }
    } else if (want != "?") {
      engine.stats().sync_partial_err.fetch_add(1, std::memory_order_relaxed);
    }
  }

  plan->full = true;
  plan->offset = repl.offset();
  engine.replication_feed().restart_database_tracking();
  if (!repl.attach_channel(plan->channel, plan->offset)) {
    ctx.error("ERR the replication backlog cannot start here");
    return;
  }
  RdbSnapshotAux aux = rdb_snapshot_aux(engine);
  aux.repl_id = ids.replid;
  aux.repl_offset = static_cast<int64_t>(plan->offset);
  aux.repl_stream_db = 0;
  bool diskless = session.replica.capa_eof && psync &&
                  engine.config().get_string("repl-diskless-sync") == "yes";
  std::string err = start_replica_snapshot(engine, aux, diskless, plan->snapshot);
  if (!err.empty()) {
    repl.detach_channel(*plan->channel);
    spdlog::warn("Replica {} full sync failed to start: {}", session.info->addr, err);
    ctx.error("ERR " + err);
    return;
  }
  engine.stats().sync_full.fetch_add(1, std::memory_order_relaxed);
  repl.add_replica(peer_of(ctx, "wait_bgsave"));
  session.replica.attached = true;
  session.replica.sync = plan;
  session.info->link.store(ClientInfo::kReplicaLink, std::memory_order_relaxed);
  spdlog::info("Replica {} asks for synchronization: full resync from offset {} ({})",
               session.info->addr, plan->offset, diskless ? "diskless" : "disk");
  if (psync) {
    ctx.reply.simple(fmt::format("FULLRESYNC {} {}", ids.replid, plan->offset));
  }
}

void cmd_sync(CommandContext& ctx) { start_sync(ctx, false); }
void cmd_psync(CommandContext& ctx) { start_sync(ctx, true); }

// WAIT numreplicas timeout: how many replicas acknowledged the stream up to now (which covers
// every write this client was answered for).
void cmd_wait(CommandContext& ctx) {
  Replication& repl = ctx.engine.replication();
  if (repl.is_replica()) {
    ctx.error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
    return;
  }
  int64_t wanted = 0;
  if (!ctx.int_arg_or_reply(1, wanted)) {
    return;
  }
  std::optional<int64_t> timeout = parse_int64(ctx.arg(2));
  if (!timeout) {
    ctx.error(err::kTimeoutNotInteger);
    return;
  }
  if (*timeout < 0) {
    ctx.error(err::kTimeoutNegative);
    return;
  }
  // This client's writes on this thread may still wait in the shard's log: they join the
  // stream now, so the offset below covers them (other shards flush before they answer).
  DurabilityBarrier::pass(ctx.shard);
  uint64_t offset = ctx.engine.replication_feed().data_end();
  size_t acked = repl.replicas_acked(offset);
  if (static_cast<int64_t>(acked) >= wanted || ctx.session == nullptr ||
      ctx.session->running_exec) {
    ctx.reply.integer(static_cast<int64_t>(acked));
    return;
  }
  // The connection waits (net/connection_replica.cpp); the replicas are asked to acknowledge
  // now rather than at their next once-a-second ACK.
  ctx.engine.replication_feed().request_acks();
  ctx.session->pending_wait = WaitRequest{offset, static_cast<size_t>(wanted), *timeout};
}

}  // namespace

void register_replication_sync(Table& t) {
  // clang-format off
  t.add({"SYNC",   1, kAdmin | kNoScript | kAllShards | kConnection, no_keys(), cmd_sync, "server", "SYNC", "An internal command used in replication."});
  t.add({"PSYNC",  -3, kAdmin | kNoScript | kAllShards | kConnection, no_keys(), cmd_psync, "server", "PSYNC replicationid offset", "An internal command used in replication."});
  t.add({"WAIT",   3, kNoScript | kConnection, no_keys(), cmd_wait, "generic", "WAIT numreplicas timeout", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed."});
  // clang-format on
}

}  // namespace hotkv
