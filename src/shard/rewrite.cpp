// Log compaction (BGREWRITEAOF): a forked child writes a base snapshot of the keyspace while
// the server keeps serving into fresh incremental files. The manifest is replaced atomically
// twice -- first to add the fresh files, then to swap the old files for the base -- so a crash
// at any moment leaves a complete, loadable set.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <spdlog/spdlog.h>

#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/persistence.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/file_io.hpp"

namespace hotkv {
namespace {

// Runs in the forked child: one base file per shard with a put for every live key. Only plain
// system calls and memory the child owns; it ends with _exit so no parent state is torn down.
[[noreturn]] void write_snapshot(Engine& engine, const std::string& dir,
                                 const std::vector<std::string>& files, int64_t now) {
  for (size_t s = 0; s < engine.shard_count(); ++s) {
    std::string path = dir + "/" + files[s];
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      _exit(2);
    }
    std::string buf;
    RecordEncoder enc(buf);
    std::string scratch;
    enc.open();
    bool ok = true;
    // The snapshot holds everything up to the shard's last record: its records carry that
    // number, and the shard's next record (in the fresh incremental file) continues after it.
    const uint64_t seq = engine.shard(s).log().last_seq();
    // Records of about 1,000 effects keep both memory and a torn tail's cost small; a large
    // aggregate is cut into several records too.
    uint32_t db = 0;
    auto cut = [&] {
      if (enc.count() >= 1000) {
        enc.close(0, 1, seq);
        if (ok && buf.size() >= (1u << 20)) {
          ok = write_fully(fd, buf);
          buf.clear();
        }
        enc.open();
        enc.select(db);  // a record opens in database 0
      }
    };
    Shard& shard = engine.shard(s);
    for (db = 0; db < shard.db_count(); ++db) {
      Keyspace& ks = shard.keyspace(db);
      if (ks.size() == 0) {
        continue;
      }
      enc.select(db);
      ks.dict().for_each([&](std::string_view key, Value& v) {
        if (!ok || (v.has_expiry() && v.expire_at_ms() <= now)) {
          return;
        }
        encode_value(enc, key, v, scratch, cut);
        cut();
      });
    }
    if (enc.count() > 0) {
      enc.close(0, 1, seq);
    } else {
      enc.abandon();
    }
    if (!ok || !write_fully(fd, buf) || ::fsync(fd) != 0) {
      _exit(3);
    }
    ::close(fd);
  }
  _exit(0);
}

}  // namespace

void Persistence::sync_all_parked() {
  for (size_t i = 0; i < engine_.shard_count(); ++i) {
    engine_.shard(i).log().flush();
    engine_.shard(i).log().sync();
  }
}

std::string Persistence::start_rewrite() {
  if (!enabled_) {
    return "ERR Append only file is disabled (appendonly no)";
  }
  if (rewrite_in_progress()) {
    return "ERR Background append only file rewriting already in progress";
  }
  return start_rewrite_parked();
}

std::string Persistence::start_rewrite_parked() {
  std::lock_guard<std::mutex> lock(rewrite_mutex_);
  int64_t parked_since = mono_us();
  size_t n = engine_.shard_count();
  uint64_t base_seq = manifest_.next_seq();
  uint64_t incr_seq = base_seq + 1;
  ManifestSegment base{base_seq, true, n, {}};
  ManifestSegment incr{incr_seq, false, n, {}};
  for (size_t s = 0; s < n; ++s) {
    base.files.push_back(segment_file_name(prefix_, base_seq, true, s));
    incr.files.push_back(segment_file_name(prefix_, incr_seq, false, s));
  }
  // 1. Fresh incremental files, named in the manifest before anything is written to them.
  std::vector<int> fds;
  for (size_t s = 0; s < n; ++s) {
    std::string path = dir_path_ + "/" + incr.files[s];
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      for (int f : fds) {
        ::close(f);
      }
      return std::string("ERR cannot create ") + path + ": " + std::strerror(errno);
    }
    fds.push_back(fd);
  }
  Manifest during = manifest_;
  during.segments.push_back(incr);
  // Without a base (appendonly just turned on) the chain on disk does not hold the data set:
  // the manifest changes only when the base is complete.
  std::string err = awaiting_base_.load() ? "" : write_manifest_atomic(manifest_path(), during);
  if (!err.empty()) {
    for (int f : fds) {
      ::close(f);
    }
    return "ERR " + err;
  }
  // 2. Every shard switches to its fresh file (the old one is written, synced and closed).
  FsyncPolicy policy = engine_.shard(0).log().policy();
  for (size_t s = 0; s < n; ++s) {
    engine_.shard(s).log().attach(fds[s], 0, policy);
  }
  manifest_ = during;
  // 3. The child snapshots the keyspace as it is at this instant (every shard is parked).
  int64_t now = unix_ms();
  int64_t fork_start = mono_us();
  pid_t pid = ::fork();
  if (pid < 0) {
    return std::string("ERR Can't rewrite append only file in background: fork: ") +
           std::strerror(errno);
  }
  if (pid == 0) {
    // The child must not hold the listening socket or client connections open (a restarted
    // server could not bind while a child lived): close everything it inherited.
    ::close_range(3, ~0U, 0);
    write_snapshot(engine_, dir_path_, base.files, now);
  }
  int64_t done = mono_us();
  latest_fork_usec_.store(done - fork_start);
  pending_manifest_.segments = {base, incr};
  rewrite_started_ms_.store(unix_ms());
  child_pid_.store(pid);
  spdlog::info("Background append only file rewriting started by pid {} (shards parked {} us, "
               "fork {} us)",
               pid, done - parked_since, done - fork_start);
  return "";
}

