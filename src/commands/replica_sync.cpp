// A replica's full sync on the data set (see replica_sync.hpp).
#include "hotkv/commands/replica_sync.hpp"

#include <vector>

#include <spdlog/spdlog.h>

#include "hotkv/commands/rdb_snapshots.hpp"
#include "hotkv/commands/script_store.hpp"
#include "hotkv/shard/engine.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/shard/rdb_snapshot.hpp"
#include "hotkv/shard/tracking.hpp"
#include "hotkv/util/clock.hpp"

namespace hotkv {

void empty_data_for_full_sync(Engine& engine) {
  std::vector<Shard*> held;
  const int64_t now = unix_ms();
  for (size_t i = 0; i < engine.shard_count(); ++i) {
    Shard& s = engine.shard(i);
    held.push_back(&s);
    for (uint32_t db = 0; db < s.db_count(); ++db) {
      Keyspace& ks = s.keyspace(db);
      if (ks.size() == 0) {
        continue;
      }
      s.watches().touch_existing(
          db, [&ks, now](std::string_view key) { return ks.find(key, now) != nullptr; });
      ks.clear();
    }
  }
  engine.tracking().flushed(held);
  engine.scripts().flush_libraries();
}

SyncLoadResult load_full_sync_image(Engine& engine, std::string_view rdb) {
  SyncLoadResult out;
  // A deadline of 0 expires nothing: keys that expired at the master while the image was on
  // its way are deleted by the DEL the master sends for them.
  RdbLoadResult r = load_rdb_snapshot(engine, rdb, 0, &engine.rdb_saver().load_abort_flag());
  if (!r.error.empty()) {
    out.error = r.error;
    return out;
  }
  if (std::string err = add_rdb_libraries(engine, r.function_codes); !err.empty()) {
    out.error = err;
    return out;
  }
  out.keys = r.keys_loaded;
  out.stream_db = r.repl_stream_db;
  return out;
}

}  // namespace hotkv
