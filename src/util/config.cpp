// The configuration registry (see config.hpp).
#include "hotkv/util/config.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "hotkv/util/access_clock.hpp"
#include "hotkv/util/eviction_policy.hpp"
#include "hotkv/util/file_io.hpp"
#include "hotkv/util/glob.hpp"
#include "hotkv/util/notify.hpp"
#include "hotkv/util/numbers.hpp"
#include "hotkv/util/strings.hpp"

namespace hotkv {
namespace {

// Splits a config line into words, honouring "double" and 'single' quotes.
bool split_config_line(const std::string& line, std::vector<std::string>& words) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) {
      ++i;
    }
    if (i >= line.size()) {
      break;
    }
    std::string word;
    if (line[i] == '"' || line[i] == '\'') {
      char q = line[i++];
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '\\' && q == '"' && i + 1 < line.size()) {
          word.push_back(line[i + 1]);
          i += 2;
          continue;
        }
        if (line[i] == q) {
          closed = true;
          ++i;
          break;
        }
        word.push_back(line[i++]);
      }
      if (!closed) {
        return false;
      }
    } else {
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
        word.push_back(line[i++]);
      }
    }
    words.push_back(std::move(word));
  }
  return true;
}

}  // namespace

int64_t parse_memory_value(std::string_view s) {
  std::string l = ascii_lower(s);
  int64_t mul = 1;
  auto ends = [&](std::string_view suf) {
    return l.size() > suf.size() && l.compare(l.size() - suf.size(), suf.size(), suf) == 0;
  };
  size_t cut = 0;
  if (ends("kb")) {
    mul = 1024, cut = 2;
  } else if (ends("mb")) {
    mul = 1024LL * 1024, cut = 2;
  } else if (ends("gb")) {
    mul = 1024LL * 1024 * 1024, cut = 2;
  } else if (ends("k")) {
    mul = 1000, cut = 1;
  } else if (ends("m")) {
    mul = 1000LL * 1000, cut = 1;
  } else if (ends("g")) {
    mul = 1000LL * 1000 * 1000, cut = 1;
  } else if (ends("b")) {
    cut = 1;
  }
  auto v = parse_int64(std::string_view(l).substr(0, l.size() - cut));
  if (!v || *v < 0 || (*v > 0 && mul > INT64_MAX / *v)) {
    return -1;
  }
  return *v * mul;
}