void Persistence::poll_rewrite() {
  int pid = child_pid_.load();
  if (pid <= 0) {
    return;
  }
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(rewrite_mutex_);
  child_pid_.store(0);
  int64_t took = unix_ms() - rewrite_started_ms_.load();
  last_rewrite_ms_.store(took);
  const ManifestSegment& base = pending_manifest_.segments[0];
  bool ok = r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::string err;
  if (ok) {
    // The manifest may have gained nothing else meanwhile: only a rewrite changes it, and one
    // runs at a time. Swap the old segments for the base.
    Manifest next = pending_manifest_;
    err = write_manifest_atomic(manifest_path(), next);
    if (err.empty()) {
      std::set<std::string> keep;
      for (const auto& seg : next.segments) {
        keep.insert(seg.files.begin(), seg.files.end());
      }
      for (const auto& seg : manifest_.segments) {
        for (const auto& f : seg.files) {
          if (keep.count(f) == 0) {
            ::unlink((dir_path_ + "/" + f).c_str());
          }
        }
      }
      manifest_ = next;
      awaiting_base_.store(false);
      uint64_t base_bytes = 0;
      for (const auto& f : base.files) {
        struct stat st {};
        if (::stat((dir_path_ + "/" + f).c_str(), &st) == 0) {
          base_bytes += static_cast<uint64_t>(st.st_size);
        }
      }
      base_size_.store(base_bytes);
      size_at_last_rewrite_.store(base_bytes);
      last_save_unix_.store(unix_ms() / 1000);
    }
  }
  if (!ok || !err.empty()) {
    for (const auto& f : base.files) {
      ::unlink((dir_path_ + "/" + f).c_str());
    }
    last_rewrite_ok_.store(false);
    spdlog::warn("Background append only file rewriting failed{}{}", err.empty() ? "" : ": ",
                 err);
    return;
  }
  last_rewrite_ok_.store(true);
  rewrites_.fetch_add(1);
  spdlog::info("Background AOF rewrite finished successfully in {} ms", took);
}

bool Persistence::auto_rewrite_due() const {
  if (!enabled_ || rewrite_in_progress()) {
    return false;
  }
  if (awaiting_base_.load()) {
    return true;  // the first base after CONFIG SET appendonly yes failed: try again
  }
  Config& cfg = engine_.config();
  int64_t pct = cfg.auto_aof_rewrite_percentage.load();
  int64_t min_size = cfg.auto_aof_rewrite_min_size.load();
  if (pct <= 0) {
    return false;
  }
  uint64_t size = current_size();
  if (size < static_cast<uint64_t>(min_size)) {
    return false;
  }
  uint64_t base = std::max<uint64_t>(size_at_last_rewrite_.load(), 1);
  return (size - std::min(size, base)) * 100 / base >= static_cast<uint64_t>(pct);
}

// Kills a running rewrite child and deletes the base it was writing (shutdown, appendonly no).
void Persistence::abandon_rewrite() {
  int pid = child_pid_.exchange(0);
  if (pid <= 0) {
    return;
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::lock_guard<std::mutex> lock(rewrite_mutex_);
  if (!pending_manifest_.segments.empty()) {
    for (const auto& f : pending_manifest_.segments[0].files) {
      ::unlink((dir_path_ + "/" + f).c_str());
    }
  }
}

std::string Persistence::enable_parked() {
  if (enabled_.load()) {
    return "";
  }
  Config& cfg = engine_.config();
  if (std::string err = prepare_directory(); !err.empty()) {
    return "ERR " + err;
  }
  // What the directory holds now is only read for its sequence numbers (new files never
  // reuse a name) and replaced, with its files, once the base is written.
  Manifest on_disk;
  std::string error;
  if (!read_manifest(manifest_path(), on_disk, error) && !error.empty()) {
    return "ERR bad manifest " + manifest_path() + ": " + error;
  }
  manifest_ = on_disk;
  FsyncPolicy policy = FsyncPolicy::kEverysec;
  parse_policy(cfg.get_string("appendfsync"), policy);
  for (size_t s = 0; s < engine_.shard_count(); ++s) {
    engine_.shard(s).log().set_policy(policy);
  }
  awaiting_base_.store(true);
  enabled_.store(true);
  std::string err = start_rewrite_parked();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    if (!fsync_thread_.joinable()) {
      fsync_thread_ = std::thread([this] { fsync_loop(); });
    }
  }
  if (!err.empty()) {
    // Logging could not start (files, fork): leave it off rather than half on.
    disable_parked();
    return err;
  }
  spdlog::info("Append only file enabled: writing a base of the data set into {}", dir_path_);
  return "";
}

std::string Persistence::disable_parked() {
  if (!enabled_.load()) {
    return "";
  }
  abandon_rewrite();
  for (size_t s = 0; s < engine_.shard_count(); ++s) {
    ShardLog& log = engine_.shard(s).log();
    log.attach(-1, 0, log.policy());  // writes, syncs and closes the current file
  }
  enabled_.store(false);
  awaiting_base_.store(false);
  spdlog::info("Append only file disabled");
  return "";
}

}  // namespace hotkv
