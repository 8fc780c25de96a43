#include "hotkv/shard/rdb_saver.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "hotkv/shard/engine.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {
namespace {

uint64_t key_changes_total(Engine& e) {
  return e.stats().key_changes_at_save.load() + e.key_changes_since_save();
}

// Writes the snapshot to `temp`, syncs it and renames it to `path`. Used by SAVE and by the
// BGSAVE child (plain system calls only). "" or why not (errno-based).
std::string write_and_rename(Engine& engine, const std::string& temp, const std::string& path,
                             const RdbSnapshotAux& aux, int64_t now_ms) {
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "Failed opening the temp RDB file " + temp + " (in server root dir): " +
           std::strerror(errno);
  }
  bool ok = write_rdb_snapshot(engine, fd, aux, now_ms);
  int err = errno;
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  ::close(fd);
  if (!ok) {
    ::unlink(temp.c_str());
    return std::string("Write error saving DB on disk: ") + std::strerror(err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(temp.c_str());
    return "Error moving temp DB file " + temp + " on the final destination " + path + ": " +
           std::strerror(err);
  }
  return "";
}

}  // namespace

RdbSaver::RdbSaver(Engine& engine)
    : engine_(engine), last_save_unix_(engine.start_unix_ms() / 1000) {}

RdbSaver::~RdbSaver() { abandon(); }

std::string RdbSaver::path() const {
  return engine_.config().get_string("dir") + "/" + engine_.config().get_string("dbfilename");
}

std::string RdbSaver::temp_path(long pid) const {
  return engine_.config().get_string("dir") + "/temp-" + std::to_string(pid) + ".rdb";
}

std::string RdbSaver::save_parked(const RdbSnapshotAux& aux) {
  int64_t now = engine_.now_ms();
  std::string err = write_and_rename(engine_, temp_path(::getpid()), path(), aux, now);
  if (!err.empty()) {
    spdlog::warn("{}", err);
    return err;
  }
  engine_.mark_key_changes_saved();
  last_save_unix_.store(unix_ms() / 1000);
  saves_.fetch_add(1);
  spdlog::info("DB saved on disk");
  return "";
}

std::string RdbSaver::start_bgsave_parked(const RdbSnapshotAux& aux) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in_progress()) {
    return "Background save already in progress";
  }
  // Read before the fork: the child takes no locks (another thread may have held one).
  const std::string final_path = path();
  const std::string dir = engine_.config().get_string("dir");
  const int64_t now = engine_.now_ms();
  // The temporary file is named after the child, so a crashed save's file is recognisable.
  pid_t pid = ::fork();
  if (pid < 0) {
    last_bgsave_ok_.store(false);
    return std::string("Can't save in background: fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    // Nothing inherited stays open (a restarted server could not bind while a child lived).
    ::close_range(3, ~0U, 0);
    std::string temp = dir + "/temp-" + std::to_string(::getpid()) + ".rdb";
    std::string err = write_and_rename(engine_, temp, final_path, aux, now);
    _exit(err.empty() ? 0 : 1);
  }
  changes_at_fork_.store(key_changes_total(engine_));
  child_temp_ = temp_path(pid);
  started_ms_.store(unix_ms());
  child_pid_.store(pid);
  scheduled_.store(false);
  spdlog::info("Background saving started by pid {}", pid);
  return "";
}

void RdbSaver::poll() {
  int pid = child_pid_.load();
  if (pid <= 0) {
    return;
  }
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  child_pid_.store(0);
  last_bgsave_seconds_.store((unix_ms() - started_ms_.load()) / 1000);
  bool ok = r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  last_bgsave_ok_.store(ok);
  if (!ok) {
    ::unlink(child_temp_.c_str());
    spdlog::warn("Background saving error");
    return;
  }
  // Changes made while the child wrote are not in the file: they stay counted.
  engine_.stats().key_changes_at_save.store(changes_at_fork_.load());
  last_save_unix_.store(unix_ms() / 1000);
  saves_.fetch_add(1);
  spdlog::info("Background saving terminated with success");
}

void RdbSaver::abandon() {
  int pid = child_pid_.exchange(0);
  if (pid <= 0) {
    return;
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::lock_guard<std::mutex> lock(mutex_);
  ::unlink(child_temp_.c_str());
}

}  // namespace hotkv
