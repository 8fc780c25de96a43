// Server administration: INFO, CONFIG, TIME, LASTSAVE, SHUTDOWN and DEBUG (COMMAND is in
// command.cpp).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "hotkv/commands/command_call.hpp"
#include "hotkv/commands/context.hpp"
#include "hotkv/commands/errors.hpp"
#include "hotkv/commands/errors_server.hpp"
#include "hotkv/commands/families.hpp"
#include "hotkv/commands/info_sections.hpp"
#include "hotkv/commands/memory_figures.hpp"
#include "hotkv/commands/replication.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/commands/string_helpers.hpp"
#include "hotkv/commands/table.hpp"
#include "hotkv/shard/eviction.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/memory.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

const std::string& run_id() {
  static const std::string id = [] {
    std::random_device rd;
    std::string s;
    const char* hex = "0123456789abcdef";
    for (int i = 0; i < 40; ++i) {
      s.push_back(hex[rd() % 16]);
    }
    return s;
  }();
  return id;
}

// ---------------------------------------------------------------------------------- INFO

void info_server(CommandContext& ctx, std::string& out) {
  int64_t uptime = (ctx.now_ms - ctx.engine.start_unix_ms()) / 1000;
  char exe[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n < 0) {
    n = 0;
  }
  out += fmt::format(
      "# Server\r\nredis_version:7.2.0\r\nhotkv_version:{}\r\nredis_mode:standalone\r\n"
      "os:Linux\r\narch_bits:64\r\nmultiplexing_api:epoll\r\nprocess_id:{}\r\nrun_id:{}\r\n"
      "tcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\n"
      "hz:10\r\nexecutable:{}\r\nconfig_file:{}\r\nthreads:{}\r\n\r\n",
      HOTKV_VERSION, getpid(), run_id(), ctx.engine.config().port.load(), unix_us(), uptime,
      uptime / 86400, std::string(exe, static_cast<size_t>(n)), ctx.engine.config().config_file(),
      ctx.engine.shard_count());
}

void info_clients(CommandContext& ctx, std::string& out) {
  out += fmt::format(
      "# Clients\r\nconnected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\n"
      "blocked_clients:{}\r\ntracking_clients:{}\r\nclients_in_timeout_table:{}\r\n"
      "pubsub_clients:{}\r\nhibernated_clients:{}\r\n\r\n",
      ctx.engine.clients().count(), ctx.engine.config().maxclients.load(),
      ctx.engine.stats().blocked_clients.load(), ctx.engine.tracking().clients(),
      ctx.engine.stats().blocked_clients.load(), ctx.engine.pubsub().client_count(),
      std::max<int64_t>(0, ctx.engine.stats().hibernated_clients.load()));
}

void info_memory(CommandContext& ctx, std::string& out) {
  // used_memory: the counting allocator's total (util/memory.hpp), what the data set, the
  // clients' buffers and the interpreters hold in malloc chunks.
  uint64_t used = used_memory_bytes();
  uint64_t rss = rss_bytes();
  auto max = static_cast<uint64_t>(ctx.engine.config().maxmemory.load());
  ScriptStore& scripts = ctx.engine.scripts();
  out += fmt::format(
      "# Memory\r\nused_memory:{}\r\nused_memory_human:{}\r\nused_memory_rss:{}\r\n"
      "used_memory_rss_human:{}\r\nused_memory_scripts:{}\r\nnumber_of_cached_scripts:{}\r\n"
      "maxmemory:{}\r\nmaxmemory_human:{}\r\n"
      "maxmemory_policy:{}\r\nmem_fragmentation_ratio:{:.2f}\r\n"
      // Nothing is kept outside used_memory from eviction's view.
      "mem_not_counted_for_evict:0\r\nmem_allocator:{}\r\n",
      used, human_bytes(used), rss, human_bytes(rss), scripts.memory_bytes(), scripts.count(),
      max, human_bytes(max),
      ctx.engine.config().get_string("maxmemory-policy"),
      used == 0 ? 0.0 : static_cast<double>(rss) / static_cast<double>(used), allocator_name());
  info_memory_details(ctx, out);
  out += "\r\n";
}

