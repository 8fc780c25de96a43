// The snapshot a replica's full sync loads: a forked child writes the RDB of the instant the
// shards were parked (the instant the sync's offset was taken), as BGSAVE's child does, either
// into a pipe the master's connection forwards to the replica as it comes (diskless, Redis's
// `$EOF:` form) or into a temporary file sent afterwards with its length (disk).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "hotkv/shard/rdb_snapshot.hpp"

namespace hotkv {

class Engine;

struct ReplicaSnapshot {
  pid_t pid = -1;
  // Read end of the child's pipe: the RDB bytes (diskless), or one status byte, '1' for
  // success, when the child is done (disk). EOF when the child exits.
  int pipe_fd = -1;
  bool diskless = false;
  std::string temp_path;  // disk only
};

// Forks the child. REQUIRES every shard parked. "" on success, else why not.
std::string start_replica_snapshot(Engine& engine, const RdbSnapshotAux& aux, bool diskless,
                                   ReplicaSnapshot& out);
// Reaps the child if it has exited (non-blocking): true then, with `ok` telling whether it
// succeeded.
bool reap_replica_snapshot(ReplicaSnapshot& s, bool& ok);
// Reaps the child (blocking; call once the pipe reached EOF, or to abandon it: kills it first
// when `kill` is set) and removes a disk snapshot's file once it is no longer needed.
// True if the child exited successfully.
bool finish_replica_snapshot(ReplicaSnapshot& s, bool kill);

}  // namespace hotkv
