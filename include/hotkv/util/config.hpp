// The server's configuration registry: every setting with its name as Redis spells it, its
// current value, and whether CONFIG SET may change it at runtime. Values read on the data path
// are atomics so any thread may read them without a lock; string values sit behind a mutex
// and are only read on slow paths (AUTH, CONFIG GET, start-up).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hotkv/util/status.hpp"

namespace hotkv {

class Config {
 public:
  Config();
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;

  // Data-path settings (any thread, relaxed reads).
  std::atomic<int64_t> port{6379};
  std::atomic<int64_t> threads{0};  // 0 = number of cores, resolved at start-up
  std::atomic<int64_t> maxclients{10000};
  std::atomic<int64_t> timeout{0};  // seconds; 0 = never close idle clients
  // A script running longer than this (ms) makes other clients get -BUSY and becomes
  // killable with SCRIPT KILL (0 = never). lua-time-limit is its old name.
  std::atomic<int64_t> busy_reply_threshold{5000};
  // The latency monitor records events (a command, an expiry round) that took at least this
  // many milliseconds; 0 turns it off (util/latency_monitor.hpp).
  std::atomic<int64_t> latency_monitor_threshold{0};
  // SLOWLOG: commands that ran at least this many microseconds are logged (negative: none,
  // 0: every command); the log keeps the newest slowlog-max-len (util/slow_log.hpp).
  std::atomic<int64_t> slowlog_log_slower_than{10000};
  std::atomic<int64_t> slowlog_max_len{128};
  // latency-tracking: whether each call is added to its command's latency histogram (LATENCY
  // HISTOGRAM, INFO latencystats).
  std::atomic<bool> latency_tracking{true};
  std::atomic<int64_t> tcp_keepalive{300};
  // Memory limit in bytes (0: none) and what happens past it (docs/operations.md, "Memory"):
  // maxmemory_policy mirrors the maxmemory-policy text as an EvictionPolicy value for the data
  // path; maxmemory-samples keys are sampled per eviction pick, and maxmemory-eviction-tenacity
  // bounds how long one command may spend evicting.
  std::atomic<int64_t> maxmemory{0};
  std::atomic<int> maxmemory_policy{7};  // EvictionPolicy::kNoEviction
  std::atomic<int64_t> maxmemory_samples{5};
  std::atomic<int64_t> maxmemory_eviction_tenacity{10};
  // maxmemory-clients as bytes or, when maxmemory_clients_percent is set, as a percentage of
  // maxmemory (client_memory_limit() gives the bytes).
  std::atomic<int64_t> maxmemory_clients{0};
  std::atomic<bool> maxmemory_clients_percent{false};
  // Redis's testing delay per key loaded (µs), a hidden setting: CONFIG GET shows it only
  // when named. Accepted and reported; loading does not sleep.
  std::atomic<int64_t> key_load_delay{0};
  std::atomic<int64_t> auto_aof_rewrite_percentage{100};
  std::atomic<int64_t> auto_aof_rewrite_min_size{64LL * 1024 * 1024};
  std::atomic<int64_t> proto_max_bulk_len{512LL * 1024 * 1024};
  std::atomic<int64_t> max_inline_len{64 * 1024};
  std::atomic<int64_t> client_query_buffer_limit{1024LL * 1024 * 1024};
  std::atomic<uint32_t> notify_keyspace_events{0};  // NotifyFlag bits (util/notify.hpp)
  // Client-side caching: tracked keys (all shards) beyond which keys are forgotten
  // and their clients told, as if the keys changed (0 = no limit).
  std::atomic<int64_t> tracking_table_max_keys{1000000};
  // client-output-buffer-limit, per class: a client whose unsent output passes `hard`, or
  // stays above `soft` for `soft_seconds`, is disconnected (0 = no such limit). Redis's
  // defaults: none for normal clients, 256mb/64mb/60 for replicas, 32mb/8mb/60 for pubsub.
  std::atomic<int64_t> normal_buffer_hard{0};
  std::atomic<int64_t> normal_buffer_soft{0};
  std::atomic<int64_t> normal_buffer_soft_seconds{0};
  std::atomic<int64_t> replica_buffer_hard{256LL * 1024 * 1024};
  std::atomic<int64_t> replica_buffer_soft{64LL * 1024 * 1024};
  std::atomic<int64_t> replica_buffer_soft_seconds{60};
  std::atomic<int64_t> pubsub_buffer_hard{32LL * 1024 * 1024};
  std::atomic<int64_t> pubsub_buffer_soft{8LL * 1024 * 1024};
  std::atomic<int64_t> pubsub_buffer_soft_seconds{60};
  // How long a settled inventory hold (committed, released, expired) stays answerable, so a
  // late payment webhook hears "expired" rather than "no such hold" (docs/inventory.md).
  std::atomic<int64_t> inventory_hold_retention_ms{600000};
  // List node size (list-max-listpack-size, alias list-max-ziplist-size): N > 0 entries per
  // node, -1..-5 for 4..64 KB per node. New lists take it; existing ones keep theirs.
  std::atomic<int64_t> list_max_listpack_size{-2};
  // Interior list nodes beyond this many from each end are LZF-compressed (0: none). New
  // lists take it, replayed ones included; existing ones keep theirs (docs/lists.md).
  std::atomic<int64_t> list_compress_depth{0};
  // Replication (docs/replication.md): Redis's names, defaults and ranges. replica-* names
  // also answer to their older slave-* spelling.
  std::atomic<bool> replica_read_only{true};
  // protected-mode: with no password for the default user, clients from outside the loopback
  // interface are refused at connect (-DENIED).
  std::atomic<bool> protected_mode{true};
  std::atomic<bool> replica_serve_stale_data{true};
  std::atomic<int64_t> replica_priority{100};
  std::atomic<int64_t> replica_announce_port{0};
  std::atomic<int64_t> repl_backlog_size{1024 * 1024};
  std::atomic<int64_t> repl_backlog_ttl{3600};
  std::atomic<int64_t> repl_timeout{60};
  std::atomic<int64_t> repl_ping_replica_period{10};
  std::atomic<int64_t> repl_diskless_sync_delay{5};
  std::atomic<int64_t> repl_diskless_sync_max_replicas{0};
  // A master with fewer than min-replicas-to-write replicas acknowledging within
  // min-replicas-max-lag seconds refuses writes (-NOREPLICAS); 0 turns it off.
  std::atomic<int64_t> min_replicas_to_write{0};
  std::atomic<int64_t> min_replicas_max_lag{10};
  // Databases (SELECT 0..databases-1), fixed at start-up. Every shard keeps one keyspace per
  // database, empty ones included (about 22 KB each: their timing wheels), hence the cap.
  std::atomic<int64_t> databases{16};
  static constexpr int64_t kMaxDatabases = 1024;
  // Sorted sets (zset-max-listpack-entries / -value, aliases zset-max-ziplist-*): the sizes up
  // to which a new zset reports, and behaves as, Redis's listpack encoding (types/zset.hpp).
  std::atomic<int64_t> zset_max_listpack_entries{128};
  std::atomic<int64_t> zset_max_listpack_value{64};
  // A sparse HyperLogLog that would grow past this many bytes (header included) turns dense.
  std::atomic<int64_t> hll_sparse_max_bytes{3000};
  // Encoding thresholds of hashes and sets (types/encoding_limits.hpp): they decide when a
  // value leaves its compact encoding, at its next write, as in Redis. The defaults are those
  // of the redis.conf Redis ships (redis-server without a config file compiles in 512 for
  // hash-max-listpack-entries).
  std::atomic<int64_t> hash_max_listpack_entries{128};
  std::atomic<int64_t> hash_max_listpack_value{64};
  std::atomic<int64_t> set_max_intset_entries{512};
  // Accepted and reported: streams are not kept in radix-tree nodes (docs/streams.md).
  std::atomic<int64_t> stream_node_max_bytes{4096};
  std::atomic<int64_t> stream_node_max_entries{100};
  // TLS (docs/operations.md, "TLS"): the port TLS clients connect to (0 = none), whether a
  // replica's link to its master uses TLS, and the server-side session cache. The other tls-*
  // settings are strings, read when a TLS context is built (net/tls_context.hpp).
  std::atomic<int64_t> tls_port{0};
  std::atomic<bool> tls_replication{false};
  std::atomic<int64_t> tls_session_cache_size{20480};
  std::atomic<int64_t> tls_session_cache_timeout{300};