void info_persistence(CommandContext& ctx, std::string& out) {
  Persistence* p = ctx.engine.persistence();
  bool enabled = p != nullptr && p->enabled();
  uint64_t fsyncs = 0;
  uint64_t records = 0;
  uint64_t last_seq = 0;
  for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
    fsyncs += ctx.engine.shard(i).log().fsyncs();
    records += ctx.engine.shard(i).log().records();
    last_seq = std::max(last_seq, ctx.engine.shard(i).log().last_seq());
  }
  int write_errno = ctx.engine.persistence_errno();
  const RdbSaver& rdb = ctx.engine.rdb_saver();
  out += fmt::format(
      "# Persistence\r\nloading:{}\r\nasync_loading:0\r\nrdb_changes_since_last_save:{}\r\n"
      "rdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\n"
      "rdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{}\r\nrdb_saves:{}\r\n"
      "rdb_last_cow_size:0\r\nrdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\n"
      "aof_enabled:{}\r\naof_rewrite_in_progress:{}\r\naof_rewrite_scheduled:0\r\n"
      "aof_last_rewrite_time_sec:{}\r\naof_current_rewrite_time_sec:{}\r\n"
      "aof_last_bgrewrite_status:{}\r\naof_rewrites:{}\r\naof_last_write_status:{}\r\n"
      "aof_last_cow_size:0\r\n",
      ctx.engine.loading() ? 1 : 0, ctx.engine.key_changes_since_save(),
      rdb.in_progress() ? 1 : 0, rdb.last_save_unix(), rdb.last_bgsave_ok() ? "ok" : "err",
      rdb.last_bgsave_seconds(),
      rdb.in_progress() ? (unix_ms() - rdb.bgsave_started_ms()) / 1000 : -1, rdb.saves(),
      rdb.last_load_keys_expired(), rdb.last_load_keys_loaded(), enabled ? 1 : 0,
      enabled && p->rewrite_in_progress() ? 1 : 0,
      enabled && p->last_rewrite_ms() >= 0 ? p->last_rewrite_ms() / 1000 : -1,
      enabled && p->rewrite_in_progress() ? (ctx.now_ms - p->rewrite_started_ms()) / 1000 : -1,
      !enabled || p->last_rewrite_ok() ? "ok" : "err", enabled ? p->rewrites() : 0,
      write_errno == 0 ? "ok" : "err");
  if (enabled) {
    out += fmt::format(
        "aof_current_size:{}\r\naof_base_size:{}\r\naof_pending_rewrite:0\r\n"
        "aof_buffer_length:0\r\naof_pending_bio_fsync:0\r\naof_delayed_fsync:{}\r\n"
        "aof_fsyncs:{}\r\naof_records:{}\r\naof_records_per_fsync:{:.2f}\r\n"
        "aof_loaded_effects:{}\r\naof_loaded_expired:{}\r\naof_load_time_ms:{}\r\n"
        "aof_last_seq:{}\r\naof_loaded_last_seq:{}\r\n",
        p->current_size(), p->base_size(), p->delayed_fsyncs(), fsyncs, records,
        fsyncs == 0 ? 0.0 : static_cast<double>(records) / static_cast<double>(fsyncs),
        p->load_stats().effects, p->load_stats().expired_on_load, p->load_stats().millis,
        last_seq, p->load_stats().last_seq);
  }
  out += "\r\n";
}