Config::Config() {
  // A running server moves its listener when port or tls-port changes (set_port_hook,
  // set_tls_port_hook); setting one to the port it has is a no-op, as on Redis.
  auto add_port = [this](std::string name, std::atomic<int64_t>& value,
                         std::function<std::string(int64_t)> Config::*hook_member) {
    add(std::move(name),
        Entry{[&value] { return std::to_string(value.load(std::memory_order_relaxed)); },
              [this, &value, hook_member](std::string_view s) -> Status {
                auto v = parse_int64(s);
                if (!v) {
                  return Status::invalid_argument("argument couldn't be parsed into an integer");
                }
                if (*v < 0 || *v > 65535) {
                  return Status::invalid_argument(
                      "argument must be between 0 and 65535 inclusive");
                }
                if (*v == value.load(std::memory_order_relaxed)) {
                  return {};
                }
                std::function<std::string(int64_t)> hook;
                {
                  std::lock_guard<std::mutex> lock(strings_mutex_);
                  hook = this->*hook_member;
                }
                if (hook) {
                  if (std::string reason = hook(*v); !reason.empty()) {
                    return Status::refused(std::move(reason));
                  }
                }
                value.store(*v, std::memory_order_relaxed);
                return {};
              },
              true});
  };
  add_port("port", port, &Config::port_hook_);
  add_port("tls-port", tls_port, &Config::tls_port_hook_);
  // HotKV never daemonizes itself (run it under a supervisor): reported, and only "no" taken.
  add_enum("daemonize", daemonize_, {"no"}, false);
  add_int("threads", threads, 0, 1024, false, false);
  add_int("maxclients", maxclients, 1, INT32_MAX, false, true);
  add_int("timeout", timeout, 0, INT32_MAX, false, true);
  add_int("busy-reply-threshold", busy_reply_threshold, 0, INT32_MAX, false, true);
  add_int("lua-time-limit", busy_reply_threshold, 0, INT32_MAX, false, true);
  add_int("latency-monitor-threshold", latency_monitor_threshold, 0, INT64_MAX, false, true);
  add_int("slowlog-log-slower-than", slowlog_log_slower_than, INT64_MIN, INT64_MAX, false, true);
  add_int("slowlog-max-len", slowlog_max_len, 0, INT64_MAX, false, true);
  add_enum("latency-tracking", latency_tracking_, {"yes", "no"}, true, [this](const std::string& v) {
    latency_tracking.store(v == "yes", std::memory_order_relaxed);
    return Status();
  });
  // Space-separated percentiles between 0 and 100 (none is allowed: latencystats then lists
  // the commands without figures, as Redis does).
  add("latency-tracking-info-percentiles",
      Entry{[this] {
              std::lock_guard<std::mutex> lock(strings_mutex_);
              std::string out;
              for (double p : latency_percentiles_) {
                out += (out.empty() ? "" : " ") + fmt::format("{}", p);
              }
              return out;
            },
            [this](std::string_view s) -> Status {
              std::vector<double> ps;
              for (size_t at = s.find_first_not_of(' '); at != std::string_view::npos;
                   at = s.find_first_not_of(' ', at)) {
                size_t end = std::min(s.find(' ', at), s.size());
                auto p = parse_double(s.substr(at, end - at));
                at = end;
                if (!p) {
                  return Status::invalid_argument(
                      "Invalid latency-tracking-info-percentiles parameters");
                }
                if (*p < 0 || *p > 100) {
                  return Status::invalid_argument(
                      "latency-tracking-info-percentiles parameters should sit between "
                      "[0.0,100.0]");
                }
                ps.push_back(*p);
              }
              std::lock_guard<std::mutex> lock(strings_mutex_);
              latency_percentiles_ = std::move(ps);
              return {};
            },
            true});
  add_int("tcp-keepalive", tcp_keepalive, 0, INT32_MAX, false, true);
  static_assert(static_cast<int>(EvictionPolicy::kNoEviction) == 7);  // maxmemory_policy{7}
  add_int("maxmemory", maxmemory, 0, INT64_MAX, true, true);
  add("maxmemory-clients",
      Entry{[this] {
              int64_t v = maxmemory_clients.load(std::memory_order_relaxed);
              return maxmemory_clients_percent.load(std::memory_order_relaxed)
                         ? std::to_string(v) + "%"
                         : std::to_string(v);
            },
            [this](std::string_view s) -> Status {
              bool percent = !s.empty() && s.back() == '%';
              int64_t v = -1;
              if (percent) {
                auto p = parse_int64(s.substr(0, s.size() - 1));
                v = p && *p >= 0 ? *p : -1;
              } else {
                v = parse_memory_value(s);
              }
              if (v < 0) {
                return Status::invalid_argument("argument must be a memory or percent value");
              }
              if (percent && v > 100) {
                return Status::invalid_argument("percentage argument must be less or equal to 100");
              }
              maxmemory_clients.store(v, std::memory_order_relaxed);
              maxmemory_clients_percent.store(percent, std::memory_order_relaxed);
              return {};
            },
            true});
  add_int("key-load-delay", key_load_delay, INT32_MIN, INT32_MAX, false, true);
  entries_.find("key-load-delay")->second.hidden = true;
  // The policy picks what each key's access clock counts: an LFU policy the access frequency
  // (OBJECT FREQ), any other the last access time (OBJECT IDLETIME); util/access_clock.hpp.
  // Its index in the list is the EvictionPolicy value (util/eviction_policy.hpp).
  add_enum("maxmemory-policy", maxmemory_policy_, eviction_policy_names(), true,
           [this](const std::string& v) {
             access_clock_settings().lfu.store(v.ends_with("-lfu"), std::memory_order_relaxed);
             maxmemory_policy.store(static_cast<int>(parse_eviction_policy(v)),
                                    std::memory_order_relaxed);
             return Status();
           });
  add_int("maxmemory-samples", maxmemory_samples, 1, 64, false, true);
  add_int("maxmemory-eviction-tenacity", maxmemory_eviction_tenacity, 0, 100, false, true);
  add_int("lfu-log-factor", access_clock_settings().lfu_log_factor, 0, INT32_MAX, false, true);
  add_int("lfu-decay-time", access_clock_settings().lfu_decay_time, 0, INT32_MAX, false, true);
  add_int("tracking-table-max-keys", tracking_table_max_keys, 0, INT64_MAX, false, true);
  add_int("proto-max-bulk-len", proto_max_bulk_len, 1024 * 1024, INT64_MAX, true, true);
  add_int("client-query-buffer-limit", client_query_buffer_limit, 1024 * 1024, INT64_MAX, true,
          true);
  add_int("list-max-listpack-size", list_max_listpack_size, INT32_MIN, INT32_MAX, false, true);
  add_int("list-max-ziplist-size", list_max_listpack_size, INT32_MIN, INT32_MAX, false, true);
  add_int("list-compress-depth", list_compress_depth, 0, INT32_MAX, false, true);
  add_int("zset-max-listpack-entries", zset_max_listpack_entries, 0, INT64_MAX, false, true);
  add_int("zset-max-ziplist-entries", zset_max_listpack_entries, 0, INT64_MAX, false, true);
  add_int("zset-max-listpack-value", zset_max_listpack_value, 0, INT64_MAX, true, true);
  add_int("zset-max-ziplist-value", zset_max_listpack_value, 0, INT64_MAX, true, true);
  add_int("hll-sparse-max-bytes", hll_sparse_max_bytes, 0, INT64_MAX, true, true);
  // Encoding thresholds: Redis declares them size_t with 0..LONG_MAX, the -value and -bytes
  // ones as memory values ("1kb"). The ziplist names are Redis 6's, kept as aliases; CONFIG GET
  // lists both names, as Redis 7.0 does.
  add_int("hash-max-listpack-entries", hash_max_listpack_entries, 0, INT64_MAX, false, true);
  add_int("hash-max-ziplist-entries", hash_max_listpack_entries, 0, INT64_MAX, false, true);
  add_int("hash-max-listpack-value", hash_max_listpack_value, 0, INT64_MAX, true, true);
  add_int("hash-max-ziplist-value", hash_max_listpack_value, 0, INT64_MAX, true, true);
  add_int("set-max-intset-entries", set_max_intset_entries, 0, INT64_MAX, false, true);
  add_int("stream-node-max-bytes", stream_node_max_bytes, 0, INT64_MAX, true, true);
  add_int("stream-node-max-entries", stream_node_max_entries, 0, INT64_MAX, false, true);
  // Replication. The yes/no settings read on the data path are mirrored into atomics.
  auto yes_no = [this](std::string name, std::string& v, std::atomic<bool>& mirror) {
    add_enum(std::move(name), v, {"yes", "no"}, true, [&mirror](const std::string& nv) {
      mirror.store(nv == "yes", std::memory_order_relaxed);
      return Status();
    });
  };
  yes_no("protected-mode", protected_mode_, protected_mode);
  for (const char* name : {"replica-read-only", "slave-read-only"}) {
    yes_no(name, replica_read_only_, replica_read_only);
  }
  for (const char* name : {"replica-serve-stale-data", "slave-serve-stale-data"}) {
    yes_no(name, replica_serve_stale_data_, replica_serve_stale_data);
  }
  for (const char* name : {"replica-priority", "slave-priority"}) {
    add_int(name, replica_priority, 0, INT32_MAX, false, true);
  }
  for (const char* name : {"replica-announce-ip", "slave-announce-ip"}) {
    add_string(name, replica_announce_ip_, true);
  }
  for (const char* name : {"replica-announce-port", "slave-announce-port"}) {
    add_int(name, replica_announce_port, 0, 65535, false, true);
  }
  add_enum("replica-announced", replica_announced_, {"yes", "no"}, true);
  for (const char* name : {"replica-lazy-flush", "slave-lazy-flush"}) {
    add_enum(name, replica_lazy_flush_, {"yes", "no"}, true);
  }
  add_string("masterauth", masterauth_, true);
  add_string("masteruser", masteruser_, true);
  for (const char* name : {"replicaof", "slaveof"}) {
    add_string(name, replicaof_, false);
  }
  add_int("repl-backlog-size", repl_backlog_size, 1, INT64_MAX, true, true);
  add_int("repl-backlog-ttl", repl_backlog_ttl, 0, INT32_MAX, false, true);
  add_int("repl-timeout", repl_timeout, 1, INT32_MAX, false, true);
  for (const char* name : {"repl-ping-replica-period", "repl-ping-slave-period"}) {
    add_int(name, repl_ping_replica_period, 1, INT32_MAX, false, true);
  }
  add_enum("repl-diskless-sync", repl_diskless_sync_, {"yes", "no"}, true);
  add_int("repl-diskless-sync-delay", repl_diskless_sync_delay, 0, INT32_MAX, false, true);
  add_int("repl-diskless-sync-max-replicas", repl_diskless_sync_max_replicas, 0, INT32_MAX,
          false, true);
  add_enum("repl-diskless-load", repl_diskless_load_, {"disabled", "on-empty-db", "swapdb"}, true);
  add_enum("repl-disable-tcp-nodelay", repl_disable_tcp_nodelay_, {"yes", "no"}, true);
  for (const char* name : {"min-replicas-to-write", "min-slaves-to-write"}) {
    add_int(name, min_replicas_to_write, 0, INT32_MAX, false, true);
  }
  for (const char* name : {"min-replicas-max-lag", "min-slaves-max-lag"}) {
    add_int(name, min_replicas_max_lag, 0, INT32_MAX, false, true);
  }
  add_string("bind", bind_, false);
  add("requirepass", Entry{[this] { return requirepass(); },
                           [this](std::string_view v) -> Status {
                             std::function<void(const std::string&)> hook;
                             {
                               std::lock_guard<std::mutex> lock(strings_mutex_);
                               requirepass_.assign(v);
                               hook = requirepass_hook_;
                             }
                             if (hook) {
                               hook(std::string(v));
                             }
                             return {};
                           },
                           true});
  add_string("aclfile", aclfile_, false);
  add_int("acllog-max-len", acllog_max_len, 0, INT32_MAX, false, true);
  add_string("logfile", logfile_, false);
  // Compatibility settings that tools such as redis-benchmark read at start-up.
  add_string("save", save_, true);
  add_int("databases", databases, 1, kMaxDatabases, false, false);
  // A running server switches the log when appendonly changes (set_appendonly_hook).
  add_enum("appendonly", appendonly_, {"yes", "no"}, true, [this](const std::string& v) -> Status {
    std::function<std::string(bool)> hook;
    {
      std::lock_guard<std::mutex> lock(strings_mutex_);
      hook = appendonly_hook_;
    }
    std::string reason = hook ? hook(v == "yes") : std::string();
    return reason.empty() ? Status() : Status::refused(std::move(reason));
  });
  add_enum("appendfsync", appendfsync_, {"always", "everysec", "no"}, true);
  add_string("dir", dir_, false);
  // SAVE/BGSAVE's file in `dir`; a name, never a path, as Redis requires.
  add("dbfilename", Entry{[this] {
                            std::lock_guard<std::mutex> lock(strings_mutex_);
                            return dbfilename_;
                          },
                          [this](std::string_view s) -> Status {
                            if (s.find('/') != std::string_view::npos) {
                              return Status::invalid_argument(
                                  "dbfilename can't be a path, just a filename");
                            }
                            std::lock_guard<std::mutex> lock(strings_mutex_);
                            dbfilename_.assign(s);
                            return {};
                          },
                          true});
  add_string("appendfilename", appendfilename_, false);
  add_string("appenddirname", appenddirname_, false);
  add_int("auto-aof-rewrite-percentage", auto_aof_rewrite_percentage, 0, INT32_MAX, false, true);
  add_int("auto-aof-rewrite-min-size", auto_aof_rewrite_min_size, 0, INT64_MAX, true, true);
  // At most ten years, so settled_at + retention can never overflow.
  add_int("inventory-hold-retention-ms", inventory_hold_retention_ms, 0,
          10LL * 365 * 24 * 3600 * 1000, false, true);
  add("loglevel", Entry{[this] { return loglevel(); },
                        [this](std::string_view v) -> Status {
                          std::string l = ascii_lower(v);
                          if (l != "debug" && l != "verbose" && l != "notice" && l != "warning" &&
                              l != "nothing") {
                            return Status::invalid_argument("argument(s) must be one of the following: debug, verbose, "
                                   "notice, warning, nothing");
                          }
                          std::function<void(const std::string&)> hook;
                          {
                            std::lock_guard<std::mutex> lock(strings_mutex_);
                            loglevel_ = l;
                            hook = loglevel_hook_;
                          }
                          if (hook) {
                            hook(l);
                          }
                          return {};
                        },
                        true});
  add("notify-keyspace-events",
      Entry{[this] { return format_notify_flags(notify_keyspace_events.load()); },
            [this](std::string_view v) -> Status {
              auto flags = parse_notify_flags(v);
              if (!flags) {
                return Status::invalid_argument("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
              }
              // Classes without K or E select no channel: nothing is published.
              notify_keyspace_events.store(*flags, std::memory_order_relaxed);
              return {};
            },
            true});
  add("client-output-buffer-limit",
      Entry{[this] {
              auto group = [](const char* cls, const std::atomic<int64_t>& h,
                              const std::atomic<int64_t>& s, const std::atomic<int64_t>& secs) {
                return std::string(cls) + " " + std::to_string(h.load()) + " " +
                       std::to_string(s.load()) + " " + std::to_string(secs.load());
              };
              return group("normal", normal_buffer_hard, normal_buffer_soft,
                           normal_buffer_soft_seconds) +
                     " " +
                     group("slave", replica_buffer_hard, replica_buffer_soft,
                           replica_buffer_soft_seconds) +
                     " " +
                     group("pubsub", pubsub_buffer_hard, pubsub_buffer_soft,
                           pubsub_buffer_soft_seconds);
            },
            [this](std::string_view v) -> Status {
              return set_output_buffer_limits(v);
            },
            true});
  // TLS: every setting but tls-port is applied through the TLS hook, once per CONFIG SET.
  auto tls_entry = [this](const char* name) { entries_.find(name)->second.tls_context = true; };
  const std::pair<const char*, std::string*> tls_strings[] = {
      {"tls-cert-file", &tls_cert_file_},
      {"tls-key-file", &tls_key_file_},
      {"tls-key-file-pass", &tls_key_file_pass_},
      {"tls-client-cert-file", &tls_client_cert_file_},
      {"tls-client-key-file", &tls_client_key_file_},
      {"tls-client-key-file-pass", &tls_client_key_file_pass_},
      {"tls-dh-params-file", &tls_dh_params_file_},
      {"tls-ca-cert-file", &tls_ca_cert_file_},
      {"tls-ca-cert-dir", &tls_ca_cert_dir_},
      {"tls-protocols", &tls_protocols_},
      {"tls-ciphers", &tls_ciphers_},
      {"tls-ciphersuites", &tls_ciphersuites_}};
  for (const auto& [name, v] : tls_strings) {
    add_string(name, *v, true);
    tls_entry(name);
  }
  add_enum("tls-auth-clients", tls_auth_clients_, {"no", "yes", "optional"}, true);
  add_enum("tls-prefer-server-ciphers", tls_prefer_server_ciphers_, {"yes", "no"}, true);
  add_enum("tls-session-caching", tls_session_caching_, {"yes", "no"}, true);
  add_enum("tls-cluster", tls_cluster_, {"yes", "no"}, true);
  add_enum("tls-replication", tls_replication_, {"yes", "no"}, true, [this](const std::string& v) {
    tls_replication.store(v == "yes", std::memory_order_relaxed);
    return Status();
  });
  add_int("tls-session-cache-size", tls_session_cache_size, 0, INT32_MAX, false, true);
  add_int("tls-session-cache-timeout", tls_session_cache_timeout, 0, INT32_MAX, false, true);
  for (const char* name : {"tls-auth-clients", "tls-prefer-server-ciphers", "tls-session-caching",
                           "tls-cluster", "tls-replication", "tls-session-cache-size",
                           "tls-session-cache-timeout"}) {
    tls_entry(name);
  }
  // What CONFIG REWRITE leaves out of the file: settings still at these values.
  for (const auto& [name, entry] : entries_) {
    defaults_[name] = entry.get();
  }
}

// "<class> <hard> <soft> <soft-seconds>" groups, as Redis takes them: all are checked before
// any is stored, so a bad group changes nothing.
Status Config::set_output_buffer_limits(std::string_view v) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && v[i] == ' ') {
      ++i;
    }
    size_t start = i;
    while (i < v.size() && v[i] != ' ') {
      ++i;
    }
    if (i > start) {
      words.emplace_back(v.substr(start, i - start));
    }
  }
  if (words.empty() || words.size() % 4 != 0) {
    return Status::invalid_argument("Wrong number of arguments in buffer limit configuration.");
  }
  struct Group {
    std::atomic<int64_t>* hard;
    std::atomic<int64_t>* soft;
    std::atomic<int64_t>* secs;
    int64_t h, s, secs_value;
  };
  std::vector<Group> groups;
  for (size_t w = 0; w < words.size(); w += 4) {
    std::string cls = ascii_lower(words[w]);
    if (cls != "normal" && cls != "slave" && cls != "replica" && cls != "pubsub") {
      return Status::invalid_argument("Invalid client class specified in buffer limit configuration.");
    }
    int64_t h = parse_memory_value(words[w + 1]);
    int64_t s = parse_memory_value(words[w + 2]);
    int64_t secs_value = -1;
    if (!words[w + 3].empty() &&
        words[w + 3].find_first_not_of("0123456789") == std::string::npos &&
        words[w + 3].size() < 10) {
      secs_value = std::stoll(words[w + 3]);
    }
    if (h < 0 || s < 0 || secs_value < 0) {
      return Status::invalid_argument("Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    if (cls == "pubsub") {
      groups.push_back({&pubsub_buffer_hard, &pubsub_buffer_soft, &pubsub_buffer_soft_seconds,
                        h, s, secs_value});
    } else if (cls == "normal") {
      groups.push_back({&normal_buffer_hard, &normal_buffer_soft, &normal_buffer_soft_seconds,
                        h, s, secs_value});
    } else {
      groups.push_back({&replica_buffer_hard, &replica_buffer_soft,
                        &replica_buffer_soft_seconds, h, s, secs_value});
    }
  }
  for (const Group& g : groups) {
    g.hard->store(g.h);
    g.soft->store(g.s);
    g.secs->store(g.secs_value);
  }
  return {};
}

