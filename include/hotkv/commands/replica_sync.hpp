// What a replica's full sync does to the data set, in the layer that knows the scripts: the
// old data set (keys of every database, and the function libraries, as Redis empties both)
// goes, and the master's RDB image comes in. The link that receives the image lives in
// net/master_link.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotkv {

class Engine;

// Empties every database of every shard and drops the function libraries. Watchers of keys
// that existed are told and tracking clients hear that everything changed, as after
// FLUSHALL. Nothing is logged: the image that follows is not logged either, so a server with
// the append-only log on rewrites it after the load (see MasterLink). REQUIRES every shard
// parked (inside run_atomic), on the coordinator's thread.
void empty_data_for_full_sync(Engine& engine);

struct SyncLoadResult {
  std::string error;  // empty on success
  uint64_t keys = 0;
  int64_t stream_db = 0;  // the database the master's stream has selected (repl-stream-db)
};

// Loads the master's image: keys to their shards, libraries registered. Keys whose deadline
// has passed are kept (a replica waits for its master's DEL). REQUIRES the shards' threads
// running and the engine marked loading; any thread but a shard's.
SyncLoadResult load_full_sync_image(Engine& engine, std::string_view rdb);

}  // namespace hotkv