void info_stats(CommandContext& ctx, std::string& out) {
  uint64_t commands = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t expired = 0;
  uint64_t backlog = 0;
  uint64_t net_in = 0;
  uint64_t net_out = 0;
  uint64_t messages = 0;
  uint64_t carried = 0;
  for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
    Shard& s = ctx.engine.shard(i);
    messages += s.cross_thread_messages().load(std::memory_order_relaxed);
    carried += s.cross_thread_commands().load(std::memory_order_relaxed);
    net_in += s.net_input_bytes().load(std::memory_order_relaxed);
    net_out += s.net_output_bytes().load(std::memory_order_relaxed);
    commands += s.commands_processed().load(std::memory_order_relaxed);
    for (uint32_t db = 0; db < s.db_count(); ++db) {
      const KeyspaceStats& st = s.keyspace(db).stats();
      hits += st.hits.load(std::memory_order_relaxed);
      misses += st.misses.load(std::memory_order_relaxed);
      expired += st.expired.load(std::memory_order_relaxed);
      backlog += st.backlog.load(std::memory_order_relaxed);
    }
  }
  ServerStats& ss = ctx.engine.stats();
  out += fmt::format(
      "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n"
      "instantaneous_ops_per_sec:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\n"
      "instantaneous_input_kbps:{:.2f}\r\ninstantaneous_output_kbps:{:.2f}\r\n"
      "rejected_connections:{}\r\nsync_full:{}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\n"
      "expired_keys:{}\r\nexpired_keys_backlog:{}\r\n"
      "evicted_keys:{}\r\nevicted_clients:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\n"
      // No MIGRATE, so no cached sockets: 0 is the truth, and clients poll for it.
      "pubsub_patterns:{}\r\nlatest_fork_usec:{}\r\nmigrate_cached_sockets:0\r\n"
      "tracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\n"
      "total_error_replies:{}\r\n"
      "cross_shard_atomic_ops:{}\r\ncross_thread_messages:{}\r\n"
      "cross_thread_messages_per_command:{:.4f}\r\ncross_thread_commands:{}\r\n"
      "connection_migrations:{}\r\nscript_runs_undone:{}\r\n\r\n",
      ss.connections_received.load(), commands, ss.ops_per_sec.load(), net_in, net_out,
      ss.input_kbps.load(), ss.output_kbps.load(),
      ss.rejected_connections.load(), ss.sync_full.load(), ss.sync_partial_ok.load(),
      ss.sync_partial_err.load(), expired, backlog, ctx.engine.eviction().evicted_keys(),
      ctx.engine.clients().evicted_clients(), hits,
      misses,
      ctx.engine.pubsub().channels("").size(), ctx.engine.pubsub().numpat(),
      ctx.engine.persistence() != nullptr ? ctx.engine.persistence()->latest_fork_usec() : 0,
      ctx.engine.tracking().total_keys(), ctx.engine.tracking().total_items(),
      ctx.engine.tracking().total_prefixes(), ss.total_error_replies.load(),
      ss.atomic_operations.load(), messages,
      commands == 0 ? 0.0 : static_cast<double>(messages) / static_cast<double>(commands), carried,
      ss.connection_migrations.load(), ss.script_runs_undone.load());
}

void info_replication(CommandContext& ctx, std::string& out) {
  hotkv::info_replication(ctx.engine, out);
}

void info_cpu(CommandContext&, std::string& out) {
  struct rusage self {};
  struct rusage children {};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  out += fmt::format(
      "# CPU\r\nused_cpu_sys:{:.6f}\r\nused_cpu_user:{:.6f}\r\nused_cpu_sys_children:{:.6f}\r\n"
      "used_cpu_user_children:{:.6f}\r\n\r\n",
      secs(self.ru_stime), secs(self.ru_utime), secs(children.ru_stime),
      secs(children.ru_utime));
}

void info_commandstats(CommandContext& ctx, std::string& out) {
  out += "# Commandstats\r\n";
  auto line = [&out](const std::string& name, const CommandTotals& t) {
    if (t.calls == 0 && t.rejected == 0) {
      return;
    }
    out += fmt::format(
        "cmdstat_{}:calls={},usec={},usec_per_call={:.2f},rejected_calls={},failed_calls={}\r\n",
        name, t.calls, t.usec,
        t.calls == 0 ? 0.0 : static_cast<double>(t.usec) / static_cast<double>(t.calls),
        t.rejected, t.failed);
  };
  const Table& table = ctx.engine.table();
  for (const auto& spec : table.all()) {
    // A container command's calls are its subcommands' (Redis 7 lists "config|get"); its own
    // line only counts calls with an unknown subcommand.
    line(ascii_lower(spec.name), command_totals(ctx.engine, spec.id));
    for (size_t i = 0; i < spec.subcommands.size(); ++i) {
      line(stat_slot_name(spec, i), command_totals(ctx.engine, table.subcommand_slot(spec, i)));
    }
  }
  out += "\r\n";
}

// Error replies by code, as Redis 7 (shard/error_stats.hpp).
void info_errorstats(CommandContext& ctx, std::string& out) {
  out += "# Errorstats\r\n";
  for (const auto& [code, count] : ctx.engine.errors().snapshot()) {
    out += fmt::format("errorstat_{}:count={}\r\n", code, count);
  }
  out += "\r\n";
}