void Config::add(std::string name, Entry e) { entries_.emplace(std::move(name), std::move(e)); }

void Config::add_int(std::string name, std::atomic<int64_t>& v, int64_t min, int64_t max,
                     bool memory, bool mutable_at_runtime) {
  add(std::move(name),
      Entry{[&v] { return std::to_string(v.load(std::memory_order_relaxed)); },
            [&v, min, max, memory](std::string_view s) -> Status {
              int64_t n = 0;
              if (memory) {
                n = parse_memory_value(s);
                if (n < 0) {
                  return Status::invalid_argument("argument must be a memory value");
                }
              } else {
                auto parsed = parse_int64(s);
                if (!parsed) {
                  return Status::invalid_argument("argument couldn't be parsed into an integer");
                }
                n = *parsed;
              }
              if (n < min || n > max) {
                return Status::invalid_argument("argument must be between " + std::to_string(min) + " and " +
                       std::to_string(max) + " inclusive");
              }
              v.store(n, std::memory_order_relaxed);
              return {};
            },
            mutable_at_runtime});
}

void Config::add_string(std::string name, std::string& v, bool mutable_at_runtime) {
  add(std::move(name), Entry{[this, &v] {
                               std::lock_guard<std::mutex> lock(strings_mutex_);
                               return v;
                             },
                             [this, &v](std::string_view s) -> Status {
                               std::lock_guard<std::mutex> lock(strings_mutex_);
                               v.assign(s);
                               return {};
                             },
                             mutable_at_runtime});
}

