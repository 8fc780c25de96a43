// One shard's part of the append-only log: the records its commands produced, buffered until
// the connection replies, then written to the shard's current log file. Owned and used by the
// shard's thread only (or by a coordinator while that thread is parked); the everysec fsync
// thread only calls fdatasync on the file descriptor and reads the atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "hotkv/persist/record.hpp"

namespace hotkv {

enum class FsyncPolicy { kAlways, kEverysec, kNo };

// Receives the records a shard's log writes, as they are written (replication's feed turns them
// into the stream replicas follow). Called on the thread that flushes the log: the shard's, or a
// coordinator's while the shard is parked.
class LogTap {
 public:
  virtual ~LogTap() = default;
  // `records`: whole closed records, in the order the shard closed them.
  virtual void on_records(size_t shard, std::string_view records) = 0;
};

class ShardLog {
 public:
  ShardLog() : encoder_(pending_) {}
  ShardLog(const ShardLog&) = delete;
  ShardLog& operator=(const ShardLog&) = delete;
  ~ShardLog();

  // True if effects are recorded: there is a file, or a tap takes the records (replication
  // with appendonly no).
  bool enabled() const {
    return fd_.load(std::memory_order_relaxed) >= 0 || tap_on_.load(std::memory_order_relaxed);
  }
  bool has_file() const { return fd_.load(std::memory_order_relaxed) >= 0; }
  // The tap every written record goes to while it is on. Set once, before the shard runs;
  // switched on and off only while the shard is parked, so no command sees it change half way.
  void set_tap(LogTap* tap, size_t shard) {
    tap_ = tap;
    tap_shard_ = shard;
  }
  void set_tap_on(bool on) { tap_on_.store(on && tap_ != nullptr, std::memory_order_relaxed); }
  bool tap_on() const { return tap_on_.load(std::memory_order_relaxed); }
  // Starts appending to `fd` (opened without O_APPEND: records are written in place at the
  // log's end with pwrite); takes ownership. `size` is the file's current size. Closes the
  // previous file, if any, after writing what is pending and cutting its zero tail.
  void attach(int fd, uint64_t size, FsyncPolicy policy);
  void set_policy(FsyncPolicy p) { policy_.store(p, std::memory_order_relaxed); }
  FsyncPolicy policy() const { return policy_.load(std::memory_order_relaxed); }

  // The encoder for the current command's record; opens the record on first use.
  RecordEncoder& record() {
    if (!encoder_.is_open()) {
      encoder_.open();
    }
    return encoder_;
  }
  bool record_open() const { return encoder_.is_open(); }
  // True if closed records wait in memory for write_pending (owner thread).
  bool has_unwritten() const { return !pending_.empty(); }
  // Closes the current record (or drops it if it is empty), numbering it last_seq() + 1.
  void end_record(uint64_t txn_id, uint32_t parts);
  // Closes the current record as one part of a split operation (part_queue.hpp), empty if no
  // effect was logged: its operation counted this shard among its `parts` before it ran.
  void end_part(uint64_t txn_id, uint32_t parts);
  // The sequence number of the last record this log closed (0: none yet). Numbers increase by
  // one per record and are never reused: start-up continues after the highest one replayed
  // (set_last_seq, before the first record), and they go on across file switches. Any thread
  // may read it; only the owner (or a coordinator while the shard is parked) sets it.
  uint64_t last_seq() const { return last_seq_.load(std::memory_order_relaxed); }
  void set_last_seq(uint64_t seq) { last_seq_.store(seq, std::memory_order_relaxed); }

  // True if records were appended that are not yet written (or, with always, not yet synced).
  bool needs_flush() const {
    return !pending_.empty() ||
           (policy() == FsyncPolicy::kAlways && lsn_.load() > synced_lsn_.load());
  }
  // Writes what is pending (and fdatasyncs it with always). Returns false on a write or sync
  // error; what could not be written stays pending and is retried by the next call. Either
  // way the after-flush hook hears the outcome.
  bool flush();
  // Called at the end of every flush() with its outcome, on the thread that flushed (the
  // owner, or a coordinator while the shard is parked). Set once, before the shard runs: the
  // shard releases what waited for the records to be durable, or stops the server when a
  // record cannot be made durable under appendfsync always.
  void set_after_flush(std::function<void(bool ok)> hook) { after_flush_ = std::move(hook); }
  // Writes (and with always syncs) what is pending, if anything. Replies reach it through the
  // durability barrier (shard/durability_barrier.hpp), never directly.
  void flush_if_needed() {
    if (needs_flush()) {
      flush();
    }
  }
  // Writes what is pending without syncing. Owner thread. Returns false on a write error.
  bool write_pending();
  // fdatasync now; any thread (the everysec thread, the shutdown path). Everything
  // written before the call is durable when it returns true.
  bool sync();
  // Bytes this log has ever written (monotonic across file switches), and how many of them
  // are known to be on disk. Any thread.
  uint64_t lsn() const { return lsn_.load(); }
  uint64_t synced_lsn() const { return synced_lsn_.load(); }

  int last_errno() const { return last_errno_.load(std::memory_order_relaxed); }
  bool healthy() const { return last_errno() == 0; }
  uint64_t file_size() const { return file_size_.load(std::memory_order_relaxed); }
  uint64_t fsyncs() const { return fsyncs_.load(std::memory_order_relaxed); }
  uint64_t records() const { return records_.load(std::memory_order_relaxed); }
  bool dirty_since_sync() const { return lsn_.load() > synced_lsn_.load(); }
  // Bytes of the current file that exist on disk: the records plus the zeros written ahead
  // of them (owner thread).
  uint64_t allocated() const { return allocated_; }

  // With appendfsync always the file is extended ahead of the records with written zeros,
  // this much at a time: an fdatasync then only flushes data blocks, because the file's size
  // and block map stay the same, where an append also costs ext4 a journal commit. The
  // loader reads a zero tail that starts at a record boundary as the end of the log.
  static constexpr uint64_t kPreallocChunk = 1 << 20;

 private:
  void advance_synced(uint64_t target);
  // Makes sure `need` more bytes fit in the zeros ahead (always only). A failure (disk full,
  // file size limit) is not an error: the records are then appended as usual.
  void preallocate(uint64_t need);
  // Cuts the zero tail of `fd` (about to be closed) so the file ends with its last record.
  void trim(int fd);

  std::string pending_;
  RecordEncoder encoder_;
  std::atomic<int> fd_{-1};
  // Held by sync() around its fdatasync and by attach() around closing the old file, so the
  // everysec thread's sync never reaches a descriptor a rewrite just closed (or reused).
  std::mutex fd_mu_;
  std::atomic<FsyncPolicy> policy_{FsyncPolicy::kEverysec};
  uint64_t file_written_ = 0;  // bytes of records in the current file
  uint64_t allocated_ = 0;     // file_written_ plus the zeros written ahead
  std::atomic<uint64_t> lsn_{0};
  std::atomic<uint64_t> synced_lsn_{0};
  std::atomic<uint64_t> file_size_{0};
  std::atomic<uint64_t> fsyncs_{0};
  std::function<void(bool ok)> after_flush_;
  std::atomic<uint64_t> records_{0};
  std::atomic<uint64_t> last_seq_{0};
  std::atomic<int> last_errno_{0};
  LogTap* tap_ = nullptr;
  size_t tap_shard_ = 0;
  std::atomic<bool> tap_on_{false};
};

}  // namespace hotkv