  std::string bind() const;
  std::string requirepass() const;
  // The bytes all clients together may hold (maxmemory-clients; 0: no limit). A percentage
  // of an unlimited maxmemory is no limit, as in Redis.
  uint64_t client_memory_limit() const;
  // ACL LOG keeps at most this many entries.
  std::atomic<int64_t> acllog_max_len{128};
  // `user <name> <rules...>` lines of the config file, in order (ACL users defined there).
  std::vector<std::string> user_lines() const;
  std::string loglevel() const;
  std::string logfile() const;
  std::string config_file() const;
  // Any setting's current value as text (empty if unknown).
  std::string get_string(std::string_view name) const;
  // latency-tracking-info-percentiles: the percentiles INFO latencystats reports.
  std::vector<double> latency_percentiles() const;
  void set_config_file(std::string path);
  // CONFIG REWRITE: the config file gets every setting's current value. Its comments, order
  // and unknown lines stay; a setting it names is updated in place (a repeated one keeps its
  // first line), and settings that differ from their defaults are appended. Written to a
  // temporary file, synced and renamed over the old one.
  Status rewrite_file() const;

  // Sets a value by its Redis name. `at_startup` allows immutable settings (from flags and the
  // config file). Fails with kNotFound (no such setting), kRefused (immutable at runtime, or
  // the appendonly hook said no) or kInvalidArgument (a bad value); the message is the reason
  // text Redis uses after "CONFIG SET failed (possibly related to argument '<name>') - ".
  Status set(std::string_view name, std::string_view value, bool at_startup);
  // CONFIG SET name value [name value ...]: all or nothing. A repeated name, an unknown or
  // immutable one, or a value refused (by its check or by what applies it, such as port's
  // listener) changes nothing: the settings already changed get their old values back.
  // On failure `failed` is the name of the pair that failed (for the error text).
  Status set_many(std::span<const std::pair<std::string_view, std::string_view>> pairs,
                  std::string& failed);
  bool exists(std::string_view name) const;
  // Whether CONFIG SET may change the setting (false for unknown names).
  bool mutable_at_runtime(std::string_view name) const;
  // Name/value pairs of every setting whose name matches the glob (case-insensitive). Hidden
  // settings (key-load-delay) are left out; asked for by their exact name they are found.
  std::vector<std::pair<std::string, std::string>> get_matching(std::string_view pattern) const;
  std::vector<std::string> names() const;

