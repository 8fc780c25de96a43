#include "hotkv/shard/replica_snapshot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hotkv/shard/engine.hpp"

namespace hotkv {

std::string start_replica_snapshot(Engine& engine, const RdbSnapshotAux& aux, bool diskless,
                                   ReplicaSnapshot& out) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return std::string("pipe: ") + std::strerror(errno);
  }
  // Read before the fork: the child takes no locks (another thread may have held one).
  const std::string dir = engine.config().get_string("dir");
  const int64_t now = engine.now_ms();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("fork: ") + std::strerror(err);
  }
  if (pid == 0) {
    // Only the pipe stays open, as fd 3 (a restarted server could not bind while a child
    // held the listening socket).
    if (::dup2(fds[1], 3) < 0) {
      _exit(1);
    }
    ::close_range(4, ~0U, 0);
    bool ok = false;
    if (diskless) {
      ok = write_rdb_snapshot(engine, 3, aux, now);
    } else {
      std::string temp = dir + "/temp-repl-" + std::to_string(::getpid()) + ".rdb";
      int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ok = fd >= 0 && write_rdb_snapshot(engine, fd, aux, now);
      if (fd >= 0) {
        ::close(fd);
      }
      char status = ok ? '1' : '0';
      ok = ::write(3, &status, 1) == 1 && ok;
    }
    _exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  out.pid = pid;
  out.pipe_fd = fds[0];
  out.diskless = diskless;
  if (!diskless) {
    out.temp_path = dir + "/temp-repl-" + std::to_string(pid) + ".rdb";
  }
  return "";
}

bool reap_replica_snapshot(ReplicaSnapshot& s, bool& ok) {
  if (s.pid <= 0) {
    return true;
  }
  int status = 0;
  pid_t r = ::waitpid(s.pid, &status, WNOHANG);
  if (r == 0) {
    return false;
  }
  ok = r == s.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  s.pid = -1;
  return true;
}

bool finish_replica_snapshot(ReplicaSnapshot& s, bool kill) {
  bool ok = false;
  if (s.pid > 0) {
    if (kill) {
      ::kill(s.pid, SIGKILL);
    }
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(s.pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    ok = r == s.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    s.pid = -1;
  }
  if (s.pipe_fd >= 0) {
    ::close(s.pipe_fd);
    s.pipe_fd = -1;
  }
  if (!s.temp_path.empty()) {
    ::unlink(s.temp_path.c_str());
    s.temp_path.clear();
  }
  return ok;
}

}  // namespace hotkv
