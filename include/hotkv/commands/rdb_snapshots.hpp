// What the server needs of RDB snapshots beyond the commands: the AUX fields and function
// libraries a snapshot carries (gathered from the script store, which the shard layer does
// not know), and the start-up load of `dir`/`dbfilename` when the append-only log is off.
#pragma once

#include <string>

#include "hotkv/shard/rdb_snapshot.hpp"

namespace hotkv {

class Engine;

// The libraries (in name order), memory figure and replication fields for a snapshot taken
// now. REQUIRES every shard parked (the library set cannot change meanwhile) or any thread
// when no script may run (start-up).
RdbSnapshotAux rdb_snapshot_aux(Engine& engine);

// Loads `dir`/`dbfilename` into the engine if the file exists, libraries included. Returns ""
// (loaded, or no file) or a fatal message. REQUIRES the shards' threads running and the
// engine marked loading; any thread but a shard's.
std::string load_rdb_at_startup(Engine& engine);

}  // namespace hotkv