  // Parses a redis.conf-style file: `name value` per line, '#' comments, quoted values.
  // Fails with kNotFound (cannot open it), or with the message "<file>:<line>: <reason>".
  Status load_file(const std::string& path);

  // Called after requirepass changes (the default user's password follows it).
  void set_requirepass_hook(std::function<void(const std::string&)> hook);
  // Called after loglevel changes so the logger can follow.
  void set_loglevel_hook(std::function<void(const std::string&)> hook);
  // Called by CONFIG SET appendonly when the value changes; returns "" to accept it or the
  // reason for refusing. Without a hook (start-up: flags, config file) the value just changes.
  void set_appendonly_hook(std::function<std::string(bool on)> hook);
  // Called by CONFIG SET port with a new port; returns "" once the server listens there, or
  // the reason it cannot. Without a hook (start-up) the value just changes.
  void set_port_hook(std::function<std::string(int64_t port)> hook);
  // Called by CONFIG SET tls-port like the port hook.
  void set_tls_port_hook(std::function<std::string(int64_t port)> hook);
  // Called once by CONFIG SET after it set any of the TLS context's settings (tls-cert-file,
  // tls-protocols, ...), even to the values they had, as Redis reloads the certificates then;
  // returns "" once new connections use the new configuration, or why it cannot be built
  // (every setting of the CONFIG SET then gets its old value back).
  void set_tls_hook(std::function<std::string()> hook);