void Config::add_enum(std::string name, std::string& v, std::vector<std::string> allowed,
                      bool mutable_at_runtime, ChangeHook before_change) {
  add(std::move(name),
      Entry{[this, &v] {
              std::lock_guard<std::mutex> lock(strings_mutex_);
              return v;
            },
            [this, &v, allowed, before_change](std::string_view s) -> Status {
              std::string l = ascii_lower(s);
              if (std::find(allowed.begin(), allowed.end(), l) == allowed.end()) {
                // Redis's booleans word their refusal differently from its enums.
                if (allowed == std::vector<std::string>{"yes", "no"}) {
                  return Status::invalid_argument("argument must be 'yes' or 'no'");
                }
                std::string list;
                for (const auto& a : allowed) {
                  list += (list.empty() ? "" : ", ") + a;
                }
                return Status::invalid_argument("argument(s) must be one of the following: " + list);
              }
              if (before_change) {
                {
                  std::lock_guard<std::mutex> lock(strings_mutex_);
                  if (v == l) {
                    return {};
                  }
                }
                // Outside the lock: the hook may read settings itself.
                if (Status st = before_change(l); !st.is_ok()) {
                  return st;
                }
              }
              std::lock_guard<std::mutex> lock(strings_mutex_);
              v = l;
              return {};
            },
            mutable_at_runtime});
}

