// What the server needs of RDB snapshots beyond the commands: the AUX fields and function
// libraries a snapshot carries (gathered from the script store, which the shard layer does
// not know), and the start-up load of `dir`/`dbfilename` when the append-only log is off.
#pragma once

#include <string>
#include <vector>

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

// Registers the function libraries an RDB file carried (RdbLoadResult::function_codes),
// validated as FUNCTION RESTORE would. Returns "" or why one was refused. Any thread but a
// shard's, while no script runs (loading).
std::string add_rdb_libraries(Engine& engine, const std::vector<std::string>& codes);

}  // namespace hotkv