 private:
  struct Entry {
    std::function<std::string()> get;
    std::function<Status(std::string_view)> set;
    bool mutable_at_runtime;
    bool hidden = false;
    bool tls_context = false;  // applied through the TLS hook (set_tls_hook)
  };
  // Runs the TLS hook after `names` were set; ok if none of them is a TLS context setting.
  Status apply_tls(const std::vector<std::string>& names);
  void add(std::string name, Entry e);
  Status set_output_buffer_limits(std::string_view v);
  void add_int(std::string name, std::atomic<int64_t>& v, int64_t min, int64_t max, bool memory,
               bool mutable_at_runtime);
  void add_string(std::string name, std::string& v, bool mutable_at_runtime);
  // Called with a new, valid value that differs from the current one, before it is stored;
  // returns ok to accept it or why it is refused.
  using ChangeHook = std::function<Status(const std::string&)>;
  void add_enum(std::string name, std::string& v, std::vector<std::string> allowed,
                bool mutable_at_runtime, ChangeHook before_change = {});

  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::string, std::less<>> defaults_;
  mutable std::mutex strings_mutex_;
  std::string replica_read_only_ = "yes";
  std::string protected_mode_ = "yes";
  std::string replica_serve_stale_data_ = "yes";
  std::string replica_announce_ip_;
  std::string replica_announced_ = "yes";
  std::string replica_lazy_flush_ = "no";
  std::string masterauth_;
  std::string masteruser_;
  std::string replicaof_;  // "host port", read from the config file at start-up only
  std::string repl_diskless_sync_ = "yes";
  std::string repl_diskless_load_ = "disabled";
  std::string repl_disable_tcp_nodelay_ = "no";
  std::string bind_ = "127.0.0.1";
  std::string requirepass_;
  std::string loglevel_ = "notice";
  std::string logfile_;
  std::string config_file_;
  std::string save_;
  std::string appendonly_ = "no";
  std::string maxmemory_policy_ = "noeviction";
  std::string latency_tracking_ = "yes";
  std::vector<double> latency_percentiles_{50, 99, 99.9};
  std::string appendfsync_ = "everysec";
  std::string dir_ = ".";
  std::string dbfilename_ = "dump.rdb";
  std::string appendfilename_ = "appendonly.aof";
  std::string appenddirname_ = "appendonlydir";
  std::function<void(const std::string&)> loglevel_hook_;
  std::function<void(const std::string&)> requirepass_hook_;
  std::string aclfile_;
  std::vector<std::string> user_lines_;
  std::function<std::string(bool)> appendonly_hook_;
  std::function<std::string(int64_t)> port_hook_;
  std::function<std::string(int64_t)> tls_port_hook_;
  std::function<std::string()> tls_hook_;
  std::string tls_cert_file_;
  std::string tls_key_file_;
  std::string tls_key_file_pass_;
  std::string tls_client_cert_file_;
  std::string tls_client_key_file_;
  std::string tls_client_key_file_pass_;
  std::string tls_dh_params_file_;
  std::string tls_ca_cert_file_;
  std::string tls_ca_cert_dir_;
  std::string tls_auth_clients_ = "yes";
  std::string tls_protocols_;
  std::string tls_ciphers_;
  std::string tls_ciphersuites_;
  std::string tls_prefer_server_ciphers_ = "no";
  std::string tls_session_caching_ = "yes";
  std::string tls_replication_ = "no";
  std::string tls_cluster_ = "no";
  std::string daemonize_ = "no";
};

// Parses Redis memory units: "512mb", "1gb", "100k" (k=1000, kb=1024, ...). -1 if invalid.
int64_t parse_memory_value(std::string_view s);

}  // namespace hotkv