std::string Config::get_string(std::string_view name) const {
  auto it = entries_.find(ascii_lower(name));
  return it == entries_.end() ? std::string() : it->second.get();
}

std::vector<double> Config::latency_percentiles() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return latency_percentiles_;
}

std::string Config::bind() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return bind_;
}
uint64_t Config::client_memory_limit() const {
  const int64_t v = maxmemory_clients.load(std::memory_order_relaxed);
  if (v <= 0) {
    return 0;
  }
  if (!maxmemory_clients_percent.load(std::memory_order_relaxed)) {
    return static_cast<uint64_t>(v);
  }
  const auto max = static_cast<uint64_t>(maxmemory.load(std::memory_order_relaxed));
  return max / 100 * static_cast<uint64_t>(v) + max % 100 * static_cast<uint64_t>(v) / 100;
}

std::string Config::requirepass() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return requirepass_;
}
std::string Config::loglevel() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return loglevel_;
}
std::string Config::logfile() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return logfile_;
}
std::string Config::config_file() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return config_file_;
}
void Config::set_config_file(std::string path) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  config_file_ = std::move(path);
}
void Config::set_appendonly_hook(std::function<std::string(bool)> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  appendonly_hook_ = std::move(hook);
}

void Config::set_port_hook(std::function<std::string(int64_t)> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  port_hook_ = std::move(hook);
}

