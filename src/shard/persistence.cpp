// Start-up replay, log files and the everysec fsync thread (see persistence.hpp).
#include "hotkv/shard/persistence.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <unordered_map>

#include <asio/post.hpp>
#include <spdlog/spdlog.h>

#include "hotkv/persist/incomplete_ops.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/op_effects.hpp"
#include "hotkv/shard/slot.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {
namespace {

// Effects are handed to the owning shard in batches; a flush effect carries the layout it was
// written under so it removes exactly the keys that shard owned then.
struct LoadOp {
  Effect effect;
  uint32_t old_shard = 0;
  uint32_t old_count = 0;
};

constexpr size_t kBatch = 2048;
constexpr int kMaxBatchesInFlight = 64;

bool read_file(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = std::move(ss).str();
  return true;
}

// SWAPDB replayed on a shard: the keys of databases a and b that the writing shard owned
// (under the layout the log was written with) trade places.
void apply_swapdb(Shard& sh, const LoadOp& op, size_t shard_count) {
  uint32_t a = op.effect.db;
  uint32_t b = op.effect.db2;
  if (op.old_count == shard_count) {
    if (op.old_shard == sh.id()) {
      sh.swap_dbs(a, b);
    }
    return;
  }
  auto take = [&](Keyspace& ks) {
    std::vector<std::pair<std::string, Value>> out;
    ks.dict().for_each([&](std::string_view key, Value& v) {
      if (key_shard(key, op.old_count) == op.old_shard) {
        out.emplace_back(key, std::move(v));
      }
    });
    for (const auto& kv : out) {
      ks.erase(kv.first);
    }
    return out;
  };
  auto from_a = take(sh.keyspace(a));
  auto from_b = take(sh.keyspace(b));
  for (auto& kv : from_a) {
    sh.keyspace(b).put(kv.first, std::move(kv.second));
  }
  for (auto& kv : from_b) {
    sh.keyspace(a).put(kv.first, std::move(kv.second));
  }
}

void apply_op(Shard& sh, LoadOp& op, size_t shard_count, int64_t now, const EncodingLimits& limits,
              uint64_t& expired) {
  Effect& e = op.effect;
  size_t shard_id = sh.id();
  if (e.kind == EffectKind::kSwapDb) {
    apply_swapdb(sh, op, shard_count);
    return;
  }
  Keyspace& ks = sh.keyspace(e.db);
  switch (e.kind) {
    case EffectKind::kPut: {
      if (e.at_ms != kNoExpiry && e.at_ms <= now) {
        ks.erase(e.key);  // its deadline passed while the server was down
        ++expired;
        return;
      }
      Value v = e.is_int ? Value::from_int(e.integer) : Value::from_string(e.str);
      v.set_expire_raw(e.at_ms);
      ks.put(e.key, std::move(v));
      return;
    }
    case EffectKind::kDel:
      ks.erase(e.key);
      return;
    case EffectKind::kExpire: {
      Value* v = ks.find(e.key, now);
      if (v == nullptr) {
        return;
      }
      if (e.at_ms != kNoExpiry && e.at_ms <= now) {
        ks.erase(e.key);
        ++expired;
      } else {
        ks.set_expire(e.key, *v, e.at_ms);
      }
      return;
    }
    case EffectKind::kOp: {
      std::string error;
      if (!apply_op_effect(ks, e, now, error, limits)) {
        // Only a writer bug can produce this (the record's checksum held): skip the effect
        // rather than refuse to start, and say so.
        spdlog::warn("append-only log: skipping effect on key '{}': {}", e.key, error);
      }
      return;
    }
    case EffectKind::kFlush: {
      if (op.old_count == shard_count) {
        if (op.old_shard == shard_id) {
          ks.clear();
        }
        return;
      }
      std::vector<std::string> doomed;
      ks.dict().for_each([&](std::string_view key, Value&) {
        if (key_shard(key, op.old_count) == op.old_shard) {
          doomed.emplace_back(key);
        }
      });
      for (const auto& k : doomed) {
        ks.erase(k);
      }
      return;
    }
    case EffectKind::kSelect:  // consumed by the decoder
    case EffectKind::kSwapDb:
      return;
  }
}

}  // namespace

Persistence::Persistence(Engine& engine) : engine_(engine) {}

Persistence::~Persistence() { close(); }