// One line per database that holds keys, as Redis.
void info_keyspace(CommandContext& ctx, std::string& out) {
  out += "# Keyspace\r\n";
  for (uint32_t db = 0; db < ctx.shard.db_count(); ++db) {
    uint64_t keys = 0;
    uint64_t expires = 0;
    for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
      const KeyspaceStats& st = ctx.engine.shard(i).keyspace(db).stats();
      keys += st.keys.load(std::memory_order_relaxed);
      expires += st.expires.load(std::memory_order_relaxed);
    }
    if (keys > 0) {
      out += fmt::format("db{}:keys={},expires={},avg_ttl=0\r\n", db, keys, expires);
    }
  }
  out += "\r\n";
}

// HotKV's own section: the hold traffic of every inventory item since start.
void info_inventory(CommandContext& ctx, std::string& out) {
  auto sum = [&](std::atomic<uint64_t> InventoryStats::*field) {
    uint64_t n = 0;
    for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
      Shard& s = ctx.engine.shard(i);
      for (uint32_t db = 0; db < s.db_count(); ++db) {
        n += (s.keyspace(db).inventory_stats().*field).load(std::memory_order_relaxed);
      }
    }
    return n;
  };
  out += fmt::format(
      "# Inventory\r\ninv_holds_reserved:{}\r\ninv_units_reserved:{}\r\ninv_holds_committed:{}\r\n"
      "inv_units_sold:{}\r\ninv_holds_released:{}\r\ninv_holds_expired:{}\r\n"
      "inv_rejected_soldout:{}\r\ninv_rejected_ownerlimit:{}\r\ninv_rejected_holdexists:{}\r\n"
      "inv_soldout_answered_here:{}\r\n\r\n",
      sum(&InventoryStats::holds_reserved), sum(&InventoryStats::units_reserved),
      sum(&InventoryStats::holds_committed), sum(&InventoryStats::units_sold),
      sum(&InventoryStats::holds_released), sum(&InventoryStats::holds_expired),
      sum(&InventoryStats::rejected_soldout), sum(&InventoryStats::rejected_ownerlimit),
      sum(&InventoryStats::rejected_holdexists), sum(&InventoryStats::soldout_answered_here));
}

struct InfoSection {
  const char* name;
  void (*render)(CommandContext&, std::string&);
  bool in_default;
};

const InfoSection kInfoSections[] = {
    {"server", info_server, true},
    {"clients", info_clients, true},
    {"memory", info_memory, true},
    {"persistence", info_persistence, true},
    {"stats", info_stats, true},
    {"replication", info_replication, true},
    {"cpu", info_cpu, true},
    {"modules", info_modules, true},
    {"commandstats", info_commandstats, false},
    {"errorstats", info_errorstats, true},
    {"latencystats", info_latencystats, false},
    {"cluster", info_cluster, true},
    {"inventory", info_inventory, true},
    {"keyspace", info_keyspace, true},
};

void cmd_info(CommandContext& ctx) {
  std::vector<std::string> wanted;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    wanted.push_back(ascii_lower(ctx.arg(i)));
  }
  bool defaults = wanted.empty() || std::count(wanted.begin(), wanted.end(), "default") > 0;
  bool all = std::count(wanted.begin(), wanted.end(), "all") > 0 ||
             std::count(wanted.begin(), wanted.end(), "everything") > 0;
  std::string out;
  for (const auto& sec : kInfoSections) {
    bool named = std::count(wanted.begin(), wanted.end(), sec.name) > 0;
    if (all || named || (defaults && sec.in_default)) {
      sec.render(ctx, out);
    }
  }
  // Redis ends the text without the last blank line.
  while (out.size() >= 2 && out.compare(out.size() - 2, 2, "\r\n") == 0 &&
         out.size() >= 4 && out.compare(out.size() - 4, 4, "\r\n\r\n") == 0) {
    out.resize(out.size() - 2);
  }
  ctx.reply.verbatim(out);
}

// --------------------------------------------------------------------------------- CONFIG