void Config::set_tls_port_hook(std::function<std::string(int64_t)> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  tls_port_hook_ = std::move(hook);
}

void Config::set_tls_hook(std::function<std::string()> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  tls_hook_ = std::move(hook);
}

Status Config::apply_tls(const std::vector<std::string>& names) {
  bool touched = std::any_of(names.begin(), names.end(), [this](const std::string& n) {
    auto it = entries_.find(n);
    return it != entries_.end() && it->second.tls_context;
  });
  if (!touched) {
    return {};
  }
  std::function<std::string()> hook;
  {
    std::lock_guard<std::mutex> lock(strings_mutex_);
    hook = tls_hook_;
  }
  if (hook) {
    if (std::string reason = hook(); !reason.empty()) {
      return Status::refused(std::move(reason));
    }
  }
  return {};
}

void Config::set_requirepass_hook(std::function<void(const std::string&)> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  requirepass_hook_ = std::move(hook);
}

std::vector<std::string> Config::user_lines() const {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  return user_lines_;
}

void Config::set_loglevel_hook(std::function<void(const std::string&)> hook) {
  std::lock_guard<std::mutex> lock(strings_mutex_);
  loglevel_hook_ = std::move(hook);
}

Status Config::set(std::string_view name, std::string_view value, bool at_startup) {
  auto it = entries_.find(ascii_lower(name));
  if (it == entries_.end()) {
    return Status::not_found("unknown option");
  }
  if (!at_startup && !it->second.mutable_at_runtime) {
    return Status::refused("can't set immutable config");
  }
  if (at_startup || !it->second.tls_context) {
    return it->second.set(value);
  }
  std::string before = it->second.get();
  if (Status st = it->second.set(value); !st.is_ok()) {
    return st;
  }
  if (Status st = apply_tls({it->first}); !st.is_ok()) {
    (void)it->second.set(before);
    return st;
  }
  return {};
}

