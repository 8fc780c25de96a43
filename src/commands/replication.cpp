// Replication commands: REPLICAOF (and its old name SLAVEOF), ROLE, REPLCONF, and INFO's
// replication section, with Redis 7.0's replies. The state they read and change is the
// engine's Replication (shard/replication.hpp); the links to a master and to replicas live in
// the network layer and follow that state (docs/replication.md).
#include "hotkv/commands/replication.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// REPLICAOF host port | NO ONE.
void cmd_replicaof(CommandContext& ctx) {
  Replication& repl = ctx.engine.replication();
  // The replicaof setting follows the role, so that CONFIG GET shows it and CONFIG REWRITE
  // writes it into the file (a restarted node keeps its role).
  Config& config = ctx.engine.config();
  if (strcasecmp_view(ctx.arg(1), "NO") && strcasecmp_view(ctx.arg(2), "ONE")) {
    repl.become_master();
    // The shards' own writes are the stream again (the master's bytes were, until now).
    ctx.engine.set_replication_feed_on(repl.backlog_active());
    (void)config.set("replicaof", "", true);  // always valid
    if (ctx.engine.replication_hook) {
      ctx.engine.replication_hook();
    }
    ctx.reply.ok();
    return;
  }
  if (ctx.session != nullptr && ctx.session->replica.attached) {
    ctx.error(err::kReplicaofFromReplica);
    return;
  }
  std::optional<int64_t> parsed = parse_int64(ctx.arg(2));
  if (!parsed) {
    ctx.error(err::kInvalidMasterPort);
    return;
  }
  int64_t port = *parsed;
  if (auto m = repl.master(); m && m->first == ctx.arg(1) && m->second == port) {
    ctx.reply.simple("OK Already connected to specified master");
    return;
  }
  repl.become_replica(std::string(ctx.arg(1)), port);
  // From now on this server's replicas get its master's bytes, passed on by the link.
  ctx.engine.set_replication_feed_on(false);
  (void)config.set("replicaof", std::string(ctx.arg(1)) + " " + std::to_string(port), true);
  if (ctx.engine.replication_hook) {
    ctx.engine.replication_hook();
  }
  ctx.reply.ok();
}

// ROLE: ["master", offset, [[ip, port, offset]...]] or ["slave", host, port, state, offset].
void cmd_role(CommandContext& ctx) {
  Replication& repl = ctx.engine.replication();
  if (auto m = repl.master()) {
    LinkState state = repl.link_state();
    ctx.reply.array(5);
    ctx.reply.bulk("slave");
    ctx.reply.bulk(m->first);
    ctx.reply.integer(m->second);
    ctx.reply.bulk(link_state_name(state));
    ctx.reply.integer(state == LinkState::kConnected ? static_cast<int64_t>(repl.offset()) : -1);
    return;
  }
  std::vector<ReplicaPeer> peers = repl.replicas();
  ctx.reply.array(3);
  ctx.reply.bulk("master");
  ctx.reply.integer(static_cast<int64_t>(repl.offset()));
  ctx.reply.array(peers.size());
  for (const ReplicaPeer& p : peers) {
    ctx.reply.array(3);
    ctx.reply.bulk(p.ip);
    ctx.reply.bulk(std::to_string(p.listening_port));
    ctx.reply.bulk(std::to_string(p.ack_offset));
  }
}

// REPLCONF option value [option value ...]: what a replica tells its master during the
// handshake (listening-port, ip-address, capa) and after it (ack, getack, rdb-only).
void cmd_replconf(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.error(err::kSyntax);
    return;
  }
  ReplicaHandshake& hs = ctx.session->replica;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    std::string option = ascii_lower(ctx.arg(i));
    std::string_view value = ctx.arg(i + 1);
    int64_t n = 0;
    if (option == "listening-port") {
      if (!ctx.int_arg_or_reply(i + 1, n)) {
        return;
      }
      hs.listening_port = n;
    } else if (option == "ip-address") {
      hs.announced_ip = std::string(value);
    } else if (option == "capa") {
      if (strcasecmp_view(value, "EOF")) {
        hs.capa_eof = true;
      } else if (strcasecmp_view(value, "PSYNC2")) {
        hs.capa_psync2 = true;
      }  // unknown capabilities are ignored, as Redis does
    } else if (option == "ack" || option == "fack") {
      // Acknowledgements come from a replica's link and are never answered.
      if (hs.attached && option == "ack" && parse_int64(value).value_or(-1) >= 0) {
        ctx.engine.replication().update_replica(ctx.session->info->id, "",
                                                static_cast<uint64_t>(*parse_int64(value)),
                                                ctx.now_ms);
      }
      return;  // no reply at all
    } else if (option == "getack") {
      // Only a master's link asks this of a replica; the link answers it itself.
      return;
    } else if (option == "rdb-only") {
      if (!ctx.int_arg_or_reply(i + 1, n)) {
        return;
      }
      if (n != 0 && n != 1) {
        ctx.error(err::kSyntax);
        return;
      }
      hs.rdb_only = n == 1;
    } else {
      ctx.error(err::unrecognized_replconf(ctx.arg(i)));
      return;
    }
  }
  ctx.reply.ok();
}

}  // namespace