void cmd_config(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  Config& cfg = ctx.engine.config();
  if (strcasecmp_view(sub, "GET") && ctx.argc() >= 3) {
    std::vector<std::pair<std::string, std::string>> found;
    for (size_t i = 2; i < ctx.argc(); ++i) {
      std::string_view pattern = ctx.arg(i);
      // As Redis 7.0, a name without glob characters comes back spelled as it was asked for.
      if (pattern.find_first_of("*?[") == std::string_view::npos) {
        if (cfg.exists(pattern) && std::none_of(found.begin(), found.end(), [&](const auto& f) {
              return ascii_lower(f.first) == ascii_lower(pattern);
            })) {
          found.emplace_back(std::string(pattern), cfg.get_string(pattern));
        }
        continue;
      }
      for (auto& kv : cfg.get_matching(pattern)) {
        if (std::none_of(found.begin(), found.end(),
                         [&](const auto& f) { return ascii_lower(f.first) == kv.first; })) {
          found.push_back(std::move(kv));
        }
      }
    }
    ctx.reply.map(found.size());
    for (const auto& [name, value] : found) {
      ctx.reply.bulk(name);
      ctx.reply.bulk(value);
    }
  } else if (strcasecmp_view(sub, "SET") && ctx.argc() >= 4 && ctx.argc() % 2 == 0) {
    // All pairs or none (Config::set_many rolls back what it changed when one fails).
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (size_t i = 2; i < ctx.argc(); i += 2) {
      pairs.emplace_back(ctx.arg(i), ctx.arg(i + 1));
    }
    std::string failed;
    if (Status st = cfg.set_many(pairs, failed); !st.is_ok()) {
      ctx.error(st.code() == StatusCode::kNotFound ? err::config_set_unknown(failed)
                                                   : err::config_set_failed(failed, st));
      return;
    }
    // A lowered tracking-table-max-keys applies at once, not at the next tracked read.
    ctx.engine.tracking().enforce_limit();
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "RESETSTAT") && ctx.argc() == 2) {
    ctx.engine.eviction().reset_stats();
    ctx.engine.clients().reset_evicted_clients();
    reset_used_memory_peak();
    for (size_t i = 0; i < ctx.engine.shard_count(); ++i) {
      Shard& s = ctx.engine.shard(i);
      for (uint32_t db = 0; db < s.db_count(); ++db) {
        KeyspaceStats& st = s.keyspace(db).stats();
        st.hits.store(0);
        st.misses.store(0);
        st.expired.store(0);
        s.keyspace(db).inventory_stats().reset();
      }
      s.commands_processed().store(0);
      s.net_input_bytes().store(0);
      s.net_output_bytes().store(0);
      s.cross_thread_messages().store(0);
      s.cross_thread_commands().store(0);
      for (size_t c = 0; c < ctx.engine.table().stat_slots(); ++c) {
        s.command_stat(c).reset();
      }
    }
    ServerStats& ss = ctx.engine.stats();
    ss.connections_received.store(0);
    ss.rejected_connections.store(0);
    ss.total_error_replies.store(0);
    ctx.engine.errors().reset();
    ss.atomic_operations.store(0);
    ss.connection_migrations.store(0);
    ss.script_runs_undone.store(0);
    ss.sync_full.store(0);
    ss.sync_partial_ok.store(0);
    ss.sync_partial_err.store(0);
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "REWRITE") && ctx.argc() == 2) {
    if (Status st = ctx.engine.config().rewrite_file(); !st.is_ok()) {
      ctx.error(err::config_rewrite_failed(st));
      return;
    }
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "HELP") && ctx.argc() == 2) {
    static const char* kHelp[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
        "RESETSTAT", "    Reset statistics reported by the INFO command.",
        "HELP", "    Print this help."};
    ctx.reply.array(std::size(kHelp));
    for (const char* line : kHelp) {
      ctx.reply.simple(line);
    }
  } else {
    ctx.error(err::subcommand_arity("config", sub));
  }
}

// ------------------------------------------------------------------------------- the rest

void cmd_time(CommandContext& ctx) {
  int64_t us = unix_us();
  ctx.reply.array(2);
  ctx.reply.bulk_int(us / 1000000);
  ctx.reply.bulk_int(us % 1000000);
}