bool Persistence::parse_policy(const std::string& s, FsyncPolicy& out) {
  if (s == "always") {
    out = FsyncPolicy::kAlways;
  } else if (s == "everysec") {
    out = FsyncPolicy::kEverysec;
  } else if (s == "no") {
    out = FsyncPolicy::kNo;
  } else {
    return false;
  }
  return true;
}

uint64_t Persistence::current_size() const {
  uint64_t total = 0;
  for (size_t i = 0; i < engine_.shard_count(); ++i) {
    total += engine_.shard(i).log().file_size();
  }
  return total + base_size_;
}

std::string Persistence::configured_directory() const {
  Config& cfg = engine_.config();
  return cfg.get_string("dir") + "/" + cfg.get_string("appenddirname");
}

std::string Persistence::create_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return "cannot create the append-only directory " + dir + ": " + ec.message();
  }
  return "";
}

std::string Persistence::prepare_directory() {
  dir_path_ = configured_directory();
  prefix_ = engine_.config().get_string("appendfilename");
  return create_directory(dir_path_);
}

std::string Persistence::check_can_enable() const {
  std::string dir = configured_directory();
  if (std::string err = create_directory(dir); !err.empty()) {
    return err;
  }
  // The same kind of file the log will create, created and removed at once.
  std::string probe = dir + "/." + engine_.config().get_string("appendfilename") + ".probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "cannot create files in the append-only directory " + dir + ": " +
           std::strerror(errno);
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

std::string Persistence::load_and_open() {
  Config& cfg = engine_.config();
  if (cfg.get_string("appendonly") != "yes") {
    return "";
  }
  enabled_ = true;
  FsyncPolicy policy = FsyncPolicy::kEverysec;
  parse_policy(cfg.get_string("appendfsync"), policy);
  if (std::string err = prepare_directory(); !err.empty()) {
    return err;
  }
  std::string error;
  if (!read_manifest(manifest_path(), manifest_, error) && !error.empty()) {
    return "bad manifest " + manifest_path() + ": " + error;
  }

  int64_t started = mono_us();
  int64_t now = unix_ms();
  size_t n = engine_.shard_count();

  // Pass 1: check every file and count the parts of cross-shard operations, so an operation
  // that a crash left incomplete is never half applied.
  std::unordered_map<std::string, uint64_t> valid_length;
  std::vector<std::string> names;
  std::vector<std::vector<PartMark>> marks;
  for (const auto& seg : manifest_.segments) {
    for (const auto& name : seg.files) {
      std::string path = dir_path_ + "/" + name;
      std::string data;
      if (!read_file(path, data, error)) {
        return "cannot read append-only file " + path + ": " + error;
      }
      names.push_back(name);
      marks.emplace_back();
      RecordDecoder dec(data);
      Record r;
      DecodeStatus st;
      uint64_t start = 0;
      while ((st = dec.next(r)) == DecodeStatus::kOk) {
        load_stats_.last_seq = std::max(load_stats_.last_seq, r.seq);
        if (r.txn_id != 0) {
          marks.back().push_back(PartMark{start, r.txn_id, r.parts});
        }
        start = dec.offset();
      }
      if (st == DecodeStatus::kCorrupt) {
        return "Bad file format reading the append only file " + path + " at offset " +
               std::to_string(dec.offset()) + " (" + dec.error() +
               "). Check it with: hotkv-check-aof " + dir_path_ +
               " (--fix truncates the log at the damage, losing what follows it)";
      }
      if (st == DecodeStatus::kTorn) {
        spdlog::warn("append-only file {} ends with a torn record at offset {} ({}): "
                     "truncating {} bytes",
                     path, dec.offset(), dec.error(), data.size() - dec.offset());
        load_stats_.truncated_bytes += data.size() - dec.offset();
      }
      if (st == DecodeStatus::kEnd && dec.padding() > 0) {
        // The zeros appendfsync always writes ahead of its records (see ShardLog): a server
        // that stopped without closing its file leaves them. Cut below like a torn tail, but
        // nothing was lost.
        spdlog::info("append-only file {} ends at offset {}, followed by {} bytes of zeros "
                     "written ahead: cutting them",
                     path, dec.offset(), dec.padding());
      }
      valid_length[name] = dec.offset();
    }
  }
  {
    // A cross-shard operation a crash cut short was never acknowledged, nor was anything
    // after one of its parts in that part's file (split_seals.hpp): each file's valid prefix
    // ends before its first such part (incomplete_ops.hpp).
    std::vector<uint64_t> lengths;
    for (const std::string& name : names) {
      lengths.push_back(valid_length[name]);
    }
    std::vector<uint64_t> cut = cut_incomplete_operations(marks, lengths);
    for (size_t f = 0; f < names.size(); ++f) {
      if (cut[f] < lengths[f]) {
        spdlog::warn("append-only file {}: incomplete cross-shard operation at offset {}; "
                     "dropping it ({} bytes)",
                     dir_path_ + "/" + names[f], cut[f], lengths[f] - cut[f]);
        valid_length[names[f]] = cut[f];
      }
    }
  }

  // Pass 2: replay, segment after segment; within a segment each file in order.
  // Shared with the batches in flight, which may outlive this frame if shutdown interrupts.
  struct Counters {
    std::atomic<int> in_flight{0};
    std::atomic<uint64_t> expired{0};
    std::atomic<size_t> attached{0};
  };
  auto counters = std::make_shared<Counters>();
  std::atomic<int>& in_flight = counters->in_flight;
  // Hashes and sets rebuilt by replay convert by the limits configured at start-up.
  const EncodingLimits limits = EncodingLimits::from(engine_.config());
  std::vector<std::vector<LoadOp>> batches(n);
  auto send = [&](size_t shard) {
    if (batches[shard].empty()) {
      return;
    }
    while (in_flight.load() >= kMaxBatchesInFlight && !abort_.load()) {
      std::this_thread::yield();
    }
    if (abort_.load()) {
      batches[shard].clear();
      return;
    }
    in_flight.fetch_add(1);
    Shard* sh = &engine_.shard(shard);
    asio::post(sh->io(), [sh, n, now, limits, ops = std::move(batches[shard]), counters]() mutable {
      uint64_t local_expired = 0;
      for (LoadOp& op : ops) {
        apply_op(*sh, op, n, now, limits, local_expired);
      }
      counters->expired.fetch_add(local_expired);
      counters->in_flight.fetch_sub(1);
    });
    batches[shard] = {};
    batches[shard].reserve(kBatch);
  };
  for (const auto& seg : manifest_.segments) {
    for (size_t old_shard = 0; old_shard < seg.files.size(); ++old_shard) {
      const std::string& name = seg.files[old_shard];
      std::string path = dir_path_ + "/" + name;
      std::string data;
      if (!read_file(path, data, error)) {
        return "cannot read append-only file " + path + ": " + error;
      }
      data.resize(valid_length[name]);
      ++load_stats_.files;
      RecordDecoder dec(data);
      Record r;
      while (dec.next(r) == DecodeStatus::kOk) {
        ++load_stats_.records;
        for (Effect& e : r.effects) {
          ++load_stats_.effects;
          size_t databases = engine_.shard(0).db_count();
          if (e.db >= databases || (e.kind == EffectKind::kSwapDb && e.db2 >= databases)) {
            return "append-only file " + path + " holds keys of database " +
                   std::to_string(std::max(e.db, e.db2)) + ", but databases is " +
                   std::to_string(databases) + ": start with a larger databases setting";
          }
          if (e.kind == EffectKind::kFlush || e.kind == EffectKind::kSwapDb) {
            for (size_t s = 0; s < n; ++s) {
              batches[s].push_back(LoadOp{e, static_cast<uint32_t>(old_shard),
                                          static_cast<uint32_t>(seg.shards)});
              send(s);
            }
            continue;
          }
          // The record names the key's slot (checked against the key when it was decoded).
          size_t target = slot_shard(e.slot, n);
          batches[target].push_back(LoadOp{std::move(e), 0, 0});
          if (batches[target].size() >= kBatch) {
            send(target);
          }
        }
      }
      // Flush effects are routed by layout: finish this file before the next one.
      for (size_t s = 0; s < n; ++s) {
        send(s);
      }
    }
  }
  while (in_flight.load() > 0 && !abort_.load()) {
    std::this_thread::yield();
  }
  if (abort_.load()) {
    return "";  // shutting down: the server exits without serving
  }
  load_stats_.expired_on_load = counters->expired.load();

  // Cut torn or incomplete tails so appending continues from a clean record boundary.
  for (const auto& seg : manifest_.segments) {
    for (const auto& name : seg.files) {
      std::string path = dir_path_ + "/" + name;
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > valid_length[name]) {
        if (::truncate(path.c_str(), static_cast<off_t>(valid_length[name])) != 0) {
          return "cannot truncate " + path + ": " + std::strerror(errno);
        }
      }
      if (seg.base) {
        base_size_.fetch_add(valid_length[name]);
      }
    }
  }

  // Append to the last segment if it is an incremental log of this very layout; otherwise
  // start a new segment with one file per shard and record it in the manifest first.
  bool reuse = !manifest_.segments.empty() && !manifest_.segments.back().base &&
               manifest_.segments.back().shards == n;
  if (!reuse) {
    ManifestSegment seg;
    seg.seq = manifest_.next_seq();
    seg.base = false;
    seg.shards = n;
    for (size_t s = 0; s < n; ++s) {
      seg.files.push_back(segment_file_name(prefix_, seg.seq, false, s));
    }
    manifest_.segments.push_back(seg);
  }
  const ManifestSegment& tail = manifest_.segments.back();
  std::vector<int> fds;
  for (size_t s = 0; s < n; ++s) {
    std::string path = dir_path_ + "/" + tail.files[s];
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      for (int f : fds) {
        ::close(f);
      }
      return "cannot open append-only file " + path + ": " + std::strerror(errno);
    }
    fds.push_back(fd);
  }
  if (!reuse) {
    std::string err = write_manifest_atomic(manifest_path(), manifest_);
    if (!err.empty()) {
      for (int f : fds) {
        ::close(f);
      }
      return err;
    }
  }
  for (size_t s = 0; s < n; ++s) {
    struct stat st {};
    ::fstat(fds[s], &st);
    Shard* sh = &engine_.shard(s);
    uint64_t size = static_cast<uint64_t>(st.st_size);
    int fd = fds[s];
    // Every shard continues after the highest number replayed, whatever layout wrote it, so
    // no shard's numbers ever go back (version 1 logs had none: numbering starts at 1).
    uint64_t seq = load_stats_.last_seq;
    asio::post(sh->io(), [sh, fd, size, policy, counters, seq] {
      sh->log().set_last_seq(seq);
      sh->log().attach(fd, size, policy);
      counters->attached.fetch_add(1);
    });
  }
  while (counters->attached.load() < n && !abort_.load()) {
    std::this_thread::yield();
  }
  // Files of ours that no manifest names (a rewrite whose server was killed) are garbage.
  {
    std::set<std::string> named;
    for (const auto& seg : manifest_.segments) {
      named.insert(seg.files.begin(), seg.files.end());
    }
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir_path_, ec)) {
      std::string fname = entry.path().filename().string();
      if (fname.rfind(prefix_ + ".", 0) == 0 && fname.size() > 4 &&
          fname.compare(fname.size() - 4, 4, ".aof") == 0 && named.count(fname) == 0) {
        spdlog::info("removing {}: no manifest names it", fname);
        std::filesystem::remove(entry.path(), ec);
      }
    }
  }
  load_stats_.millis = (mono_us() - started) / 1000;
  size_at_last_rewrite_.store(current_size());
  last_save_unix_.store(unix_ms() / 1000);
  fsync_thread_ = std::thread([this] { fsync_loop(); });
  return "";
}

