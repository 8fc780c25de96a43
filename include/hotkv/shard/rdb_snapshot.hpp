// The whole engine as an RDB file and back: write_rdb_snapshot walks every shard's databases
// (database by database, so each gets one SELECTDB) into an RdbFileWriter, and
// load_rdb_snapshot sends each key of a file to its owning shard. SAVE, BGSAVE and start-up
// loading use them (shard/rdb_saver.hpp); a replica's full sync will too.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hotkv {

class Engine;

// What a snapshot holds besides the keys, gathered by the caller (the layers above know the
// scripts and the memory figures).
struct RdbSnapshotAux {
  std::vector<std::string> function_codes;  // one per library, in name order
  uint64_t used_mem = 0;
  bool aof_base = false;  // the file is an append-only log's base (Redis's aof-base aux)
  std::string repl_id;    // 40 characters
  int64_t repl_offset = 0;
  int64_t repl_stream_db = 0;
};

// Writes the engine's data set as an RDB file to `fd` (streamed; not closed). Keys whose
// deadline is at or before `now_ms` are left out. REQUIRES every shard parked, or a forked
// child (which owns a frozen copy): only plain system calls are made. False with errno set if
// a write failed.
bool write_rdb_snapshot(Engine& engine, int fd, const RdbSnapshotAux& aux, int64_t now_ms);

struct RdbLoadResult {
  std::string error;  // empty on success, else a sentence naming what and where
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;  // deadline passed: skipped, as a Redis master does
  std::vector<std::string> function_codes;  // the file's libraries, for the caller to register
  int64_t repl_stream_db = 0;  // the repl-stream-db aux field (a replica's full sync needs it)
};

// Loads an RDB file's keys into the engine: each key to its owning shard and database, values
// built with the configured encoding limits, keys whose deadline passed before `now_ms` skipped.
// The checksum is verified before any key is sent. Keys go in batches run on the shards' own
// threads; returns when all have been applied. REQUIRES the shards' threads running and the
// engine marked loading; any thread but a shard's. A key in a database the engine lacks, or a
// body that does not decode, fails the load (keys sent before it stay). Once `abort` turns
// true (shutdown: the shards stop taking batches) the load gives up without waiting for them.
RdbLoadResult load_rdb_snapshot(Engine& engine, std::string_view data, int64_t now_ms,
                                const std::atomic<bool>* abort = nullptr);

}  // namespace hotkv