// CLUSTER ...: HotKV runs as a standalone Redis does, and answers as one (cluster-aware
// clients probe CLUSTER INFO and fall back to standalone on this error).
void cmd_cluster(CommandContext& ctx) {
  ctx.error(err::kClusterDisabled);
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: the server stops; with SAVE it writes the RDB
// file once its shards have stopped (there are no save points to imply it: `save` starts
// nothing). Like Redis, the client gets no reply, only a closed connection.
void cmd_shutdown(CommandContext& ctx) {
  bool nosave = false;
  bool save = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view a = ctx.arg(i);
    if (strcasecmp_view(a, "ABORT")) {
      ctx.error(err::kNoShutdown);
      return;
    }
    if (!strcasecmp_view(a, "NOSAVE") && !strcasecmp_view(a, "SAVE") &&
        !strcasecmp_view(a, "NOW") && !strcasecmp_view(a, "FORCE")) {
      ctx.error(err::kSyntax);
      return;
    }
    nosave = nosave || strcasecmp_view(a, "NOSAVE");
    save = save || strcasecmp_view(a, "SAVE");
  }
  if (ctx.engine.scripts().busy()) {
    if (!nosave) {
      ctx.error(ctx.engine.scripts().busy_error());
      return;
    }
    // The busy script's thread never comes back to stop in order. Every reply already sent
    // had its log records written; the script's own effects are in a record still open in
    // memory, so the log keeps none of them, as a script must be all or nothing.
    spdlog::warn("SHUTDOWN NOSAVE while a script is busy: exiting now");
    std::_Exit(0);
  }
  if (save && !nosave) {
    ctx.engine.rdb_saver().request_save_on_shutdown();
  }
  ctx.session->close_after_reply = true;
  ctx.engine.request_shutdown();
}

// DEBUG SLEEP <seconds> blocks the calling thread, as Redis's does; tests use it to hold a
// shard busy.
void cmd_debug(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (strcasecmp_view(sub, "SLEEP") && ctx.argc() == 3) {
    auto secs = parse_double(ctx.arg(2));
    if (!secs || *secs < 0) {
      ctx.error(err::kNotFloat);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(*secs * 1e6)));
    ctx.reply.ok();
  } else if (strcasecmp_view(sub, "HELP") && ctx.argc() == 2) {
    ctx.reply.array(2);
    ctx.reply.simple("DEBUG SLEEP <seconds>");
    ctx.reply.simple("    Stop the server for <seconds>. Decimals allowed.");
  } else {
    ctx.error(err::subcommand_syntax("DEBUG", sub));
  }
}

}  // namespace

void register_server(Table& t) {
  constexpr uint32_t kAdminConn = kAdmin | kNoScript | kConnection;
  // clang-format off
  t.add({"INFO",     -1, kLoading | kStale, no_keys(), cmd_info, "server", "INFO [section [section ...]]", "Returns information and statistics about the server."});
  t.add({"CONFIG",   -2, kAdminConn | kLoading | kStale, no_keys(), cmd_config, "server", "CONFIG GET|SET|RESETSTAT|HELP [arguments]", "Reads or changes the server configuration at runtime.", {"get", "set", "resetstat", "rewrite", "help"}});
  t.add({"TIME",      1, kLoading | kStale | kFast, no_keys(), cmd_time, "server", "TIME", "Returns the server time."});
  t.add({"SHUTDOWN", -1, kAdminConn | kLoading | kStale | kNoMulti | kAllowBusy, no_keys(), cmd_shutdown, "server", "SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", "Stops the server: stop accepting, finish in-flight replies, close clients, exit 0."});
  t.add({"CLUSTER",  -2, kNoScript | kLoading | kStale, no_keys(), cmd_cluster, "cluster", "CLUSTER subcommand [arguments]", "Answers as a standalone Redis: cluster support is disabled.", {"addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "countkeysinslot", "delslots", "delslotsrange", "failover", "flushslots", "forget", "getkeysinslot", "help", "info", "keyslot", "links", "meet", "myid", "nodes", "replicas", "replicate", "reset", "saveconfig", "set-config-epoch", "setslot", "shards", "slaves", "slots"}});
  t.add({"DEBUG",    -2, kAdminConn | kLoading | kStale, no_keys(), cmd_debug, "server", "DEBUG SLEEP seconds", "A debugging command (SLEEP only) for tests."});
  // clang-format on
}

}  // namespace hotkv