void Persistence::fsync_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t next = mono_us();
  while (!stop_) {
    next += 1'000'000;
    int64_t wait = next - mono_us();
    if (wait > 0) {
      cv_.wait_for(lock, std::chrono::microseconds(wait), [this] { return stop_; });
    }
    if (stop_) {
      break;
    }
    lock.unlock();
    FsyncPolicy policy = FsyncPolicy::kEverysec;
    parse_policy(engine_.config().get_string("appendfsync"), policy);
    int64_t started = mono_us();
    for (size_t i = 0; i < engine_.shard_count(); ++i) {
      ShardLog& log = engine_.shard(i).log();
      log.set_policy(policy);
      if (policy == FsyncPolicy::kEverysec && log.dirty_since_sync()) {
        log.sync();
      }
    }
    // Redis counts an fsync that could not keep up with its one-second cadence as delayed.
    if (mono_us() - started > 1'000'000) {
      delayed_fsync_.fetch_add(1);
      next = mono_us();
    }
    lock.lock();
  }
}

void Persistence::close() {
  // Shutdown during a rewrite: the old files and the fresh incremental ones are complete; the
  // unfinished base is discarded.
  abandon_rewrite();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (fsync_thread_.joinable()) {
    fsync_thread_.join();
  }
}

}  // namespace hotkv