Status Config::set_many(std::span<const std::pair<std::string_view, std::string_view>> pairs,
                        std::string& failed) {
  std::vector<std::string> names;
  for (const auto& [name, value] : pairs) {
    std::string l = ascii_lower(name);
    failed = std::string(name);
    auto it = entries_.find(l);
    if (it == entries_.end()) {
      return Status::not_found("unknown option");
    }
    if (std::find(names.begin(), names.end(), l) != names.end()) {
      return Status::invalid_argument("duplicate parameter");
    }
    // An immutable setting given the value it has changes nothing, so it is no error: a
    // client may write back everything CONFIG GET * showed.
    if (!it->second.mutable_at_runtime && it->second.get() != value) {
      return Status::refused("can't set immutable config");
    }
    names.push_back(std::move(l));
  }
  std::vector<std::pair<const Entry*, std::string>> done;  // what to restore on failure
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Entry& e = entries_.find(names[i])->second;
    if (!e.mutable_at_runtime) {
      continue;  // unchanged (checked above)
    }
    std::string before = e.get();
    if (Status st = e.set(pairs[i].second); !st.is_ok()) {
      failed = std::string(pairs[i].first);
      // Back in reverse order, so a setting named twice through aliases ends as it was.
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        (void)it->first->set(it->second);
      }
      return st;
    }
    done.emplace_back(&e, std::move(before));
  }
  // The TLS settings are applied together, once, as Redis applies a group of settings after
  // all of them are set (a certificate and its key change in one CONFIG SET).
  if (Status st = apply_tls(names); !st.is_ok()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (entries_.find(names[i])->second.tls_context) {
        failed = std::string(pairs[i].first);
        break;
      }
    }
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      (void)it->first->set(it->second);
    }
    return st;
  }
  return {};
}

bool Config::exists(std::string_view name) const { return entries_.count(ascii_lower(name)) > 0; }

