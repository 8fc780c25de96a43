// The meaning of every setting (see config_help.hpp). Keep each line to what the setting does
// in HotKV, including where it is accepted only for compatibility and changes nothing.
#include "hotkv/util/config_help.hpp"

#include <algorithm>

#include "hotkv/util/config.hpp"

namespace hotkv {
namespace {

// In name order (settings_help() hands it out as is; a unit test checks the order).
constexpr SettingHelp kSettings[] = {
    {"aclfile", "",
     "file of ACL users (`user <name> <rules...>` lines) loaded at start-up and by ACL LOAD, "
     "written by ACL SAVE; a config file with `user` lines and an aclfile does not start",
     ""},
    {"acllog-max-len", "", "the most entries ACL LOG keeps (refused commands, keys, channels "
     "and logins)", ""},
    {"appenddirname", "", "the log directory inside `dir`", ""},
    {"appendfilename", "", "prefix of the log's manifest and file names", ""},
    {"appendfsync", "",
     "`always`: acknowledge a write only after its group of records is synced to disk; "
     "`everysec`: sync once a second; `no`: leave syncing to the kernel",
     ""},
    {"appendonly", "",
     "log every write's effect under `dir` and replay it at start-up; turned on at run time it "
     "first writes a base of the data set",
     ""},
    {"auto-aof-rewrite-min-size", "",
     "the log is compacted only once it is at least this big (bytes; 64mb)", ""},
    {"auto-aof-rewrite-percentage", "",
     "compact the log when it grew this many percent since the last compaction (0 = never)",
     ""},
    {"bind", "", "the address to listen on", ""},
    {"busy-reply-threshold", "",
     "ms after which a running script makes other clients get -BUSY and can be stopped with "
     "SCRIPT KILL or FUNCTION KILL (0 = never)",
     ""},
    {"client-output-buffer-limit", "",
     "`<class> <hard> <soft> <soft-seconds>` groups (normal, replica, pubsub; 0 = no limit): "
     "a client whose unsent output passes the hard limit, or stays over the soft one that "
     "long, is disconnected (a replica's soft limit is accepted and not enforced)",
     ""},
    {"client-query-buffer-limit", "", "the most unparsed input one client may hold (bytes)", ""},
    {"daemonize", "", "reported as no; HotKV does not daemonize itself (run it under a supervisor)",
     ""},
    {"databases", "",
     "databases SELECT can reach (1..1024; each costs about 22 KB per thread while empty)", ""},
    {"dbfilename", "", "the RDB file SAVE and BGSAVE write in `dir`, loaded at start-up when "
                       "`appendonly` is no", ""},
    {"dir", "", "where the log directory and the RDB file live", ""},
    {"hash-max-listpack-entries", "",
     "a hash with more fields leaves its compact encoding at its next write", ""},
    {"hash-max-listpack-value", "",
     "a hash with a longer field or value leaves its compact encoding at its next write", ""},
    {"hash-max-ziplist-entries", "hash-max-listpack-entries", "", ""},
    {"hash-max-ziplist-value", "hash-max-listpack-value", "", ""},
    {"hll-sparse-max-bytes", "",
     "a sparse HyperLogLog that would grow past this many bytes turns dense", ""},
    {"inventory-hold-retention-ms", "",
     "how long a settled inventory hold (committed, released, expired) stays answerable, so a "
     "late payment hears what became of it",
     ""},
    {"key-load-delay", "", "accepted and reported, and hidden from CONFIG GET *; changes nothing",
     ""},
    {"latency-monitor-threshold", "",
     "the latency monitor records commands and expiry rounds that took at least this many ms "
     "(0 = off; LATENCY LATEST)",
     ""},
    {"latency-tracking", "",
     "time every call into its command's latency histogram (LATENCY HISTOGRAM, INFO "
     "latencystats)",
     ""},
    {"latency-tracking-info-percentiles", "",
     "the percentiles INFO latencystats reports per command", ""},
    {"lfu-decay-time", "",
     "minutes after which an LFU access counter is halved once (0 = never decays)", ""},
    {"lfu-log-factor", "", "how slowly an LFU access counter grows with accesses", ""},
    {"list-compress-depth", "",
     "N > 0 keeps N nodes at each end of a list plain and compresses those between; new lists "
     "take it",
     ""},
    {"list-max-listpack-size", "",
     "list node size: N > 0 entries, or -1..-5 for 4 to 64 KB per node; new lists take it", ""},
    {"list-max-ziplist-size", "list-max-listpack-size", "", ""},
    {"logfile", "", "the log file (empty: standard error)", ""},
    {"loglevel", "", "debug, verbose, notice, warning or nothing", ""},
    {"lua-time-limit", "busy-reply-threshold", "", ""},
    {"masterauth", "", "password a replica gives its master", ""},
    {"masteruser", "", "user name a replica gives its master (with masterauth)", ""},
    {"maxclients", "",
     "further connections are refused with `-ERR max number of clients reached`", ""},
    {"maxmemory", "",
     "the memory limit (`64mb`, `1gb`; 0 = none): over it, writes flagged denyoom get -OOM "
     "unless the policy can evict (docs/operations.md, Memory)",
     ""},
    {"maxmemory-clients", "",
     "what all clients together may hold in buffers (bytes, or a percentage of maxmemory such "
     "as 10%; 0: no limit); past it the clients holding the most are disconnected",
     ""},
    {"maxmemory-eviction-tenacity", "",
     "how long one command may spend evicting (0..100: 500 µs at 10, +15% a step, no limit at "
     "100); the rest continues between commands",
     ""},
    {"maxmemory-policy", "",
     "what goes over the limit: noeviction, allkeys-lru, volatile-lru, allkeys-lfu, "
     "volatile-lfu, allkeys-random, volatile-random, volatile-ttl; inventory items, holds and "
     "rate limiters are never evicted",
     ""},
    {"maxmemory-samples", "",
     "keys sampled per database for each eviction pick (1..64; more is closer to true LRU/LFU, "
     "and slower)",
     ""},
    {"min-replicas-max-lag", "",
     "seconds within which a replica must have acknowledged to count for "
     "min-replicas-to-write",
     ""},
    {"min-replicas-to-write", "",
     "a master with fewer good replicas refuses writes with -NOREPLICAS (0 = off)", ""},
    {"min-slaves-max-lag", "min-replicas-max-lag", "", ""},
    {"min-slaves-to-write", "min-replicas-to-write", "", ""},
    {"notify-keyspace-events", "",
     "keyspace notifications to publish, in Redis's letters (`KEA`, `Ex`, ...); empty = none",
     ""},
    {"port", "",
     "the TCP port to listen on (0 picks a free one); CONFIG SET moves the listener, or "
     "changes nothing if the new port cannot be had",
     ""},
    {"protected-mode", "",
     "while the default user has no password, only clients on the loopback interface are "
     "served; others get -DENIED at connect",
     ""},
    {"proto-max-bulk-len", "", "the largest bulk string a client may send (bytes)", ""},
    {"repl-backlog-size", "",
     "bytes of the replication stream kept so a replica that lost its link can continue", ""},
    {"repl-backlog-ttl", "",
     "seconds without replicas after which the backlog is freed; accepted and reported", ""},
    {"repl-disable-tcp-nodelay", "", "accepted and reported; changes nothing", ""},
    {"repl-diskless-load", "",
     "accepted and reported; a replica always loads the image from memory", ""},
    {"repl-diskless-sync", "",
     "a master streams its image to a replica without a file (`no`: writes the RDB first)", ""},
    {"repl-diskless-sync-delay", "", "accepted and reported; a sync starts at once", ""},
    {"repl-diskless-sync-max-replicas", "", "accepted and reported; changes nothing", ""},
    {"repl-ping-replica-period", "", "seconds between a master's PINGs to its replicas", ""},
    {"repl-ping-slave-period", "repl-ping-replica-period", "", ""},
    {"repl-timeout", "",
     "seconds of silence after which a master drops a replica and a replica its master", ""},
    {"replica-announce-ip", "", "the address a replica reports to its master", ""},
    {"replica-announce-port", "", "the port a replica reports to its master (0 = its own)", ""},
    {"replica-announced", "", "whether INFO replication says this replica may be promoted",
     ""},
    {"replica-lazy-flush", "", "accepted and reported; changes nothing", ""},
    {"replica-priority", "", "reported to sentinels: lower is promoted first, 0 never", ""},
    {"replica-read-only", "", "a replica refuses writes from clients with -READONLY", ""},
    {"replica-serve-stale-data", "",
     "a replica without its master still answers reads (`no`: -MASTERDOWN)", ""},
    {"replicaof", "",
     "`host port` of the master to follow at start-up (REPLICAOF changes it at run time)", ""},
    {"requirepass", "",
     "password of the `default` user (ACL: it replaces default's passwords; empty makes it "
     "nopass); a connection not logged in gets -NOAUTH for every command but AUTH and HELLO",
     ""},
    {"save", "", "accepted and reported for tools that read it; snapshots are taken on request "
                 "(SAVE, BGSAVE)", ""},
    {"set-max-intset-entries", "",
     "a set of integers with more members leaves its compact encoding", ""},
    {"slave-announce-ip", "replica-announce-ip", "", ""},
    {"slave-announce-port", "replica-announce-port", "", ""},
    {"slave-lazy-flush", "replica-lazy-flush", "", ""},
    {"slave-priority", "replica-priority", "", ""},
    {"slave-read-only", "replica-read-only", "", ""},
    {"slave-serve-stale-data", "replica-serve-stale-data", "", ""},
    {"slaveof", "replicaof", "", ""},
    {"slowlog-log-slower-than", "",
     "SLOWLOG records commands that ran at least this many microseconds (negative: none; 0: "
     "every command)",
     ""},
    {"slowlog-max-len", "", "the slow log keeps this many of the newest entries, server-wide", ""},
    {"stream-node-max-bytes", "",
     "accepted and reported; streams are not stored in nodes", ""},
    {"stream-node-max-entries", "",
     "accepted and reported; streams are not stored in nodes", ""},
    {"tcp-keepalive", "", "TCP keepalive interval in seconds (0 = off)", ""},
    {"threads", "",
     "worker threads, each owning a shard of the keyspace; 1 behaves like single-threaded Redis",
     "0 (the number of cores)"},
    {"timeout", "", "close clients idle for this many seconds (0 = never)", ""},
    {"tls-auth-clients", "",
     "`yes`: a TLS client must present a certificate the CA verifies; `optional`: one it "
     "presents must verify; `no`: none is asked for",
     ""},
    {"tls-ca-cert-dir", "", "a directory of CA certificates (OpenSSL's hashed names) that "
                            "verify peers", ""},
    {"tls-ca-cert-file", "", "the CA certificates (PEM) that verify clients and masters", ""},
    {"tls-cert-file", "",
     "the server's certificate chain (PEM), also used for outgoing links unless "
     "tls-client-cert-file is set",
     ""},
    {"tls-ciphers", "", "TLSv1.2 cipher list, in OpenSSL's syntax (empty: OpenSSL's default)", ""},
    {"tls-ciphersuites", "", "TLSv1.3 cipher suites, in OpenSSL's syntax (empty: its default)",
     ""},
    {"tls-client-cert-file", "",
     "the certificate this server presents on its outgoing links (a replica's link to its "
     "master)",
     ""},
    {"tls-client-key-file", "", "the private key of tls-client-cert-file", ""},
    {"tls-client-key-file-pass", "", "the passphrase of tls-client-key-file", ""},
    {"tls-cluster", "", "accepted and reported; HotKV has no cluster bus", ""},
    {"tls-dh-params-file", "", "DH parameters (PEM) for DHE ciphers (empty: OpenSSL's built-in "
                               "ones)", ""},
    {"tls-key-file", "", "the private key of tls-cert-file (PEM)", ""},
    {"tls-key-file-pass", "", "the passphrase of tls-key-file", ""},
    {"tls-port", "",
     "the port TLS clients connect to (0 = no TLS listener); with `port 0` the server speaks "
     "only TLS",
     ""},
    {"tls-prefer-server-ciphers", "", "the server's cipher order wins over the client's", ""},
    {"tls-protocols", "",
     "the allowed protocol versions, among TLSv1 TLSv1.1 TLSv1.2 TLSv1.3 (empty: TLSv1.2 and "
     "TLSv1.3)",
     ""},
    {"tls-replication", "",
     "a replica's link to its master uses TLS (the master's tls-port; the CA must verify the "
     "master)",
     ""},
    {"tls-session-cache-size", "", "TLS sessions the server keeps for resumption", ""},
    {"tls-session-cache-timeout", "", "seconds a cached TLS session stays resumable", ""},
    {"tls-session-caching", "", "whether TLS clients may resume sessions", ""},
    {"tracking-table-max-keys", "",
     "keys tracked for client-side caching beyond which the oldest are forgotten and their "
     "clients told (0 = no limit)",
     ""},
    {"zset-max-listpack-entries", "",
     "a sorted set with more members leaves its compact encoding", ""},
    {"zset-max-listpack-value", "",
     "a sorted set with a longer member leaves its compact encoding", ""},
    {"zset-max-ziplist-entries", "zset-max-listpack-entries", "", ""},
    {"zset-max-ziplist-value", "zset-max-listpack-value", "", ""},
};

std::string default_text(const Config& defaults, const SettingHelp& h) {
  if (!h.default_note.empty()) {
    return std::string(h.default_note);
  }
  std::string v = defaults.get_string(h.name);
  return v.empty() ? "(empty)" : v;
}

// Markdown table cells cannot hold a bare '|'.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::span<const SettingHelp> settings_help() { return kSettings; }

const SettingHelp* setting_help(std::string_view name) {
  auto it = std::lower_bound(std::begin(kSettings), std::end(kSettings), name,
                             [](const SettingHelp& h, std::string_view n) { return h.name < n; });
  return it != std::end(kSettings) && it->name == name ? &*it : nullptr;
}

std::string describe_setting(const Config& defaults, std::string_view name) {
  const SettingHelp* h = setting_help(name);
  if (h == nullptr) {
    return "config: " + std::string(name);
  }
  std::string text = "config: " + std::string(name) + ": ";
  if (!h->alias_of.empty()) {
    return text + "older name of " + std::string(h->alias_of);
  }
  text += h->meaning;
  text += " (default " + default_text(defaults, *h) + ";" +
          (defaults.mutable_at_runtime(name) ? " CONFIG SET can change it)"
                                             : " fixed at start-up)");
  return text;
}

std::string render_settings_markdown(const Config& defaults) {
  std::string out =
      "# Settings\n"
      "Every setting HotKV takes, generated from its configuration registry (`hotkv "
      "--settings-markdown > docs/settings.md`; a unit test checks this file matches). Each "
      "is a flag (`--name value`), a line of the config file (`name value`) and, where the "
      "last column says so, a CONFIG SET away; `hotkv --help` prints the same text.\n\n"
      "| Setting | Default | Runtime | Meaning |\n|---|---|---|---|\n";
  for (const SettingHelp& h : kSettings) {
    if (!h.alias_of.empty()) {
      continue;
    }
    std::string names = "`" + std::string(h.name) + "`";
    for (const SettingHelp& alias : kSettings) {
      if (alias.alias_of == h.name) {
        names += " (`" + std::string(alias.name) + "`)";
      }
    }
    out += "| " + names + " | " + cell(default_text(defaults, h)) + " | " +
           (defaults.mutable_at_runtime(h.name) ? "yes" : "no") + " | " + cell(h.meaning) +
           " |\n";
  }
  return out;
}

}  // namespace hotkv
