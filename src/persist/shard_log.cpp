// ShardLog (see shard_log.hpp).
#include "hotkv/persist/shard_log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "hotkv/util/file_io.hpp"

namespace hotkv {

ShardLog::~ShardLog() {
  int fd = fd_.load();
  if (fd >= 0) {
    flush();
    trim(fd);
    ::fdatasync(fd);
    ::close(fd);
  }
}

void ShardLog::trim(int fd) {
  if (allocated_ > file_written_ && ::ftruncate(fd, static_cast<off_t>(file_written_)) == 0) {
    allocated_ = file_written_;
  }
}

void ShardLog::preallocate(uint64_t need) {
  if (policy() != FsyncPolicy::kAlways || file_written_ + need <= allocated_) {
    return;
  }
  int fd = fd_.load(std::memory_order_relaxed);
  static const std::string zeros(64 * 1024, '\0');
  uint64_t target = file_written_ + need + kPreallocChunk;
  // The zeros must reach the disk as real blocks: fallocate's unwritten extents would need
  // the same journal commit on their first write as an append does.
  while (allocated_ < target) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), target - allocated_));
    size_t done = 0;
    bool ok = pwrite_fully(fd, std::string_view(zeros.data(), n), allocated_, done);
    allocated_ += done;
    if (!ok) {
      return;
    }
  }
}

void ShardLog::attach(int fd, uint64_t size, FsyncPolicy policy) {
  int old = fd_.load();
  if (old >= 0) {
    write_pending();
    trim(old);
    // Everything written to the old file is made durable before it is closed, so the
    // monotonic synced position stays true across the switch.
    uint64_t target = lsn_.load();
    if (::fdatasync(old) == 0) {
      advance_synced(target);
    }
  }
  {
    std::lock_guard lock(fd_mu_);
    fd_.store(fd);
    if (old >= 0) {
      ::close(old);
    }
  }
  policy_.store(policy);
  file_written_ = size;
  allocated_ = size;
  file_size_.store(size);
}

void ShardLog::end_record(uint64_t txn_id, uint32_t parts) {
  if (!encoder_.is_open()) {
    return;
  }
  if (encoder_.count() == 0 || !enabled()) {
    encoder_.abandon();
    return;
  }
  uint64_t seq = last_seq_.load(std::memory_order_relaxed) + 1;
  encoder_.close(txn_id, parts, seq);
  last_seq_.store(seq, std::memory_order_relaxed);
  records_.fetch_add(1, std::memory_order_relaxed);
}

void ShardLog::end_part(uint64_t txn_id, uint32_t parts) {
  if (!enabled()) {
    if (encoder_.is_open()) {
      encoder_.abandon();
    }
    return;
  }
  if (!encoder_.is_open()) {
    encoder_.open();
  }
  uint64_t seq = last_seq_.load(std::memory_order_relaxed) + 1;
  encoder_.close(txn_id, parts, seq);
  last_seq_.store(seq, std::memory_order_relaxed);
  records_.fetch_add(1, std::memory_order_relaxed);
}

bool ShardLog::write_pending() {
  int fd = fd_.load(std::memory_order_relaxed);
  // A record still open stays in memory: only the closed records before it are written. (A
  // busy script's thread serves other clients while its own record is open.)
  size_t closed = encoder_.is_open() ? encoder_.start() : pending_.size();
  if (fd < 0) {
    // No file: the records only go to the tap (replication with appendonly no).
    if (closed > 0 && tap_on()) {
      tap_->on_records(tap_shard_, std::string_view(pending_.data(), closed));
    }
    pending_.erase(0, closed);
    if (encoder_.is_open()) {
      encoder_.rebase(closed);
    }
    return true;
  }
  if (closed == 0) {
    return true;
  }
  preallocate(closed);
  size_t done = 0;
  bool ok = pwrite_fully(fd, std::string_view(pending_.data(), closed), file_written_, done);
  // Replicas get what reached the file, in the same order; what a failed write left pending is
  // retried and handed over then.
  if (done > 0 && tap_on()) {
    tap_->on_records(tap_shard_, std::string_view(pending_.data(), done));
  }
  if (!ok || closed < pending_.size()) {
    // Keep what was not written; the next flush retries from there.
    if (!ok) {
      last_errno_.store(errno, std::memory_order_relaxed);
    }
    pending_.erase(0, done);
    if (encoder_.is_open()) {
      encoder_.rebase(done);
    }
  } else if (pending_.capacity() > (1u << 20)) {
    std::string().swap(pending_);
  } else {
    pending_.clear();
  }
  file_written_ += done;
  allocated_ = std::max(allocated_, file_written_);
  file_size_.store(file_written_, std::memory_order_relaxed);
  lsn_.fetch_add(done);
  if (ok) {
    last_errno_.store(0, std::memory_order_relaxed);
  }
  return ok;
}

bool ShardLog::flush() {
  bool ok = write_pending() &&
            (policy() != FsyncPolicy::kAlways || synced_lsn_.load() >= lsn_.load() || sync());
  if (ok) {
    last_errno_.store(0, std::memory_order_relaxed);
  }
  if (after_flush_) {
    after_flush_(ok);
  }
  return ok;
}

void ShardLog::advance_synced(uint64_t target) {
  uint64_t cur = synced_lsn_.load();
  while (cur < target && !synced_lsn_.compare_exchange_weak(cur, target)) {
  }
}

bool ShardLog::sync() {
  std::lock_guard lock(fd_mu_);
  int fd = fd_.load();
  if (fd < 0) {
    return true;
  }
  uint64_t target = lsn_.load();
  if (::fdatasync(fd) != 0) {
    last_errno_.store(errno, std::memory_order_relaxed);
    return false;
  }
  fsyncs_.fetch_add(1, std::memory_order_relaxed);
  advance_synced(target);
  return true;
}

}  // namespace hotkv