void info_replication(Engine& engine, std::string& out) {
  Replication& repl = engine.replication();
  Config& config = engine.config();
  const int64_t now_s = engine.now_ms() / 1000;
  out += "# Replication\r\n";
  if (auto m = repl.master()) {
    LinkState state = repl.link_state();
    bool up = state == LinkState::kConnected;
    // The offsets of the stream followed (the cached master's while the link is down): read
    // from the master, and applied.
    auto applied = static_cast<int64_t>(repl.offset());
    int64_t read = std::max(applied, static_cast<int64_t>(repl.read_offset()));
    fmt::format_to(std::back_inserter(out),
                   "role:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\n"
                   "master_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\n"
                   "slave_read_repl_offset:{}\r\nslave_repl_offset:{}\r\n",
                   m->first, m->second, up ? "up" : "down", up ? repl.last_io_seconds_ago(now_s) : -1,
                   state == LinkState::kSync ? 1 : 0, read, applied);
    if (Replication::Transfer t = repl.transfer(); t.active) {
      // Redis's arithmetic, sign included: the size is -1 while unknown (a streamed image).
      fmt::format_to(std::back_inserter(out),
                     "master_sync_total_bytes:{}\r\nmaster_sync_read_bytes:{}\r\n"
                     "master_sync_left_bytes:{}\r\nmaster_sync_perc:{:.2f}\r\n"
                     "master_sync_last_io_seconds_ago:{}\r\n",
                     t.total, t.read, t.total - t.read,
                     t.total != 0 ? static_cast<double>(t.read) / t.total * 100 : 0.0,
                     std::max<int64_t>(0, repl.last_io_seconds_ago(now_s)));
    }
    if (!up) {
      int64_t since = repl.link_down_since_ms();
      fmt::format_to(std::back_inserter(out), "master_link_down_since_seconds:{}\r\n",
                     since < 0 ? -1 : now_s - since / 1000);
    }
    fmt::format_to(std::back_inserter(out),
                   "slave_priority:{}\r\nslave_read_only:{}\r\nreplica_announced:{}\r\n",
                   config.replica_priority.load(), config.replica_read_only.load() ? 1 : 0,
                   config.get_string("replica-announced") == "yes" ? 1 : 0);
  } else {
    out += "role:master\r\n";
  }
  std::vector<ReplicaPeer> peers = repl.replicas();
  fmt::format_to(std::back_inserter(out), "connected_slaves:{}\r\n", peers.size());
  if (config.min_replicas_to_write.load() > 0 && config.min_replicas_max_lag.load() > 0) {
    fmt::format_to(std::back_inserter(out), "min_slaves_good_slaves:{}\r\n",
                   repl.good_replicas(engine.now_ms(), config.min_replicas_max_lag.load()));
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    const ReplicaPeer& p = peers[i];
    fmt::format_to(std::back_inserter(out), "slave{}:ip={},port={},state={},offset={},lag={}\r\n",
                   i, p.ip, p.listening_port, p.state, p.ack_offset,
                   p.last_ack_ms == 0 ? 0 : now_s - p.last_ack_ms / 1000);
  }
  Replication::Ids ids = repl.ids();
  Replication::BacklogInfo backlog = repl.backlog_info();
  fmt::format_to(std::back_inserter(out),
                 "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\n"
                 "master_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{}\r\n"
                 "repl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{}\r\n"
                 "repl_backlog_histlen:{}\r\n\r\n",
                 ids.replid, ids.replid2, repl.offset(), ids.second_offset, backlog.active ? 1 : 0,
                 backlog.size, backlog.first_byte_offset, backlog.histlen);
}

void register_replication(Table& t) {
  // clang-format off
  // With every shard parked (kAllShards), so the feed switches between two commands.
  t.add({"REPLICAOF", 3, kAdmin | kNoScript | kStale | kConnection | kAllShards, no_keys(), cmd_replicaof, "server", "REPLICAOF host port | NO ONE", "Makes the server a replica of another instance, or promotes it to a master."});
  t.add({"SLAVEOF",   3, kAdmin | kNoScript | kStale | kConnection | kAllShards, no_keys(), cmd_replicaof, "server", "SLAVEOF host port | NO ONE", "Sets a Redis server as a replica of another, or promotes it to being a master (REPLICAOF's old name)."});
  t.add({"ROLE",      1, kNoScript | kLoading | kStale | kFast, no_keys(), cmd_role, "server", "ROLE", "Returns the replication role."});
  t.add({"REPLCONF", -1, kAdmin | kNoScript | kLoading | kStale | kConnection, no_keys(), cmd_replconf, "server", "REPLCONF [option value ...]", "An internal command for configuring the replication stream."});
  // clang-format on
}

bool is_replconf(std::span<const std::string_view> argv, const char* sub) {
  return argv.size() >= 2 && strcasecmp_view(argv[0], "REPLCONF") && strcasecmp_view(argv[1], sub);
}

}  // namespace hotkv
