// ShardLog (see shard_log.hpp).
#include "hotkv/persist/shard_log.hpp"

#include <unistd.h>

#include <cerrno>

#include "hotkv/util/file_io.hpp"

namespace hotkv {

ShardLog::~ShardLog() {
  int fd = fd_.load();
  if (fd >= 0) {
    flush();
    ::fdatasync(fd);
    ::close(fd);
  }
}

void ShardLog::attach(int fd, uint64_t size, FsyncPolicy policy) {
  int old = fd_.load();
  if (old >= 0) {
    flush();
    ::fdatasync(old);
  }
  fd_.store(fd);
  if (old >= 0) {
    ::close(old);
  }
  policy_.store(policy);
  written_ = size;
  written_total_.store(size);
  synced_.store(size);
  file_size_.store(size);
}

void ShardLog::end_record(uint64_t txn_id, uint32_t parts) {
  if (!encoder_.is_open()) {
    return;
  }
  if (encoder_.count() == 0 || fd_.load(std::memory_order_relaxed) < 0) {
    encoder_.abandon();
    return;
  }
  encoder_.close(txn_id, parts);
  records_.fetch_add(1, std::memory_order_relaxed);
}

bool ShardLog::flush() {
  int fd = fd_.load(std::memory_order_relaxed);
  if (fd < 0) {
    pending_.clear();
    return true;
  }
  size_t done = 0;
  if (!write_fully(fd, pending_, done)) {
    // Keep what was not written; the next flush retries from there.
    last_errno_.store(errno, std::memory_order_relaxed);
    pending_.erase(0, done);
    written_ += done;
    written_total_.store(written_);
    file_size_.store(written_);
    return false;
  }
  written_ += done;
  written_total_.store(written_);
  file_size_.store(written_, std::memory_order_relaxed);
  if (pending_.capacity() > (1u << 20)) {
    std::string().swap(pending_);
  } else {
    pending_.clear();
  }
  if (policy() == FsyncPolicy::kAlways && synced_.load() < written_) {
    if (!sync()) {
      return false;
    }
  }
  last_errno_.store(0, std::memory_order_relaxed);
  return true;
}

bool ShardLog::sync() {
  int fd = fd_.load();
  if (fd < 0) {
    return true;
  }
  uint64_t target = written_total_.load();
  if (::fdatasync(fd) != 0) {
    last_errno_.store(errno, std::memory_order_relaxed);
    return false;
  }
  fsyncs_.fetch_add(1, std::memory_order_relaxed);
  uint64_t cur = synced_.load();
  while (cur < target && !synced_.compare_exchange_weak(cur, target)) {
  }
  return true;
}

}  // namespace hotkv