std::vector<std::pair<std::string, std::string>> Config::get_matching(
    std::string_view pattern) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, entry] : entries_) {
    if (!entry.hidden && glob_match(pattern, name, true)) {
      out.emplace_back(name, entry.get());
    }
  }
  return out;
}

bool Config::mutable_at_runtime(std::string_view name) const {
  auto it = entries_.find(name);
  return it != entries_.end() && it->second.mutable_at_runtime;
}

std::vector<std::string> Config::names() const {
  std::vector<std::string> out;
  for (const auto& kv : entries_) {
    out.push_back(kv.first);
  }
  return out;
}

Status Config::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::not_found(path + ": cannot open file");
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    std::string where = path + ":" + std::to_string(lineno);
    std::vector<std::string> words;
    if (!split_config_line(line, words)) {
      return Status::invalid_argument(where + ": unbalanced quotes");
    }
    if (words.empty() || words[0][0] == '#') {
      continue;
    }
    if (words.size() < 2) {
      return Status::invalid_argument(where + ": expected 'name value'");
    }
    if (ascii_lower(words[0]) == "user") {
      // An ACL user, loaded once the server starts (commands/acl_store.hpp).
      std::string rule_line = "user";
      for (size_t i = 1; i < words.size(); ++i) {
        rule_line += ' ';
        rule_line += words[i];
      }
      std::lock_guard<std::mutex> lock(strings_mutex_);
      user_lines_.push_back(std::move(rule_line));
      continue;
    }
    // Settings of several words ("replicaof host port", "save 900 1") take them all, as one
    // space-separated value.
    std::string value = words[1];
    for (size_t i = 2; i < words.size(); ++i) {
      value += ' ';
      value += words[i];
    }
    if (Status st = set(words[0], value, true); !st.is_ok()) {
      return st.with_context(where + ": '" + words[0] + "'");
    }
  }
  set_config_file(path);
  return {};
}

namespace {

// The names Redis keeps for compatibility beside a newer one (slave-read-only beside
// replica-read-only, hash-max-ziplist-entries beside hash-max-listpack-entries): CONFIG
// REWRITE writes only the newer name.
bool is_old_alias(const Config& c, const std::string& name) {
  auto renamed = [&](std::string_view from, std::string_view to) {
    size_t at = name.find(from);
    if (at == std::string::npos) {
      return false;
    }
    std::string modern = name;
    modern.replace(at, from.size(), to);
    return c.exists(modern);
  };
  return renamed("slave", "replica") || renamed("ziplist", "listpack") ||
         name == "lua-time-limit";
}

// A value as a config file line needs it: plain words, or double-quoted when empty or when it
// holds characters the reader would take for quoting.
std::string config_file_value(const std::string& v) {
  bool plain = !v.empty() && v.find_first_of("\"'\\#") == std::string::npos;
  if (plain) {
    return v;
  }
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
    }
    out.push_back(ch);
  }
  out.push_back('"');
  return out;
}

}  // namespace

Status Config::rewrite_file() const {
  std::string path = config_file();
  if (path.empty()) {
    return Status::refused("The server is running without a config file");
  }
  std::vector<std::string> out;
  std::set<std::string, std::less<>> written;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> words;
      if (!split_config_line(line, words) || words.empty() || words[0][0] == '#') {
        out.push_back(line);  // comments and blank lines stay where they are
        continue;
      }
      std::string name = ascii_lower(words[0]);
      auto it = entries_.find(name);
      if (it == entries_.end()) {
        out.push_back(line);
        continue;
      }
      if (!written.insert(name).second) {
        continue;  // a repeated setting: the first line carries the current value
      }
      std::string value = it->second.get();
      if (value.empty() && (name == "replicaof" || name == "slaveof")) {
        continue;  // a master's file names no master (Redis drops the line)
      }
      out.push_back(name + " " + config_file_value(value));
    }
  }
  bool marked = false;
  for (const auto& [name, entry] : entries_) {
    if (written.count(name) > 0 || is_old_alias(*this, name)) {
      continue;
    }
    std::string value = entry.get();
    auto def = defaults_.find(name);
    if (def != defaults_.end() && def->second == value) {
      continue;
    }
    if (!marked) {
      out.push_back("# Generated by CONFIG REWRITE");
      marked = true;
    }
    out.push_back(name + " " + config_file_value(value));
  }
  std::string text;
  for (const std::string& l : out) {
    text += l;
    text += '\n';
  }
  return write_file_atomically(path, text);
}

}  // namespace hotkv
